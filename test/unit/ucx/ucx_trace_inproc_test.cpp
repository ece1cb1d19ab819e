/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX backend's trace phases in one process, through the record trace plugin of
// test/unit/tracing (libtrace_backend_recA.so): the phases of both paths under the request's
// trace id and the target's under the same id; a damaged trace context in the notification
// (ucx_fault_notif_trace) still delivers it, records the target's phases without a trace id
// and logs one line; with tracing off at the initiator nothing is carried; progress threads
// recording while the agents are destroyed.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "../tracing/tracing_test_utils.h"
#include "ucx_test_utils.h"

using namespace nixl_ucx_test;
using nixl_tracing_test::recorder;
using nixl_tracing_test::traceEvent;
using nixl_tracing_test::logLines;
using nixl_tracing_test::tracePluginDir;
using nixl_test::scopedEnv;

namespace {

/**
 * An agent with a UCX backend whose agent traces through backends ("" = not at all): the
 * plugin directory points at the test trace plugins only while the agent is constructed.
 */
std::unique_ptr<ucxAgent>
makeUcx(const std::string &name, const char *backends, const ucxSetup &setup) {
    auto a = std::make_unique<ucxAgent>();
    a->name = name;
    nixlAgentConfig cfg(setup.progThread, false, 0, setup.sync, 1, setup.pthrDelayUs);
    {
        const std::string dir = tracePluginDir();
        scopedEnv plugin_dir("NIXL_PLUGIN_DIR", dir.c_str());
        scopedEnv trace("NIXL_TRACE_BACKENDS", backends);
        a->agent = std::make_unique<nixlAgent>(name, cfg);
    }
    if (a->agent->createBackend("UCX", setup.params, a->backend) != NIXL_SUCCESS) {
        return nullptr;
    }
    return a;
}

/** The names of agent's phases, in arrival order. */
std::vector<std::string>
phaseNames(const std::vector<traceEvent> &ev, const std::string &agent) {
    std::vector<std::string> out;
    for (const traceEvent &e : ev) {
        if (e.isPhase() && e.agent == agent) {
            out.push_back(e.name);
        }
    }
    return out;
}

/** The value of attribute key (a string) in attrs, "" when absent. */
std::string
attrOf(const std::string &attrs, const std::string &key) {
    const std::string k = key + "=s:";
    size_t at = 0;
    while ((at = attrs.find(k, at)) != std::string::npos) {
        if (at == 0 || attrs[at - 1] == ';') {
            const size_t v = at + k.size();
            return attrs.substr(v, attrs.find(';', v) - v);
        }
        at += k.size();
    }
    return "";
}

struct pathParam {
    const char *name;
    bool direct;
    bool progThread;
};

class ucxTraceTest : public ::testing::TestWithParam<pathParam> {
protected:
    ucxSetup
    setup() const {
        ucxSetup s;
        s.params["ucx_direct_cma"] = GetParam().direct ? "yes" : "no";
        s.progThread = GetParam().progThread;
        return s;
    }

    /** A -> B WRITE of len bytes with notification msg; B polls until it has it. */
    void
    writeWithNotif(ucxAgent &a, ucxAgent &b, testMem &src, testMem &dst, const std::string &msg) {
        fillPattern(src.data(), src.size(), 5);
        nixl_opt_args_t extra;
        extra.notif = msg;
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a.agent->createXferReq(NIXL_WRITE, xferList({{src.addr(), src.size()}}),
                                         xferList({{dst.addr(), dst.size()}}), b.name, req,
                                         &extra),
                  NIXL_SUCCESS);
        notifBox box;
        ASSERT_EQ(runXfer(*a.agent, req, [&] { box.poll(*b.agent); }), NIXL_SUCCESS);
        ASSERT_EQ(a.agent->releaseXferReq(req), NIXL_SUCCESS);
        EXPECT_TRUE(waitFor([&] {
            box.poll(*b.agent);
            return box.count(a.name, msg) == 1;
        }));
        EXPECT_EQ(firstMismatch(dst.data(), dst.size(), 5), -1);
    }

    scopedEnv backends_{"NIXL_TRACE_BACKENDS", nullptr};
    scopedEnv telemetry_{"NIXL_TELEMETRY_ENABLE", nullptr};
};

TEST_P(ucxTraceTest, PooledWriteRecordsEachPhaseOnce) {
    // num_threads=2, batches of 16: 256 descriptors of 512 bytes are 16 batches posted by the
    // pool, and still one request: one phase of each kind at either end.
    recorder rec("recA");
    rec.clear();
    testMem src(128 * 1024);
    testMem dst(128 * 1024);
    {
        ucxSetup pooled = setup();
        pooled.params["num_threads"] = "2";
        pooled.params["split_batch_size"] = "16";
        auto a = makeUcx("A", "recA", pooled);
        auto b = makeUcx("B", "recA", setup());
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
        std::string got;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), got), NIXL_SUCCESS);
        std::vector<std::pair<uintptr_t, size_t>> l;
        std::vector<std::pair<uintptr_t, size_t>> r;
        for (size_t i = 0; i < 256; ++i) {
            l.emplace_back(src.addr() + i * 512, 512);
            r.emplace_back(dst.addr() + i * 512, 512);
        }
        fillPattern(src.data(), src.size(), 6);
        nixl_opt_args_t extra;
        extra.notif = "pooled";
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a->agent->createXferReq(NIXL_WRITE, xferList(l), xferList(r), "B", req,
                                          &extra),
                  NIXL_SUCCESS);
        notifBox box;
        ASSERT_EQ(runXfer(*a->agent, req, [&] { box.poll(*b->agent); }), NIXL_SUCCESS);
        ASSERT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
        EXPECT_TRUE(waitFor([&] {
            box.poll(*b->agent);
            return box.count("A", "pooled") == 1;
        }));
        EXPECT_EQ(firstMismatch(dst.data(), dst.size(), 6), -1);
    }
    const std::vector<traceEvent> ev = rec.allEvents();
    EXPECT_EQ(phaseNames(ev, "A"),
              (std::vector<std::string>{"nixl::backend.submit", "nixl::backend.wire_submitted",
                                        "nixl::backend.wire_completed",
                                        "nixl::backend.notif_sent"}));
    EXPECT_EQ(phaseNames(ev, "B"),
              (std::vector<std::string>{"nixl::backend.notif_received",
                                        "nixl::backend.remote_observed"}));
}

TEST_P(ucxTraceTest, PhasesOfAWriteCarryTheRequestsTraceIdToTheTarget) {
    recorder rec("recA");
    rec.clear();
    testMem src(128 * 1024);
    testMem dst(128 * 1024);
    {
        auto a = makeUcx("A", "recA", setup());
        auto b = makeUcx("B", "recA", setup());
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
        std::string got;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), got), NIXL_SUCCESS);
        writeWithNotif(*a, *b, src, dst, "traced");
    }
    const std::vector<traceEvent> ev = rec.allEvents();
    // Each agent's phases in order (a progress thread records some of them, after the ones
    // before it); the two agents' records may interleave.
    EXPECT_EQ(phaseNames(ev, "A"),
              (std::vector<std::string>{"nixl::backend.submit", "nixl::backend.wire_submitted",
                                        "nixl::backend.wire_completed",
                                        "nixl::backend.notif_sent"}));
    EXPECT_EQ(phaseNames(ev, "B"),
              (std::vector<std::string>{"nixl::backend.notif_received",
                                        "nixl::backend.remote_observed"}));
    std::string post_id;
    uint64_t post_corr = 0;
    for (const traceEvent &e : ev) {
        if (e.label() == "B nixl::postXferReq.write") {
            post_id = attrOf(e.attrs, "trace_id");
            post_corr = e.corr;
        }
    }
    ASSERT_EQ(post_id.size(), 32u);
    for (const traceEvent &e : ev) {
        if (!e.isPhase()) {
            continue;
        }
        SCOPED_TRACE(e.agent + " " + e.name + " " + e.attrs);
        EXPECT_EQ(attrOf(e.attrs, "nixl.phase.backend"), "UCX");
        // The initiator's phases join its request through the correlation id (its post span
        // carries the trace id); the target's come from the wire (no core-local correlation
        // id) and carry the initiator's trace id.
        EXPECT_EQ(attrOf(e.attrs, "nixl.phase.trace_id"), e.agent == "A" ? "" : post_id);
        EXPECT_EQ(e.corr, e.agent == "A" ? post_corr : 0u);
    }
    const auto submit = std::find_if(ev.begin(), ev.end(), [](const traceEvent &e) {
        return e.name == "nixl::backend.submit";
    });
    ASSERT_NE(submit, ev.end());
    // UCX_TLS without cma (the ucx_tls_* entries) turns the direct path off.
    const bool direct = GetParam().direct && cmaInTls();
    EXPECT_EQ(attrOf(submit->attrs, "ucx.path"), direct ? "direct" : "ucx");
    EXPECT_NE(submit->attrs.find("ucx.bytes=i:131072"), std::string::npos) << submit->attrs;
    // Each wire phase names how the data went: a copy on the direct path (memcpy when the
    // peer's table is mapped in this process, else cma), put then flush through UCP.
    int wire = 0;
    for (const traceEvent &e : ev) {
        if (e.agent != "A" ||
            (e.name != "nixl::backend.wire_submitted" && e.name != "nixl::backend.wire_completed")) {
            continue;
        }
        ++wire;
        const std::string label = attrOf(e.attrs, "nixl.phase.label");
        if (direct) {
            EXPECT_TRUE(label == "ucx.memcpy" || label == "ucx.cma") << e.name << ": " << label;
        } else {
            EXPECT_EQ(label, e.name == "nixl::backend.wire_submitted" ? "ucx.put" : "ucx.flush");
        }
    }
    EXPECT_EQ(wire, 2);
}

TEST_P(ucxTraceTest, SmallDirectPostRecordsItsPhasesAsOneBatch) {
    // At most nixlUcx::trace_batch_bytes, completed inline on the direct path: the post's
    // phases reach core in one call, in order, and share its one clock read. The UCX path
    // records them one by one, at their own times, from wherever they happen; both paths
    // give the same phases in the same order.
    recorder rec("recA");
    rec.clear();
    testMem src(4096);
    testMem dst(4096);
    {
        auto a = makeUcx("A", "recA", setup());
        auto b = makeUcx("B", "recA", setup());
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
        std::string got;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), got), NIXL_SUCCESS);
        writeWithNotif(*a, *b, src, dst, "small");
    }
    const std::vector<traceEvent> ev = rec.allEvents();
    EXPECT_EQ(phaseNames(ev, "A"),
              (std::vector<std::string>{"nixl::backend.submit", "nixl::backend.wire_submitted",
                                        "nixl::backend.wire_completed",
                                        "nixl::backend.notif_sent"}));
    std::vector<uint64_t> times;
    std::set<uint64_t> corrs;
    std::string submitAttrs;
    for (const traceEvent &e : ev) {
        if (e.isPhase() && e.agent == "A") {
            times.push_back(e.begin);
            corrs.insert(e.corr);
            if (e.name == "nixl::backend.submit") {
                submitAttrs = e.attrs;
            }
        }
    }
    ASSERT_EQ(times.size(), 4u);
    EXPECT_EQ(corrs.size(), 1u);
    EXPECT_NE(*corrs.begin(), 0u);
    EXPECT_NE(submitAttrs.find("ucx.bytes=i:4096"), std::string::npos) << submitAttrs;
    for (uint64_t t : times) {
        EXPECT_EQ(t % 1000, 0u); // whole microseconds, as nixlTime::getUs() gives
    }
    const bool direct = GetParam().direct && cmaInTls();
    if (direct) {
        EXPECT_EQ(std::set<uint64_t>(times.begin(), times.end()).size(), 1u)
            << "one batch, one clock read";
    }
}

TEST_P(ucxTraceTest, DamagedContextStillDeliversAndLogsOnce) {
    for (const char *fault : {"truncate", "version", "zero"}) {
        SCOPED_TRACE(fault);
        recorder rec("recA");
        rec.clear();
        testMem src(4096);
        testMem dst(4096);
        std::string log;
        {
            ucxSetup sa = setup();
            sa.params["ucx_fault_notif_trace"] = fault;
            auto a = makeUcx("A", "recA", sa);
            auto b = makeUcx("B", "recA", setup());
            ASSERT_TRUE(a && b);
            ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
            ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
            std::string got;
            ASSERT_EQ(a->agent->loadRemoteMD(b->md(), got), NIXL_SUCCESS);
            ::testing::internal::CaptureStderr();
            writeWithNotif(*a, *b, src, dst, "one");
            writeWithNotif(*a, *b, src, dst, "two");
            log = ::testing::internal::GetCapturedStderr();
        }
        // One line for the engine, however many damaged contexts arrive.
        const auto warns = logLines(log, 'W');
        size_t about = 0;
        for (const auto &l : warns) {
            if (l.find("agent B: notification from A: trace context") != std::string::npos) {
                ++about;
            }
        }
        EXPECT_EQ(about, 1u) << log;
        EXPECT_TRUE(logLines(log, 'E').empty()) << log;
        const std::vector<traceEvent> ev = rec.allEvents();
        EXPECT_EQ(phaseNames(ev, "B"),
                  (std::vector<std::string>{"nixl::backend.notif_received",
                                            "nixl::backend.notif_received"}));
        for (const traceEvent &e : ev) {
            if (e.isPhase() && e.agent == "B") {
                EXPECT_EQ(attrOf(e.attrs, "nixl.phase.trace_id"), "") << e.attrs;
            }
        }
    }
}

TEST_P(ucxTraceTest, InitiatorNotTracingCarriesNothing) {
    recorder rec("recA");
    rec.clear();
    testMem src(4096);
    testMem dst(4096);
    {
        auto a = makeUcx("A", "", setup());
        auto b = makeUcx("B", "recA", setup());
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
        std::string got;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), got), NIXL_SUCCESS);
        writeWithNotif(*a, *b, src, dst, "plain");
    }
    const std::vector<traceEvent> ev = rec.allEvents();
    EXPECT_TRUE(phaseNames(ev, "A").empty());
    // The version-1 header: B receives no context, so no trace id and no REMOTE_OBSERVED.
    EXPECT_EQ(phaseNames(ev, "B"), std::vector<std::string>{"nixl::backend.notif_received"});
    for (const traceEvent &e : ev) {
        if (e.isPhase()) {
            EXPECT_EQ(attrOf(e.attrs, "nixl.phase.trace_id"), "") << e.attrs;
        }
    }
}

TEST_P(ucxTraceTest, TargetNotTracingStillDelivers) {
    recorder rec("recA");
    rec.clear();
    testMem src(4096);
    testMem dst(4096);
    {
        auto a = makeUcx("A", "recA", setup());
        auto b = makeUcx("B", "", setup());
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
        std::string got;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), got), NIXL_SUCCESS);
        writeWithNotif(*a, *b, src, dst, "to-plain");
    }
    const std::vector<traceEvent> ev = rec.allEvents();
    EXPECT_EQ(phaseNames(ev, "A").size(), 4u);
    EXPECT_TRUE(phaseNames(ev, "B").empty());
}

INSTANTIATE_TEST_SUITE_P(Paths,
                         ucxTraceTest,
                         ::testing::Values(pathParam{"direct", true, false},
                                           pathParam{"direct_pt", true, true},
                                           pathParam{"ucp", false, false},
                                           pathParam{"ucp_pt", false, true}),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(ucxTraceProgressThread, RecordsWhileTheAgentsAreDestroyed) {
    // Requests still running on both progress threads when the agents go: the threads record
    // phases until the engines join them, so the sink (and telemetry) must still be there.
    // ASan/TSan builds turn a sink freed first into a report.
    scopedEnv backends("NIXL_TRACE_BACKENDS", nullptr);
    recorder rec("recA");
    rec.clear();
    for (int round = 0; round < 3; ++round) {
        testMem src(4 << 20);
        testMem dst(4 << 20);
        ucxSetup s;
        s.params["ucx_direct_cma"] = round == 1 ? "no" : "yes";
        s.progThread = true;
        auto a = makeUcx("A", "recA", s);
        auto b = makeUcx("B", "recA", s);
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
        std::string got;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), got), NIXL_SUCCESS);
        ASSERT_EQ(b->agent->loadRemoteMD(a->md(), got), NIXL_SUCCESS);
        std::vector<nixlXferReqH *> reqs;
        for (int i = 0; i < 8; ++i) {
            const size_t part = src.size() / 8;
            nixl_opt_args_t extra;
            extra.notif = "n" + std::to_string(i);
            nixlXferReqH *req = nullptr;
            ASSERT_EQ(a->agent->createXferReq(
                          NIXL_WRITE, xferList({{src.addr() + i * part, part}}),
                          xferList({{dst.addr() + i * part, part}}), "B", req, &extra),
                      NIXL_SUCCESS);
            const nixl_status_t st = a->agent->postXferReq(req);
            ASSERT_TRUE(st == NIXL_SUCCESS || st == NIXL_IN_PROG) << st;
            reqs.push_back(req);
        }
        if (round == 2) {
            // The target goes first, with notifications possibly still arriving.
            b.reset();
        }
        // Released while running where they still run (the agent waits for UCX's operations
        // or abandons direct copies), then the agents with their progress threads.
        for (nixlXferReqH *req : reqs) {
            a->agent->releaseXferReq(req);
        }
        a.reset();
        b.reset();
    }
    // Each round recorded at least the submits; nothing was recorded after a destroy.
    size_t submits = 0;
    for (const traceEvent &e : rec.allEvents()) {
        submits += e.name == "nixl::backend.submit" ? 1 : 0;
    }
    EXPECT_EQ(submits, 24u);
    for (const std::string &l : rec.otherLines()) {
        EXPECT_EQ(l.rfind("violation", 0), std::string::npos) << l;
    }
}

} // namespace
