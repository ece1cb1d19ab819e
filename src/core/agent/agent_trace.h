/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_trace.h
 * @brief How an agent API call is traced: one span around the call when the agent has a Tracer,
 *        the call alone otherwise.
 *
 * Cost with tracing off: one predictable branch on data.tracer ([[unlikely]]); the attribute
 * callback is not called, nothing is allocated, and the call is inlined as if written out.
 *
 * Thread safety: as the traced call's; a span lives on the calling thread's stack (Span).
 */
#ifndef NIXL_SRC_CORE_AGENT_AGENT_TRACE_H
#define NIXL_SRC_CORE_AGENT_AGENT_TRACE_H

#include <type_traits>
#include <utility>

#include "agent/agent_data.h"
#include "tracing/tracing.h"

/** Adds the "status" attribute (the status's name) to a traced call's span when st is an
 *  error, so failed calls stand out in a trace; returns st. */
inline nixl_status_t
nixlTraceStatus(nixl::trace::Span &span, nixl_status_t st) noexcept {
    if (st < 0) {
        span.add(nixl::trace::KeyId::STATUS, nixl_plugin_status_name(st));
    }
    return st;
}

/** The attribute callback of a span with no begin attributes. */
inline constexpr auto nixl_no_trace_attrs = [](nixl::trace::Span &) noexcept {};

/**
 * Returns call() and, when data traces, runs it inside a span of name: attrs(span) gives the
 * span its begin attributes (span.add), then the span begins, then call runs. A call returning
 * nixl_status_t gets its error status on the span's end (nixlTraceStatus). A call that takes a
 * nixl::trace::Span * receives the open span (null when untraced), for attributes known only
 * once it ran.
 */
template<typename Attrs, typename Call>
[[gnu::always_inline]] inline decltype(auto)
nixlTraced(const nixlAgentData &data, nixl::trace::NameId name, Attrs &&attrs, Call &&call) {
    constexpr bool takes_span = std::is_invocable_v<Call &, nixl::trace::Span *>;
    if (data.tracer) [[unlikely]] {
        nixl::trace::Span span(*data.tracer, name, nixl::trace::defer_begin);
        attrs(span);
        span.begin();
        auto run = [&]() -> decltype(auto) {
            if constexpr (takes_span) {
                return call(&span);
            } else {
                return call();
            }
        };
        if constexpr (std::is_same_v<decltype(run()), nixl_status_t>) {
            return nixlTraceStatus(span, run());
        } else {
            return run();
        }
    }
    if constexpr (takes_span) {
        return call(static_cast<nixl::trace::Span *>(nullptr));
    } else {
        return call();
    }
}

#endif // NIXL_SRC_CORE_AGENT_AGENT_TRACE_H
