/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "telemetry/staging_queue.h"

#include <sched.h>

#include <mutex>
#include <stdexcept>
#include <utility>

nixlTelemetryStagingQueue::nixlTelemetryStagingQueue(size_t capacity)
    : capacity_(capacity) {
    if (capacity == 0) {
        throw std::invalid_argument("telemetry staging queue: capacity must be at least 1");
    }
    // Value-initialised: the reserved words are zero from the start.
    fill_ = std::make_unique<nixl_telemetry_event_abi_t[]>(capacity);
    drained_ = std::make_unique<nixl_telemetry_event_abi_t[]>(capacity);
}

bool
nixlTelemetryStagingQueue::tryPushBatch(const nixlTelemetryEvent *events, size_t n) noexcept {
    if (n == 0) {
        return true;
    }
    {
        std::lock_guard<spinLock> lock(mutex_);
        if (n <= capacity_ - count_) {
            nixl_telemetry_event_abi_t *out = fill_.get() + count_;
            for (size_t i = 0; i < n; ++i) {
                out[i] = events[i].toAbi();
            }
            count_ += n;
            return true;
        }
    }
    dropped_.fetch_add(n, std::memory_order_relaxed);
    return false;
}

std::span<const nixl_telemetry_event_abi_t>
nixlTelemetryStagingQueue::drainPending() noexcept {
    size_t n = 0;
    {
        std::lock_guard<spinLock> lock(mutex_);
        std::swap(fill_, drained_);
        n = count_;
        count_ = 0;
    }
    return {drained_.get(), n};
}

void
nixlTelemetryStagingQueue::spinLock::wait() noexcept {
    for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#elif defined(__aarch64__)
            asm volatile("yield");
#endif
        } else {
            ::sched_yield(); // the holder may have been preempted: give it the core
        }
    }
}
