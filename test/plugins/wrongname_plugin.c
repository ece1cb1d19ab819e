/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_WRONGNAME.so: a valid backend whose header names it "OTHER", as happens when a
 * plugin file is renamed. The engine type a user asks for must be the one they get.
 */
#include "test_plugin_util.h"

static const nixl_be_ops_t wrongname_ops = TEST_PLUGIN_OPS_INIT;
static const nixl_backend_plugin_t wrongname_plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
    NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "OTHER", &wrongname_ops);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &wrongname_plugin;
}
