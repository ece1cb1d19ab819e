/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_time.h
 * @brief Monotonic clock readings in common units (std::chrono::steady_clock).
 *
 * namespace nixlTime also makes every std::chrono name visible (a using-directive), as NIXL's
 * header does; NIXL programs rely on it after `using namespace nixlTime;`.
 */
#ifndef NIXL_SRC_UTILS_COMMON_NIXL_TIME_H
#define NIXL_SRC_UTILS_COMMON_NIXL_TIME_H

#include <chrono>
#include <cstdint>

namespace nixlTime {
// As in NIXL: the std::chrono names are visible in nixlTime, so code that says
// `using namespace nixlTime;` can write steady_clock, duration_cast<microseconds>, ...
using namespace std::chrono;

using ns_t = uint64_t;
using us_t = uint64_t;
using ms_t = uint64_t;
using sec_t = uint64_t;

static inline ns_t
getNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static inline us_t
getUs() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static inline ms_t
getMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static inline sec_t
getSec() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
} // namespace nixlTime

#endif // NIXL_SRC_UTILS_COMMON_NIXL_TIME_H
