/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_WRONGKIND.so: exports the backend entry symbol, but its header says it is a
 * telemetry exporter. The loader must not read the rest as a backend table.
 */
#include "test_plugin_util.h"

static const nixl_be_ops_t wrongkind_ops = TEST_PLUGIN_OPS_INIT;
static const nixl_backend_plugin_t wrongkind_plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
    NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER, "WRONGKIND", &wrongkind_ops);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &wrongkind_plugin;
}
