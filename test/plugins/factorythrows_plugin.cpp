/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_FACTORYTHROWS.so: a descriptor the loader accepts, whose create_engine throws a C++
 * exception. The loader never calls create_engine; core's backend creation does, and must turn
 * the exception into a status instead of letting it unwind through its C call.
 */
#include <stdexcept>

#include "test_plugin_util.h"

namespace {

nixl_plugin_status_t
throwingCreateEngine(const nixl_be_init_params_t *params,
                     nixl_be_engine_t **out,
                     nixl_be_engine_info_t *info) {
    (void)params;
    (void)out;
    (void)info;
    throw std::runtime_error("FACTORYTHROWS create_engine fails on purpose");
}

const nixl_be_ops_t factorythrows_ops = TEST_PLUGIN_OPS_INIT;

const nixl_backend_plugin_t factorythrows_plugin = {
    .hdr = {.abi_version = NIXL_BACKEND_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_BACKEND,
            .size = sizeof(nixl_backend_plugin_t),
            .name = "FACTORYTHROWS",
            .version = "0.0.1"},
    .mem_mask = NIXL_BE_MEM_BIT(0),
    .reserved = 0,
    .get_options = nullptr,
    .create_engine = throwingCreateEngine,
    .ops = &factorythrows_ops,
};

} // namespace

extern "C" TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &factorythrows_plugin;
}
