/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * File: test_plugin_util.h
 *
 * Shared pieces of the deliberately broken test plugins: a complete table of do-nothing engine
 * operations, so each broken plugin differs from a valid one in exactly the one respect its test
 * is about. Everything here is static: every plugin is its own shared object.
 *
 * Plain C99, so the C plugins include it as they are and C++ plugins through extern "C".
 */
#ifndef NIXL_TEST_PLUGINS_TEST_PLUGIN_UTIL_H
#define NIXL_TEST_PLUGINS_TEST_PLUGIN_UTIL_H

#include <stddef.h>

#include "nixl_backend_plugin.h"

#define TEST_PLUGIN_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

static inline nixl_plugin_status_t
test_plugin_create_engine(const nixl_be_init_params_t *params,
                          nixl_be_engine_t **out,
                          nixl_be_engine_info_t *info) {
    /* One shared stand-in engine: these plugins exist to be loaded, not to move data. */
    static int engine_storage;
    (void)params;
    *out = (nixl_be_engine_t *)&engine_storage;
    info->caps = NIXL_BE_CAP_LOCAL;
    info->mem_mask = NIXL_BE_MEM_BIT(0);
    return NIXL_PLUGIN_SUCCESS;
}

static inline void
test_plugin_destroy_engine(nixl_be_engine_t *engine) {
    (void)engine;
}

static inline nixl_plugin_status_t
test_plugin_register_mem(nixl_be_engine_t *engine,
                         const nixl_be_desc_t *desc,
                         uint32_t mem_type,
                         nixl_be_md_t **out) {
    (void)engine;
    (void)desc;
    (void)mem_type;
    *out = NULL;
    return NIXL_PLUGIN_SUCCESS;
}

static inline nixl_plugin_status_t
test_plugin_md_op(nixl_be_engine_t *engine, nixl_be_md_t *md) {
    (void)engine;
    (void)md;
    return NIXL_PLUGIN_SUCCESS;
}

static inline nixl_plugin_status_t
test_plugin_agent_op(nixl_be_engine_t *engine, nixl_plugin_str_t remote_agent) {
    (void)engine;
    (void)remote_agent;
    return NIXL_PLUGIN_SUCCESS;
}

static inline nixl_plugin_status_t
test_plugin_prep_xfer(nixl_be_engine_t *engine,
                      uint32_t op,
                      const nixl_be_xfer_list_t *local,
                      const nixl_be_xfer_list_t *remote,
                      nixl_plugin_str_t remote_agent,
                      const nixl_be_opt_args_t *opt,
                      nixl_be_req_t **out) {
    (void)engine;
    (void)op;
    (void)local;
    (void)remote;
    (void)remote_agent;
    (void)opt;
    *out = NULL;
    return NIXL_PLUGIN_SUCCESS;
}

static inline nixl_plugin_status_t
test_plugin_post_xfer(nixl_be_engine_t *engine,
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

static inline nixl_plugin_status_t
test_plugin_req_op(nixl_be_engine_t *engine, nixl_be_req_t *req) {
    (void)engine;
    (void)req;
    return NIXL_PLUGIN_SUCCESS;
}

/* The entries appended to nixl_be_ops_t after version 2 (absent from the abi_v1 header). */
#ifdef NIXL_BE_OPS_MIN_SIZE
#define TEST_PLUGIN_OPS_APPENDED                                                                 \
    , .get_conn_info_nixl = NULL, .get_public_data_nixl = NULL, .get_xfer_path = NULL
#else
#define TEST_PLUGIN_OPS_APPENDED
#endif

/* Every mandatory operation present, every optional one absent. Fields in declaration order. */
#define TEST_PLUGIN_OPS_INIT                                                                     \
    {                                                                                            \
        .size = sizeof(nixl_be_ops_t), .destroy_engine = test_plugin_destroy_engine,             \
        .register_mem = test_plugin_register_mem, .deregister_mem = test_plugin_md_op,           \
        .connect = test_plugin_agent_op, .disconnect = test_plugin_agent_op,                     \
        .unload_md = test_plugin_md_op, .get_public_data = NULL, .get_conn_info = NULL,          \
        .load_remote_conn_info = NULL, .load_remote_md = NULL, .load_local_md = NULL,            \
        .prep_xfer = test_plugin_prep_xfer, .post_xfer = test_plugin_post_xfer,                  \
        .check_xfer = test_plugin_req_op, .release_req = test_plugin_req_op, .get_notifs = NULL, \
        .gen_notif = NULL, .query_mem = NULL, .estimate_xfer_cost = NULL, .get_params = NULL     \
            TEST_PLUGIN_OPS_APPENDED                                                             \
    }

/* A backend descriptor for plugin NAME using the ops table at OPS; ABI and KIND explicit. */
#define TEST_PLUGIN_DESCRIPTOR_INIT(ABI, KIND, NAME, OPS)                                        \
    {                                                                                            \
        .hdr = {.abi_version = (ABI),                                                            \
                .kind = (KIND),                                                                  \
                .size = sizeof(nixl_backend_plugin_t),                                           \
                .name = (NAME),                                                                  \
                .version = "0.0.1"},                                                             \
        .mem_mask = NIXL_BE_MEM_BIT(0), .reserved = 0, .get_options = NULL,                      \
        .create_engine = test_plugin_create_engine, .ops = (OPS)                                 \
    }

#ifdef __cplusplus
}
#endif

#endif /* NIXL_TEST_PLUGINS_TEST_PLUGIN_UTIL_H */
