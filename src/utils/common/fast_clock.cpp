/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "common/fast_clock.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>

#include "common/nixl_log.h"
#include "common/nixl_text.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

std::atomic<bool> nixlFastClock::useTsc_{false};
std::atomic<uint64_t> nixlFastClock::psPerTickQ32_{uint64_t{1000} << 32};

namespace {

using steady = std::chrono::steady_clock;

// The calibration anchor and the last derivation; written under calibMutex.
struct calibration {
    std::mutex mutex;
    nixlFastClock::ticks_t ticks0 = 0;
    steady::time_point steady0{};
    uint64_t lastSpanNs = 0;
};

calibration &
calib() {
    static calibration c;
    return c;
}

bool
cpuHasInvariantTsc() noexcept {
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    // The cast: GCC declares the result unsigned, clang int.
    if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u) {
        return false;
    }
    __cpuid(0x80000007u, a, b, c, d);
    return (d & (1u << 8)) != 0;
#else
    return false;
#endif
}

std::string
kernelClocksource() {
    std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string s;
    std::getline(in, s);
    return s;
}

// One (ticks, steady) pair read as close together as we can: the pair with the shortest
// steady_clock bracket, its TSC read taken in the middle. Tries until a bracket is under a
// microsecond (a preemption between the reads makes one of milliseconds), at most 16 times.
void
samplePair(nixlFastClock::ticks_t &ticks, steady::time_point &at) noexcept {
    steady::duration best = steady::duration::max();
    for (int i = 0; i < 16 && best > std::chrono::microseconds(1); ++i) {
        const auto before = steady::now();
        const auto t = nixlFastClock::now();
        const auto after = steady::now();
        if (after - before < best) {
            best = after - before;
            ticks = t;
            at = before + (after - before) / 2;
        }
    }
}

// Stores picoseconds per tick, derived from two pairs.
void
derive(nixlFastClock::ticks_t t0, steady::time_point s0, nixlFastClock::ticks_t t1,
       steady::time_point s1, std::atomic<uint64_t> &out) noexcept {
    if (t1 <= t0 || s1 <= s0) {
        return;
    }
    const auto ns = static_cast<unsigned __int128>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(s1 - s0).count());
    // ps/tick in 32.32: ns * 1000 * 2^32 / ticks.
    const unsigned __int128 q = (ns * 1000u << 32) / (t1 - t0);
    if (q > 0 && q < (static_cast<unsigned __int128>(1) << 64)) {
        out.store(static_cast<uint64_t>(q), std::memory_order_relaxed);
    }
}

} // namespace

nixlFastClock::source_t
nixlFastClock::choose(bool invariant_tsc, std::string_view kernel_clocksource) noexcept {
    kernel_clocksource = nixlText::trim(kernel_clocksource); // a line of sysfs
#if defined(__x86_64__)
    if (invariant_tsc && kernel_clocksource == "tsc") {
        return source_t::TSC;
    }
#endif
    return source_t::STEADY;
}

nixlFastClock::source_t
nixlFastClock::choose(bool invariant_tsc,
                      std::string_view kernel_clocksource,
                      mode_t mode) noexcept {
    switch (mode) {
    case mode_t::STEADY:
        return source_t::STEADY;
    case mode_t::TSC:
#if defined(__x86_64__)
        return invariant_tsc ? source_t::TSC : source_t::STEADY;
#else
        return source_t::STEADY;
#endif
    case mode_t::AUTO:
        break;
    }
    return choose(invariant_tsc, kernel_clocksource);
}

bool
nixlFastClock::parseMode(const char *value, mode_t &mode) noexcept {
    const std::string_view v = nixlText::trim(value != nullptr ? value : "");
    const auto is = [v](std::string_view word) {
        if (v.size() != word.size()) return false;
        for (size_t i = 0; i < v.size(); ++i) {
            if (std::tolower(static_cast<unsigned char>(v[i])) != word[i]) return false;
        }
        return true;
    };
    if (v.empty() || is("auto")) {
        mode = mode_t::AUTO;
    } else if (is("steady")) {
        mode = mode_t::STEADY;
    } else if (is("tsc")) {
        mode = mode_t::TSC;
    } else {
        return false;
    }
    return true;
}

void
nixlFastClock::init() noexcept {
    static std::once_flag once;
    std::call_once(once, [] {
        std::string cs;
        try {
            cs = kernelClocksource();
        }
        catch (...) {
            cs.clear(); // unreadable sysfs: keep steady_clock
        }
        const char *env = std::getenv("NIXL_FAST_CLOCK");
        mode_t mode = mode_t::AUTO;
        if (!parseMode(env, mode)) {
            NIXL_WARN << "NIXL_FAST_CLOCK='" << nixl::log::cut(env)
                      << "' is not auto, steady or tsc; using auto (the kernel's clocksource, '"
                      << cs << "', decides)";
        }
        const bool invariant = cpuHasInvariantTsc();
        const source_t src = choose(invariant, cs, mode);
        if (mode == mode_t::TSC) {
            if (src == source_t::TSC) {
                NIXL_INFO << "NIXL_FAST_CLOCK=tsc: timestamps read the TSC (kernel clocksource '"
                          << cs << "')";
            } else {
                NIXL_WARN << "NIXL_FAST_CLOCK=tsc: this CPU has no invariant TSC; using "
                             "steady_clock";
            }
        }
        if (src != source_t::TSC) {
            return; // nanosecond ticks, rate already 1000 ps per tick
        }
        calibration &c = calib();
        std::lock_guard<std::mutex> lock(c.mutex);
        useTsc_.store(true, std::memory_order_relaxed);
        samplePair(c.ticks0, c.steady0);
        // 2 ms: steady_clock's ~50 ns jitter makes the first rate good to ~5e-5; refine()
        // improves it from then on.
        ticks_t t1 = 0;
        steady::time_point s1{};
        do {
            samplePair(t1, s1);
        } while (s1 - c.steady0 < std::chrono::milliseconds(2));
        derive(c.ticks0, c.steady0, t1, s1, psPerTickQ32_);
        c.lastSpanNs = static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(s1 - c.steady0).count());
    });
}

void
nixlFastClock::refine() noexcept {
    if (!useTsc_.load(std::memory_order_relaxed)) {
        return;
    }
    calibration &c = calib();
    std::lock_guard<std::mutex> lock(c.mutex);
    ticks_t t1 = 0;
    steady::time_point s1{};
    samplePair(t1, s1);
    const auto span = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(s1 - c.steady0).count());
    if (span < 2 * c.lastSpanNs) {
        return;
    }
    derive(c.ticks0, c.steady0, t1, s1, psPerTickQ32_);
    c.lastSpanNs = span;
}

std::chrono::steady_clock::time_point
nixlFastClock::toSteady(ticks_t t) noexcept {
    if (!useTsc_.load(std::memory_order_relaxed)) {
        return steady::time_point(std::chrono::nanoseconds(static_cast<int64_t>(t)));
    }
    // Anchored now rather than at calibration: the error is the rate's error times the age of
    // t (microseconds for a request just finished), not times the process's uptime.
    ticks_t nowTicks = 0;
    steady::time_point nowSteady{};
    samplePair(nowTicks, nowSteady);
    const uint64_t q = psPerTickQ32_.load(std::memory_order_relaxed);
    if (t <= nowTicks) {
        const auto ps = static_cast<unsigned __int128>(nowTicks - t) * q >> 32;
        return nowSteady - std::chrono::nanoseconds(static_cast<int64_t>(static_cast<uint64_t>(ps) / 1000u));
    }
    const auto ps = static_cast<unsigned __int128>(t - nowTicks) * q >> 32;
    return nowSteady + std::chrono::nanoseconds(static_cast<int64_t>(static_cast<uint64_t>(ps) / 1000u));
}
