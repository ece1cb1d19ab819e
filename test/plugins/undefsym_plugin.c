/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_UNDEFSYM.so: needs a symbol no library provides. Linked with undefined symbols
 * allowed, so the failure happens where a user meets it: in dlopen with RTLD_NOW.
 */
#include "test_plugin_util.h"

/* Deliberately never defined anywhere. */
extern const nixl_backend_plugin_t *nixl_test_symbol_nobody_defines(void);

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return nixl_test_symbol_nobody_defines();
}
