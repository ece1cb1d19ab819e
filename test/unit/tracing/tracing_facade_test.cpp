/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The tracing facade without an agent: the name table, NIXL_TRACE_BACKENDS parsing and
// selection, and a Tracer over in-process operation tables (ids, nesting, correlation,
// attributes, fan-out, callbacks left null, unusable tables, failing create).

#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tracing/trace_setup.h"
#include "tracing/tracing.h"
#include "tracing_test_utils.h"

namespace {

using namespace nixl::trace;
using nixl_agent_test::stderrCapture;
using nixl_tracing_test::logLines;
using nixl_tracing_test::scopedEnv;

/** One event as an in-process table saw it (strings copied: events are borrowed). */
struct seen {
    int sink; ///< which table
    char what;
    uint32_t nameId;
    uint32_t kind;
    std::string name;
    uint64_t span, parent, corr, begin, end;
    std::vector<std::string> attrs; ///< "key=<value>"
    std::vector<uint32_t> keyIds; ///< key_id of each attribute
    uint64_t completeNs = 0;
    std::string completeName;
    uint32_t completeNameId = 0;
    uint32_t completeKind = 0;
};

std::mutex seenMutex;
std::vector<seen> seenEvents;

std::string
attrText(const nixl_trace_attr_t &a) {
    std::string out = a.key;
    switch (a.type) {
    case NIXL_TRACE_ATTR_INT64:
        return out + "=" + std::to_string(a.value.i64);
    case NIXL_TRACE_ATTR_DOUBLE:
        return out + "=" + std::to_string(a.value.f64);
    case NIXL_TRACE_ATTR_STRING:
        return out + "=" + std::string(a.value.str.data, a.value.str.len);
    }
    return out + "=?";
}

void
record(nixl_trace_backend_t *b, char what, const nixl_trace_event_t *ev) {
    seen s{*reinterpret_cast<int *>(b), what, ev->name_id, ev->kind, ev->name,
           ev->span_id, ev->parent_span_id, ev->correlation_id, ev->begin_ns, ev->end_ns, {}, {}, 0, {}, 0, 0};
    for (size_t i = 0; i < ev->attr_count; ++i) {
        s.attrs.push_back(attrText(ev->attrs[i]));
        s.keyIds.push_back(ev->attrs[i].key_id);
    }
    s.completeNs = ev->complete_ns;
    s.completeName = ev->complete_name != nullptr ? ev->complete_name : "";
    s.completeNameId = ev->complete_name_id;
    s.completeKind = ev->complete_kind;
    std::lock_guard<std::mutex> lock(seenMutex);
    seenEvents.push_back(std::move(s));
}

int sinkIds[2] = {0, 1};
int creates = 0;
int destroys = 0;

template<int Sink>
nixl_plugin_status_t
createSink(const nixl_trace_backend_init_params_t *p, nixl_trace_backend_t **out) {
    if (p->size != sizeof(*p) || p->name_count != static_cast<uint32_t>(NameId::COUNT) ||
        p->names != nameTable().data() || p->core == nullptr ||
        p->key_count != static_cast<uint32_t>(KeyId::COUNT) || p->keys != keyTable().data()) {
        return NIXL_PLUGIN_ERR_INVALID_PARAM;
    }
    ++creates;
    *out = reinterpret_cast<nixl_trace_backend_t *>(&sinkIds[Sink]);
    return NIXL_PLUGIN_SUCCESS;
}

void
destroySink(nixl_trace_backend_t *) {
    ++destroys;
}

void
beginSink(nixl_trace_backend_t *b, const nixl_trace_event_t *ev) {
    record(b, 'B', ev);
}

void
endSink(nixl_trace_backend_t *b, const nixl_trace_event_t *ev) {
    record(b, 'E', ev);
}

void
markSink(nixl_trace_backend_t *b, const nixl_trace_event_t *ev) {
    record(b, 'M', ev);
}

const nixl_trace_backend_ops_t opsA = {
    sizeof(nixl_trace_backend_ops_t), createSink<0>, destroySink, beginSink, endSink, markSink};
const nixl_trace_backend_ops_t opsB = {
    sizeof(nixl_trace_backend_ops_t), createSink<1>, destroySink, beginSink, endSink, markSink};
/** Wants marks only: a folded completion reaches it as a mark. */
const nixl_trace_backend_ops_t opsMarkOnly = {
    sizeof(nixl_trace_backend_ops_t), createSink<1>, destroySink, nullptr, nullptr, markSink};
/** Wants span ends only: the other callbacks are null. */
const nixl_trace_backend_ops_t opsEndOnly = {
    sizeof(nixl_trace_backend_ops_t), createSink<1>, destroySink, nullptr, endSink, nullptr};

nixl_plugin_status_t
createFails(const nixl_trace_backend_init_params_t *, nixl_trace_backend_t **) {
    return NIXL_PLUGIN_ERR_BACKEND;
}

const nixl_trace_backend_ops_t opsFails = {
    sizeof(nixl_trace_backend_ops_t), createFails, destroySink, beginSink, endSink, markSink};

nixl_plugin_status_t
createDeclines(const nixl_trace_backend_init_params_t *, nixl_trace_backend_t **) {
    return NIXL_PLUGIN_ERR_NOT_ALLOWED;
}

const nixl_trace_backend_ops_t opsDeclines = {
    sizeof(nixl_trace_backend_ops_t), createDeclines, destroySink, beginSink, endSink, markSink};

TraceBackendRef
ref(const char *name, const nixl_trace_backend_ops_t *ops) {
    return TraceBackendRef{name, std::string("table ") + name, ops, nullptr};
}

class tracingFacadeTest : public ::testing::Test {
protected:
    void
    SetUp() override {
        std::lock_guard<std::mutex> lock(seenMutex);
        seenEvents.clear();
        creates = destroys = 0;
    }

    static std::vector<seen>
    events() {
        std::lock_guard<std::mutex> lock(seenMutex);
        return seenEvents;
    }
};

} // namespace

TEST(tracingConfig, ParseBackendListTrimsAndDeduplicates) {
    EXPECT_EQ(parseBackendList(" nvtx, chrome ,nvtx,, x "),
              (std::vector<std::string>{"nvtx", "chrome", "x"}));
    EXPECT_TRUE(parseBackendList("").empty());
    EXPECT_TRUE(parseBackendList(" , ,\t").empty());
    EXPECT_EQ(parseBackendList("a"), std::vector<std::string>{"a"});
}

TEST(tracingConfig, SelectionFromEnvironment) {
    {
        scopedEnv b("NIXL_TRACE_BACKENDS", nullptr);
        scopedEnv n("NVTX_INJECTION64_PATH", nullptr);
        EXPECT_TRUE(tracerConfigFromEnvironment().backends.empty());
    }
    {
        scopedEnv b("NIXL_TRACE_BACKENDS", nullptr);
        scopedEnv n("NVTX_INJECTION64_PATH", "/opt/nsys/libToolsInjection64.so");
        const TracerConfig cfg = tracerConfigFromEnvironment();
        EXPECT_EQ(cfg.backends, std::vector<std::string>{"nvtx"});
        EXPECT_NE(cfg.origin.find("NVTX_INJECTION64_PATH"), std::string::npos);
    }
    {
        scopedEnv b("NIXL_TRACE_BACKENDS", "");
        scopedEnv n("NVTX_INJECTION64_PATH", "/opt/nsys/libToolsInjection64.so");
        EXPECT_TRUE(tracerConfigFromEnvironment().backends.empty());
    }
    {
        scopedEnv b("NIXL_TRACE_BACKENDS", "chrome , mine");
        scopedEnv n("NVTX_INJECTION64_PATH", "/opt/nsys/libToolsInjection64.so");
        const TracerConfig cfg = tracerConfigFromEnvironment();
        EXPECT_EQ(cfg.backends, (std::vector<std::string>{"chrome", "mine"}));
        EXPECT_EQ(cfg.origin, "NIXL_TRACE_BACKENDS=chrome , mine");
    }
}

TEST(tracingNames, TableIsNixlsNamesWithIdsAsIndices) {
    const auto table = nameTable();
    ASSERT_EQ(table.size(), static_cast<size_t>(NameId::COUNT));
    const char *names[] = {"nixl::registerMem", "nixl::deregisterMem", "nixl::makeConnection",
                           "nixl::makeXferReq", "nixl::createXferReq",
                           "nixl::postXferReq.write", "nixl::postXferReq.read",
                           "nixl::xfer.complete", "nixl::getNotifs", "nixl::genNotif",
                           "nixl::loadRemoteMD", "nixl::fetchRemoteMD", "nixl::prepMemView",
                           "nixl::releaseMemView", "nixl::backend.submit",
                           "nixl::backend.wire_submitted", "nixl::backend.wire_completed",
                           "nixl::backend.notif_sent", "nixl::backend.notif_received",
                           "nixl::backend.remote_observed"};
    static_assert(std::size(names) == static_cast<size_t>(NameId::COUNT));
    for (size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i].id, i);
        EXPECT_STREQ(table[i].name, names[i]);
        EXPECT_STREQ(nameOf(static_cast<NameId>(i)), names[i]);
        EXPECT_EQ(static_cast<uint32_t>(kindOf(static_cast<NameId>(i))), table[i].kind);
    }
    EXPECT_EQ(kindOf(NameId::REGISTER_MEM), Kind::MemoryW);
    EXPECT_EQ(kindOf(NameId::POST_XFER_WRITE), Kind::CommSend);
    EXPECT_EQ(kindOf(NameId::POST_XFER_READ), Kind::CommRecv);
    EXPECT_EQ(kindOf(NameId::PREP_MEM_VIEW), Kind::MemoryR);
    EXPECT_EQ(kindOf(NameId::XFER_COMPLETE), Kind::Metadata);
}

TEST(tracingNames, KeyTableIsCoresKeysWithIdsAndLengths) {
    const auto table = keyTable();
    ASSERT_EQ(table.size(), static_cast<size_t>(KeyId::COUNT));
    const char *keys[] = {"remote_agent", "bytes", "trace_id", "parent_id", "status",
                          "desc_count", "mem_type", "nixl.phase.backend", "nixl.phase.name",
                          "nixl.phase.label", "nixl.phase.trace_id"};
    static_assert(std::size(keys) == static_cast<size_t>(KeyId::COUNT));
    for (size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i].id, i);
        EXPECT_STREQ(table[i].key, keys[i]);
        EXPECT_EQ(table[i].len, std::strlen(keys[i]));
        EXPECT_STREQ(keyOf(static_cast<KeyId>(i)), keys[i]);
    }
}

TEST_F(tracingFacadeTest, InternedKeysCarryTheirIdAndOthersAreDynamic) {
    auto tracer = Tracer::create("agentX", {ref("a", &opsA)});
    ASSERT_NE(tracer, nullptr);
    {
        Span s(*tracer, NameId::POST_XFER_WRITE, nixl::trace::defer_begin);
        s.addString(KeyId::REMOTE_AGENT, "peer", 4).addInt(KeyId::BYTES, 8);
        s.begin();
        s.add(KeyId::STATUS, "NIXL_ERR_BACKEND").add("custom", 3);
    }
    const std::vector<seen> ev = events();
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0].keyIds, (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(ev[1].attrs, (std::vector<std::string>{"remote_agent=peer", "bytes=8",
                                                     "status=NIXL_ERR_BACKEND", "custom=3"}));
    EXPECT_EQ(ev[1].keyIds,
              (std::vector<uint32_t>{0, 1, static_cast<uint32_t>(KeyId::STATUS),
                                     NIXL_TRACE_KEY_DYNAMIC}));
}

TEST_F(tracingFacadeTest, FoldedCompletionIsOneSpanEndOrAMarkForPluginsWithoutSpanEnd) {
    auto tracer = Tracer::create("agentX", {ref("a", &opsA), ref("marks", &opsMarkOnly)});
    ASSERT_NE(tracer, nullptr);
    uint64_t at = 0;
    uint64_t id = 0;
    {
        CorrelationScope corr(tracer.get(), 0x42);
        Span s(*tracer, NameId::POST_XFER_WRITE);
        id = s.id();
        at = nowNs();
        s.setCompleted(at);
        s.setEndNs(at);
    }
    {
        Span s(*tracer, NameId::POST_XFER_READ); // not completed: nothing folded
    }
    const std::vector<seen> ev = events();
    // a: begin, end (with the completion), begin, end; marks: the completion as a mark, which
    // comes before a's span end (it happened inside the span).
    ASSERT_EQ(ev.size(), 5u);
    EXPECT_EQ(ev[0].what, 'B');
    EXPECT_EQ(ev[0].completeNs, 0u);
    EXPECT_EQ(ev[1].sink, 1);
    EXPECT_EQ(ev[1].what, 'M');
    EXPECT_EQ(ev[1].name, "nixl::xfer.complete");
    EXPECT_EQ(ev[1].nameId, static_cast<uint32_t>(NameId::XFER_COMPLETE));
    EXPECT_EQ(ev[1].parent, id);
    EXPECT_EQ(ev[1].corr, 0x42u);
    EXPECT_EQ(ev[1].begin, at);
    EXPECT_EQ(ev[1].completeNs, 0u);
    EXPECT_EQ(ev[2].sink, 0);
    EXPECT_EQ(ev[2].what, 'E');
    EXPECT_EQ(ev[2].span, id);
    EXPECT_EQ(ev[2].end, at);
    EXPECT_EQ(ev[2].completeNs, at);
    EXPECT_EQ(ev[2].completeName, "nixl::xfer.complete");
    EXPECT_EQ(ev[2].completeNameId, static_cast<uint32_t>(NameId::XFER_COMPLETE));
    EXPECT_EQ(ev[2].completeKind, static_cast<uint32_t>(Kind::Metadata));
    EXPECT_EQ(ev[3].what, 'B');
    EXPECT_EQ(ev[4].what, 'E');
    EXPECT_EQ(ev[4].completeNs, 0u);
    EXPECT_EQ(ev[4].completeName, "");
}

TEST_F(tracingFacadeTest, NestingCorrelationAndAttributes) {
    auto tracer = Tracer::create("agentX", {ref("a", &opsA)});
    ASSERT_NE(tracer, nullptr);
    uint64_t outer_id = 0, inner_id = 0;
    {
        CorrelationScope corr(tracer.get(), 77);
        Span outer(*tracer, NameId::POST_XFER_WRITE, {{"remote_agent", "peer"}, {"bytes", 10}});
        outer_id = outer.id();
        {
            CorrelationScope corr2(tracer.get(), 88);
            Span inner(*tracer, "backend.phase", Kind::Compute, {{"ratio", 0.5}});
            inner_id = inner.id();
            EXPECT_EQ(inner.parentId(), outer_id);
            tracer->mark(NameId::XFER_COMPLETE);
            inner.add("late", int64_t(-3));
        }
        tracer->mark("custom.mark", Kind::Generic, {{"n", 1u}});
        outer.add("status", "NIXL_ERR_BACKEND");
    }
    tracer->mark(NameId::XFER_COMPLETE);
    const std::vector<seen> ev = events();
    ASSERT_EQ(ev.size(), 7u);
    // outer begin: begin attributes only, correlation 77, no parent.
    EXPECT_EQ(ev[0].what, 'B');
    EXPECT_EQ(ev[0].nameId, 5u);
    EXPECT_EQ(ev[0].name, "nixl::postXferReq.write");
    EXPECT_EQ(ev[0].kind, NIXL_TRACE_KIND_COMM_SEND);
    EXPECT_EQ(ev[0].span, outer_id);
    EXPECT_EQ(ev[0].parent, 0u);
    EXPECT_EQ(ev[0].corr, 77u);
    EXPECT_EQ(ev[0].end, 0u);
    EXPECT_EQ(ev[0].attrs, (std::vector<std::string>{"remote_agent=peer", "bytes=10"}));
    // inner begin: dynamic name, nested, inner correlation.
    EXPECT_EQ(ev[1].nameId, NIXL_TRACE_NAME_DYNAMIC);
    EXPECT_EQ(ev[1].name, "backend.phase");
    EXPECT_EQ(ev[1].kind, NIXL_TRACE_KIND_COMPUTE);
    EXPECT_EQ(ev[1].parent, outer_id);
    EXPECT_EQ(ev[1].corr, 88u);
    EXPECT_EQ(ev[1].attrs, std::vector<std::string>{"ratio=0.500000"});
    // mark inside inner.
    EXPECT_EQ(ev[2].what, 'M');
    EXPECT_EQ(ev[2].span, 0u);
    EXPECT_EQ(ev[2].parent, inner_id);
    EXPECT_EQ(ev[2].corr, 88u);
    // inner end: all attributes, same identity.
    EXPECT_EQ(ev[3].what, 'E');
    EXPECT_EQ(ev[3].span, inner_id);
    EXPECT_EQ(ev[3].begin, ev[1].begin);
    EXPECT_GE(ev[3].end, ev[3].begin);
    EXPECT_EQ(ev[3].attrs, (std::vector<std::string>{"ratio=0.500000", "late=-3"}));
    // mark after inner: outer's parent and correlation are back.
    EXPECT_EQ(ev[4].name, "custom.mark");
    EXPECT_EQ(ev[4].nameId, NIXL_TRACE_NAME_DYNAMIC);
    EXPECT_EQ(ev[4].parent, outer_id);
    EXPECT_EQ(ev[4].corr, 77u);
    EXPECT_EQ(ev[4].attrs, std::vector<std::string>{"n=1"});
    EXPECT_EQ(ev[5].what, 'E');
    EXPECT_EQ(ev[5].attrs, (std::vector<std::string>{"remote_agent=peer", "bytes=10",
                                                      "status=NIXL_ERR_BACKEND"}));
    // Outside everything.
    EXPECT_EQ(ev[6].parent, 0u);
    EXPECT_EQ(ev[6].corr, 0u);
    EXPECT_NE(outer_id, inner_id);
}

TEST_F(tracingFacadeTest, AttributesBeyondCapacityAreDropped) {
    auto tracer = Tracer::create("agentX", {ref("a", &opsA)});
    ASSERT_NE(tracer, nullptr);
    {
        Span s(*tracer, NameId::GET_NOTIFS);
        for (int i = 0; i < 10; ++i) {
            s.add("k", i);
        }
        EXPECT_EQ(s.dropped(), 2u);
    }
    const std::vector<seen> ev = events();
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[1].attrs.size(), max_span_attrs);
}

TEST_F(tracingFacadeTest, FanOutAndPerTracerChains) {
    auto both = Tracer::create("agentX", {ref("a", &opsA), ref("b", &opsB)});
    ASSERT_NE(both, nullptr);
    EXPECT_EQ(both->backendNames(), (std::vector<std::string>{"a", "b"}));
    auto other = Tracer::create("agentY", {ref("a", &opsA)});
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(creates, 3);
    {
        CorrelationScope corr(both.get(), 5);
        Span s(*both, NameId::MAKE_CONNECTION);
        // Another agent's spans and marks on this thread are not children of this one.
        Span t(*other, NameId::GEN_NOTIF);
        EXPECT_EQ(t.parentId(), 0u);
        EXPECT_EQ(other->currentCorrelation(), 0u);
        EXPECT_EQ(both->currentSpan(), s.id());
        EXPECT_EQ(other->currentSpan(), t.id());
    }
    const std::vector<seen> ev = events();
    // both: B to sink 0 and 1; other: B to 0; other E; both E to 0 and 1.
    ASSERT_EQ(ev.size(), 6u);
    EXPECT_EQ(ev[0].sink, 0);
    EXPECT_EQ(ev[1].sink, 1);
    EXPECT_EQ(ev[0].span, ev[1].span);
    EXPECT_EQ(ev[0].begin, ev[1].begin);
    EXPECT_EQ(ev[0].corr, 5u);
    EXPECT_EQ(ev[1].corr, 5u);
    EXPECT_EQ(ev[2].corr, 0u);
    EXPECT_EQ(ev[4].end, ev[5].end);
    both.reset();
    other.reset();
    EXPECT_EQ(destroys, 3);
}

TEST_F(tracingFacadeTest, NullCallbacksAreAllowed) {
    auto tracer = Tracer::create("agentX", {ref("endonly", &opsEndOnly)});
    ASSERT_NE(tracer, nullptr);
    {
        Span s(*tracer, NameId::REGISTER_MEM, {{"mem_type", "DRAM_SEG"}});
        tracer->mark(NameId::XFER_COMPLETE);
    }
    const std::vector<seen> ev = events();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].what, 'E');
}

TEST_F(tracingFacadeTest, UnusableTablesAndFailingCreateAreOneLineEach) {
    nixl_trace_backend_ops_t short_ops = opsA;
    short_ops.size = offsetof(nixl_trace_backend_ops_t, mark);
    nixl_trace_backend_ops_t no_destroy = opsA;
    no_destroy.destroy = nullptr;
    stderrCapture cap;
    auto tracer = Tracer::create("agentX",
                                 {ref("short", &short_ops), ref("nodestroy", &no_destroy),
                                  ref("none", nullptr), ref("fails", &opsFails),
                                  ref("a", &opsA)});
    const std::string log = cap.stop();
    ASSERT_NE(tracer, nullptr);
    EXPECT_EQ(tracer->backendNames(), std::vector<std::string>{"a"});
    const std::vector<std::string> errors = logLines(log, 'E');
    ASSERT_EQ(errors.size(), 4u) << log;
    EXPECT_NE(errors[0].find("agent agentX: trace backend short (table short) is unusable: its "
                             "operations table is 40 bytes, expected at least 48"),
              std::string::npos)
        << errors[0];
    EXPECT_NE(errors[1].find("lacks create or destroy"), std::string::npos) << errors[1];
    EXPECT_NE(errors[2].find("no operations table"), std::string::npos) << errors[2];
    EXPECT_NE(errors[3].find("trace backend fails (table fails) failed to create: "
                             "NIXL_ERR_BACKEND; the agent runs without it"),
              std::string::npos)
        << errors[3];
    stderrCapture cap2;
    EXPECT_EQ(Tracer::create("agentX", {ref("fails", &opsFails)}), nullptr);
    EXPECT_EQ(logLines(cap2.stop(), 'E').size(), 1u);
}

TEST_F(tracingFacadeTest, DecliningIsNotAnError) {
    stderrCapture cap;
    EXPECT_EQ(Tracer::create("agentX", {ref("declines", &opsDeclines)}), nullptr);
    const std::string log = cap.stop();
    EXPECT_TRUE(logLines(log, 'E').empty()) << log;
    EXPECT_TRUE(logLines(log, 'W').empty()) << log;
}

TEST_F(tracingFacadeTest, MarkAtAndSetEndNsShareOneTime) {
    auto tracer = Tracer::create("agentX", {ref("a", &opsA)});
    ASSERT_NE(tracer, nullptr);
    uint64_t now = 0;
    {
        Span s(*tracer, NameId::POST_XFER_READ);
        now = nowNs();
        tracer->markAt(NameId::XFER_COMPLETE, now);
        s.setEndNs(now);
    }
    const std::vector<seen> ev = events();
    ASSERT_EQ(ev.size(), 3u);
    EXPECT_EQ(ev[1].begin, now);
    EXPECT_EQ(ev[2].end, now);
    EXPECT_LE(ev[2].begin, now);
}

TEST_F(tracingFacadeTest, SpanIdsAreUniqueAcrossThreads) {
    auto tracer = Tracer::create("agentX", {ref("endonly", &opsEndOnly)});
    ASSERT_NE(tracer, nullptr);
    constexpr int kThreads = 4;
    constexpr int kSpans = 3000;
    std::vector<std::vector<uint64_t>> ids(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kSpans; ++i) {
                Span s(*tracer, NameId::GET_NOTIFS);
                ids[t].push_back(s.id());
            }
        });
    }
    for (auto &th : threads) {
        th.join();
    }
    std::set<uint64_t> all;
    for (const auto &v : ids) {
        for (uint64_t id : v) {
            EXPECT_NE(id, 0u);
            all.insert(id);
        }
    }
    EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kSpans));
    EXPECT_EQ(events().size(), static_cast<size_t>(kThreads * kSpans));
}
