/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_ABIV1.so: a complete, working backend plugin built against the frozen version-1
 * header next to this file (meson puts this directory before src/api/plugin, so
 * test_plugin_util.h also sees version 1). What a plugin built before backend ABI v2 looks
 * like: the loader must refuse it with one line naming versions 1 and 2.
 */
#include "nixl_backend_plugin.h"
#include "../test_plugin_util.h"

#if NIXL_BACKEND_ABI_VERSION != 1u
#error "libplugin_ABIV1 must be built against the frozen version-1 header"
#endif

static const nixl_be_ops_t abiv1_ops = TEST_PLUGIN_OPS_INIT;
static const nixl_backend_plugin_t abiv1_plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
    NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "ABIV1", &abiv1_ops);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &abiv1_plugin;
}
