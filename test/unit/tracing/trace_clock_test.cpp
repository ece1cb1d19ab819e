/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The trace clock (tracing/trace_clock.h): the segment arithmetic driven with synthetic
// anchors (continuity, never backwards, convergence), and the process's clock: non-decreasing
// on a thread across forced re-anchors, and within a bound of CLOCK_MONOTONIC. Only
// properties that hold however the machine is loaded: a preemption widens a bracket, it never
// narrows one, and no duration is compared with a budget.

#include <gtest/gtest.h>

#include <time.h>

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "tracing/trace_clock.h"

namespace {

using nixl::trace::ClockSegment;
using nixl::trace::max_slew_ns;
using nixl::trace::nextSegment;
using nixl::trace::TraceClock;

constexpr uint64_t q32 = uint64_t{1} << 32;

uint64_t
monotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

/** A simulated machine: TSC at 2.5 ticks per ns; CLOCK_MONOTONIC runs rate_ppm fast. */
struct simClock {
    double ticksPerNs = 2.5;
    double ppm = 0;
    uint64_t monoAtZero = 1'000'000'000'000;

    uint64_t
    mono(uint64_t tick) const {
        return monoAtZero +
            static_cast<uint64_t>(static_cast<double>(tick) / ticksPerNs * (1 + ppm * 1e-6));
    }
};

} // namespace

TEST(traceClockSegment, AtIsLinearAndClampsTicksBeforeTheAnchor) {
    const ClockSegment s{1000, 5000, q32 / 2}; // half a nanosecond per tick
    EXPECT_EQ(s.at(1000), 5000u);
    EXPECT_EQ(s.at(999), 5000u); // a tick read before a racing re-anchor
    EXPECT_EQ(s.at(0), 5000u);
    EXPECT_EQ(s.at(3000), 6000u);
    // A tick distance that overflows 64 bits in the product still converts (128-bit product).
    const ClockSegment big{0, 0, 3 * q32};
    EXPECT_EQ(big.at(uint64_t{1} << 40), uint64_t{3} << 40);
}

TEST(traceClockSegment, NextStartsWhereTheOldEndsAndSlewsTowardsMonotonic) {
    const ClockSegment cur{0, 1'000'000, q32 / 2};
    const uint64_t tick = 2'000'000; // cur says 2,000,000 ns there
    ASSERT_EQ(cur.at(tick), 2'000'000u);
    const uint64_t period = 200'000'000; // 100 ms of ticks
    // CLOCK_MONOTONIC 10 us ahead of the line: continue from the line, steeper slope.
    ClockSegment n = nextSegment(cur, tick, 2'010'000, q32 / 2, period);
    EXPECT_EQ(n.tick0, tick);
    EXPECT_EQ(n.ns0, 2'000'000u);
    EXPECT_GT(n.nsPerTickQ32, q32 / 2);
    // After one period the line meets CLOCK_MONOTONIC's (rate-extrapolated) value, to 1 ns.
    const uint64_t target = 2'010'000 + period / 2;
    EXPECT_LE(n.at(tick + period) > target ? n.at(tick + period) - target :
                                             target - n.at(tick + period),
              1u);
    // The line ahead of CLOCK_MONOTONIC: never stepped back, a shallower slope instead.
    n = nextSegment(cur, tick, 1'990'000, q32 / 2, period);
    EXPECT_EQ(n.ns0, 2'000'000u);
    EXPECT_LT(n.nsPerTickQ32, q32 / 2);
    EXPECT_GE(n.nsPerTickQ32, q32 / 4); // at most half speed
    // Far ahead (a second; the slew needs more than a period): still continuous, slope
    // clamped to half speed, never zero.
    const ClockSegment late{0, 2'000'000'000, q32 / 2};
    n = nextSegment(late, tick, 1'000'000'000, q32 / 2, period);
    EXPECT_EQ(n.ns0, late.at(tick));
    EXPECT_EQ(n.nsPerTickQ32, q32 / 4);
    // Far behind (more than max_slew_ns): steps forward to CLOCK_MONOTONIC.
    n = nextSegment(cur, tick, 2'000'000 + 5 * max_slew_ns, q32 / 2, period);
    EXPECT_EQ(n.ns0, 2'000'000 + 5 * max_slew_ns);
    // A tick before the current anchor (a stale sample) does not move the anchor back.
    n = nextSegment(ClockSegment{tick, 2'000'000, q32 / 2}, tick - 100, 2'000'000, q32 / 2,
                    period);
    EXPECT_EQ(n.tick0, tick);
    EXPECT_EQ(n.ns0, 2'000'000u);
}

TEST(traceClockSegment, NeverBackwardsAcrossReanchorsWithNoisyAnchors) {
    // Anchors with random errors up to several slew limits either way and a drifting
    // reference: every conversion of increasing ticks, across segments, is non-decreasing.
    std::mt19937_64 rng(12345);
    std::uniform_int_distribution<int64_t> noise(-3 * static_cast<int64_t>(max_slew_ns),
                                                 3 * static_cast<int64_t>(max_slew_ns));
    const simClock sim{2.5, 300};
    const uint64_t rate = static_cast<uint64_t>(q32 / 2.5);
    const uint64_t period = 250'000'000;
    ClockSegment seg{0, sim.mono(0), rate};
    uint64_t last = seg.at(0);
    uint64_t tick = 0;
    for (int anchor = 0; anchor < 2000; ++anchor) {
        for (int i = 0; i < 16; ++i) {
            tick += 1 + rng() % (period / 8);
            const uint64_t ns = seg.at(tick);
            ASSERT_GE(ns, last) << "anchor " << anchor << " step " << i;
            last = ns;
        }
        const uint64_t mono = static_cast<uint64_t>(static_cast<int64_t>(sim.mono(tick)) +
                                                    noise(rng));
        seg = nextSegment(seg, tick, mono, rate, period);
        ASSERT_GT(seg.nsPerTickQ32, 0u);
        ASSERT_GE(seg.at(tick), last) << "anchor " << anchor;
    }
}

TEST(traceClockSegment, ConvergesOnAReferenceThatRunsAtAnotherRate) {
    // The rate estimate is 500 ppm off and the line starts 400 us ahead: re-anchoring every
    // period brings the error under a microsecond per period of drift.
    const simClock sim{2.5, 500};
    const uint64_t rate = static_cast<uint64_t>(q32 / 2.5); // believes 0 ppm
    const uint64_t period = 250'000'000; // 100 ms
    ClockSegment seg{0, sim.mono(0) + 400'000, rate};
    uint64_t tick = 0;
    for (int i = 0; i < 50; ++i) {
        tick += period;
        seg = nextSegment(seg, tick, sim.mono(tick), rate, period);
    }
    // 500 ppm of a 100 ms period is 50 us: the lag of a line corrected one period late.
    for (uint64_t t = tick; t < tick + period; t += period / 10) {
        const int64_t err = static_cast<int64_t>(seg.at(t)) - static_cast<int64_t>(sim.mono(t));
        EXPECT_LT(err < 0 ? -err : err, 60'000) << "at tick " << t;
    }
}

TEST(traceClock, NonDecreasingOnAThreadAcrossForcedReanchors) {
    TraceClock::init();
    auto run = [] {
        uint64_t last = TraceClock::nowNs();
        for (int i = 0; i < 20000; ++i) {
            if (i % 97 == 0) {
                TraceClock::reanchor();
            }
            const uint64_t t = TraceClock::ticks();
            const uint64_t ns = TraceClock::toNs(t);
            if (ns < last) {
                return false;
            }
            last = ns;
        }
        return true;
    };
    // Two threads: each re-anchors under the other's reads.
    bool other = false;
    std::thread th([&] { other = run(); });
    const bool mine = run();
    th.join();
    EXPECT_TRUE(mine);
    EXPECT_TRUE(other);
}

TEST(traceClock, WithinABoundOfClockMonotonic) {
    TraceClock::init();
    // The bound covers the calibration's rate error over one anchor period and the slew;
    // CLOCK_MONOTONIC read before and after brackets the conversion, so a preemption only
    // widens the window.
    constexpr uint64_t bound = 20'000'000; // 20 ms
    for (int i = 0; i < 1000; ++i) {
        if (i % 100 == 0) {
            TraceClock::reanchor();
        }
        const uint64_t before = monotonicNs();
        const uint64_t ns = TraceClock::nowNs();
        const uint64_t after = monotonicNs();
        ASSERT_GE(ns + bound, before) << "sample " << i;
        ASSERT_LE(ns, after + bound) << "sample " << i;
    }
    const ClockSegment s = TraceClock::segment();
    EXPECT_GT(s.nsPerTickQ32, 0u);
    if (!TraceClock::usesTsc()) {
        // Ticks are CLOCK_MONOTONIC nanoseconds: the identity.
        EXPECT_EQ(TraceClock::toNs(12345), 12345u);
    }
}

// A span converting its begin tick only when it ends (TraceClock::toNsSpan): the begin is never
// after the end, never below what the thread returned before the begin was read, and sequential
// spans do not overlap, also when the line is re-anchored inside a span.
TEST(traceClock, LateBeginConversionKeepsOrder) {
    TraceClock::init();
    uint64_t prevEnd = TraceClock::nowNs();
    for (int i = 0; i < 5000; ++i) {
        const uint64_t floor = TraceClock::lastNs();
        const uint64_t b = TraceClock::ticks();
        if (i % 7 == 0) {
            TraceClock::reanchor(); // a new line between the begin and the end
        }
        if (i % 11 == 0) {
            TraceClock::nowNs(); // an event inside the span moves lastNs() on
        }
        const uint64_t e = TraceClock::ticks();
        uint64_t beginNs = 0;
        uint64_t endNs = 0;
        TraceClock::toNsSpan(b, floor, e, beginNs, endNs);
        ASSERT_LE(beginNs, endNs) << "span " << i;
        ASSERT_GE(beginNs, floor) << "span " << i;
        ASSERT_GE(beginNs, prevEnd) << "span " << i;
        if (TraceClock::usesTsc()) {
            // lastNs() is kept only on the TSC line; on steady_clock it stays 0.
            ASSERT_EQ(TraceClock::lastNs(), endNs) << "span " << i;
        } else {
            ASSERT_EQ(TraceClock::lastNs(), 0u) << "span " << i;
        }
        const uint64_t alone = TraceClock::beginNs(b, floor);
        ASSERT_GE(alone, floor) << "span " << i;
        prevEnd = endNs;
    }
    if (!TraceClock::usesTsc()) {
        uint64_t beginNs = 0;
        uint64_t endNs = 0;
        TraceClock::toNsSpan(100, 0, 200, beginNs, endNs);
        EXPECT_EQ(beginNs, 100u);
        EXPECT_EQ(endNs, 200u);
    }
}

// A begin tick read before a re-anchor converts on the new line's backward extension: the
// lines meet where the re-anchor took over (continuity), so the result stays close to what the
// old line gave, instead of being clamped to the new line's start.
TEST(traceClock, BeginBeforeReanchorExtrapolatesBack) {
    TraceClock::init();
    if (!TraceClock::usesTsc()) {
        GTEST_SKIP() << "identity conversion: nothing to extrapolate";
    }
    const uint64_t b = TraceClock::ticks();
    const uint64_t eager = TraceClock::toNs(b);
    TraceClock::reanchor();
    const ClockSegment s = TraceClock::segment();
    ASSERT_LT(b, s.tick0);
    const uint64_t late = TraceClock::beginNs(b, 0);
    EXPECT_LT(late, s.ns0); // not the new line's start
    // Equal up to the re-anchor's correction of the line (a slew, at most max_slew_ns).
    const uint64_t diff = late > eager ? late - eager : eager - late;
    EXPECT_LE(diff, max_slew_ns);
}
