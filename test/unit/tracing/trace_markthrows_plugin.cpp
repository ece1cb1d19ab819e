/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtrace_backend_markthrows.so: a trace backend that breaks its contract by throwing from
 * mark, for the marks of backend phases only (those carrying nixl.phase.backend); spans and
 * core's own marks are accepted and ignored (core catches only on the phase path, where a
 * plugin's failure must not reach the backend that records). Every phase an agent records
 * through it is dropped by core's phase sink and counted in agent_trace_phases_dropped: the
 * end-to-end tests of that counter (test/unit/prometheus) drive it with this plugin. Raw C
 * ABI, no SDK: the SDK's mark is noexcept, so an SDK plugin could not throw out of it.
 */
#include <cstring>
#include <stdexcept>

#include "nixl_trace_backend_plugin.h"

namespace {

int instance_storage;

nixl_plugin_status_t
mtCreate(const nixl_trace_backend_init_params_t *params, nixl_trace_backend_t **out) {
    (void)params;
    *out = reinterpret_cast<nixl_trace_backend_t *>(&instance_storage);
    return NIXL_PLUGIN_SUCCESS;
}

void
mtDestroy(nixl_trace_backend_t *) {}

void
mtSpan(nixl_trace_backend_t *, const nixl_trace_event_t *) {}

void
mtMark(nixl_trace_backend_t *, const nixl_trace_event_t *ev) {
    for (size_t i = 0; i < ev->attr_count; ++i) {
        const char *key = ev->attrs[i].key;
        if (key != nullptr && std::strcmp(key, "nixl.phase.backend") == 0) {
            throw std::runtime_error("markthrows: test plugin throws from mark by design");
        }
    }
}

const nixl_trace_backend_ops_t mt_ops = {
    sizeof(nixl_trace_backend_ops_t), mtCreate, mtDestroy, mtSpan, mtSpan, mtMark,
};

const nixl_trace_backend_plugin_t mt_plugin = {
    {NIXL_TRACE_BACKEND_ABI_VERSION, NIXL_PLUGIN_KIND_TRACE_BACKEND,
     sizeof(nixl_trace_backend_plugin_t), "markthrows", "0.0.1"},
    &mt_ops,
};

} // namespace

extern "C" __attribute__((visibility("default"))) const nixl_trace_backend_plugin_t *
nixl_trace_backend_plugin_get(void) {
    return &mt_plugin;
}
