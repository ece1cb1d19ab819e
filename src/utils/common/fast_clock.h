/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fast_clock.h
 * @brief Cheap monotonic timestamps for per-request timing on the transfer path.
 *
 * Per-request telemetry (getXferTelemetry, the post-time and transfer-time events) needs three
 * timestamps per transfer. std::chrono::steady_clock::now() costs 10-23 ns on a kvm-clock guest
 * (its vDSO path), against 1-1.5 ns for a read of the CPU's time-stamp counter (telemetry_cost's
 * "timestamp cost" line; figures in benchmark/README.md). So, when it is safe, the hot path takes
 * raw TSC ticks and converts them to microseconds only when a duration is reported.
 *
 * Safe means: x86-64, the CPU says its TSC is invariant (CPUID 0x80000007 EDX bit 8, it ticks at
 * a constant rate through frequency and sleep states), and the kernel itself uses "tsc" as its
 * clocksource, i.e. Linux checked the counters are synchronised across CPUs and did not demote
 * the TSC (it does so on unstable hardware and some hypervisors). Anywhere else a tick is one
 * nanosecond of steady_clock and nothing changes but the name.
 *
 * NIXL_FAST_CLOCK overrides the choice, read once by init(): `auto` (the default, the rule
 * above), `steady` (always steady_clock), `tsc` (the TSC whenever the CPU says it is invariant,
 * whatever the kernel's clocksource: for guests whose hypervisor keeps the TSC synchronised but
 * whose kernel was told not to trust it, e.g. `tsc=unstable` on a kvm-clock VM, where a
 * steady_clock read costs several times a TSC read). With `tsc` the operator vouches for the
 * counters; an interval that still comes out negative is reported as 0, never as a wrapped value.
 *
 * The tick rate is calibrated against steady_clock once (a 2 ms busy wait, in init()), and
 * refine() re-derives it from the whole time since then, so the error of converted durations
 * shrinks as the process runs; the flush thread calls it.
 *
 * Thread-safety: init() and refine() from any thread (init once per process, later calls return
 * at once); now(), toMicros(), toSteady() from any thread, after init() returned.
 */
#ifndef NIXL_SRC_UTILS_COMMON_FAST_CLOCK_H
#define NIXL_SRC_UTILS_COMMON_FAST_CLOCK_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

class nixlFastClock {
public:
    /** A raw timestamp: TSC ticks or steady_clock nanoseconds; only differences mean anything. */
    using ticks_t = uint64_t;

    enum class source_t { STEADY, TSC };

    /** NIXL_FAST_CLOCK: the rule init() applies (see the file comment). */
    enum class mode_t { AUTO, STEADY, TSC };

    /**
     * Parses a NIXL_FAST_CLOCK value: nullptr or "" is AUTO; "auto", "steady", "tsc" (any
     * case, surrounding blanks ignored); false for anything else (init() then warns once and
     * uses AUTO).
     */
    static bool
    parseMode(const char *value, mode_t &mode) noexcept;

    /** Chooses the source and calibrates; idempotent. Must precede the first now(). */
    static void
    init() noexcept;

    /**
     * Re-derives the tick rate from the interval since calibration when that interval has at
     * least doubled since the last derivation (so the work is logarithmic in uptime).
     */
    static void
    refine() noexcept;

    /** The source in use (STEADY before init()). */
    static source_t
    source() noexcept {
        return useTsc_.load(std::memory_order_relaxed) ? source_t::TSC : source_t::STEADY;
    }

    /** Now. Hot path: one relaxed flag load and one counter read. */
    static ticks_t
    now() noexcept {
#if defined(__x86_64__)
        // Relaxed: the flag is written once, in init(), before any caller can reach here.
        if (useTsc_.load(std::memory_order_relaxed)) {
            // Not rdtscp or lfence+rdtsc: a timestamp a few instructions early or late is fine
            // for microsecond telemetry, and the fence would cost as much as the read.
            return __rdtsc();
        }
#endif
        return static_cast<ticks_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
    }

    /**
     * The length of an interval of ticks, in whole microseconds (rounded down). A delta with the
     * top bit set is an end read before its start (TSCs of two CPUs out of step, possible only
     * with NIXL_FAST_CLOCK=tsc) and is 0, not 2^64 ticks.
     */
    static std::chrono::microseconds
    toMicros(ticks_t delta) noexcept {
        if (static_cast<int64_t>(delta) < 0) [[unlikely]] {
            return std::chrono::microseconds(0);
        }
        // 128-bit product: a day of 5 GHz ticks times a 32.32 fixed-point rate would overflow.
        const unsigned __int128 ps = static_cast<unsigned __int128>(delta) *
            psPerTickQ32_.load(std::memory_order_relaxed);
        // Picoseconds fit 64 bits for 200 days; a 64-bit division by a constant is a multiply.
        return std::chrono::microseconds(
            static_cast<int64_t>(static_cast<uint64_t>(ps >> 32) / 1'000'000u));
    }

    /** The current tick length: picoseconds per tick in 32.32 fixed point. */
    static uint64_t
    psPerTickQ32() noexcept {
        return psPerTickQ32_.load(std::memory_order_relaxed);
    }

    /** The steady_clock time point of a timestamp taken in this process. */
    static std::chrono::steady_clock::time_point
    toSteady(ticks_t t) noexcept;

    /**
     * The decision init() makes, given the facts it reads: is the CPU's TSC invariant, and the
     * kernel's current clocksource (the contents of
     * /sys/devices/system/clocksource/clocksource0/current_clocksource, trailing newline allowed).
     */
    static source_t
    choose(bool invariant_tsc, std::string_view kernel_clocksource) noexcept;

    /** As above under a NIXL_FAST_CLOCK mode: STEADY always steady, TSC needs only invariance. */
    static source_t
    choose(bool invariant_tsc, std::string_view kernel_clocksource, mode_t mode) noexcept;

private:
    // Defined in fast_clock.cpp, not `inline` here: an inline variable gets one copy per module
    // built with hidden visibility, and a test binary's now() would read a flag init() never set.
    static std::atomic<bool> useTsc_;
    /** Picoseconds per tick in 32.32 fixed point (1000 << 32 for nanosecond ticks). */
    static std::atomic<uint64_t> psPerTickQ32_;
};

#endif // NIXL_SRC_UTILS_COMMON_FAST_CLOCK_H
