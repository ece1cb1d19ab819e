/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_FUTURE.so: a backend descriptor claiming an ABI version from the future (99). A newer
 * layout must never be read as the current one, so the loader refuses it.
 */
#include "test_plugin_util.h"

static const nixl_be_ops_t future_ops = TEST_PLUGIN_OPS_INIT;
static const nixl_backend_plugin_t future_plugin =
    TEST_PLUGIN_DESCRIPTOR_INIT(99u, NIXL_PLUGIN_KIND_BACKEND, "FUTURE", &future_ops);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &future_plugin;
}
