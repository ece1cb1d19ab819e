/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtrace_backend_null.so, the benchmark's do-nothing trace plugin (trace_lttng_bench): it
 * receives the same calls as the chrome and LTTng plugins and only counts the events they
 * stand for, so its column is core's own cost of tracing (spans, clock reads, phase sink,
 * the call into a plugin). Benchmark only: not installed.
 *
 * Thread safety: the event calls may run concurrently (the count is a relaxed atomic).
 */
#include <atomic>
#include <cstdint>

#include "nixl_trace_backend_sdk.h"

namespace {

std::atomic<uint64_t> events{0};

class nixlNullTracer final : public nixlTraceBackendBase {
public:
    static constexpr bool foldsCompletion = true;

    explicit nixlNullTracer(const nixlTraceBackendContext &) {}

    void
    spanEnd(const nixl_trace_event_t &ev) noexcept override {
        // The span, and the completion mark it carries when it folds one.
        events.fetch_add(ev.complete_ns != 0 ? 2 : 1, std::memory_order_relaxed);
    }

    void
    mark(const nixl_trace_event_t &) noexcept override {
        events.fetch_add(1, std::memory_order_relaxed);
    }
};

} // namespace

NIXL_TRACE_BACKEND_PLUGIN_DEFINE(nixlNullTracer, "null", "0.1.0")

/** For trace_lttng_bench: the events received so far by every instance. */
extern "C" __attribute__((visibility("default"))) uint64_t
nixl_bench_null_events(void) {
    return events.load(std::memory_order_relaxed);
}
