/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_TRACECTX.so: CMIN (tracectx_plugin.c) plus a record of the trace context core hands to
 * prep_xfer and post_xfer: which call, the opt_args.trace_ctx pointer, the context's value and
 * the request. The tests read the record through the exported tracectx_probe_* functions (by
 * dlopen of this file, which returns the copy the agent loaded). Single-threaded use only.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nixl_backend_plugin.h"

#define TRACECTX_EXPORT __attribute__((visibility("default")))

/* One call seen: kind 0 prep_xfer, 1 post_xfer. */
typedef struct tracectx_probe_entry {
    uint32_t kind;
    const void *ptr; /* opt->trace_ctx as received (NULL if opt was NULL) */
    nixl_be_trace_ctx_t value; /* *ptr, zero when ptr is NULL */
    const void *req; /* the request (prep: the one it made) */
} tracectx_probe_entry_t;

#define TRACECTX_PROBE_MAX 256
static tracectx_probe_entry_t probe_entries[TRACECTX_PROBE_MAX];
static size_t probe_count;

static void
probe_record(uint32_t kind, const nixl_be_opt_args_t *opt, const void *req) {
    tracectx_probe_entry_t *e;
    if (probe_count >= TRACECTX_PROBE_MAX) {
        return;
    }
    e = &probe_entries[probe_count++];
    memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->req = req;
    /* trace_ctx exists only in a version-2 opt args struct: check the size core built. */
    if (opt != NULL && opt->size >= offsetof(nixl_be_opt_args_t, trace_ctx) + sizeof(void *)) {
        e->ptr = opt->trace_ctx;
        if (opt->trace_ctx != NULL) {
            e->value = *opt->trace_ctx;
        }
    }
}

TRACECTX_EXPORT size_t
tracectx_probe_count(void) {
    return probe_count;
}

TRACECTX_EXPORT int
tracectx_probe_get(size_t i, tracectx_probe_entry_t *out) {
    if (i >= probe_count || out == NULL) {
        return -1;
    }
    *out = probe_entries[i];
    return 0;
}

TRACECTX_EXPORT void
tracectx_probe_clear(void) {
    probe_count = 0;
}

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
tracectx_log(const nixl_be_engine_t *engine, int32_t level, const char *msg) {
    const nixl_plugin_core_services_t *core = engine->core;
    if (core != NULL && core->log != NULL) {
        core->log(core->ctx, level, msg, strlen(msg));
    }
}

static nixl_plugin_status_t
tracectx_create_engine(const nixl_be_init_params_t *params,
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
tracectx_destroy_engine(nixl_be_engine_t *engine) {
    if (engine->registrations != 0) {
        tracectx_log(engine, NIXL_PLUGIN_LOG_WARN, "destroyed with registrations outstanding");
    }
    free(engine);
}

static nixl_plugin_status_t
tracectx_register_mem(nixl_be_engine_t *engine,
                  const nixl_be_desc_t *desc,
                  uint32_t mem_type,
                  nixl_be_md_t **out) {
    nixl_be_md_t *md;
    if (mem_type != 0) {
        tracectx_log(engine, NIXL_PLUGIN_LOG_ERROR, "only DRAM_SEG memory is supported");
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
tracectx_deregister_mem(nixl_be_engine_t *engine, nixl_be_md_t *md) {
    engine->registrations--;
    free(md);
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
tracectx_connect(nixl_be_engine_t *engine, nixl_plugin_str_t remote_agent) {
    (void)engine;
    (void)remote_agent;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
tracectx_disconnect(nixl_be_engine_t *engine, nixl_plugin_str_t remote_agent) {
    (void)engine;
    (void)remote_agent;
    return NIXL_PLUGIN_SUCCESS;
}

/* Local metadata is the registration itself (load_local_md below), so there is nothing to free. */
static nixl_plugin_status_t
tracectx_unload_md(nixl_be_engine_t *engine, nixl_be_md_t *md) {
    (void)engine;
    (void)md;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
tracectx_load_local_md(nixl_be_engine_t *engine, nixl_be_md_t *in, nixl_be_md_t **out) {
    (void)engine;
    *out = in;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
tracectx_prep_xfer(nixl_be_engine_t *engine,
               uint32_t op,
               const nixl_be_xfer_list_t *local,
               const nixl_be_xfer_list_t *remote,
               nixl_plugin_str_t remote_agent,
               const nixl_be_opt_args_t *opt,
               nixl_be_req_t **out) {
    nixl_be_req_t *req;
    (void)remote_agent;
    if (local->count != remote->count) {
        tracectx_log(engine, NIXL_PLUGIN_LOG_ERROR, "local and remote lists differ in length");
        return NIXL_PLUGIN_ERR_INVALID_PARAM;
    }
    req = malloc(sizeof(*req));
    if (req == NULL) {
        return NIXL_PLUGIN_ERR_BACKEND;
    }
    req->op = op;
    *out = req;
    probe_record(0, opt, req);
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
tracectx_post_xfer(nixl_be_engine_t *engine,
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
    probe_record(1, opt, req);
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
tracectx_check_xfer(nixl_be_engine_t *engine, nixl_be_req_t *req) {
    (void)engine;
    (void)req;
    return NIXL_PLUGIN_SUCCESS;
}

static nixl_plugin_status_t
tracectx_release_req(nixl_be_engine_t *engine, nixl_be_req_t *req) {
    (void)engine;
    free(req);
    return NIXL_PLUGIN_SUCCESS;
}

static const nixl_be_ops_t tracectx_ops = {
    .size = sizeof(nixl_be_ops_t),
    .destroy_engine = tracectx_destroy_engine,
    .register_mem = tracectx_register_mem,
    .deregister_mem = tracectx_deregister_mem,
    .connect = tracectx_connect,
    .disconnect = tracectx_disconnect,
    .unload_md = tracectx_unload_md,
    .get_public_data = NULL, /* not remote-capable */
    .get_conn_info = NULL,
    .load_remote_conn_info = NULL,
    .load_remote_md = NULL,
    .load_local_md = tracectx_load_local_md,
    .prep_xfer = tracectx_prep_xfer,
    .post_xfer = tracectx_post_xfer,
    .check_xfer = tracectx_check_xfer,
    .release_req = tracectx_release_req,
    .get_notifs = NULL, /* no notifications */
    .gen_notif = NULL,
    .query_mem = NULL,
    .estimate_xfer_cost = NULL,
    .get_params = NULL,
};

static const nixl_backend_plugin_t tracectx_plugin = {
    .hdr = {.abi_version = NIXL_BACKEND_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_BACKEND,
            .size = sizeof(nixl_backend_plugin_t),
            .name = "TRACECTX",
            .version = "1.0.0"},
    .mem_mask = NIXL_BE_MEM_BIT(NIXL_BE_MEM_DRAM),
    .reserved = 0,
    .get_options = NULL,
    .create_engine = tracectx_create_engine,
    .ops = &tracectx_ops,
};

TRACECTX_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &tracectx_plugin;
}
