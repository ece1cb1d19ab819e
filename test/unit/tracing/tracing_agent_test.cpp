/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Agents tracing through test trace backends: the exact events of a transfer, fan-out to two
// plugins, enabling (NIXL_TRACE_BACKENDS, Nsight Systems detection, off), plugins refused or
// failing, and many threads tracing at once.

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "common/nixl_log.h"
#include "config/config.h"
#include "nixl_trace_backend_plugin.h"
#include "tracing_test_utils.h"

namespace {

using namespace nixl_tracing_test;
using nixl_agent_test::regList;
using nixl_agent_test::stderrCapture;
using nixl_agent_test::testBuffer;
using nixl_agent_test::xferList;

constexpr size_t kLen = 4096;

/** Both agents with the TEST backend, src registered on init, dst on target, MD loaded. */
void
setUpPair(nixlAgent &init, nixlAgent &target, testBuffer &src, testBuffer &dst) {
    ASSERT_EQ(NIXL_SUCCESS, tracingTest::addTestBackend(init));
    ASSERT_EQ(NIXL_SUCCESS, tracingTest::addTestBackend(target));
    ASSERT_EQ(NIXL_SUCCESS, init.registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, target.registerMem(regList({dst.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, tracingTest::loadMD(target, init));
}

/** A WRITE of src to dst with notification "done", run to completion; returns the status. */
nixl_status_t
writeWithNotif(nixlAgent &init, const testBuffer &src, const testBuffer &dst, uintptr_t *handle) {
    nixlXferReqH *req = nullptr;
    nixl_status_t st = init.createXferReq(
        NIXL_WRITE, xferList({src.desc()}), xferList({dst.desc()}), "target", req);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    if (handle != nullptr) {
        *handle = reinterpret_cast<uintptr_t>(req);
    }
    nixl_opt_args_t extra;
    extra.hasNotif = true;
    extra.notifMsg = "done";
    st = init.postXferReq(req, &extra);
    for (int i = 0; i < nixl_agent_test::max_polls && st == NIXL_IN_PROG; ++i) {
        st = init.getXferStatus(req);
    }
    // Polling a finished request again must not repeat the completion mark.
    if (st == NIXL_SUCCESS && init.getXferStatus(req) != NIXL_SUCCESS) {
        st = NIXL_ERR_UNKNOWN;
    }
    const nixl_status_t rel = init.releaseXferReq(req);
    return st != NIXL_SUCCESS ? st : rel;
}

/** The notifications target holds from init. */
std::vector<std::string>
notifsFrom(nixlAgent &target, const std::string &from) {
    nixl_notifs_t map;
    EXPECT_EQ(NIXL_SUCCESS, target.getNotifs(map));
    return map.count(from) != 0 ? map[from] : std::vector<std::string>();
}

/** A WRITE with notification from init (named "init") to a fresh agent works: the agent is
 *  unharmed by whatever happened to its tracing. */
void
expectTransferWorks(nixlAgent &init) {
    auto target = tracingTest::plainAgent("target");
    testBuffer src(kLen, 7), dst(kLen, 8);
    ASSERT_NO_FATAL_FAILURE(setUpPair(init, *target, src, dst));
    EXPECT_EQ(NIXL_SUCCESS, writeWithNotif(init, src, dst, nullptr));
    EXPECT_TRUE(nixl_agent_test::holdsPattern(dst, 7));
    EXPECT_EQ(notifsFrom(*target, "init"), std::vector<std::string>{"done"});
}

} // namespace

namespace nixl_tracing_test {

TEST_F(tracingTest, WriteWithNotificationExactSequence) {
    recorder rec("recA");
    rec.clear();
    testBuffer src(kLen, 1), dst(kLen, 2);
    uintptr_t handle = 0;
    {
        auto init = makeTraced("init", "recA");
        auto target = plainAgent("target");
        ASSERT_NO_FATAL_FAILURE(setUpPair(*init, *target, src, dst));
        ASSERT_EQ(NIXL_SUCCESS, writeWithNotif(*init, src, dst, &handle));
        EXPECT_TRUE(nixl_agent_test::holdsPattern(dst, 1));
        EXPECT_EQ(notifsFrom(*target, "init"), std::vector<std::string>{"done"});
        ASSERT_EQ(NIXL_SUCCESS, init->deregisterMem(regList({src.desc()})));
    }
    EXPECT_EQ(rec.otherLines(), (std::vector<std::string>{"create init 20 1", "destroy init"}));

    const std::vector<traceEvent> ev = rec.events();
    const std::vector<std::string> expected = {
        "B nixl::registerMem",
        "E nixl::registerMem",
        "B nixl::loadRemoteMD",
        "E nixl::loadRemoteMD",
        "B nixl::createXferReq",
        "E nixl::createXferReq",
        "B nixl::postXferReq.write",
        "M nixl::xfer.complete",
        "E nixl::postXferReq.write",
        "B nixl::deregisterMem",
        "E nixl::deregisterMem",
    };
    std::vector<std::string> labels;
    for (const traceEvent &e : ev) {
        labels.push_back(e.label());
    }
    ASSERT_EQ(labels, expected);

    // Name ids, kinds, attributes: NIXL 1.4's (span_end carries the begin's plus later ones).
    const struct {
        uint32_t nameId;
        uint32_t kind;
        const char *attrs;
    } want[] = {
        {0, NIXL_TRACE_KIND_MEMORY_W, "mem_type=s:DRAM_SEG"},
        {0, NIXL_TRACE_KIND_MEMORY_W, "mem_type=s:DRAM_SEG"},
        {10, NIXL_TRACE_KIND_METADATA, "-"},
        {10, NIXL_TRACE_KIND_METADATA, "remote_agent=s:target"},
        {4, NIXL_TRACE_KIND_GENERIC, "remote_agent=s:target;desc_count=i:1"},
        {4, NIXL_TRACE_KIND_GENERIC, "remote_agent=s:target;desc_count=i:1"},
        {5, NIXL_TRACE_KIND_COMM_SEND, "remote_agent=s:target;bytes=i:4096;trace_id=s:*"},
        {7, NIXL_TRACE_KIND_METADATA, "-"},
        {5, NIXL_TRACE_KIND_COMM_SEND, "remote_agent=s:target;bytes=i:4096;trace_id=s:*"},
        {1, NIXL_TRACE_KIND_GENERIC, "mem_type=s:DRAM_SEG"},
        {1, NIXL_TRACE_KIND_GENERIC, "mem_type=s:DRAM_SEG"},
    };
    std::set<uint64_t> ids;
    for (size_t i = 0; i < ev.size(); ++i) {
        SCOPED_TRACE("event " + std::to_string(i) + ": " + ev[i].label());
        EXPECT_EQ(ev[i].agent, "init");
        EXPECT_EQ(ev[i].nameId, want[i].nameId);
        EXPECT_EQ(ev[i].kind, want[i].kind);
        EXPECT_EQ(maskTraceId(ev[i].attrs), want[i].attrs);
        EXPECT_EQ(ev[i].tid, ev[0].tid);
        if (i > 0) {
            // One thread, one clock: each event happens no earlier than the one before.
            auto at = [](const traceEvent &e) { return e.what == 'E' ? e.end : e.begin; };
            EXPECT_GE(at(ev[i]), at(ev[i - 1]));
        }
        if (ev[i].what == 'B') {
            EXPECT_NE(ev[i].span, 0u);
            EXPECT_TRUE(ids.insert(ev[i].span).second) << "span id reused";
        }
    }
    // Each span's end matches its begin: same id, parent, correlation and start time.
    for (size_t b : {0u, 2u, 4u, 6u, 9u}) {
        const size_t e = b == 6 ? 8 : b + 1;
        EXPECT_EQ(ev[e].span, ev[b].span);
        EXPECT_EQ(ev[e].parent, ev[b].parent);
        EXPECT_EQ(ev[e].corr, ev[b].corr);
        EXPECT_EQ(ev[e].begin, ev[b].begin);
        EXPECT_GE(ev[e].end, ev[e].begin);
        EXPECT_EQ(ev[b].parent, 0u); // agent calls do not nest
    }
    // The post and its completion are linked by the request's address; nothing else is.
    EXPECT_EQ(ev[6].corr, handle);
    EXPECT_EQ(ev[7].corr, handle);
    EXPECT_EQ(ev[7].span, 0u);
    EXPECT_EQ(ev[7].parent, ev[6].span); // synchronous completion: inside the post span
    for (size_t i : {0u, 2u, 4u, 9u}) {
        EXPECT_EQ(ev[i].corr, 0u);
    }
}

TEST_F(tracingTest, AsyncCompletionIsOneMarkFromGetXferStatus) {
    recorder rec("recA");
    rec.clear();
    testBuffer src(kLen, 3), dst(kLen, 4);
    auto init = makeTraced("init", "recA");
    auto target = plainAgent("target");
    ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*init, {{"async", "true"}, {"async_polls", "2"}}));
    ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*target));
    ASSERT_EQ(NIXL_SUCCESS, init->registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, target->registerMem(regList({dst.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, loadMD(*target, *init));
    rec.clear();
    uintptr_t handle = 0;
    ASSERT_EQ(NIXL_SUCCESS, writeWithNotif(*init, src, dst, &handle));

    const std::vector<traceEvent> ev = rec.events();
    std::vector<std::string> labels;
    for (const traceEvent &e : ev) {
        labels.push_back(e.label());
    }
    ASSERT_EQ(labels,
              (std::vector<std::string>{"B nixl::createXferReq",
                                        "E nixl::createXferReq",
                                        "B nixl::postXferReq.write",
                                        "E nixl::postXferReq.write",
                                        "M nixl::xfer.complete"}));
    EXPECT_EQ(ev[2].corr, handle);
    EXPECT_EQ(ev[4].corr, handle);
    EXPECT_EQ(ev[4].parent, 0u); // seen by getXferStatus, outside any span
    EXPECT_GE(ev[4].begin, ev[3].end);
}

TEST_F(tracingTest, ReadPostAndFailedCallsCarryStatus) {
    recorder rec("recA");
    testBuffer src(kLen, 5), dst(kLen, 6);
    auto init = makeTraced("init", "recA");
    auto target = plainAgent("target");
    ASSERT_NO_FATAL_FAILURE(setUpPair(*init, *target, src, dst));
    rec.clear();
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              init->createXferReq(
                  NIXL_READ, xferList({src.desc()}), xferList({dst.desc()}), "target", req));
    ASSERT_EQ(NIXL_SUCCESS, init->postXferReq(req));
    ASSERT_EQ(NIXL_SUCCESS, init->releaseXferReq(req));
    {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, init->genNotif("nobody", "x"));
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, init->makeConnection("nobody"));
        cap.stop();
    }
    const std::vector<traceEvent> ev = rec.events();
    ASSERT_EQ(ev.size(), 9u);
    EXPECT_EQ(ev[2].label(), "B nixl::postXferReq.read");
    EXPECT_EQ(ev[2].kind, NIXL_TRACE_KIND_COMM_RECV);
    EXPECT_EQ(maskTraceId(ev[2].attrs), "remote_agent=s:target;bytes=i:4096;trace_id=s:*");
    EXPECT_EQ(ev[3].label(), "M nixl::xfer.complete");
    EXPECT_EQ(ev[5].label(), "B nixl::genNotif");
    EXPECT_EQ(ev[6].attrs, "remote_agent=s:nobody;status=s:NIXL_ERR_NOT_FOUND");
    EXPECT_EQ(ev[8].label(), "E nixl::makeConnection");
    EXPECT_EQ(ev[8].attrs, "remote_agent=s:nobody;status=s:NIXL_ERR_NOT_FOUND");
}

TEST_F(tracingTest, FanOutTwoPluginsSeeTheSameEvents) {
    recorder a("recA"), b("recB");
    a.clear();
    b.clear();
    {
        auto init = makeTraced("init", " recA , recB ");
        ASSERT_NO_FATAL_FAILURE(expectTransferWorks(*init));
    }
    const std::vector<std::string> la = a.lines();
    const std::vector<std::string> lb = b.lines();
    ASSERT_GE(la.size(), 10u);
    // Core builds each event once: both plugins receive identical fields, in the same order.
    EXPECT_EQ(la, lb);
    EXPECT_EQ(la.front(), "create init 20 1");
    EXPECT_EQ(la.back(), "destroy init");
}

TEST_F(tracingTest, DuplicateNamesMakeOneInstance) {
    recorder rec("recA");
    const int before = rec.creates();
    auto init = makeTraced("init", "recA,recA , recA");
    EXPECT_EQ(rec.creates(), before + 1);
}

TEST_F(tracingTest, TracingOffLoadsNoPlugin) {
    recorder rec("recA");
    const int before = rec.creates();
    for (const char *value : {static_cast<const char *>(nullptr), "", " , ,"}) {
        SCOPED_TRACE(value == nullptr ? "unset" : std::string("\"") + value + "\"");
        stderrCapture cap;
        auto init = makeTraced("init", value);
        ASSERT_NO_FATAL_FAILURE(expectTransferWorks(*init));
        const std::string log = cap.stop();
        EXPECT_TRUE(logLines(log, 'W').empty()) << log;
        EXPECT_TRUE(logLines(log, 'E').empty()) << log;
    }
    EXPECT_EQ(rec.creates(), before);
}

TEST_F(tracingTest, NsightSystemsEnablesNvtxWhenUnset) {
    // Any existing file stands in for Nsight's injection library: core only checks the variable.
    scopedEnv nvtx("NVTX_INJECTION64_PATH", "/proc/self/exe");
    {
        stderrCapture cap;
        auto init = makeTraced("init", nullptr);
        const std::string log = cap.stop();
        const std::vector<std::string> warns = logLines(log, 'W');
        ASSERT_EQ(warns.size(), 1u) << log;
        EXPECT_NE(warns[0].find("NVTX_INJECTION64_PATH"), std::string::npos) << warns[0];
        EXPECT_NE(warns[0].find("\"nvtx\""), std::string::npos) << warns[0];
        EXPECT_NE(warns[0].find("libtrace_backend_nvtx.so"), std::string::npos) << warns[0];
        EXPECT_TRUE(logLines(log, 'E').empty()) << log;
        ASSERT_NO_FATAL_FAILURE(expectTransferWorks(*init));
    }
    {
        // Set but empty: off, even under Nsight Systems.
        stderrCapture cap;
        auto init = makeTraced("init", "");
        const std::string log = cap.stop();
        EXPECT_TRUE(logLines(log, 'W').empty()) << log;
    }
    {
        // An explicit list replaces the automatic choice.
        recorder rec("recA");
        const int before = rec.creates();
        stderrCapture cap;
        auto init = makeTraced("init", "recA");
        const std::string log = cap.stop();
        EXPECT_TRUE(logLines(log, 'W').empty()) << log;
        EXPECT_EQ(rec.creates(), before + 1);
    }
}

TEST_F(tracingTest, ConfigurationFileSelectsBackendsUnlessTheEnvironmentSaysOtherwise) {
    char path[] = "/tmp/nixl_trace_cfg_XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string text = "NIXL_TRACE_BACKENDS = \"recA\"\n";
    ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
    recorder rec("recA");
    const int before = rec.creates();
    {
        scopedEnv cfg("NIXL_CONFIG_FILE", path);
        nixlConfig::reloadForTesting();
        auto from_file = makeTraced("init", nullptr);
        EXPECT_EQ(rec.creates(), before + 1);
        auto env_off = makeTraced("init2", "");
        EXPECT_EQ(rec.creates(), before + 1);
    }
    nixlConfig::reloadForTesting();
    std::remove(path);
}

TEST_F(tracingTest, UnknownNameIsOneWarning) {
    recorder rec("recA");
    const int before = rec.creates();
    stderrCapture cap;
    auto init = makeTraced("init", "nosuch,recA");
    const std::string log = cap.stop();
    const std::vector<std::string> warns = logLines(log, 'W');
    ASSERT_EQ(warns.size(), 1u) << log;
    EXPECT_NE(warns[0].find("agent init"), std::string::npos) << warns[0];
    EXPECT_NE(warns[0].find("NIXL_TRACE_BACKENDS=nosuch,recA"), std::string::npos) << warns[0];
    EXPECT_NE(warns[0].find("libtrace_backend_nosuch.so"), std::string::npos) << warns[0];
    EXPECT_TRUE(logLines(log, 'E').empty()) << log;
    EXPECT_EQ(rec.creates(), before + 1);
    ASSERT_NO_FATAL_FAILURE(expectTransferWorks(*init));
}

// Issue 29: 8,000 unknown names once wrote 16,006 lines (754 MB), each repeating the whole
// variable. Now one line, bounded, saying how many and how long the variable was.
TEST_F(tracingTest, ManyUnknownNamesAreOneBoundedWarning) {
    std::string names;
    for (int i = 0; i < 8000; ++i) {
        names += "nosuch" + std::to_string(i) + std::string(40, 'n') + ",";
    }
    names += "recA";
    recorder rec("recA");
    const int before = rec.creates();
    stderrCapture cap;
    auto init = makeTraced("init", names.c_str());
    const std::string log = cap.stop();
    const std::vector<std::string> warns = logLines(log, 'W');
    ASSERT_EQ(warns.size(), 1u) << log.substr(0, 2000);
    EXPECT_LT(log.size(), 2u * nixl::log::max_line_bytes);
    EXPECT_NE(warns[0].find("8000 trace backend name(s)"), std::string::npos) << warns[0];
    EXPECT_NE(warns[0].find("\"nosuch0"), std::string::npos) << warns[0];
    EXPECT_NE(warns[0].find("(" + std::to_string(names.size() + 20) + " bytes)"),
              std::string::npos)
        << warns[0]; // the variable, cut, with its length
    EXPECT_EQ(rec.creates(), before + 1);
}

TEST_F(tracingTest, RefusedPluginsAreOneErrorLineEachAndTheAgentWorks) {
    const std::string dir = tracePluginDir();
    const struct {
        const char *name;
        std::vector<std::string> needles;
    } cases[] = {
        {"stale", {"libtrace_backend_stale.so", "ABI version 1, expected 3"}},
        // A real binary of the previous version, built from the frozen version-2 header.
        {"previous", {"libtrace_backend_previous.so", "ABI version 2, expected 3"}},
        {"future", {"libtrace_backend_future.so", "ABI version 4, expected 3"}},
        {"wrongkind", {"libtrace_backend_wrongkind.so", "kind 1 (backend), expected 3"}},
        {"noentry", {"libtrace_backend_noentry.so", "no symbol nixl_trace_backend_plugin_get"}},
        {"shortops",
         {"agent init", "trace backend shortops", "operations table is 40 bytes",
          "expected at least 48"}},
        {"noops", {"agent init", "trace backend noops", "no operations table"}},
        {"failcreate",
         {"agent init", "trace backend failcreate", "failed to create: NIXL_ERR_BACKEND",
          "runs without it"}},
        {"throws", {"agent init", "trace backend throws", "test plugin refuses by design"}},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.name);
        recorder rec("recA");
        const int before = rec.creates();
        stderrCapture cap;
        // With a working plugin next to it: the refusal costs only the refused plugin.
        auto init = makeTraced("init", (std::string(c.name) + ",recA").c_str());
        const std::string log = cap.stop();
        const std::vector<std::string> errors = logLines(log, 'E');
        ASSERT_EQ(errors.size(), 1u) << log;
        for (const std::string &n : c.needles) {
            EXPECT_NE(errors[0].find(n), std::string::npos) << "no \"" << n << "\" in " << errors[0];
        }
        EXPECT_EQ(rec.creates(), before + 1);
        rec.clear();
        ASSERT_NO_FATAL_FAILURE(expectTransferWorks(*init));
        EXPECT_FALSE(rec.events().empty());
    }
}

TEST_F(tracingTest, OnlyFailingPluginsMeansNoTracer) {
    stderrCapture cap;
    auto init = makeTraced("init", "failcreate,throws");
    const std::string log = cap.stop();
    EXPECT_EQ(logLines(log, 'E').size(), 2u) << log;
    ASSERT_NO_FATAL_FAILURE(expectTransferWorks(*init));
}

TEST_F(tracingTest, ConcurrentPostsNestAndCorrelatePerThread) {
    recorder rec("recA");
    constexpr int kThreads = 4;
    constexpr int kRounds = 100;
    auto init = makeTraced("init", "recA", nixl_agent_test::agentConfig(
                                               nixl_thread_sync_t::NIXL_THREAD_SYNC_RW));
    auto target = plainAgent("target",
                             nixl_agent_test::agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_RW));
    ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*init, {{"async", "true"}, {"async_polls", "1"}}));
    ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*target));
    std::vector<std::unique_ptr<testBuffer>> srcs, dsts;
    nixl_reg_dlist_t src_reg(DRAM_SEG), dst_reg(DRAM_SEG);
    for (int t = 0; t < kThreads; ++t) {
        srcs.push_back(std::make_unique<testBuffer>(kLen, t));
        dsts.push_back(std::make_unique<testBuffer>(kLen, 100 + t));
        src_reg.addDesc(srcs.back()->blob());
        dst_reg.addDesc(dsts.back()->blob());
    }
    ASSERT_EQ(NIXL_SUCCESS, init->registerMem(src_reg));
    ASSERT_EQ(NIXL_SUCCESS, target->registerMem(dst_reg));
    ASSERT_EQ(NIXL_SUCCESS, loadMD(*target, *init));
    rec.clear();

    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            nixlXferReqH *req = nullptr;
            if (init->createXferReq(NIXL_WRITE, xferList({srcs[t]->desc()}),
                                    xferList({dsts[t]->desc()}), "target",
                                    req) != NIXL_SUCCESS) {
                failures.fetch_add(1);
                return;
            }
            for (int r = 0; r < kRounds; ++r) {
                nixl_status_t st = init->postXferReq(req);
                for (int i = 0; i < nixl_agent_test::max_polls && st == NIXL_IN_PROG; ++i) {
                    st = init->getXferStatus(req);
                }
                if (st != NIXL_SUCCESS) {
                    failures.fetch_add(1);
                }
            }
            if (init->releaseXferReq(req) != NIXL_SUCCESS) {
                failures.fetch_add(1);
            }
        });
    }
    for (auto &th : threads) {
        th.join();
    }
    ASSERT_EQ(failures.load(), 0);
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_TRUE(nixl_agent_test::holdsPattern(*dsts[t], t));
    }

    // Per thread: spans nest properly (every end closes the innermost open span), every post
    // span is followed by exactly one completion mark of the same request, ids are unique.
    const std::vector<traceEvent> ev = rec.events();
    EXPECT_TRUE(rec.otherLines().empty());
    std::map<std::string, std::vector<const traceEvent *>> open;
    std::map<std::string, uint64_t> lastPostCorr;
    // Keyed by thread too: a released request's address may be reused by another thread's.
    std::map<std::pair<std::string, uint64_t>, int> marksPerCorr, postsPerCorr;
    std::set<uint64_t> ids;
    for (const traceEvent &e : ev) {
        auto &stack = open[e.tid];
        if (e.what == 'B') {
            EXPECT_EQ(e.parent, stack.empty() ? 0u : stack.back()->span);
            EXPECT_TRUE(ids.insert(e.span).second);
            stack.push_back(&e);
            if (e.name == "nixl::postXferReq.write") {
                ++postsPerCorr[{e.tid, e.corr}];
                lastPostCorr[e.tid] = e.corr;
            }
        } else if (e.what == 'E') {
            ASSERT_FALSE(stack.empty());
            EXPECT_EQ(stack.back()->span, e.span);
            EXPECT_EQ(stack.back()->corr, e.corr);
            stack.pop_back();
        } else {
            EXPECT_EQ(e.name, "nixl::xfer.complete");
            EXPECT_EQ(e.corr, lastPostCorr[e.tid]);
            ++marksPerCorr[{e.tid, e.corr}];
        }
    }
    for (const auto &[tid, stack] : open) {
        EXPECT_TRUE(stack.empty()) << "thread " << tid << " left spans open";
    }
    EXPECT_EQ(postsPerCorr.size(), static_cast<size_t>(kThreads));
    EXPECT_EQ(marksPerCorr, postsPerCorr);
    for (const auto &[corr, n] : postsPerCorr) {
        EXPECT_EQ(n, kRounds);
    }
}

} // namespace nixl_tracing_test
