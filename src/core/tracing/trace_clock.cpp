/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The trace clock's anchors (trace_clock.h): taking them and deriving the next segment.

#include "tracing/trace_clock.h"

#include <time.h>

#include <mutex>

namespace nixl::trace {

std::atomic<std::uint32_t> TraceClock::seq_{0};
std::atomic<std::uint64_t> TraceClock::tick0_{0};
std::atomic<std::uint64_t> TraceClock::ns0_{0};
std::atomic<std::uint64_t> TraceClock::rate_{std::uint64_t{1} << 32};
std::atomic<std::uint64_t> TraceClock::periodTicks_{0};
constinit thread_local std::uint64_t TraceClock::lastNs_ = 0;

namespace {

    std::uint64_t
    monotonicNs() noexcept {
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
            static_cast<std::uint64_t>(ts.tv_nsec);
    }

    /**
     * The anchors' shared state, written only by the thread holding `busy`: the first anchor
     * (the baseline of the rate estimate) and the current rate estimate.
     */
    struct anchorState {
        std::atomic<bool> busy{false};
        std::uint64_t firstTick = 0;
        std::uint64_t firstNs = 0;
        std::uint64_t rateQ32 = std::uint64_t{1} << 32;
    };

    anchorState &
    anchors() noexcept {
        static anchorState a;
        return a;
    }

    /**
     * One (tick, CLOCK_MONOTONIC) pair: the clock read between two tick reads, the tick taken
     * as their midpoint. Of up to four tries the one with the shortest bracket (a preemption
     * makes one long).
     */
    void
    samplePair(std::uint64_t &tick, std::uint64_t &ns) noexcept {
        std::uint64_t best = UINT64_MAX;
        for (int i = 0; i < 4; ++i) {
            const std::uint64_t a = nixlFastClock::now();
            const std::uint64_t m = monotonicNs();
            const std::uint64_t b = nixlFastClock::now();
            if (b >= a && b - a < best) {
                best = b - a;
                tick = a + (b - a) / 2;
                ns = m;
            }
            if (best < 4096) { // about 2 us at 2 GHz: good enough
                break;
            }
        }
    }

    std::uint64_t
    periodTicks(std::uint64_t rate_q32) noexcept {
        const auto p = (static_cast<unsigned __int128>(anchor_period_ns) << 32) / rate_q32;
        return p == 0 ? 1 : static_cast<std::uint64_t>(p);
    }

} // namespace

ClockSegment
nextSegment(const ClockSegment &cur,
            std::uint64_t tick,
            std::uint64_t mono_ns,
            std::uint64_t rate_q32,
            std::uint64_t period_ticks) noexcept {
    if (rate_q32 == 0) {
        rate_q32 = cur.nsPerTickQ32 != 0 ? cur.nsPerTickQ32 : std::uint64_t{1} << 32;
    }
    if (period_ticks == 0) {
        period_ticks = 1;
    }
    ClockSegment next;
    next.tick0 = tick > cur.tick0 ? tick : cur.tick0;
    next.ns0 = cur.at(next.tick0);
    if (mono_ns > next.ns0 && mono_ns - next.ns0 > max_slew_ns) {
        next.ns0 = mono_ns; // far behind (e.g. a bad first rate): forward only
    }
    // Slope meeting CLOCK_MONOTONIC after one period: rate + error / period.
    const __int128 err = static_cast<__int128>(mono_ns) - static_cast<__int128>(next.ns0);
    __int128 q = static_cast<__int128>(rate_q32) + err * (static_cast<__int128>(1) << 32) /
            static_cast<__int128>(period_ticks);
    const __int128 lo = static_cast<__int128>(rate_q32 / 2 != 0 ? rate_q32 / 2 : 1);
    const __int128 hi = static_cast<__int128>(rate_q32) * 2;
    if (q < lo) {
        q = lo;
    } else if (q > hi) {
        q = hi;
    }
    next.nsPerTickQ32 = static_cast<std::uint64_t>(q);
    return next;
}

void
TraceClock::init() noexcept {
    static std::once_flag once;
    std::call_once(once, [] {
        nixlFastClock::init();
        if (!usesTsc()) {
            return; // ticks are CLOCK_MONOTONIC nanoseconds
        }
        anchorState &a = anchors();
        // nixlFastClock's calibration, from picoseconds to nanoseconds per tick.
        a.rateQ32 = nixlFastClock::psPerTickQ32() / 1000u;
        if (a.rateQ32 == 0) {
            a.rateQ32 = 1;
        }
        samplePair(a.firstTick, a.firstNs);
        publish(ClockSegment{a.firstTick, a.firstNs, a.rateQ32}, periodTicks(a.rateQ32));
    });
}

ClockSegment
TraceClock::reanchorAt(std::uint64_t) noexcept {
    anchorState &a = anchors();
    if (a.busy.exchange(true, std::memory_order_acquire)) {
        return load(); // another thread is re-anchoring; the current line is still good
    }
    std::uint64_t tick = 0;
    std::uint64_t mono = 0;
    samplePair(tick, mono);
    const ClockSegment cur = load();
    // The rate over everything since the first anchor: its error shrinks as the process runs.
    if (tick > a.firstTick && mono > a.firstNs) {
        const auto r = (static_cast<unsigned __int128>(mono - a.firstNs) << 32) /
            (tick - a.firstTick);
        if (r > 0 && r < (static_cast<unsigned __int128>(1) << 64)) {
            a.rateQ32 = static_cast<std::uint64_t>(r);
        }
    }
    const std::uint64_t period = periodTicks(a.rateQ32);
    const ClockSegment next = nextSegment(cur, tick, mono, a.rateQ32, period);
    publish(next, period);
    a.busy.store(false, std::memory_order_release);
    return next;
}

void
TraceClock::publish(const ClockSegment &next, std::uint64_t period_ticks) noexcept {
    // Odd while writing. The fields' release stores order this odd value before them, so a
    // reader that acquires a new field value sees a changed sequence number and retries.
    const std::uint32_t s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    tick0_.store(next.tick0, std::memory_order_release);
    ns0_.store(next.ns0, std::memory_order_release);
    rate_.store(next.nsPerTickQ32, std::memory_order_release);
    periodTicks_.store(period_ticks, std::memory_order_relaxed);
    seq_.store(s + 2, std::memory_order_release);
}

} // namespace nixl::trace
