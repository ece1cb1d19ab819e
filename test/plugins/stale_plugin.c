/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_STALE.so: a complete, correct backend descriptor built against an ABI version older
 * than any libnixl accepts (0). The loader must refuse it naming both versions.
 */
#include "test_plugin_util.h"

static const nixl_be_ops_t stale_ops = TEST_PLUGIN_OPS_INIT;
static const nixl_backend_plugin_t stale_plugin =
    TEST_PLUGIN_DESCRIPTOR_INIT(0u, NIXL_PLUGIN_KIND_BACKEND, "STALE", &stale_ops);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &stale_plugin;
}
