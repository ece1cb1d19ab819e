/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The chrome writer's timed wait between two drains (docs/tracing.md §7, "Bounded memory,
 * never blocking"): pure functions of what the last drain saw, so the policy is tested without
 * timing (test/unit/trace_chrome/chrome_pace_test.cpp). Stateless, thread-safe.
 */
#ifndef NIXL_TRACE_CHROME_PACE_H
#define NIXL_TRACE_CHROME_PACE_H

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace nixlChromePace {

using std::chrono::microseconds;

/** The shortest wait: 1 ms, or the interval when that is shorter. */
inline microseconds
shortest(microseconds interval) noexcept {
    return std::min<microseconds>(std::chrono::milliseconds(1), interval);
}

/** A new file's first wait: a sixteenth of the interval (its first events find it soon). */
inline microseconds
first(microseconds interval) noexcept {
    return std::clamp<microseconds>(interval / 16, shortest(interval), interval);
}

/**
 * The wait after a timed drain that found `fullest` bytes in the fullest of rings of
 * `ringBytes` (`dropped`: a ring had dropped events), `elapsed` after the drain before it,
 * `current` being the wait that led to it. The writer comes back when the fullest ring would
 * be a quarter full at the rate it just filled; never later than interval nor sooner than
 * shortest(); at once after a drop or a half-full ring (the rate was at least what was seen);
 * and at most twice `current`, so a burst after a quiet spell finds a short wait.
 */
inline microseconds
next(size_t fullest, bool dropped, size_t ringBytes, std::chrono::nanoseconds elapsed,
     microseconds current, microseconds interval) noexcept {
    const microseconds low = shortest(interval);
    if (dropped || fullest * 2 >= ringBytes) {
        return low;
    }
    microseconds wait = std::min(interval, current * 2);
    if (fullest != 0 && elapsed.count() > 0) {
        const double ns = double(ringBytes / 4) * double(elapsed.count()) / double(fullest);
        wait = std::min(wait, microseconds(static_cast<int64_t>(ns / 1000.0)));
    }
    return std::clamp(wait, low, interval);
}

} // namespace nixlChromePace

#endif // NIXL_TRACE_CHROME_PACE_H
