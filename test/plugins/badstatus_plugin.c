/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_BADSTATUS.so: a valid local backend whose register_mem answers 42, which is no
 * nixl_status_t. Core detects that itself, so core writes the one ERROR line and the agent
 * reports NIXL_ERR_BACKEND (the plugin said nothing a caller could use).
 */
#include <stddef.h>

#include "test_plugin_util.h"

static nixl_plugin_status_t
badstatus_register_mem(nixl_be_engine_t *engine,
                       const nixl_be_desc_t *desc,
                       uint32_t mem_type,
                       nixl_be_md_t **out) {
    (void)engine;
    (void)desc;
    (void)mem_type;
    (void)out;
    return 42;
}

/* TEST_PLUGIN_OPS_INIT with register_mem replaced. */
static const nixl_be_ops_t badstatus_ops = {
    .size = sizeof(nixl_be_ops_t),
    .destroy_engine = test_plugin_destroy_engine,
    .register_mem = badstatus_register_mem,
    .deregister_mem = test_plugin_md_op,
    .connect = test_plugin_agent_op,
    .disconnect = test_plugin_agent_op,
    .unload_md = test_plugin_md_op,
    .get_public_data = NULL,
    .get_conn_info = NULL,
    .load_remote_conn_info = NULL,
    .load_remote_md = NULL,
    .load_local_md = NULL,
    .prep_xfer = test_plugin_prep_xfer,
    .post_xfer = test_plugin_post_xfer,
    .check_xfer = test_plugin_req_op,
    .release_req = test_plugin_req_op,
    .get_notifs = NULL,
    .gen_notif = NULL,
    .query_mem = NULL,
    .estimate_xfer_cost = NULL,
    .get_params = NULL,
};
static const nixl_backend_plugin_t badstatus_plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
    NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "BADSTATUS", &badstatus_ops);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &badstatus_plugin;
}
