/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_SMALLDESC.so: right version and kind, but the header claims a descriptor shorter
 * than the one core reads, so core would read past the plugin's data.
 */
#include "test_plugin_util.h"

static const nixl_be_ops_t smalldesc_ops = TEST_PLUGIN_OPS_INIT;

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    static nixl_backend_plugin_t plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
        NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "SMALLDESC", &smalldesc_ops);
    plugin.hdr.size = sizeof(nixl_plugin_header_t);
    return &plugin;
}
