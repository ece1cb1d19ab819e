/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_log_limiter.h
 * @brief The per-call-site counter behind rate-limited log lines, shared by core
 *        (NIXL_ERROR_LIMITED, nixl_log.h) and the plugin SDK (NIXL_SDK_ERROR_LIMITED), which
 *        cannot link each other. Header-only, no C++ type crosses the plugin boundary.
 */
#ifndef NIXL_PLUGIN_INTERNAL_LOG_LIMITER_H
#define NIXL_PLUGIN_INTERNAL_LOG_LIMITER_H

#include <atomic>
#include <cstdint>

/**
 * At most `limit` lines in each one-second window; the caller passes the current second from
 * whatever clock it prefers. Lock-free and approximate under races (a line more or less in a
 * second), which is all a log limiter needs. Every call is either admitted or counted, and an
 * admitted call gets the count suppressed since the last admitted one.
 */
class nixlLogWindowLimiter {
public:
    /** -1: suppress this line; otherwise write it, noting the returned count suppressed. */
    int64_t
    admit(int64_t now_sec, uint32_t limit) noexcept {
        int64_t w = window_.load(std::memory_order_relaxed);
        if (w != now_sec && window_.compare_exchange_strong(w, now_sec, std::memory_order_relaxed)) {
            count_.store(0, std::memory_order_relaxed);
        }
        if (count_.fetch_add(1, std::memory_order_relaxed) < limit) {
            return drain();
        }
        suppressed_.fetch_add(1, std::memory_order_relaxed);
        return -1;
    }

    /** Admits unconditionally (limiting switched off), still reporting what was suppressed. */
    int64_t
    drain() noexcept {
        return static_cast<int64_t>(suppressed_.exchange(0, std::memory_order_relaxed));
    }

private:
    std::atomic<int64_t> window_{-1}; ///< the second being counted
    std::atomic<uint32_t> count_{0};  ///< lines of that second so far
    std::atomic<uint64_t> suppressed_{0};
};

#endif // NIXL_PLUGIN_INTERNAL_LOG_LIMITER_H
