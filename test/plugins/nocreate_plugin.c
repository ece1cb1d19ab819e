/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* libplugin_NOCREATE.so: a backend descriptor without create_engine. */
#include <stddef.h>

#include "test_plugin_util.h"

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    static const nixl_be_ops_t ops = TEST_PLUGIN_OPS_INIT;
    static nixl_backend_plugin_t plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
        NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "NOCREATE", &ops);
    plugin.create_engine = NULL;
    return &plugin;
}
