/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_THROWS.so: a C++ plugin whose entry point throws, as one whose static setup fails
 * might. The exception must stop at the loader and become a status.
 */
#include <stdexcept>

#include "test_plugin_util.h"

extern "C" TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    throw std::runtime_error("THROWS plugin cannot initialise");
}
