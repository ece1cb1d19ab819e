/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_NOENTRY.so: a shared object with the right file name that does not export the
 * backend entry symbol. It exports NIXL's own entry name instead, as a plugin built for NIXL
 * and dropped into libnixl's plugin directory would.
 */
#include <stddef.h>

#include "test_plugin_util.h"

TEST_PLUGIN_EXPORT void *
nixl_plugin_init(void) {
    return NULL;
}
