/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_MISSINGDEP.so: an otherwise valid backend that needs libnixl_test_absent.so, which
 * is not installed anywhere. dlopen must fail and the refusal must carry the loader's reason,
 * which names the missing library.
 */
#include "test_plugin_util.h"

const char *
nixl_test_missingdep_name(void);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    static const nixl_be_ops_t ops = TEST_PLUGIN_OPS_INIT;
    static nixl_backend_plugin_t plugin = TEST_PLUGIN_DESCRIPTOR_INIT(
        NIXL_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_BACKEND, "", &ops);
    plugin.hdr.name = nixl_test_missingdep_name();
    return &plugin;
}
