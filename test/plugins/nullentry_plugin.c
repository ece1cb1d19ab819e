/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* libplugin_NULLENTRY.so: exports the backend entry symbol, which returns no descriptor. */
#include <stddef.h>

#include "test_plugin_util.h"

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return NULL;
}
