/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The staging queue: capacity, all-or-none batches, drop-newest, drop counting, drain order,
// one lane per producer thread.

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "telemetry/staging_queue.h"

namespace {

using type_t = nixl_telemetry_event_type_t;

nixlTelemetryEvent
ev(uint64_t value, type_t type = type_t::AGENT_TX_BYTES) {
    return nixlTelemetryEvent(type, value);
}

std::vector<uint64_t>
values(std::span<const nixl_telemetry_event_abi_t> s) {
    std::vector<uint64_t> out;
    for (const auto &e : s) {
        out.push_back(e.value);
    }
    return out;
}

TEST(telemetryStagingQueue, ZeroOrHugeCapacityIsRefused) {
    EXPECT_THROW(nixlTelemetryStagingQueue(0), std::invalid_argument);
    // More than 2^40 events per lane is refused before any allocation is tried (the settings
    // stop at 2^32, so only a caller's bug gets here).
    EXPECT_THROW(nixlTelemetryStagingQueue((size_t{1} << 40) + 1), std::invalid_argument);
}

TEST(telemetryStagingQueue, FillsToCapacityThenDropsNewest) {
    nixlTelemetryStagingQueue q(4);
    EXPECT_EQ(4u, q.capacity());
    for (uint64_t i = 1; i <= 4; ++i) {
        EXPECT_TRUE(q.tryPush(ev(i)));
    }
    EXPECT_FALSE(q.tryPush(ev(5)));
    EXPECT_FALSE(q.tryPush(ev(6)));
    EXPECT_EQ(2u, q.numDropped());
    // The oldest four survive, in order; the newest were refused.
    EXPECT_EQ((std::vector<uint64_t>{1, 2, 3, 4}), values(q.drainPending()));
    EXPECT_EQ(2u, q.takeNumDropped());
    EXPECT_EQ(0u, q.takeNumDropped());
    EXPECT_TRUE(q.drainPending().empty());
}

TEST(telemetryStagingQueue, BatchGoesInWholeOrNotAtAll) {
    nixlTelemetryStagingQueue q(5);
    const nixlTelemetryEvent three[] = {ev(1), ev(2), ev(3)};
    EXPECT_TRUE(q.tryPushBatch(three, 3));
    const nixlTelemetryEvent batch[] = {ev(10), ev(11), ev(12)};
    EXPECT_FALSE(q.tryPushBatch(batch, 3)); // 2 free slots: nothing of it goes in
    EXPECT_EQ(3u, q.numDropped());
    EXPECT_TRUE(q.tryPushBatch(batch, 2)); // exactly the free room
    EXPECT_FALSE(q.tryPush(ev(99)));
    EXPECT_EQ((std::vector<uint64_t>{1, 2, 3, 10, 11}), values(q.drainPending()));
    EXPECT_EQ(4u, q.takeNumDropped());
}

TEST(telemetryStagingQueue, BatchLargerThanCapacityIsDroppedWhole) {
    nixlTelemetryStagingQueue q(2);
    const nixlTelemetryEvent batch[] = {ev(1), ev(2), ev(3)};
    EXPECT_FALSE(q.tryPushBatch(batch, 3));
    EXPECT_EQ(3u, q.takeNumDropped());
    EXPECT_TRUE(q.drainPending().empty());
    EXPECT_TRUE(q.tryPushBatch(batch, 0)); // empty batch: nothing to refuse
    EXPECT_EQ(0u, q.numDropped());
}

// tryPushFixed (the transfer path's four events): stamp runs exactly once per call, whether the
// events fit or not, and its value reaches every fill and the caller; a full lane refuses the
// whole batch and counts it.
TEST(telemetryStagingQueue, FixedBatchStampsOnceAndGoesInWholeOrNotAtAll) {
    nixlTelemetryStagingQueue q(6);
    int stamps = 0;
    uint64_t next = 100;
    const auto stamp = [&] {
        ++stamps;
        return next++;
    };
    const auto fill = [](auto i, uint64_t v) {
        return nixl_telemetry_event_abi_t{static_cast<uint32_t>(type_t::AGENT_TX_BYTES), 0u,
                                          v * 10 + i};
    };
    EXPECT_EQ(100u, q.tryPushFixed<4>(stamp, fill));
    EXPECT_EQ(1, stamps);
    EXPECT_EQ(0u, q.numDropped());
    // Two slots left: refused whole, stamped all the same.
    EXPECT_EQ(101u, q.tryPushFixed<4>(stamp, fill));
    EXPECT_EQ(2, stamps);
    EXPECT_EQ(4u, q.numDropped());
    EXPECT_EQ((std::vector<uint64_t>{1000, 1001, 1002, 1003}), values(q.drainPending()));
    // Room again after the drain.
    EXPECT_EQ(102u, q.tryPushFixed<4>(stamp, fill));
    EXPECT_EQ((std::vector<uint64_t>{1020, 1021, 1022, 1023}), values(q.drainPending()));
    // A batch larger than the lane: refused, still stamped once.
    EXPECT_EQ(103u, q.tryPushFixed<8>(stamp, fill));
    EXPECT_EQ(4, stamps);
    EXPECT_EQ(12u, q.takeNumDropped());
    EXPECT_TRUE(q.drainPending().empty());
}

TEST(telemetryStagingQueue, DrainedSpanSurvivesLaterPushesAndStoresAbiForm) {
    nixlTelemetryStagingQueue q(3);
    ASSERT_TRUE(q.tryPush(ev(7, type_t::AGENT_ERR_CANCELED)));
    ASSERT_TRUE(q.tryPush(ev(8, type_t::AGENT_RX_BYTES)));
    auto first = q.drainPending();
    // The producers now fill the other buffer, up to full capacity again.
    ASSERT_TRUE(q.tryPush(ev(100)));
    ASSERT_TRUE(q.tryPush(ev(101)));
    ASSERT_TRUE(q.tryPush(ev(102)));
    ASSERT_EQ(2u, first.size());
    EXPECT_EQ(static_cast<uint32_t>(type_t::AGENT_ERR_CANCELED), first[0].type);
    EXPECT_EQ(0u, first[0].reserved);
    EXPECT_EQ(7u, first[0].value);
    EXPECT_EQ(static_cast<uint32_t>(type_t::AGENT_RX_BYTES), first[1].type);
    EXPECT_EQ(8u, first[1].value);
    EXPECT_EQ((std::vector<uint64_t>{100, 101, 102}), values(q.drainPending()));
}

// Capacity is per producer thread: a full lane refuses only its own thread's events.
TEST(telemetryStagingQueue, EachThreadHasItsOwnLane) {
    nixlTelemetryStagingQueue q(3);
    for (uint64_t i = 1; i <= 3; ++i) {
        ASSERT_TRUE(q.tryPush(ev(i)));
    }
    EXPECT_FALSE(q.tryPush(ev(4))); // this thread's lane is full
    bool other_ok = true;
    std::thread t([&] {
        for (uint64_t i = 10; i <= 12; ++i) {
            other_ok = other_ok && q.tryPush(ev(i));
        }
        other_ok = other_ok && !q.tryPush(ev(13));
    });
    t.join();
    EXPECT_TRUE(other_ok);
    EXPECT_EQ(2u, q.numLanes());
    EXPECT_EQ(2u, q.numDropped());
    // Lane after lane, each in push order; the ended thread's events are not lost.
    EXPECT_EQ((std::vector<uint64_t>{1, 2, 3, 10, 11, 12}), values(q.drainPending()));
    EXPECT_TRUE(q.tryPush(ev(5))); // drained: room again
    EXPECT_EQ((std::vector<uint64_t>{5}), values(q.drainPending()));
}

// A thread that records into more queues than it caches finds its lane again instead of making
// a new one each time (which would grow without bound).
TEST(telemetryStagingQueue, ThreadKeepsOneLanePerQueueBeyondItsCache) {
    std::vector<std::unique_ptr<nixlTelemetryStagingQueue>> queues;
    for (int i = 0; i < 11; ++i) {
        queues.push_back(std::make_unique<nixlTelemetryStagingQueue>(1000));
    }
    for (int round = 0; round < 5; ++round) {
        for (auto &q : queues) {
            ASSERT_TRUE(q->tryPush(ev(static_cast<uint64_t>(round))));
        }
    }
    for (auto &q : queues) {
        EXPECT_EQ(1u, q->numLanes());
        EXPECT_EQ((std::vector<uint64_t>{0, 1, 2, 3, 4}), values(q->drainPending()));
    }
}

// A queue made at the address of a destroyed one does not inherit the destroyed one's lane from
// this thread's cache (it would write into freed memory).
TEST(telemetryStagingQueue, NewQueueDoesNotReuseADeadQueuesLane) {
    auto a = std::make_unique<nixlTelemetryStagingQueue>(4);
    ASSERT_TRUE(a->tryPush(ev(1)));
    a.reset();
    nixlTelemetryStagingQueue b(4);
    ASSERT_TRUE(b.tryPush(ev(2)));
    EXPECT_EQ(1u, b.numLanes());
    EXPECT_EQ((std::vector<uint64_t>{2}), values(b.drainPending()));
}

// A thread that hands its lanes back (as every thread does when it ends) leaves them to the next
// thread that records, pending events and all: no new lane is allocated.
TEST(telemetryStagingQueue, ReleasedLaneIsTakenOverWithItsEvents) {
    nixlTelemetryStagingQueue q(8);
    std::mutex m;
    std::condition_variable cv;
    bool released = false;
    bool done = false;
    std::thread a([&] {
        EXPECT_TRUE(q.tryPush(ev(1)));
        EXPECT_TRUE(q.tryPush(ev(2)));
        nixlTelemetryStagingQueue::releaseLanesOfThisThread();
        {
            std::lock_guard<std::mutex> g(m);
            released = true;
        }
        cv.notify_all();
        // Stay alive (a distinct thread id) until b has pushed.
        std::unique_lock<std::mutex> g(m);
        cv.wait(g, [&] { return done; });
    });
    std::thread b([&] {
        {
            std::unique_lock<std::mutex> g(m);
            cv.wait(g, [&] { return released; });
        }
        EXPECT_TRUE(q.tryPush(ev(3)));
        {
            std::lock_guard<std::mutex> g(m);
            done = true;
        }
        cv.notify_all();
    });
    b.join();
    a.join();
    EXPECT_EQ(1u, q.numLanes());
    EXPECT_EQ((std::vector<uint64_t>{1, 2, 3}), values(q.drainPending()));
}

// Threads that record one after another end up sharing one lane: their ends hand it back.
TEST(telemetryStagingQueue, ThreadsThatEndDoNotGrowTheLanes) {
    nixlTelemetryStagingQueue q(64);
    for (uint64_t i = 0; i < 20; ++i) {
        std::thread t([&, i] { EXPECT_TRUE(q.tryPush(ev(i))); });
        t.join();
    }
    EXPECT_EQ(1u, q.numLanes());
    std::vector<uint64_t> want;
    for (uint64_t i = 0; i < 20; ++i) {
        want.push_back(i);
    }
    EXPECT_EQ(want, values(q.drainPending()));
}

// Producers on several threads and one draining consumer: every event is either drained or
// counted as dropped, and each producer's events arrive in its order.
TEST(telemetryStagingQueue, ConcurrentProducersLoseNothingUncounted) {
    constexpr int producers = 3;
    constexpr uint64_t per_producer = 20000;
    nixlTelemetryStagingQueue q(64);
    std::atomic<int> running{producers};
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
        threads.emplace_back([&, p] {
            for (uint64_t i = 0; i < per_producer; ++i) {
                const nixlTelemetryEvent pair[] = {ev((uint64_t(p) << 32) | i),
                                                   ev((uint64_t(p) << 32) | i)};
                q.tryPushBatch(pair, 2);
            }
            running.fetch_sub(1);
        });
    }
    uint64_t drained = 0;
    uint64_t dropped = 0;
    std::vector<int64_t> last(producers, -1);
    bool ordered = true;
    bool paired = true;
    auto consume = [&] {
        auto s = q.drainPending();
        drained += s.size();
        paired = paired && s.size() % 2 == 0;
        for (size_t k = 0; k + 1 < s.size(); k += 2) {
            paired = paired && s[k].value == s[k + 1].value;
            const auto p = static_cast<size_t>(s[k].value >> 32);
            const auto i = static_cast<int64_t>(s[k].value & 0xffffffffu);
            ordered = ordered && p < producers && i > last[p];
            if (p < producers) {
                last[p] = i;
            }
        }
        dropped += q.takeNumDropped();
    };
    while (running.load() > 0) {
        consume();
    }
    for (auto &t : threads) {
        t.join();
    }
    consume();
    EXPECT_TRUE(ordered);
    EXPECT_TRUE(paired) << "a batch was split";
    EXPECT_EQ(producers * per_producer * 2, drained + dropped);
}

} // namespace
