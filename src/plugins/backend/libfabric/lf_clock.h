/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_clock.h
 * @brief The LIBFABRIC engine's two clocks: milliseconds for timeouts and liveness, and the
 *        trace clock for phases. Stateless: safe from any thread.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_CLOCK_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_CLOCK_H

#include <chrono>
#include <cstdint>

#include "nixl_backend_sdk.h"

namespace nixlLf {

inline int64_t
nowMs() noexcept {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/** A trace phase's time: nixlTraceNow, so core stamps it with its (TSC) trace clock, as UCX and
 *  TEST do; cheaper than a steady_clock read, and none at all when the agent does not trace. */
inline constexpr uint64_t
nowUs() noexcept {
    return nixlTraceNow;
}

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_CLOCK_H
