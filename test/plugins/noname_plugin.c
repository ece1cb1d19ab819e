/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* libplugin_NONAME.so: a valid backend whose header has no name at all. */
#include <stddef.h>

#include "test_plugin_util.h"

static const nixl_be_ops_t noname_ops = TEST_PLUGIN_OPS_INIT;
static const nixl_backend_plugin_t noname_plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
    NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, NULL, &noname_ops);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &noname_plugin;
}
