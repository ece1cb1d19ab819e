/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The chrome writer's wait policy (chrome_pace.h), as pure functions: no timing involved.
#include <gtest/gtest.h>

#include "chrome_pace.h"

namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr size_t kRing = size_t{1} << 20;
constexpr microseconds kInterval = milliseconds(100);

TEST(chromePace, FirstWaitIsASixteenthOfTheIntervalWithinItsBounds) {
    EXPECT_EQ(microseconds(6250), nixlChromePace::first(kInterval));
    EXPECT_EQ(microseconds(225000000), nixlChromePace::first(milliseconds(3600000)));
    EXPECT_EQ(milliseconds(1), nixlChromePace::first(milliseconds(4))); // not below 1 ms
    EXPECT_EQ(milliseconds(1), nixlChromePace::first(milliseconds(1)));
}

TEST(chromePace, ADropOrAHalfFullRingDrainsAsOftenAsAllowed) {
    EXPECT_EQ(milliseconds(1),
              nixlChromePace::next(0, true, kRing, milliseconds(100), kInterval, kInterval));
    EXPECT_EQ(milliseconds(1), nixlChromePace::next(kRing / 2, false, kRing, milliseconds(100),
                                                    kInterval, kInterval));
}

TEST(chromePace, ComesBackWhenTheFullestRingWouldBeAQuarterFull) {
    // An eighth of the ring in 10 ms: a quarter takes 20 ms.
    EXPECT_EQ(milliseconds(20), nixlChromePace::next(kRing / 8, false, kRing, milliseconds(10),
                                                     kInterval, kInterval));
    // Slow filling: the interval bounds it.
    EXPECT_EQ(kInterval, nixlChromePace::next(1000, false, kRing, milliseconds(100), kInterval,
                                              kInterval));
    // Fast filling: not below 1 ms.
    EXPECT_EQ(milliseconds(1), nixlChromePace::next(kRing / 4, false, kRing, microseconds(100),
                                                    kInterval, kInterval));
}

TEST(chromePace, GrowsAtMostTwofoldPerPass) {
    microseconds wait = milliseconds(1);
    for (microseconds expect : {milliseconds(2), milliseconds(4), milliseconds(8),
                                milliseconds(16), milliseconds(32), milliseconds(64),
                                milliseconds(100), milliseconds(100)}) {
        wait = nixlChromePace::next(0, false, kRing, wait, wait, kInterval); // idle rings
        EXPECT_EQ(expect, wait);
    }
}

TEST(chromePace, AnIntervalBelowOneMillisecondIsKept) {
    // NIXL_TRACE_CHROME_FLUSH_MS is at least 1 ms; the policy still never exceeds it.
    const microseconds interval(500);
    EXPECT_EQ(interval, nixlChromePace::first(interval));
    EXPECT_EQ(interval, nixlChromePace::next(0, true, kRing, nanoseconds(0), interval, interval));
    EXPECT_EQ(interval, nixlChromePace::next(0, false, kRing, nanoseconds(0), interval, interval));
}

} // namespace
