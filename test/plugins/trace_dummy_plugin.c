/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* libtrace_backend_dummy.so: a trace backend descriptor of the current ABI version without an
 * operations table. The loader accepts it (loader tests); an agent told to trace with it logs
 * that it has no operations table and runs without it. */
#include "nixl_trace_backend_plugin.h"

static const nixl_trace_backend_plugin_t dummy_tracer = {
    .hdr = {.abi_version = NIXL_TRACE_BACKEND_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_TRACE_BACKEND,
            .size = sizeof(nixl_trace_backend_plugin_t),
            .name = "dummy",
            .version = "0.0.1"},
};

__attribute__((visibility("default"))) const nixl_trace_backend_plugin_t *
nixl_trace_backend_plugin_get(void) {
    return &dummy_tracer;
}
