/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Backend trace phases (issue 12): the sink core gives an engine, what it forwards to the trace
// plugins, what it drops (and logs once), many threads at once, and the TEST backend's phases
// of a transfer seen through a recording trace plugin.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tracing/phase_sink.h"
#include "tracing/tracing.h"
#include "tracing_test_utils.h"

namespace {

using namespace nixl::trace;
using nixl_agent_test::errorLines;
using nixl_agent_test::regList;
using nixl_agent_test::stderrCapture;
using nixl_agent_test::testBuffer;
using nixl_agent_test::xferList;
using nixl_tracing_test::recorder;
using nixl_tracing_test::traceEvent;
using nixl_tracing_test::tracingTest;

// ---- a trace plugin as an ops table: records marks, or throws from them ---------------------

struct seenMark {
    uint32_t nameId;
    uint32_t kind;
    std::string name;
    uint64_t corr;
    uint64_t atNs;
    std::vector<std::string> attrs; // key=value
};

std::mutex seenMutex;
std::vector<seenMark> seen;
int sinkTag = 0;

std::string
attrText(const nixl_trace_attr_t &a) {
    std::string v;
    switch (a.type) {
    case NIXL_TRACE_ATTR_INT64:
        v = std::to_string(a.value.i64);
        break;
    case NIXL_TRACE_ATTR_DOUBLE:
        v = std::to_string(a.value.f64);
        break;
    case NIXL_TRACE_ATTR_STRING:
        v.assign(a.value.str.data, a.value.str.len);
        break;
    default:
        v = "?";
    }
    return std::string(a.key) + "=" + v;
}

nixl_plugin_status_t
createRec(const nixl_trace_backend_init_params_t *, nixl_trace_backend_t **out) {
    *out = reinterpret_cast<nixl_trace_backend_t *>(&sinkTag);
    return NIXL_PLUGIN_SUCCESS;
}

void
destroyRec(nixl_trace_backend_t *) {}

void
noSpan(nixl_trace_backend_t *, const nixl_trace_event_t *) {}

void
markRec(nixl_trace_backend_t *, const nixl_trace_event_t *ev) {
    seenMark m{ev->name_id, ev->kind, ev->name, ev->correlation_id, ev->begin_ns, {}};
    for (size_t i = 0; i < ev->attr_count; ++i) {
        m.attrs.push_back(attrText(ev->attrs[i]));
    }
    std::lock_guard<std::mutex> lock(seenMutex);
    seen.push_back(std::move(m));
}

void
markThrows(nixl_trace_backend_t *, const nixl_trace_event_t *) {
    // Breaks the plugin contract on purpose: the sink must contain it.
    throw std::runtime_error("trace plugin fails by design");
}

const nixl_trace_backend_ops_t opsRec = {
    sizeof(nixl_trace_backend_ops_t), createRec, destroyRec, noSpan, noSpan, markRec};
const nixl_trace_backend_ops_t opsThrows = {
    sizeof(nixl_trace_backend_ops_t), createRec, destroyRec, noSpan, noSpan, markThrows};

TraceBackendRef
ref(const char *name, const nixl_trace_backend_ops_t *ops) {
    return TraceBackendRef{name, std::string("table ") + name, ops, nullptr};
}

std::vector<seenMark>
takeSeen() {
    std::lock_guard<std::mutex> lock(seenMutex);
    std::vector<seenMark> out;
    out.swap(seen);
    return out;
}

nixl_plugin_str_t
str(const char *s) {
    return nixl_plugin_str_t{s, std::strlen(s)};
}

nixl_be_trace_ctx_t
ctxWith(uint8_t first, uint64_t corr) {
    nixl_be_trace_ctx_t c{};
    for (size_t i = 0; i < sizeof(c.trace_id); ++i) {
        c.trace_id[i] = static_cast<uint8_t>(first + i);
    }
    c.span_id[0] = 1;
    c.flags = 1;
    c.correlation_id = corr;
    return c;
}

class tracePhaseSinkTest : public ::testing::Test {
protected:
    void
    SetUp() override {
        takeSeen();
    }

    void
    TearDown() override {
        takeSeen();
    }
};

} // namespace

TEST_F(tracePhaseSinkTest, FixedPhaseIsATableMarkWithEverythingForwarded) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "UCX", nullptr);
    const nixl_be_trace_sink_t *c = sink.sink();
    ASSERT_EQ(c->size, sizeof(nixl_be_trace_sink_t));

    const nixl_be_trace_ctx_t ctx = ctxWith(0xa0, 42);
    nixl_trace_attr_t attrs[2] = {};
    attrs[0].key = "ucx.lane";
    attrs[0].type = NIXL_TRACE_ATTR_INT64;
    attrs[0].value.i64 = 3;
    attrs[1].key = "ucx.tl";
    attrs[1].type = NIXL_TRACE_ATTR_STRING;
    attrs[1].value.str = str("rc_mlx5");
    c->record_phase(c->ctx, &ctx, NIXL_BE_PHASE_WIRE_SUBMITTED, str("rndv.put"), 123456, attrs,
                    2);

    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].name, "nixl::backend.wire_submitted");
    EXPECT_EQ(got[0].nameId, static_cast<uint32_t>(NameId::BACKEND_WIRE_SUBMITTED));
    EXPECT_EQ(std::string(nameTable()[got[0].nameId].name), got[0].name);
    EXPECT_EQ(got[0].kind, static_cast<uint32_t>(NIXL_TRACE_KIND_COMM_SEND));
    EXPECT_EQ(got[0].corr, 42u);
    EXPECT_EQ(got[0].atNs, 123456000u); // getUs() microseconds on the tracer's ns clock
    // Nothing the mark already says (its name, its time), and no trace id: the request is
    // local (correlation id 42), and its post span carries that.
    EXPECT_EQ(got[0].attrs,
              (std::vector<std::string>{"nixl.phase.backend=UCX", "nixl.phase.label=rndv.put",
                                        "ucx.lane=3", "ucx.tl=rc_mlx5"}));
    EXPECT_EQ(sink.dropped(), 0u);
}

TEST_F(tracePhaseSinkTest, ContextFromTheWireCarriesItsTraceId) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "UCX", nullptr);
    const nixl_be_trace_ctx_t remote = ctxWith(0xa0, 0); // decoded by a target: no request here
    sink.record(&remote, NIXL_BE_PHASE_NOTIF_RECEIVED, str("ucx.am"), 99, nullptr, 0);
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].corr, 0u);
    EXPECT_EQ(got[0].atNs, 99000u);
    EXPECT_EQ(got[0].attrs,
              (std::vector<std::string>{"nixl.phase.backend=UCX", "nixl.phase.label=ucx.am",
                                        "nixl.phase.trace_id=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"}));
}

TEST_F(tracePhaseSinkTest, TimestampZeroIsNowInWholeMicrosecondsOfTheTraceClock) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "UCX", nullptr);
    const uint64_t before = nowNs();
    sink.record(nullptr, NIXL_BE_PHASE_SUBMIT, str("now"), 0, nullptr, 0);
    const uint64_t after = nowNs();
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].atNs % 1000, 0u); // a getUs() value on the ns clock
    EXPECT_GE(got[0].atNs, before / 1000 * 1000);
    EXPECT_LE(got[0].atNs, after);
}

TEST_F(tracePhaseSinkTest, EveryFixedPhaseHasItsTableName) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    const char *const names[] = {"nixl::backend.submit",         "nixl::backend.wire_submitted",
                                 "nixl::backend.wire_completed", "nixl::backend.notif_sent",
                                 "nixl::backend.notif_received", "nixl::backend.remote_observed"};
    for (uint32_t p = NIXL_BE_PHASE_SUBMIT; p <= NIXL_BE_PHASE_REMOTE_OBSERVED; ++p) {
        sink.record(nullptr, p, str(""), 1, nullptr, 0);
    }
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 6u);
    for (uint32_t p = 0; p < 6; ++p) {
        EXPECT_EQ(got[p].name, names[p]);
        EXPECT_EQ(got[p].nameId, static_cast<uint32_t>(NameId::BACKEND_SUBMIT) + p);
        // The label is always recorded, empty or not.
        EXPECT_EQ(got[p].attrs[1], "nixl.phase.label=");
    }
}

TEST_F(tracePhaseSinkTest, OtherIsNamedByItsLabel) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "UCX", nullptr);
    sink.record(nullptr, NIXL_BE_PHASE_OTHER, str("ucx.rkey_unpack"), 7, nullptr, 0);
    sink.record(nullptr, NIXL_BE_PHASE_OTHER, str(""), 8, nullptr, 0);
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].nameId, NIXL_TRACE_NAME_DYNAMIC);
    EXPECT_EQ(got[0].name, "ucx.rkey_unpack");
    EXPECT_EQ(got[0].kind, static_cast<uint32_t>(NIXL_TRACE_KIND_GENERIC));
    EXPECT_EQ(got[0].attrs,
              (std::vector<std::string>{"nixl.phase.backend=UCX", "nixl.phase.name=other",
                                        "nixl.phase.label=ucx.rkey_unpack"}));
    EXPECT_EQ(got[1].name, "nixl::backend.other");
}

TEST_F(tracePhaseSinkTest, NoRequestOrInvalidContextMeansNoCorrelationOrTraceId) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    nixl_be_trace_ctx_t zero{}; // tracing off for the request: all-zero trace id
    zero.correlation_id = 9;
    sink.record(nullptr, NIXL_BE_PHASE_SUBMIT, str("a"), 5, nullptr, 0);
    sink.record(&zero, NIXL_BE_PHASE_SUBMIT, str("b"), 6, nullptr, 0);
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].corr, 0u);
    EXPECT_EQ(got[0].attrs.size(), 2u); // backend and label; no nixl.phase.trace_id
    EXPECT_EQ(got[1].corr, 9u); // core-local id, still the request's
    EXPECT_EQ(got[1].attrs.size(), 2u);
}

TEST_F(tracePhaseSinkTest, ExtraAttributesBeyondTheCapAreDroppedNotThePhase) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    std::vector<nixl_trace_attr_t> attrs(max_phase_attrs + 3);
    for (size_t i = 0; i < attrs.size(); ++i) {
        attrs[i].key = "k";
        attrs[i].type = NIXL_TRACE_ATTR_INT64;
        attrs[i].value.i64 = static_cast<int64_t>(i);
    }
    attrs[0].key = nullptr; // not an attribute: skipped and counted
    sink.record(nullptr, NIXL_BE_PHASE_SUBMIT, str("x"), 1, attrs.data(), attrs.size());
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].attrs.size(), 2 + max_phase_attrs);
    EXPECT_EQ(got[0].attrs[2], "k=1");
    EXPECT_EQ(sink.droppedAttrs(), 3u);
    EXPECT_EQ(sink.dropped(), 0u);
}

TEST_F(tracePhaseSinkTest, InvalidPhasesAreDroppedCountedAndLoggedOnce) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    stderrCapture cap;
    sink.record(nullptr, NIXL_BE_PHASE_COUNT, str("a"), 1, nullptr, 0);
    sink.record(nullptr, 0xffffffffu, str("a"), 1, nullptr, 0);
    sink.record(nullptr, NIXL_BE_PHASE_SUBMIT, nixl_plugin_str_t{nullptr, 3}, 1, nullptr, 0);
    sink.record(nullptr, NIXL_BE_PHASE_SUBMIT, str("a"), 1, nullptr, 2);
    // A label of exactly the limit is fine.
    const std::string maxLabel(max_phase_label, 'y');
    sink.record(nullptr, NIXL_BE_PHASE_OTHER, nixl_plugin_str_t{maxLabel.data(), maxLabel.size()},
                1, nullptr, 0);
    const std::string log = cap.stop();
    EXPECT_EQ(sink.dropped(), 4u);
    EXPECT_EQ(sink.truncatedLabels(), 0u);
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].name, maxLabel);
    const auto lines = errorLines(log);
    ASSERT_EQ(lines.size(), 1u) << log;
    EXPECT_NE(lines[0].find("agent agentX"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("backend TEST"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("trace phase 7 (unknown)"), std::string::npos) << lines[0];
}

// Seed 000: a phase's label is always recorded. A long one is cut (never on a split UTF-8
// character), marked with its full length, counted, and logged once per sink.
TEST_F(tracePhaseSinkTest, LongLabelIsCutOnACharacterBoundaryMarkedCountedAndLoggedOnce) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "UCX", nullptr);
    const std::string ascii(max_phase_label + 1, 'x');
    // 126 ASCII bytes then a 3-byte character (U+20AC) at 126..128: a cut at 127 would split it.
    const std::string utf8 = std::string(max_phase_label - 1, 'a') + "\xe2\x82\xac" + "tail";
    const std::string huge(1 << 20, 'z');
    stderrCapture cap;
    sink.record(nullptr, NIXL_BE_PHASE_OTHER, nixl_plugin_str_t{ascii.data(), ascii.size()}, 1,
                nullptr, 0);
    sink.record(nullptr, NIXL_BE_PHASE_SUBMIT, nixl_plugin_str_t{utf8.data(), utf8.size()}, 2,
                nullptr, 0);
    const nixl_be_trace_phase_rec_t rec = {NIXL_BE_PHASE_SUBMIT, 0,
                                           nixl_plugin_str_t{huge.data(), huge.size()}, 3,
                                           nullptr, 0};
    sink.recordBatch(nullptr, &rec, sizeof(rec), 1);
    const std::string log = cap.stop();
    EXPECT_EQ(sink.dropped(), 0u);
    EXPECT_EQ(sink.truncatedLabels(), 3u);
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 3u);
    // OTHER is named by its (cut) label.
    EXPECT_EQ(got[0].name, ascii.substr(0, max_phase_label));
    EXPECT_EQ(got[0].attrs,
              (std::vector<std::string>{"nixl.phase.backend=UCX", "nixl.phase.name=other",
                                        "nixl.phase.label=" + ascii.substr(0, max_phase_label),
                                        "nixl.phase.label_truncated=128"}));
    EXPECT_EQ(got[1].name, "nixl::backend.submit");
    EXPECT_EQ(got[1].attrs,
              (std::vector<std::string>{"nixl.phase.backend=UCX",
                                        "nixl.phase.label=" + utf8.substr(0, max_phase_label - 1),
                                        "nixl.phase.label_truncated=" +
                                            std::to_string(utf8.size())}));
    EXPECT_EQ(got[2].attrs.back(), "nixl.phase.label_truncated=1048576");
    EXPECT_EQ(got[2].attrs[1], "nixl.phase.label=" + huge.substr(0, max_phase_label));
    EXPECT_TRUE(errorLines(log).empty()) << log;
    size_t warns = 0;
    for (size_t at = log.find("[nixl W "); at != std::string::npos;
         at = log.find("[nixl W ", at + 1)) {
        ++warns;
    }
    EXPECT_EQ(warns, 1u) << log;
    EXPECT_NE(log.find("label of 128 bytes cut to 127"), std::string::npos) << log;
}

TEST_F(tracePhaseSinkTest, ThrowingTracePluginDropsCountsAndLogsOnceOthersStillRecord) {
    auto tracer = Tracer::create("agentX", {ref("bad", &opsThrows), ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    ASSERT_EQ(tracer->size(), 2u);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    stderrCapture cap;
    for (int i = 0; i < 3; ++i) {
        sink.sink()->record_phase(sink.sink()->ctx, nullptr, NIXL_BE_PHASE_SUBMIT, str("p"),
                                  10 + i, nullptr, 0);
    }
    const std::string log = cap.stop();
    EXPECT_EQ(sink.dropped(), 3u);
    EXPECT_EQ(takeSeen().size(), 3u); // the well-behaved plugin got every phase
    const auto lines = errorLines(log);
    ASSERT_EQ(lines.size(), 1u) << log;
    EXPECT_NE(lines[0].find("a trace plugin threw"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("submit"), std::string::npos) << lines[0];
}

TEST_F(tracePhaseSinkTest, ConcurrentRecordPhaseFromManyThreads) {
    // Run under TSan too (build-tsan): the sink holds no lock of its own.
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    auto bad = Tracer::create("agentY", {ref("bad", &opsThrows)});
    ASSERT_NE(bad, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    nixlTracePhaseSink failing(*bad, "agentY", "TEST", nullptr);
    constexpr int threads = 4;
    constexpr int perThread = 500;
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    stderrCapture cap;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const nixl_be_trace_ctx_t ctx = ctxWith(static_cast<uint8_t>(t), 100 + t);
            ready.fetch_add(1);
            while (ready.load() < threads) {
                std::this_thread::yield();
            }
            for (int i = 0; i < perThread; ++i) {
                const auto phase = static_cast<uint32_t>(i % NIXL_BE_PHASE_COUNT);
                sink.record(&ctx, phase, str("c"), 1 + i, nullptr, 0);
                failing.record(&ctx, phase, str("c"), 1 + i, nullptr, 0);
            }
        });
    }
    for (auto &th : pool) {
        th.join();
    }
    const std::string log = cap.stop();
    const auto got = takeSeen();
    EXPECT_EQ(got.size(), static_cast<size_t>(threads * perThread));
    EXPECT_EQ(sink.dropped(), 0u);
    EXPECT_EQ(failing.dropped(), static_cast<uint64_t>(threads * perThread));
    EXPECT_EQ(errorLines(log).size(), 1u) << log;
    // Each thread's phases keep their own correlation id.
    std::vector<int> perCorr(threads, 0);
    for (const seenMark &m : got) {
        ASSERT_GE(m.corr, 100u);
        ASSERT_LT(m.corr, 100u + threads);
        ++perCorr[m.corr - 100];
    }
    for (int n : perCorr) {
        EXPECT_EQ(n, perThread);
    }
}

// ---- batches (core services' record_phases) ------------------------------------------------

namespace {

nixl_be_trace_phase_rec_t
rec(uint32_t phase, const char *label, uint64_t ts, const nixl_trace_attr_t *attrs = nullptr,
    size_t n = 0) {
    nixl_be_trace_phase_rec_t r{};
    r.phase = phase;
    r.label = str(label);
    r.timestamp_us = ts;
    r.attrs = attrs;
    r.n_attrs = n;
    return r;
}

} // namespace

TEST_F(tracePhaseSinkTest, BatchRecordsEachPhaseInOrderAndTheZerosShareOneClockRead) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "UCX", nullptr);
    const nixl_be_trace_ctx_t ctx = ctxWith(0xa0, 42);
    nixl_trace_attr_t attrs[1] = {};
    attrs[0].key = "ucx.bytes";
    attrs[0].type = NIXL_TRACE_ATTR_INT64;
    attrs[0].value.i64 = 4096;
    const nixl_be_trace_phase_rec_t recs[] = {
        rec(NIXL_BE_PHASE_SUBMIT, "ucx.post", 0, attrs, 1),
        rec(NIXL_BE_PHASE_WIRE_SUBMITTED, "ucx.memcpy", 0),
        rec(NIXL_BE_PHASE_OTHER, "ucx.own", 777),
        rec(NIXL_BE_PHASE_WIRE_COMPLETED, "ucx.memcpy", 0),
    };
    const uint64_t before = nowNs();
    nixlTracePhaseSink::recordPhases(nullptr, sink.sink(), &ctx, recs, sizeof(recs[0]), 4);
    const uint64_t after = nowNs();

    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0].name, "nixl::backend.submit");
    EXPECT_EQ(got[1].name, "nixl::backend.wire_submitted");
    EXPECT_EQ(got[2].name, "ucx.own");
    EXPECT_EQ(got[3].name, "nixl::backend.wire_completed");
    for (const seenMark &m : got) {
        EXPECT_EQ(m.corr, 42u);
    }
    // The three zeros: one time, whole microseconds of the trace clock, read during the call.
    EXPECT_EQ(got[0].atNs, got[1].atNs);
    EXPECT_EQ(got[0].atNs, got[3].atNs);
    EXPECT_EQ(got[0].atNs % 1000, 0u);
    EXPECT_GE(got[0].atNs, before / 1000 * 1000);
    EXPECT_LE(got[0].atNs, after);
    EXPECT_EQ(got[2].atNs, 777000u); // a plugin's own timestamp is kept
    EXPECT_EQ(got[0].attrs,
              (std::vector<std::string>{"nixl.phase.backend=UCX", "nixl.phase.label=ucx.post",
                                        "ucx.bytes=4096"}));
    EXPECT_EQ(got[2].attrs,
              (std::vector<std::string>{"nixl.phase.backend=UCX", "nixl.phase.name=other",
                                        "nixl.phase.label=ucx.own"}));
    EXPECT_EQ(sink.dropped(), 0u);
}

TEST_F(tracePhaseSinkTest, BatchFromTheWireCarriesTheTraceIdOnEveryPhase) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "UCX", nullptr);
    const nixl_be_trace_ctx_t remote = ctxWith(0xa0, 0);
    const nixl_be_trace_phase_rec_t recs[] = {rec(NIXL_BE_PHASE_NOTIF_RECEIVED, "ucx.am", 5),
                                              rec(NIXL_BE_PHASE_REMOTE_OBSERVED, "ucx.am", 5)};
    sink.recordBatch(&remote, recs, sizeof(recs[0]), 2);
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 2u);
    for (const seenMark &m : got) {
        EXPECT_EQ(m.corr, 0u);
        EXPECT_EQ(m.attrs.back(), "nixl.phase.trace_id=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
    }
}

TEST_F(tracePhaseSinkTest, BatchDropsWhatItCannotRecordKeepsTheRestAndLogsOnce) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    const nixl_be_trace_phase_rec_t recs[] = {
        rec(NIXL_BE_PHASE_SUBMIT, "a", 1),
        rec(NIXL_BE_PHASE_COUNT, "bad", 1),
        rec(NIXL_BE_PHASE_WIRE_SUBMITTED, "b", 1, nullptr, 3), // attrs null, count 3
        rec(NIXL_BE_PHASE_WIRE_COMPLETED, "c", 1),
    };
    stderrCapture cap;
    sink.recordBatch(nullptr, recs, sizeof(recs[0]), 4);
    EXPECT_EQ(sink.dropped(), 2u);
    // Records smaller than core's struct (a stride core cannot trust): all dropped; no
    // records at all with a count: dropped too.
    sink.recordBatch(nullptr, recs, sizeof(recs[0]) - 1, 4);
    EXPECT_EQ(sink.dropped(), 6u);
    sink.recordBatch(nullptr, nullptr, sizeof(recs[0]), 2);
    EXPECT_EQ(sink.dropped(), 8u);
    sink.recordBatch(nullptr, nullptr, sizeof(recs[0]), 0); // nothing to record
    EXPECT_EQ(sink.dropped(), 8u);
    const std::string log = cap.stop();
    const auto got = takeSeen();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].name, "nixl::backend.submit");
    EXPECT_EQ(got[1].name, "nixl::backend.wire_completed");
    const auto lines = errorLines(log);
    ASSERT_EQ(lines.size(), 1u) << log;
    EXPECT_NE(lines[0].find("trace phase 7 (unknown)"), std::string::npos) << lines[0];
}

TEST_F(tracePhaseSinkTest, BatchThroughASinkCoreDidNotMakeIsIgnored) {
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    const nixl_be_trace_phase_rec_t recs[] = {rec(NIXL_BE_PHASE_SUBMIT, "a", 1)};
    nixl_be_trace_sink_t foreign = *sink.sink();
    foreign.record_phase = [](void *, const nixl_be_trace_ctx_t *, uint32_t, nixl_plugin_str_t,
                              uint64_t, const nixl_trace_attr_t *, size_t) {};
    nixlTracePhaseSink::recordPhases(nullptr, &foreign, nullptr, recs, sizeof(recs[0]), 1);
    nixlTracePhaseSink::recordPhases(nullptr, nullptr, nullptr, recs, sizeof(recs[0]), 1);
    EXPECT_TRUE(takeSeen().empty());
    EXPECT_EQ(sink.dropped(), 0u);
}

TEST_F(tracePhaseSinkTest, ThrowingTracePluginDropsEveryPhaseOfABatchLogsOnce) {
    auto tracer = Tracer::create("agentX", {ref("bad", &opsThrows), ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    const nixl_be_trace_phase_rec_t recs[] = {rec(NIXL_BE_PHASE_SUBMIT, "a", 0),
                                              rec(NIXL_BE_PHASE_WIRE_SUBMITTED, "b", 0)};
    stderrCapture cap;
    sink.recordBatch(nullptr, recs, sizeof(recs[0]), 2);
    sink.recordBatch(nullptr, recs, sizeof(recs[0]), 2);
    const std::string log = cap.stop();
    EXPECT_EQ(sink.dropped(), 4u);
    EXPECT_EQ(takeSeen().size(), 4u);
    EXPECT_EQ(errorLines(log).size(), 1u) << log;
}

TEST_F(tracePhaseSinkTest, ConcurrentBatchesFromManyThreads) {
    // Run under TSan too: batches and single phases through one sink at once.
    auto tracer = Tracer::create("agentX", {ref("rec", &opsRec)});
    ASSERT_NE(tracer, nullptr);
    nixlTracePhaseSink sink(*tracer, "agentX", "TEST", nullptr);
    constexpr int threads = 4;
    constexpr int perThread = 300;
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const nixl_be_trace_ctx_t ctx = ctxWith(static_cast<uint8_t>(t), 100 + t);
            const nixl_be_trace_phase_rec_t recs[] = {rec(NIXL_BE_PHASE_SUBMIT, "s", 0),
                                                      rec(NIXL_BE_PHASE_WIRE_SUBMITTED, "w", 0),
                                                      rec(NIXL_BE_PHASE_WIRE_COMPLETED, "w", 0)};
            ready.fetch_add(1);
            while (ready.load() < threads) {
                std::this_thread::yield();
            }
            for (int i = 0; i < perThread; ++i) {
                nixlTracePhaseSink::recordPhases(nullptr, sink.sink(), &ctx, recs,
                                                 sizeof(recs[0]), 3);
                sink.record(&ctx, NIXL_BE_PHASE_NOTIF_SENT, str("n"), 0, nullptr, 0);
            }
        });
    }
    for (auto &th : pool) {
        th.join();
    }
    const auto got = takeSeen();
    EXPECT_EQ(got.size(), static_cast<size_t>(threads * perThread * 4));
    EXPECT_EQ(sink.dropped(), 0u);
    std::vector<int> perCorr(threads, 0);
    for (const seenMark &m : got) {
        ASSERT_GE(m.corr, 100u);
        ASSERT_LT(m.corr, 100u + threads);
        ++perCorr[m.corr - 100];
    }
    for (int n : perCorr) {
        EXPECT_EQ(n, perThread * 4);
    }
}

TEST(tracePhaseNames, CoreTableListsTheFixedPhasesInEnumOrder) {
    const auto table = nameTable();
    for (uint32_t p = NIXL_BE_PHASE_SUBMIT; p <= NIXL_BE_PHASE_REMOTE_OBSERVED; ++p) {
        const auto &entry = table[static_cast<uint32_t>(NameId::BACKEND_SUBMIT) + p];
        EXPECT_EQ(std::string(entry.name),
                  std::string("nixl::backend.") + nixl_be_trace_phase_name(p));
    }
}

// ---- agents: the sink handed to the TEST backend, and its phases of a transfer --------------

namespace nixl_tracing_test {

namespace {

    std::string
    sinkParam(nixlAgent &agent) {
        nixlBackendH *h = nullptr;
        nixl_b_params_t params;
        nixl_mem_list_t mems;
        if (agent.createBackend("TEST", {}, h) != NIXL_SUCCESS ||
            agent.getBackendParams(h, mems, params) != NIXL_SUCCESS) {
            return "error";
        }
        return params.count("trace_sink") != 0 ? params["trace_sink"] : "absent";
    }

    /** The backend phase marks of agent, as "name label", in arrival order. */
    std::vector<std::string>
    phasesOf(const std::vector<traceEvent> &events, const std::string &agent) {
        std::vector<std::string> out;
        for (const traceEvent &e : events) {
            if (e.isPhase() && e.agent == agent) {
                out.push_back(e.name);
            }
        }
        return out;
    }

} // namespace

TEST_F(tracingTest, TraceSinkIsGivenOnlyWhenTheAgentTraces) {
    recorder rec("recA");
    auto plain = plainAgent("plain");
    EXPECT_EQ(sinkParam(*plain), "none");
    auto traced = makeTraced("traced", "recA");
    EXPECT_EQ(sinkParam(*traced), "given");
}

TEST_F(tracingTest, TestBackendPhasesOfAWriteWithNotification) {
    recorder rec("recA");
    rec.clear();
    testBuffer src(4096, 3), dst(4096, 4);
    {
        auto init = makeTraced("init", "recA");
        auto target = makeTraced("target", "recA");
        ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*init));
        ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*target));
        ASSERT_EQ(NIXL_SUCCESS, init->registerMem(regList({src.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, target->registerMem(regList({dst.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, loadMD(*target, *init));
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, init->createXferReq(NIXL_WRITE, xferList({src.desc()}),
                                                    xferList({dst.desc()}), "target", req));
        nixl_opt_args_t extra;
        extra.hasNotif = true;
        extra.notifMsg = "done";
        nixl_status_t st = init->postXferReq(req, &extra);
        for (int i = 0; i < nixl_agent_test::max_polls && st == NIXL_IN_PROG; ++i) {
            st = init->getXferStatus(req);
        }
        ASSERT_EQ(st, NIXL_SUCCESS);
        ASSERT_EQ(NIXL_SUCCESS, init->releaseXferReq(req));
        nixl_notifs_t notifs;
        ASSERT_EQ(NIXL_SUCCESS, target->getNotifs(notifs));
        ASSERT_EQ(notifs["init"], std::vector<std::string>{"done"});
    }
    const std::vector<traceEvent> ev = rec.allEvents();
    EXPECT_EQ(phasesOf(ev, "init"),
              (std::vector<std::string>{"nixl::backend.submit", "nixl::backend.wire_submitted",
                                        "nixl::backend.wire_completed",
                                        "nixl::backend.notif_sent"}));
    EXPECT_EQ(phasesOf(ev, "target"), std::vector<std::string>{"nixl::backend.notif_received"});
    // Recorded under the request's trace context: correlated with its request and carrying its
    // trace id; not nested in the post span (a microsecond timestamp can fall just before the
    // span's nanosecond begin).
    const traceEvent *post = nullptr;
    for (const traceEvent &e : ev) {
        if (e.label() == "B nixl::postXferReq.write") {
            post = &e;
        }
    }
    ASSERT_NE(post, nullptr);
    const size_t at = post->attrs.find("trace_id=s:");
    ASSERT_NE(at, std::string::npos) << post->attrs;
    const std::string trace_id = post->attrs.substr(at + 11, 32);
    ASSERT_EQ(trace_id.find_first_not_of("0123456789abcdef"), std::string::npos) << trace_id;
    for (const traceEvent &e : ev) {
        if (e.isPhase() && e.agent == "init") {
            EXPECT_EQ(e.parent, 0u) << e.name;
            EXPECT_EQ(e.corr, post->corr) << e.name;
            EXPECT_NE(e.corr, 0u);
            // The trace id is the post span's, which the correlation id names.
            EXPECT_EQ(e.attrs.find("nixl.phase.trace_id="), std::string::npos)
                << e.name << ": " << e.attrs;
        }
    }
    for (const traceEvent &e : ev) {
        if (e.isPhase()) {
            SCOPED_TRACE(e.name);
            EXPECT_NE(e.attrs.find("nixl.phase.backend=s:TEST"), std::string::npos) << e.attrs;
            EXPECT_NE(e.attrs.find("nixl.phase.label=s:test."), std::string::npos) << e.attrs;

            EXPECT_EQ(e.begin % 1000, 0u); // a microsecond timestamp on the ns clock
        }
    }
}

TEST_F(tracingTest, TestBackendRecordsNoPhasesWithTracePhasesOff) {
    // trace_phases=false (what agent_overhead uses to time the agent's own spans): the agent's
    // post span and completion mark are there, the backend's phases are not.
    recorder rec("recA");
    rec.clear();
    testBuffer src(4096, 3), dst(4096, 4);
    {
        auto init = makeTraced("init", "recA");
        auto target = makeTraced("target", "recA");
        ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*init, {{"trace_phases", "false"}}));
        ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*target, {{"trace_phases", "false"}}));
        ASSERT_EQ(NIXL_SUCCESS, init->registerMem(regList({src.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, target->registerMem(regList({dst.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, loadMD(*target, *init));
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, init->createXferReq(NIXL_WRITE, xferList({src.desc()}),
                                                    xferList({dst.desc()}), "target", req));
        nixl_opt_args_t extra;
        extra.hasNotif = true;
        extra.notifMsg = "done";
        ASSERT_EQ(NIXL_SUCCESS, init->postXferReq(req, &extra));
        ASSERT_EQ(NIXL_SUCCESS, init->releaseXferReq(req));
        nixl_notifs_t notifs;
        ASSERT_EQ(NIXL_SUCCESS, target->getNotifs(notifs));
        ASSERT_EQ(notifs["init"], std::vector<std::string>{"done"});
    }
    const std::vector<traceEvent> ev = rec.allEvents();
    EXPECT_TRUE(phasesOf(ev, "init").empty());
    EXPECT_TRUE(phasesOf(ev, "target").empty());
    size_t posts = 0;
    size_t completes = 0;
    for (const traceEvent &e : ev) {
        posts += e.label() == "E nixl::postXferReq.write" ? 1 : 0;
        completes += e.label() == "M nixl::xfer.complete" ? 1 : 0;
    }
    EXPECT_EQ(posts, 1u);
    EXPECT_EQ(completes, 1u);
}

} // namespace nixl_tracing_test
