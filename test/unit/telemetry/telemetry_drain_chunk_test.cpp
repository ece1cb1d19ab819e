/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The staging queue drains in bounded chunks (its buffer never spans lanes x capacity, which
// at a huge NIXL_TELEMETRY_BUFFER_SIZE may not be had in one piece), resumes at the lane where
// the previous chunk ran out, and the flush takes chunk after chunk so nothing waits for the
// next flush.

#include <gtest/gtest.h>

#include <latch>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "telemetry/staging_queue.h"
#include "telemetry/telemetry.h"

namespace {

using type_t = nixl_telemetry_event_type_t;

nixlTelemetryEvent
ev(uint64_t value) {
    return nixlTelemetryEvent(type_t::AGENT_TX_BYTES, value);
}

std::vector<uint64_t>
values(std::span<const nixl_telemetry_event_abi_t> s) {
    std::vector<uint64_t> out;
    for (const auto &e : s) {
        out.push_back(e.value);
    }
    return out;
}

/**
 * Runs one thread per entry of per_thread, each pushing its values, and returns once all have
 * pushed; the threads are alive together, so each gets a lane of its own (a thread that ended
 * would hand its lane to the next).
 */
void
pushFromThreads(nixlTelemetryStagingQueue &q, const std::vector<std::vector<uint64_t>> &per_thread) {
    std::latch pushed(static_cast<std::ptrdiff_t>(per_thread.size()));
    std::vector<std::thread> threads;
    for (const auto &vals : per_thread) {
        threads.emplace_back([&q, &pushed, &vals] {
            for (uint64_t v : vals) {
                EXPECT_TRUE(q.tryPush(ev(v)));
            }
            pushed.arrive_and_wait();
        });
    }
    for (auto &t : threads) {
        t.join();
    }
}

TEST(telemetryDrainChunk, ZeroChunkIsRefused) {
    EXPECT_THROW(nixlTelemetryStagingQueue(4, 0), std::invalid_argument);
    nixlTelemetryStagingQueue q(4);
    EXPECT_EQ(nixlTelemetryStagingQueue::kDefaultDrainChunk, q.drainChunk());
}

// Three lanes holding 8 + 8 + 3 events, chunk 5: four drains of 5, 5, 5 and 4 events, none
// larger than the chunk, every event exactly once and each lane's in push order.
TEST(telemetryDrainChunk, SeveralLanesDrainInChunks) {
    nixlTelemetryStagingQueue q(8, 5);
    for (uint64_t i = 1; i <= 8; ++i) {
        ASSERT_TRUE(q.tryPush(ev(i))); // lane 0: this thread, registered first
    }
    pushFromThreads(q, {{101, 102, 103, 104, 105, 106, 107, 108}, {201, 202, 203}});
    ASSERT_EQ(3u, q.numLanes());
    EXPECT_EQ(24u, q.pendingBound());

    std::vector<size_t> sizes;
    std::vector<uint64_t> all;
    for (int guard = 0; guard < 10; ++guard) {
        auto s = values(q.drainPending());
        if (s.empty()) {
            break;
        }
        sizes.push_back(s.size());
        all.insert(all.end(), s.begin(), s.end());
    }
    EXPECT_EQ((std::vector<size_t>{5, 5, 5, 4}), sizes);
    ASSERT_EQ(19u, all.size());
    // Lane 0 first: the first chunk is its oldest five, the second starts with its rest.
    EXPECT_EQ((std::vector<uint64_t>{1, 2, 3, 4, 5}), std::vector<uint64_t>(all.begin(), all.begin() + 5));
    EXPECT_EQ((std::vector<uint64_t>{6, 7, 8}), std::vector<uint64_t>(all.begin() + 5, all.begin() + 8));
    // Per lane (the hundreds), every value once and in push order.
    std::map<uint64_t, std::vector<uint64_t>> by_lane;
    for (uint64_t v : all) {
        by_lane[v / 100].push_back(v);
    }
    EXPECT_EQ((std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8}), by_lane[0]);
    EXPECT_EQ((std::vector<uint64_t>{101, 102, 103, 104, 105, 106, 107, 108}), by_lane[1]);
    EXPECT_EQ((std::vector<uint64_t>{201, 202, 203}), by_lane[2]);
    // The lanes have room again.
    for (uint64_t i = 11; i <= 18; ++i) {
        EXPECT_TRUE(q.tryPush(ev(i)));
    }
    EXPECT_EQ(0u, q.numDropped());
}

// A lane that refills as fast as it is drained does not starve the others: a drain that ran
// out of room in a lane starts the next one there and then goes on to the following lanes.
TEST(telemetryDrainChunk, NextDrainResumesWhereTheLastStopped) {
    nixlTelemetryStagingQueue q(4, 3);
    for (uint64_t i = 1; i <= 4; ++i) {
        ASSERT_TRUE(q.tryPush(ev(i))); // lane 0
    }
    pushFromThreads(q, {{10, 11}}); // lane 1
    ASSERT_EQ(2u, q.numLanes());
    EXPECT_EQ((std::vector<uint64_t>{1, 2, 3}), values(q.drainPending())); // stopped in lane 0
    ASSERT_TRUE(q.tryPush(ev(5)));
    EXPECT_EQ((std::vector<uint64_t>{4, 5, 10}), values(q.drainPending())); // stopped in lane 1
    ASSERT_TRUE(q.tryPush(ev(6)));
    ASSERT_TRUE(q.tryPush(ev(7)));
    // Lane 1's rest first, then lane 0's new events.
    EXPECT_EQ((std::vector<uint64_t>{11, 6, 7}), values(q.drainPending()));
    EXPECT_TRUE(q.drainPending().empty());
    // A drain that took everything starts at lane 0 again.
    ASSERT_TRUE(q.tryPush(ev(8)));
    pushFromThreads(q, {{12}}); // takes over lane 1, which its previous thread handed back
    EXPECT_EQ((std::vector<uint64_t>{8, 12}), values(q.drainPending()));
}

// One flush exports everything pending, chunk after chunk, inside one batch.
struct countingExporter {
    std::mutex mutex;
    uint64_t events = 0;
    uint64_t calls = 0;
    uint64_t batches = 0;
    uint64_t eventsInLastBatch = 0;
    uint64_t maxPerCall = 0;
};

countingExporter *counting = nullptr;

nixl_plugin_status_t
countCreate(const nixl_telemetry_exporter_init_params_t *, nixl_telemetry_exporter_t **out) {
    *out = reinterpret_cast<nixl_telemetry_exporter_t *>(counting);
    return NIXL_PLUGIN_SUCCESS;
}

void
countDestroy(nixl_telemetry_exporter_t *) {}

void
countBegin(nixl_telemetry_exporter_t *) {
    std::lock_guard<std::mutex> lock(counting->mutex);
    ++counting->batches;
    counting->eventsInLastBatch = 0;
}

nixl_plugin_status_t
countExport(nixl_telemetry_exporter_t *, const nixl_telemetry_event_abi_t *, size_t n) {
    std::lock_guard<std::mutex> lock(counting->mutex);
    counting->events += n;
    counting->eventsInLastBatch += n;
    ++counting->calls;
    counting->maxPerCall = std::max<uint64_t>(counting->maxPerCall, n);
    return NIXL_PLUGIN_SUCCESS;
}

void
countEnd(nixl_telemetry_exporter_t *) {}

constexpr nixl_telemetry_exporter_ops_t countOps = {sizeof(nixl_telemetry_exporter_ops_t),
                                                    countCreate,
                                                    countDestroy,
                                                    countBegin,
                                                    countExport,
                                                    countEnd};

TEST(telemetryDrainChunk, OneFlushExportsMoreThanAChunk) {
    countingExporter exporter;
    counting = &exporter;
    nixlTelemetryConfig cfg;
    cfg.exporter = "count";
    cfg.exporterOrigin = "test";
    cfg.runInterval = std::chrono::hours(1); // only flushNow flushes
    constexpr uint64_t n = nixlTelemetryStagingQueue::kDefaultDrainChunk * 2 + 10;
    cfg.bufferSize = n;
    {
        auto t = nixlTelemetry::create("A", cfg, nixlTelemetryExporterRef{"count", "test", &countOps});
        ASSERT_NE(nullptr, t);
        for (uint64_t i = 0; i < n; ++i) {
            t->record(type_t::AGENT_TX_BYTES, i);
        }
        t->flushNow();
        std::lock_guard<std::mutex> lock(exporter.mutex);
        EXPECT_EQ(n, exporter.events);
        EXPECT_EQ(n, exporter.eventsInLastBatch) << "the chunks of one flush share one batch";
        EXPECT_EQ(3u, exporter.calls);
        EXPECT_EQ(nixlTelemetryStagingQueue::kDefaultDrainChunk, exporter.maxPerCall);
        EXPECT_EQ(0u, t->stagingDropped());
    }
    counting = nullptr;
}

} // namespace
