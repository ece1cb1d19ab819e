/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* libplugin_PREINTEROP.so: a backend whose operations table ends before the entries appended
 * for NIXL interoperability (get_conn_info_nixl, get_public_data_nixl), as a plugin built
 * before them has it. Core must load it and treat the missing entries as NULL. */
#include "test_plugin_util.h"

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    static nixl_be_ops_t ops = TEST_PLUGIN_OPS_INIT;
    static const nixl_backend_plugin_t plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
        NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "PREINTEROP", &ops);
    ops.size = NIXL_BE_OPS_MIN_SIZE;
    return &plugin;
}
