/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlTelemetry with an exporter defined here: flush order, the DROPPED event, events the
// exporter refuses, the final flush at destruction, and the create outcomes.

#include <gtest/gtest.h>

#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/fast_clock.h"
#include "telemetry/nop_exporter.h"
#include "telemetry/telemetry.h"
#include "telemetry_test_utils.h"

namespace nixl_telemetry_test {
namespace {

using type_t = nixl_telemetry_event_type_t;

enum recordKind : uint32_t { BEGIN, EVENT, END, DESTROYED };

struct recorded {
    recordKind kind;
    uint32_t type;
    uint64_t value;

    bool
    operator==(const recorded &) const = default;
};

std::ostream &
operator<<(std::ostream &os, const recorded &r) {
    static const char *names[] = {"begin", "event", "end", "destroyed"};
    return os << names[r.kind] << "(" << r.type << ", " << r.value << ")";
}

recorded
event(type_t t, uint64_t v) {
    return {EVENT, static_cast<uint32_t>(t), v};
}

const recorded begin_{BEGIN, 0, 0};
const recorded end_{END, 0, 0};
const recorded destroyed_{DESTROYED, 0, 0};

/** The exporter instance every test creates (one at a time). */
struct fakeExporter {
    std::mutex mutex;
    std::vector<recorded> log;
    int refuse = 0; ///< export_events calls still to refuse
    nixl_plugin_status_t createStatus = NIXL_PLUGIN_SUCCESS;
    std::string agent;
    size_t maxEvents = 0;
    uint32_t typeCount = 0;

    void
    add(recorded r) {
        std::lock_guard<std::mutex> lock(mutex);
        log.push_back(r);
    }

    std::vector<recorded>
    snapshot() {
        std::lock_guard<std::mutex> lock(mutex);
        return log;
    }

    /** Only the events, batch markers left out. */
    std::vector<recorded>
    events() {
        std::vector<recorded> out;
        for (const auto &r : snapshot()) {
            if (r.kind == EVENT) {
                out.push_back(r);
            }
        }
        return out;
    }
};

fakeExporter *current = nullptr;

fakeExporter *
self(nixl_telemetry_exporter_t *e) {
    return reinterpret_cast<fakeExporter *>(e);
}

nixl_plugin_status_t
fakeCreate(const nixl_telemetry_exporter_init_params_t *p, nixl_telemetry_exporter_t **out) {
    current->agent.assign(p->agent_name.data, p->agent_name.len);
    current->maxEvents = p->max_events_buffered;
    current->typeCount = p->event_type_count;
    if (current->createStatus != NIXL_PLUGIN_SUCCESS) {
        return current->createStatus;
    }
    *out = reinterpret_cast<nixl_telemetry_exporter_t *>(current);
    return NIXL_PLUGIN_SUCCESS;
}

void
fakeDestroy(nixl_telemetry_exporter_t *e) {
    self(e)->add(destroyed_);
}

void
fakeBegin(nixl_telemetry_exporter_t *e) {
    self(e)->add(begin_);
}

nixl_plugin_status_t
fakeExport(nixl_telemetry_exporter_t *e, const nixl_telemetry_event_abi_t *ev, size_t n) {
    fakeExporter *x = self(e);
    std::lock_guard<std::mutex> lock(x->mutex);
    if (x->refuse > 0) {
        --x->refuse;
        return NIXL_PLUGIN_ERR_BACKEND;
    }
    for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(0u, ev[i].reserved);
        x->log.push_back({EVENT, ev[i].type, ev[i].value});
    }
    return NIXL_PLUGIN_SUCCESS;
}

void
fakeEnd(nixl_telemetry_exporter_t *e) {
    self(e)->add(end_);
}

constexpr nixl_telemetry_exporter_ops_t fakeOps = {
    sizeof(nixl_telemetry_exporter_ops_t), fakeCreate, fakeDestroy, fakeBegin, fakeExport, fakeEnd};

class telemetryFlushTest : public ::testing::Test {
protected:
    void
    SetUp() override {
        current = &fake_;
        cfg_.exporter = "fake";
        cfg_.exporterOrigin = "test";
        // Long enough that only flushNow and destruction flush (no timing assumptions).
        cfg_.runInterval = std::chrono::hours(1);
        cfg_.bufferSize = 8;
    }

    void
    TearDown() override {
        current = nullptr;
    }

    std::unique_ptr<nixlTelemetry>
    make() {
        return nixlTelemetry::create("A", cfg_, nixlTelemetryExporterRef{"fake", "test", &fakeOps});
    }

    fakeExporter fake_;
    nixlTelemetryConfig cfg_;
};

TEST_F(telemetryFlushTest, CreateGetsAgentBufferSizeAndTable) {
    auto t = make();
    ASSERT_NE(nullptr, t);
    EXPECT_EQ("A", fake_.agent);
    EXPECT_EQ(8u, fake_.maxEvents);
    EXPECT_EQ(nixl_telemetry_event_type_count, fake_.typeCount);
}

TEST_F(telemetryFlushTest, EventsArriveInOrderInsideOneBatch) {
    auto t = make();
    t->record(type_t::AGENT_MEMORY_REGISTERED, 4096);
    t->recordStatus(NIXL_ERR_NOT_FOUND);
    t->recordStatus(NIXL_SUCCESS); // not an event
    t->recordTransfer(NIXL_WRITE, 1000, 3, 9);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{begin_,
                                     event(type_t::AGENT_MEMORY_REGISTERED, 4096),
                                     event(type_t::AGENT_ERR_NOT_FOUND, 1),
                                     event(type_t::AGENT_XFER_POST_TIME, 3),
                                     event(type_t::AGENT_XFER_TIME, 9),
                                     event(type_t::AGENT_TX_BYTES, 1000),
                                     event(type_t::AGENT_TX_REQUESTS_NUM, 1),
                                     end_}),
              fake_.snapshot());
    EXPECT_EQ(6u, t->exportedEvents());
}

TEST_F(telemetryFlushTest, ReadIsRxSide) {
    auto t = make();
    t->recordTransfer(NIXL_READ, 77, 1, 2);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_XFER_POST_TIME, 1),
                                     event(type_t::AGENT_XFER_TIME, 2),
                                     event(type_t::AGENT_RX_BYTES, 77),
                                     event(type_t::AGENT_RX_REQUESTS_NUM, 1)}),
              fake_.events());
}

TEST_F(telemetryFlushTest, TickIntervalsAreExportedInMicroseconds) {
    // The agent stages raw clock intervals; the exporter must see whole microseconds, with the
    // reserved word clear, and the other events untouched.
    nixlFastClock::init();
    const uint64_t post_ticks = 123'456'789;
    const uint64_t xfer_ticks = 987'654'321;
    const auto post_us = static_cast<uint64_t>(nixlFastClock::toMicros(post_ticks).count());
    const auto xfer_us = static_cast<uint64_t>(nixlFastClock::toMicros(xfer_ticks).count());
    ASSERT_NE(post_ticks, post_us); // a tick is shorter than a microsecond on every source
    auto t = make();
    t->recordTransferTicks(NIXL_WRITE, 4096, post_ticks, xfer_ticks);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_XFER_POST_TIME, post_us),
                                     event(type_t::AGENT_XFER_TIME, xfer_us),
                                     event(type_t::AGENT_TX_BYTES, 4096),
                                     event(type_t::AGENT_TX_REQUESTS_NUM, 1)}),
              fake_.events());
}

TEST_F(telemetryFlushTest, DroppedIsReportedLastAfterTheFlushEvents) {
    cfg_.bufferSize = 5;
    auto t = make();
    for (uint64_t i = 1; i <= 3; ++i) {
        t->record(type_t::AGENT_TX_BYTES, i);
    }
    t->recordTransfer(NIXL_WRITE, 50, 1, 1); // 4 events, 2 free slots: all refused
    t->record(type_t::AGENT_RX_BYTES, 4);
    t->record(type_t::AGENT_RX_BYTES, 5);
    t->record(type_t::AGENT_RX_BYTES, 6); // full
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{begin_,
                                     event(type_t::AGENT_TX_BYTES, 1),
                                     event(type_t::AGENT_TX_BYTES, 2),
                                     event(type_t::AGENT_TX_BYTES, 3),
                                     event(type_t::AGENT_RX_BYTES, 4),
                                     event(type_t::AGENT_RX_BYTES, 5),
                                     event(type_t::AGENT_TELEMETRY_EVENTS_DROPPED, 5),
                                     end_}),
              fake_.snapshot());
    EXPECT_EQ(5u, t->stagingDropped());
    // Counted once: the next flush has nothing to report.
    t->flushNow();
    EXPECT_EQ(fake_.events().size(), 6u);
}

TEST_F(telemetryFlushTest, RefusedEventsAreReportedInTheNextDroppedEvent) {
    fake_.refuse = 1;
    auto t = make();
    t->record(type_t::AGENT_TX_BYTES, 1);
    t->record(type_t::AGENT_TX_BYTES, 2);
    t->record(type_t::AGENT_TX_BYTES, 3);
    t->flushNow();
    EXPECT_TRUE(fake_.events().empty());
    EXPECT_EQ(3u, t->exporterRefused());
    t->record(type_t::AGENT_RX_BYTES, 9);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_RX_BYTES, 9),
                                     event(type_t::AGENT_TELEMETRY_EVENTS_DROPPED, 3)}),
              fake_.events());
}

TEST_F(telemetryFlushTest, RefusedDroppedEventIsReportedAgain) {
    cfg_.bufferSize = 1;
    auto t = make();
    t->record(type_t::AGENT_TX_BYTES, 1);
    t->record(type_t::AGENT_TX_BYTES, 2); // dropped
    {
        std::lock_guard<std::mutex> lock(fake_.mutex);
        fake_.refuse = 2; // the event and the DROPPED report
    }
    t->flushNow();
    EXPECT_TRUE(fake_.events().empty());
    t->flushNow();
    // 1 staging drop + 1 refused event; the refused report itself is not a lost event.
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_TELEMETRY_EVENTS_DROPPED, 2)}),
              fake_.events());
}

TEST_F(telemetryFlushTest, TracePhaseDropsAreOneDeltaPerFlush) {
    auto t = make();
    t->addTracePhaseDrops(3);
    t->addTracePhaseDrops(4);
    t->record(type_t::AGENT_TX_BYTES, 1);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{begin_,
                                     event(type_t::AGENT_TX_BYTES, 1),
                                     event(type_t::AGENT_TRACE_PHASES_DROPPED, 7),
                                     end_}),
              fake_.snapshot());
    // Nothing dropped since: no event, not even a zero.
    t->flushNow();
    EXPECT_EQ(2u, fake_.events().size());
    // The next flush carries only what was added after the previous one.
    t->addTracePhaseDrops(5);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_TX_BYTES, 1),
                                     event(type_t::AGENT_TRACE_PHASES_DROPPED, 7),
                                     event(type_t::AGENT_TRACE_PHASES_DROPPED, 5)}),
              fake_.events());
}

TEST_F(telemetryFlushTest, TracePhaseDropsNeedNoStagingSlot) {
    // A staging queue that is full (and so drops) does not lose the trace-phase count, and the
    // count takes no slot from real events.
    cfg_.bufferSize = 1;
    auto t = make();
    t->record(type_t::AGENT_TX_BYTES, 1);
    t->record(type_t::AGENT_TX_BYTES, 2); // refused by the full queue
    t->addTracePhaseDrops(9);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_TX_BYTES, 1),
                                     event(type_t::AGENT_TRACE_PHASES_DROPPED, 9),
                                     event(type_t::AGENT_TELEMETRY_EVENTS_DROPPED, 1)}),
              fake_.events());
}

TEST_F(telemetryFlushTest, RefusedTracePhaseDeltaIsReportedAgain) {
    auto t = make();
    t->addTracePhaseDrops(2);
    {
        std::lock_guard<std::mutex> lock(fake_.mutex);
        fake_.refuse = 1; // the delta's only export call
    }
    t->flushNow();
    EXPECT_TRUE(fake_.events().empty());
    t->addTracePhaseDrops(1);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_TRACE_PHASES_DROPPED, 3)}),
              fake_.events());
    EXPECT_EQ(0u, t->exporterRefused()) << "a refused count report is not a lost event";
}

TEST_F(telemetryFlushTest, TracePhaseDropsAtDestructionReachTheFinalFlush) {
    auto t = make();
    t->addTracePhaseDrops(6);
    t.reset();
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_TRACE_PHASES_DROPPED, 6)}),
              fake_.events());
}

TEST_F(telemetryFlushTest, TracePhaseDeltaRefusedAtShutdownIsOneWarning) {
    auto t = make();
    t->addTracePhaseDrops(3);
    {
        std::lock_guard<std::mutex> lock(fake_.mutex);
        fake_.refuse = 1; // the final flush's only export call
    }
    stderrCapture cap;
    t.reset();
    const std::string log = cap.stop();
    EXPECT_TRUE(fake_.events().empty());
    const auto warnings = logLines(log, 'W');
    ASSERT_EQ(1u, warnings.size()) << log;
    EXPECT_NE(std::string::npos, warnings[0].find("agent A: 3 dropped trace phases")) << log;
    EXPECT_NE(std::string::npos, warnings[0].find("fake")) << log;
}

TEST_F(telemetryFlushTest, DisabledTracePhaseCounterIsNotExported) {
    cfg_.enabled[static_cast<size_t>(type_t::AGENT_TRACE_PHASES_DROPPED)] = false;
    auto t = make();
    t->addTracePhaseDrops(4);
    t->record(type_t::AGENT_TX_BYTES, 1);
    t->flushNow();
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_TX_BYTES, 1)}), fake_.events());
}

TEST_F(telemetryFlushTest, DisabledTypesNeverReachTheQueue) {
    cfg_.enabled = nixl_telemetry_metric_mask_t{};
    cfg_.enabled[static_cast<size_t>(type_t::AGENT_TX_BYTES)] = true;
    cfg_.enabled[static_cast<size_t>(type_t::AGENT_XFER_TIME)] = true;
    cfg_.bufferSize = 2;
    auto t = make();
    EXPECT_FALSE(t->wants(type_t::AGENT_RX_BYTES));
    t->recordTransfer(NIXL_WRITE, 10, 1, 2); // 2 of its 4 events are enabled: fits
    t->recordStatus(NIXL_ERR_BACKEND);
    t->record(type_t::AGENT_RX_BYTES, 1);
    t->flushNow();
    EXPECT_EQ(0u, t->stagingDropped());
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_XFER_TIME, 2),
                                     event(type_t::AGENT_TX_BYTES, 10)}),
              fake_.events());
}

TEST_F(telemetryFlushTest, FinalFlushAtDestructionThenDestroy) {
    auto t = make();
    t->record(type_t::AGENT_TX_BYTES, 11);
    t->record(type_t::AGENT_RX_BYTES, 12);
    t.reset(); // run interval is an hour: only the final flush can deliver these
    const auto log = fake_.snapshot();
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(destroyed_, log.back());
    EXPECT_EQ((std::vector<recorded>{event(type_t::AGENT_TX_BYTES, 11),
                                     event(type_t::AGENT_RX_BYTES, 12)}),
              fake_.events());
    // The final flush is a whole batch before destroy.
    ASSERT_GE(log.size(), 2u);
    EXPECT_EQ(end_, log[log.size() - 2]);
}

TEST_F(telemetryFlushTest, PeriodicFlushWithoutBeingAsked) {
    cfg_.runInterval = std::chrono::milliseconds(1);
    auto t = make();
    t->record(type_t::AGENT_TX_BYTES, 5);
    // The flush thread counts a flush after its batch reached the exporter: wait for both
    // (reading the count right after the event showed up raced it, seen once under TSan).
    EXPECT_TRUE(waitFor([&] { return !fake_.events().empty() && t->flushes() >= 1u; }));
    EXPECT_EQ(fake_.events(), std::vector<recorded>{event(type_t::AGENT_TX_BYTES, 5)});
}

TEST_F(telemetryFlushTest, NotAllowedMeansNoPipelineAndOneWarning) {
    fake_.createStatus = NIXL_PLUGIN_ERR_NOT_ALLOWED;
    stderrCapture cap;
    auto t = make();
    const std::string log = cap.stop();
    EXPECT_EQ(nullptr, t);
    const auto warnings = logLines(log, 'W');
    ASSERT_EQ(1u, warnings.size()) << log;
    EXPECT_NE(std::string::npos, warnings[0].find("agent A")) << warnings[0];
    EXPECT_NE(std::string::npos, warnings[0].find("fake")) << warnings[0];
    EXPECT_TRUE(logLines(log, 'E').empty()) << log;
}

TEST_F(telemetryFlushTest, OtherCreateErrorThrows) {
    fake_.createStatus = NIXL_PLUGIN_ERR_INVALID_PARAM;
    try {
        (void)make();
        ADD_FAILURE() << "create error was ignored";
    }
    catch (const std::runtime_error &e) {
        const std::string what = e.what();
        EXPECT_NE(std::string::npos, what.find("agent A")) << what;
        EXPECT_NE(std::string::npos, what.find("fake")) << what;
        EXPECT_NE(std::string::npos, what.find("INVALID_PARAM")) << what;
    }
}

TEST_F(telemetryFlushTest, ProducersRaceTheFlushThread) {
    cfg_.runInterval = std::chrono::milliseconds(1);
    cfg_.bufferSize = 64;
    auto t = make();
    constexpr int producers = 3;
    constexpr int per = 20000;
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
        threads.emplace_back([&] {
            for (int i = 0; i < per; ++i) {
                t->recordTransfer(i % 2 ? NIXL_READ : NIXL_WRITE, 1, 1, 1);
            }
        });
    }
    for (auto &th : threads) {
        th.join();
    }
    t.reset(); // final flush
    uint64_t delivered = 0;
    uint64_t reported_lost = 0;
    for (const auto &r : fake_.events()) {
        if (r.type == static_cast<uint32_t>(type_t::AGENT_TELEMETRY_EVENTS_DROPPED)) {
            reported_lost += r.value;
        } else {
            ++delivered;
        }
    }
    EXPECT_EQ(uint64_t(producers) * per * 4, delivered + reported_lost);
    EXPECT_EQ(0u, delivered % 4) << "a transfer's batch was split";
}

TEST(telemetryExporterLookup, BuiltInsAndUnusablePlugins) {
    nixlTelemetryConfig cfg;
    cfg.exporter = "NOP";
    auto ref = nixlFindTelemetryExporter("A", cfg);
    EXPECT_EQ(nixlNopExporterOps(), ref.ops);
    EXPECT_EQ("built-in", ref.origin);
    cfg.exporter = "BUFFER";
    ref = nixlFindTelemetryExporter("A", cfg);
    EXPECT_NE(nullptr, ref.ops);
}

} // namespace
} // namespace nixl_telemetry_test
