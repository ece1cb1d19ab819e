/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_CMIN.so: the smallest complete backend plugin, in plain C99 with no C++ runtime and
 * no SDK, to show that the C ABI alone is enough. It supports local DRAM transfers and does no
 * data movement: every transfer completes at once. docs/BackendGuide.md walks through it.
 */
#include <stdlib.h>
#include <string.h>

#include "nixl_backend_plugin.h"

#define CMIN_EXPORT __attribute__((visibility("default")))

/* The engine: only what this plugin needs to keep between calls. */
struct nixl_be_engine {
    const nixl_plugin_core_services_t *core;
    size_t registrations;
};

/* A registration. Its address doubles as the metadata handle core hands back later. */
struct nixl_be_md {
    uintptr_t addr;
    size_t len;
};

/* A prepared transfer. */
struct nixl_be_req {
    uint32_t op;
};

static void
cmin_log(const nixl_be_engine_t *engine, int32_t level, const char *msg) {
    const nixl_plugin_core_services_t *core = engine->core;
    if (core != NULL && core->log != NULL) {
        core->log(core->ctx, level, msg, strlen(msg));
    }
}

static nixl_plugin_status_t
cmin_create_engine(const nixl_be_init_params_t *params,
                   nixl_be_engine_t **out,
                   nixl_be_engine_info_t *info) {
    nixl_be_engine_t *engine = calloc(1, sizeof(*engine));
    if (engine == NULL) {
        return NIXL_PLUGIN_ERR_BACKEND;
    }
    /* Read core services only if core built a struct at least as large as this plugin knows. */
    if (params->core != NULL && params->core->size >= sizeof(nixl_plugin_core_services_t)) {
        engine->core = params->core;
    }
    info->caps = NIXL_BE_CAP_LOCAL;
    info->mem_mask = NIXL_BE_MEM_BIT(NIXL_BE_MEM_DRAM);
    *out = engine;
    return NIXL_PLUGIN_SUCCESS;
}

static void
cmin_destroy_engine(nixl_be_engine_t *engine) {
    if (engine->registrations != 0) {
        cmin_log(engine, NIXL_PLUGIN_LOG_WARN, "destroyed with registrations outstanding");
    }
    free(engine);
}

static nixl_plugin_status_t
cmin_register_mem(nixl_be_engine_t *engine,
                  const nixl_be_desc_t *desc,
                  uint32_t mem_type,
                  nixl_be_md_t **out) {
    nixl_be_md_t *md;
    if (mem_type != 0) {
        cmin_log(engine, NIXL_PLUGIN_LOG_ERROR, "only DRAM_SEG memory is supported");
        return NIXL_PLUGIN_ERR_NOT_SUPPORTED;
    }
    md = malloc(sizeof(*md));
    if (md == NULL) {
        return NIXL_PLUGIN_ERR_BACKEND;
    }
    md->addr = desc->addr;
    md->len = desc->len;
    engine->registrations++;
    *out = md;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
cmin_deregister_mem(nixl_be_engine_t *engine, nixl_be_md_t *md) {
    engine->registrations--;
    free(md);
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
cmin_connect(nixl_be_engine_t *engine, nixl_plugin_str_t remote_agent) {
    (void)engine;
    (void)remote_agent;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
cmin_disconnect(nixl_be_engine_t *engine, nixl_plugin_str_t remote_agent) {
    (void)engine;
    (void)remote_agent;
    return NIXL_PLUGIN_SUCCESS;
}

/* Local metadata is the registration itself (load_local_md below), so there is nothing to free. */
static nixl_plugin_status_t
cmin_unload_md(nixl_be_engine_t *engine, nixl_be_md_t *md) {
    (void)engine;
    (void)md;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
cmin_load_local_md(nixl_be_engine_t *engine, nixl_be_md_t *in, nixl_be_md_t **out) {
    (void)engine;
    *out = in;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
cmin_prep_xfer(nixl_be_engine_t *engine,
               uint32_t op,
               const nixl_be_xfer_list_t *local,
               const nixl_be_xfer_list_t *remote,
               nixl_plugin_str_t remote_agent,
               const nixl_be_opt_args_t *opt,
               nixl_be_req_t **out) {
    nixl_be_req_t *req;
    (void)remote_agent;
    (void)opt;
    if (local->count != remote->count) {
        cmin_log(engine, NIXL_PLUGIN_LOG_ERROR, "local and remote lists differ in length");
        return NIXL_PLUGIN_ERR_INVALID_PARAM;
    }
    req = malloc(sizeof(*req));
    if (req == NULL) {
        return NIXL_PLUGIN_ERR_BACKEND;
    }
    req->op = op;
    *out = req;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
cmin_post_xfer(nixl_be_engine_t *engine,
               uint32_t op,
               const nixl_be_xfer_list_t *local,
               const nixl_be_xfer_list_t *remote,
               nixl_plugin_str_t remote_agent,
               nixl_be_req_t *req,
               const nixl_be_opt_args_t *opt) {
    (void)engine;
    (void)op;
    (void)local;
    (void)remote;
    (void)remote_agent;
    (void)req;
    (void)opt;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
cmin_check_xfer(nixl_be_engine_t *engine, nixl_be_req_t *req) {
    (void)engine;
    (void)req;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
cmin_release_req(nixl_be_engine_t *engine, nixl_be_req_t *req) {
    (void)engine;
    free(req);
    return NIXL_PLUGIN_SUCCESS;
}

static const nixl_be_ops_t cmin_ops = {
    .size = sizeof(nixl_be_ops_t),
    .destroy_engine = cmin_destroy_engine,
    .register_mem = cmin_register_mem,
    .deregister_mem = cmin_deregister_mem,
    .connect = cmin_connect,
    .disconnect = cmin_disconnect,
    .unload_md = cmin_unload_md,
    .get_public_data = NULL, /* not remote-capable */
    .get_conn_info = NULL,
    .load_remote_conn_info = NULL,
    .load_remote_md = NULL,
    .load_local_md = cmin_load_local_md,
    .prep_xfer = cmin_prep_xfer,
    .post_xfer = cmin_post_xfer,
    .check_xfer = cmin_check_xfer,
    .release_req = cmin_release_req,
    .get_notifs = NULL, /* no notifications */
    .gen_notif = NULL,
    .query_mem = NULL,
    .estimate_xfer_cost = NULL,
    .get_params = NULL,
};

static const nixl_backend_plugin_t cmin_plugin = {
    .hdr = {.abi_version = NIXL_BACKEND_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_BACKEND,
            .size = sizeof(nixl_backend_plugin_t),
            .name = "CMIN",
            .version = "1.0.0"},
    .mem_mask = NIXL_BE_MEM_BIT(NIXL_BE_MEM_DRAM),
    .reserved = 0,
    .get_options = NULL,
    .create_engine = cmin_create_engine,
    .ops = &cmin_ops,
};

CMIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &cmin_plugin;
}
