/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file trace_clock.h
 * @brief The clock of trace events: CLOCK_MONOTONIC nanoseconds, computed from the raw
 *        counter telemetry already reads (nixlFastClock ticks, the CPU's time-stamp counter
 *        where that is safe), so that a traced request reads the counter once per timestamp
 *        however many consumers use it, and a read costs an rdtsc instead of a vDSO call.
 *
 * Where nixlFastClock uses the TSC (invariant TSC per CPUID and the kernel's own clocksource
 * is "tsc": see fast_clock.h), ticks map to nanoseconds through a line (a ClockSegment) that is
 * re-anchored against clock_gettime(CLOCK_MONOTONIC) every anchor_period_ns by whichever
 * thread first converts a tick past it. A re-anchor never steps the clock back: the new line
 * starts where the old one ends at that tick and its slope is changed (slewed) so that it meets
 * CLOCK_MONOTONIC one period later; only a line that is behind by more than max_slew_ns steps
 * forward. So two processes' files line up to within the slew error (microseconds), and on one
 * thread a later conversion never gives an earlier time (each thread also keeps the last value
 * it returned, which covers a re-anchor published between its read and its conversion), so
 * spans nest. Anywhere else a tick is a steady_clock nanosecond (CLOCK_MONOTONIC in libstdc++)
 * and the conversion is the identity.
 *
 * Thread safety: every function may be called from any thread; init() (idempotent) must have
 * returned before the first ticks()/toNs() (the Tracer's creation calls it).
 */
#ifndef NIXL_SRC_CORE_TRACING_TRACE_CLOCK_H
#define NIXL_SRC_CORE_TRACING_TRACE_CLOCK_H

#include <atomic>
#include <cstdint>

#include "common/fast_clock.h"

namespace nixl::trace {

/** One piece of the tick-to-nanosecond map: ns(t) = ns0 + (t - tick0) * nsPerTickQ32 / 2^32. */
struct ClockSegment {
    std::uint64_t tick0 = 0;
    std::uint64_t ns0 = 0;
    std::uint64_t nsPerTickQ32 = std::uint64_t{1} << 32; ///< 32.32 fixed point, > 0

    /** The time of tick t; ticks before tick0 map to ns0 (a read that raced a re-anchor). */
    std::uint64_t
    at(std::uint64_t t) const noexcept {
        if (t <= tick0) {
            return ns0;
        }
        return ns0 +
            static_cast<std::uint64_t>(
                   static_cast<unsigned __int128>(t - tick0) * nsPerTickQ32 >> 32);
    }
};

/** How often the line is re-anchored against CLOCK_MONOTONIC. */
inline constexpr std::uint64_t anchor_period_ns = 100'000'000;
/** Larger errors than this are not slewed: a line behind steps forward, one ahead stalls. */
inline constexpr std::uint64_t max_slew_ns = 1'000'000;

/**
 * The segment that follows cur at tick (with CLOCK_MONOTONIC reading mono_ns there): it starts
 * at cur.at(tick), or at mono_ns when the line is behind by more than max_slew_ns, and its
 * slope is rate_q32 (the best estimate of nanoseconds per tick) corrected so that it meets
 * CLOCK_MONOTONIC after period_ticks. The slope stays within [rate/2, 2*rate], so it is never
 * zero or negative: the map stays non-decreasing across segments. Pure: the tests drive it.
 */
ClockSegment
nextSegment(const ClockSegment &cur,
            std::uint64_t tick,
            std::uint64_t mono_ns,
            std::uint64_t rate_q32,
            std::uint64_t period_ticks) noexcept;

/** The process's trace clock (static state in trace_clock.cpp). */
class TraceClock {
public:
    /** Calibrates nixlFastClock if needed and takes the first anchor. Idempotent. */
    static void
    init() noexcept;

    /** True when ticks are TSC ticks converted through the anchored line. */
    static bool
    usesTsc() noexcept {
        return nixlFastClock::source() == nixlFastClock::source_t::TSC;
    }

    /** A raw timestamp: the same counter as nixlFastClock::now(). */
    static std::uint64_t
    ticks() noexcept {
        return nixlFastClock::now();
    }

    /**
     * CLOCK_MONOTONIC nanoseconds of a tick read on this thread; calls on one thread with
     * non-decreasing ticks return non-decreasing times. Hot path: a seqlock read of the
     * segment, a 64x64 multiply, and the thread's last value.
     */
    static std::uint64_t
    toNs(std::uint64_t t) noexcept {
        if (!usesTsc()) {
            return t; // steady_clock nanoseconds already
        }
        ClockSegment s = load();
        if (t > s.tick0 && t - s.tick0 >= periodTicks_.load(std::memory_order_relaxed))
            [[unlikely]] {
            s = reanchorAt(t);
        }
        std::uint64_t ns = s.at(t);
        // A re-anchor published between this thread's read of the segment and an earlier
        // conversion can put the new line a few nanoseconds below the old one's value.
        std::uint64_t &last = lastNs_;
        if (ns < last) {
            ns = last;
        }
        last = ns;
        return ns;
    }

    /** toNs(ticks()). */
    static std::uint64_t
    nowNs() noexcept {
        return toNs(ticks());
    }

    /**
     * The last time toNs() returned on this thread: what a tick read now must not convert
     * below. A span that converts its begin late (toNsSpan) keeps it as that begin's floor.
     * Kept only with the TSC: on steady_clock ticks are already monotonic nanoseconds, so no
     * floor is needed and this stays 0 (every floor comparison then passes).
     */
    static std::uint64_t
    lastNs() noexcept {
        return lastNs_;
    }

    /**
     * Converts an interval read on this thread with one read of the line: end_ns is
     * toNs(end_ticks); begin_ns is begin_ticks on the same line (extrapolated back when the
     * line was re-anchored after begin_ticks), not below floor_ns (lastNs() when begin_ticks
     * was read) and not above end_ns. So a span may read its begin tick and convert it only
     * when it ends, and the conversion's wait for the counter is not on its begin path.
     */
    static void
    toNsSpan(std::uint64_t begin_ticks,
             std::uint64_t floor_ns,
             std::uint64_t end_ticks,
             std::uint64_t &begin_ns,
             std::uint64_t &end_ns) noexcept {
        if (!usesTsc()) {
            begin_ns = begin_ticks;
            end_ns = end_ticks;
            return;
        }
        ClockSegment s = load();
        if (end_ticks > s.tick0 && end_ticks - s.tick0 >= periodTicks_.load(std::memory_order_relaxed))
            [[unlikely]] {
            s = reanchorAt(end_ticks);
        }
        std::uint64_t e = s.at(end_ticks);
        std::uint64_t &last = lastNs_;
        if (e < last) {
            e = last;
        }
        last = e;
        end_ns = e;
        std::uint64_t b = before(s, begin_ticks);
        b = b < floor_ns ? floor_ns : b;
        begin_ns = b > e ? e : b;
    }

    /** The begin half of toNsSpan() alone (the end is known otherwise); no lastNs() update. */
    static std::uint64_t
    beginNs(std::uint64_t begin_ticks, std::uint64_t floor_ns) noexcept {
        if (!usesTsc()) {
            return begin_ticks;
        }
        const std::uint64_t b = before(load(), begin_ticks);
        return b < floor_ns ? floor_ns : b;
    }

    /** The segment in use (for tests and diagnostics). */
    static ClockSegment
    segment() noexcept {
        return load();
    }

    /** Re-anchors at the current tick, whatever the period (tests). */
    static void
    reanchor() noexcept {
        if (usesTsc()) {
            reanchorAt(ticks());
        }
    }

private:
    /** s.at(t), extended back along the line for a t before s.tick0 (not clamped to ns0). */
    static std::uint64_t
    before(const ClockSegment &s, std::uint64_t t) noexcept {
        if (t >= s.tick0) {
            return s.at(t);
        }
        const auto back = static_cast<std::uint64_t>(
            static_cast<unsigned __int128>(s.tick0 - t) * s.nsPerTickQ32 >> 32);
        return back < s.ns0 ? s.ns0 - back : 0;
    }

    static ClockSegment
    load() noexcept {
        ClockSegment s;
        for (;;) {
            // Acquire loads rather than a fence (TSan does not model fences; on x86 both are
            // plain loads): a field written by a writer makes its odd sequence number visible
            // to the second load below, which then differs from the first.
            const std::uint32_t before = seq_.load(std::memory_order_acquire);
            s.tick0 = tick0_.load(std::memory_order_acquire);
            s.ns0 = ns0_.load(std::memory_order_acquire);
            s.nsPerTickQ32 = rate_.load(std::memory_order_acquire);
            if ((before & 1u) == 0 && seq_.load(std::memory_order_relaxed) == before) {
                return s;
            }
        }
    }

    /** Takes a new anchor unless another thread is taking one; returns the segment in use. */
    static ClockSegment
    reanchorAt(std::uint64_t t) noexcept;

    /** Writer side of the sequence lock (one writer at a time). */
    static void
    publish(const ClockSegment &s, std::uint64_t period_ticks) noexcept;

    // The segment, under a sequence lock (odd while being written): atomics, so readers racing
    // the rare writer are well defined.
    static std::atomic<std::uint32_t> seq_;
    static std::atomic<std::uint64_t> tick0_;
    static std::atomic<std::uint64_t> ns0_;
    static std::atomic<std::uint64_t> rate_;
    static std::atomic<std::uint64_t> periodTicks_;
    // constinit: other files read it directly, without calling its TLS wrapper function.
    static constinit thread_local std::uint64_t lastNs_ __attribute__((tls_model("initial-exec")));
};

} // namespace nixl::trace

#endif // NIXL_SRC_CORE_TRACING_TRACE_CLOCK_H
