/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_NOOPS.so: a backend whose operations table lacks two mandatory entries (post_xfer
 * and check_xfer). Core calls those without null checks, so the loader must refuse the plugin
 * and name both.
 */
#include <stddef.h>

#include "test_plugin_util.h"

static const nixl_be_ops_t noops_ops = {
    .size = sizeof(nixl_be_ops_t),
    .destroy_engine = test_plugin_destroy_engine,
    .register_mem = test_plugin_register_mem,
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
    .post_xfer = NULL, /* mandatory: missing on purpose */
    .check_xfer = NULL, /* mandatory: missing on purpose */
    .release_req = test_plugin_req_op,
    .get_notifs = NULL,
    .gen_notif = NULL,
    .query_mem = NULL,
    .estimate_xfer_cost = NULL,
    .get_params = NULL,
};
static const nixl_backend_plugin_t noops_plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
    NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "NOOPS", &noops_ops);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &noops_plugin;
}
