/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlFastClock: the source decision, and that ticks convert to the same time steady_clock
// tells (units, sign, anchor). Tolerances are a millisecond: they catch a wrong unit or anchor,
// not the clock's speed, which benchmark/telemetry_cost measures.
#include <chrono>

#include <gtest/gtest.h>

#include "common/fast_clock.h"

namespace {

using steady = std::chrono::steady_clock;
using source_t = nixlFastClock::source_t;

constexpr auto kSlack = std::chrono::milliseconds(1);

TEST(telemetryClock, ChoosesTscOnlyWhenInvariantAndTheKernelUsesIt) {
#if defined(__x86_64__)
    EXPECT_EQ(source_t::TSC, nixlFastClock::choose(true, "tsc"));
    EXPECT_EQ(source_t::TSC, nixlFastClock::choose(true, "tsc\n"));
#else
    EXPECT_EQ(source_t::STEADY, nixlFastClock::choose(true, "tsc"));
#endif
    EXPECT_EQ(source_t::STEADY, nixlFastClock::choose(false, "tsc\n"));
    EXPECT_EQ(source_t::STEADY, nixlFastClock::choose(true, "kvm-clock\n"));
    EXPECT_EQ(source_t::STEADY, nixlFastClock::choose(true, "hpet"));
    EXPECT_EQ(source_t::STEADY, nixlFastClock::choose(true, "")); // sysfs unreadable
    EXPECT_EQ(source_t::STEADY, nixlFastClock::choose(true, "tsc-early"));
}

TEST(telemetryClock, TicksConvertToSteadyClockTime) {
    nixlFastClock::init();
    const auto before = steady::now();
    const nixlFastClock::ticks_t t = nixlFastClock::now();
    const auto after = steady::now();
    const auto at = nixlFastClock::toSteady(t);
    EXPECT_GE(at, before - kSlack);
    EXPECT_LE(at, after + kSlack);
}

TEST(telemetryClock, DurationsAreMicrosecondsOfSteadyClock) {
    nixlFastClock::init();
    EXPECT_EQ(0, nixlFastClock::toMicros(0).count());
    const auto s0 = steady::now();
    const nixlFastClock::ticks_t t0 = nixlFastClock::now();
    // Await an interval of at least 5 ms on steady_clock (a condition, not a sleep).
    auto s1 = s0;
    nixlFastClock::ticks_t t1 = t0;
    while (s1 - s0 < std::chrono::milliseconds(5)) {
        t1 = nixlFastClock::now();
        s1 = steady::now();
    }
    ASSERT_GE(t1, t0);
    const auto measured = nixlFastClock::toMicros(t1 - t0);
    const auto truth = std::chrono::duration_cast<std::chrono::microseconds>(s1 - s0);
    EXPECT_GE(measured, truth - kSlack) << "source " << static_cast<int>(nixlFastClock::source());
    EXPECT_LE(measured, truth + kSlack) << "source " << static_cast<int>(nixlFastClock::source());
    // refine() may only improve the rate: the same interval still converts the same way.
    nixlFastClock::refine();
    EXPECT_GE(nixlFastClock::toMicros(t1 - t0), truth - kSlack);
    EXPECT_LE(nixlFastClock::toMicros(t1 - t0), truth + kSlack);
}

TEST(telemetryClock, NowNeverGoesBackwardsOnOneThread) {
    nixlFastClock::init();
    nixlFastClock::ticks_t last = nixlFastClock::now();
    for (int i = 0; i < 100000; ++i) {
        const nixlFastClock::ticks_t t = nixlFastClock::now();
        ASSERT_GE(t, last) << "read " << i;
        last = t;
    }
}

} // namespace
