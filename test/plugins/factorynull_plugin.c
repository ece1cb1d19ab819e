/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libplugin_FACTORYNULL.so: a descriptor the loader accepts, whose create_engine reports success
 * without producing an engine. Core's backend creation must treat that as a failure rather than
 * hand a null engine to later calls.
 */
#include <stddef.h>

#include "test_plugin_util.h"

static nixl_plugin_status_t
factorynull_create_engine(const nixl_be_init_params_t *params,
                          nixl_be_engine_t **out,
                          nixl_be_engine_info_t *info) {
    (void)params;
    (void)info;
    *out = NULL;
    return NIXL_PLUGIN_SUCCESS;
}

static const nixl_be_ops_t factorynull_ops = TEST_PLUGIN_OPS_INIT;
static const nixl_backend_plugin_t factorynull_plugin = {
    .hdr = {.abi_version = NIXL_BACKEND_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_BACKEND,
            .size = sizeof(nixl_backend_plugin_t),
            .name = "FACTORYNULL",
            .version = "0.0.1"},
    .mem_mask = NIXL_BE_MEM_BIT(0),
    .reserved = 0,
    .get_options = NULL,
    .create_engine = factorynull_create_engine,
    .ops = &factorynull_ops,
};

TEST_PLUGIN_EXPORT const nixl_backend_plugin_t *
nixl_backend_plugin_get(void) {
    return &factorynull_plugin;
}
