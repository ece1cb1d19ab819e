/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file trace_context.h
 * @brief Making a transfer request's trace context (nixl_be_trace_ctx_t): fresh random ids from
 *        a per-thread generator, or the trace id of an application's W3C traceparent. Not
 *        installed. Thread-safe: the generator state is thread_local.
 */
#ifndef NIXL_SRC_CORE_TRACING_TRACE_CONTEXT_H
#define NIXL_SRC_CORE_TRACING_TRACE_CONTEXT_H

#include <cstdint>

#include "nixl_backend_plugin.h"

namespace nixl::trace {

/** W3C trace-flags bit 0: this request is recorded. */
inline constexpr std::uint8_t kTraceFlagSampled = 0x01;

/**
 * Fills ctx for a traced request: a random span id, flags sampled, correlation_id, and the
 * trace id of parent when given (a valid context, e.g. a parsed traceparent) else a random one.
 * Neither id is ever all zero. No allocation, no lock, no system call after the first call
 * on a thread (which seeds the thread's generator from getrandom, or the clock if that fails).
 */
void
makeRequestContext(nixl_be_trace_ctx_t &ctx,
                   std::uint64_t correlation_id,
                   const nixl_be_trace_ctx_t *parent) noexcept;

} // namespace nixl::trace

#endif // NIXL_SRC_CORE_TRACING_TRACE_CONTEXT_H
