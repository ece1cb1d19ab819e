/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* libplugin_SHORTOPS.so: a backend whose operations table says it is shorter than core's. */
#include "test_plugin_util.h"

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    static nixl_be_ops_t ops = TEST_PLUGIN_OPS_INIT;
    static const nixl_backend_plugin_t plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
        NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "SHORTOPS", &ops);
    ops.size = sizeof(size_t) + sizeof(void *);
    return &plugin;
}
