/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Agents traced through libtrace_backend_nvtx.so (NIXL_TRACE_BACKENDS=nvtx) under the
 * recording NVTX tool: the exact NVTX sequence of a WRITE with notification between two
 * agents on the TEST backend, including nesting and the correlation id that links the post
 * range to its xfer.complete mark. meson runs it under both kinds of tool (with and without
 * the payload extension), and once without a tool (NvtxAgentNoTool.*).
 */
#include <map>
#include <optional>
#include <set>

#include "../agent/agent_test_utils.h"
#include "common/nixl_log.h"
#include "nvtx_test_util.h"

namespace nixl_agent_test {
namespace {

using lines = std::vector<std::string>;

// A request's trace id (random, 32 hex digits) in a trace_id attribute replaced by "T".
std::string
maskTraceIds(std::string l) {
    static const std::string key = "{key=\"trace_id\" value=\"";
    for (size_t at = l.find(key); at != std::string::npos; at = l.find(key, at + 1)) {
        const size_t from = at + key.size();
        const size_t to = l.find('"', from);
        if (to != std::string::npos && to - from == 32) {
            l.replace(from, 32, "T");
        }
    }
    return l;
}

// Correlation ids are request handles' values, unknown to the test: each distinct one becomes
// C1, C2, ... in order of first appearance, so that the expected sequence is exact and still
// shows which lines share a request.
lines
normaliseCorrelation(const lines &in) {
    static const std::string key = "correlation_id=";
    std::map<std::string, std::string> names;
    lines out;
    for (const std::string &l : in) {
        std::string r;
        size_t last = 0;
        for (size_t at = l.find(key); at != std::string::npos; at = l.find(key, last)) {
            const size_t from = at + key.size();
            size_t to = from;
            while (to < l.size() && l[to] >= '0' && l[to] <= '9') {
                ++to;
            }
            const std::string v = l.substr(from, to - from);
            if (!names.count(v)) {
                names[v] = "C" + std::to_string(names.size() + 1);
            }
            r += l.substr(last, from - last) + names[v];
            last = to;
        }
        out.push_back(maskTraceIds(r + l.substr(last)));
    }
    return out;
}

// The name of a "string <d> S<n> "<name>"" line of domain d, or nullopt for another line.
std::optional<std::string>
registeredName(const std::string &l, const std::string &d) {
    const std::string head = "string " + d + " S";
    if (l.rfind(head, 0) != 0) {
        return std::nullopt;
    }
    const size_t open = l.find(" \"", head.size());
    if (open == std::string::npos || l.size() < open + 3 || l.back() != '"') {
        return std::nullopt;
    }
    return l.substr(open + 2, l.size() - open - 3);
}

// The push/pop/mark lines of a record (drops the per-agent setup: domains, names, schemas).
lines
eventsOnly(const lines &in) {
    lines out;
    for (const std::string &l : in) {
        if (l.rfind("push ", 0) == 0 || l.rfind("pop ", 0) == 0 || l.rfind("mark ", 0) == 0) {
            out.push_back(l);
        }
    }
    return out;
}

// Whether a line is a backend trace phase's mark (issue 12; docs/tracing.md, Backend phases).
bool
isPhaseMark(const std::string &l) {
    return l.rfind("mark ", 0) == 0 && l.find(" reg:nixl::backend.") != std::string::npos;
}

// The lines without backend phase marks: the agent's own spans, as NIXL 1.4 traces them.
lines
withoutPhases(const lines &in) {
    lines out;
    for (const std::string &l : in) {
        if (!isPhaseMark(l)) {
            out.push_back(l);
        }
    }
    return out;
}

class NvtxAgent : public agentTest {
protected:
    NvtxAgent() : backends_("NIXL_TRACE_BACKENDS", "nvtx") {}

    void
    SetUp() override {
        if (!rec_.ok()) {
            GTEST_SKIP() << "needs the NVTX test recorder: " << rec_.error();
        }
        rec_.reset();
    }

    nvtxTest::recorder rec_;
    scopedEnv backends_;
};

TEST_F(NvtxAgent, EachAgentGetsADomainWithEverySpanNameRegisteredOnce) {
    auto a = makeAgent("A");
    auto b = makeAgent("B");
    const lines got = rec_.take();
    ASSERT_FALSE(got.empty()) << "NIXL_TRACE_BACKENDS=nvtx produced no NVTX call";
    // Per domain, in creation order: the domain, its 8 categories, the schemas (extension
    // tools only), then the name table, each name once.
    const std::vector<std::pair<std::string, std::string>> domains = {{"D1", "A"}, {"D2", "B"}};
    size_t at = 0;
    for (const auto &[d, agent] : domains) {
        ASSERT_LT(at, got.size());
        EXPECT_EQ(got[at++], "domain " + d + " \"" + agent + "\"");
        lines head = rec_.categoryLines(d);
        nvtxTest::append(head, rec_.schemaLines(d));
        for (const std::string &want : head) {
            ASSERT_LT(at, got.size());
            EXPECT_EQ(got[at++], want);
        }
        std::set<std::string> names;
        for (; at < got.size(); ++at) {
            const std::optional<std::string> name = registeredName(got[at], d);
            if (!name) {
                break;
            }
            EXPECT_TRUE(names.insert(*name).second) << "registered twice: " << got[at];
        }
        // NIXL 1.4's span names (nixl-api.md section 5) and the six backend phases, no more,
        // no fewer.
        const std::set<std::string> want = {
            "nixl::registerMem",     "nixl::deregisterMem",   "nixl::makeConnection",
            "nixl::makeXferReq",     "nixl::createXferReq",   "nixl::postXferReq.write",
            "nixl::postXferReq.read", "nixl::xfer.complete",  "nixl::getNotifs",
            "nixl::genNotif",        "nixl::loadRemoteMD",    "nixl::fetchRemoteMD",
            "nixl::prepMemView",     "nixl::releaseMemView",
            "nixl::backend.submit",  "nixl::backend.wire_submitted",
            "nixl::backend.wire_completed", "nixl::backend.notif_sent",
            "nixl::backend.notif_received", "nixl::backend.remote_observed",
        };
        EXPECT_EQ(names, want) << "in " << d;
    }
    EXPECT_EQ(at, got.size()) << "unexpected line: " << (at < got.size() ? got[at] : "");
    a.reset();
    b.reset();
    EXPECT_EQ(rec_.take(), (lines{"destroy D1", "destroy D2"}));
}

TEST_F(NvtxAgent, WriteWithNotificationExactSequence) {
    testBuffer aBuf(256, 1);
    testBuffer bBuf(256, 2);
    auto a = makeAgent("A");
    auto b = makeAgent("B");
    // Async, one poll in progress: post returns IN_PROG, the first getXferStatus too, the
    // second sees SUCCESS (the one xfer.complete mark), a third sees it again (no second mark).
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a, {{"async", "true"}, {"async_polls", "1"}}));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b));
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({aBuf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({bBuf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*a, *b));
    // Registration and the metadata exchange. loadRemoteMD learns remote_agent only when it
    // succeeds: the plugin puts it on a mark just before the pop (the push carries nothing).
    const lines setup = {
        "push D1 L0 reg:nixl::registerMem argb=ff3f51b5 cat=4 " +
            rec_.payload("{key=\"mem_type\" value=\"DRAM_SEG\"}", 1),
        "pop D1 L0",
        "push D2 L0 reg:nixl::registerMem argb=ff3f51b5 cat=4 " +
            rec_.payload("{key=\"mem_type\" value=\"DRAM_SEG\"}", 1),
        "pop D2 L0",
        "push D1 L0 reg:nixl::loadRemoteMD argb=ff009688 cat=8 -",
        "mark D1 reg:nixl::loadRemoteMD argb=ff009688 cat=8 " +
            rec_.payload("{key=\"remote_agent\" value=\"B\"}", 1),
        "pop D1 L0",
        "push D2 L0 reg:nixl::loadRemoteMD argb=ff009688 cat=8 -",
        "mark D2 reg:nixl::loadRemoteMD argb=ff009688 cat=8 " +
            rec_.payload("{key=\"remote_agent\" value=\"A\"}", 1),
        "pop D2 L0",
    };
    EXPECT_EQ(eventsOnly(rec_.take()), setup);

    nixl_opt_args_t args;
    args.notif = "written";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a->createXferReq(NIXL_WRITE, xferList({aBuf.desc()}), xferList({bBuf.desc()}), "B",
                               req, &args));
    ASSERT_EQ(NIXL_IN_PROG, a->postXferReq(req));
    ASSERT_EQ(NIXL_IN_PROG, a->getXferStatus(req));
    ASSERT_EQ(NIXL_SUCCESS, a->getXferStatus(req));
    ASSERT_EQ(NIXL_SUCCESS, a->getXferStatus(req));
    EXPECT_EQ((nixl_notifs_t{{"A", {"written"}}}), drain(*b));
    EXPECT_TRUE(holdsPattern(bBuf, 1));

    const lines want = {
        "push D1 L0 reg:nixl::createXferReq argb=ff9e9e9e cat=1 " +
            rec_.payload("{key=\"remote_agent\" value=\"B\"}{key=\"desc_count\" value=1}", 2),
        "pop D1 L0",
        "push D1 L0 reg:nixl::postXferReq.write argb=ffff9800 cat=5 " +
            rec_.payload("{correlation_id=C1}{key=\"remote_agent\" value=\"B\"}"
                         "{key=\"bytes\" value=256}{key=\"trace_id\" value=\"T\"}",
                         4),
        "pop D1 L0",
        "mark D1 reg:nixl::xfer.complete argb=ff009688 cat=8 " +
            rec_.payload("{correlation_id=C1}", 1),
        "push D2 L0 reg:nixl::getNotifs argb=ff009688 cat=8 -",
        "pop D2 L0",
    };
    // Backend phases are checked in the synchronous case below and in test/unit/tracing.
    EXPECT_EQ(withoutPhases(normaliseCorrelation(rec_.take())), want);
    EXPECT_EQ(NIXL_SUCCESS, a->releaseXferReq(req));
}

TEST_F(NvtxAgent, SynchronousWriteNestsTheCompletionMarkInThePostRange) {
    testBuffer aBuf(128, 3);
    testBuffer bBuf(128, 4);
    auto a = makeAgent("A");
    auto b = makeAgent("B");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a)); // completes inside postXferReq
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b));
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({aBuf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({bBuf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));
    nixl_opt_args_t args;
    args.notif = "sync";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a->createXferReq(NIXL_WRITE, xferList({aBuf.desc(0, 64)}),
                               xferList({bBuf.desc(0, 64)}), "B", req, &args));
    rec_.take();
    ASSERT_EQ(NIXL_SUCCESS, a->postXferReq(req));
    ASSERT_EQ(NIXL_SUCCESS, a->getXferStatus(req)); // already seen: no second mark
    EXPECT_TRUE(holdsPattern(bBuf, 3, 0, 64));
    const lines want = {
        "push D1 L0 reg:nixl::postXferReq.write argb=ffff9800 cat=5 " +
            rec_.payload("{correlation_id=C1}{key=\"remote_agent\" value=\"B\"}"
                         "{key=\"bytes\" value=64}{key=\"trace_id\" value=\"T\"}",
                         4),
        "mark D1 reg:nixl::xfer.complete argb=ff009688 cat=8 " +
            rec_.payload("{correlation_id=C1}", 1),
        "pop D1 L0",
    };
    const lines got = normaliseCorrelation(rec_.take());
    EXPECT_EQ(withoutPhases(got), want);
    // The TEST backend's phases of this post are marks inside its range, first SUBMIT.
    ASSERT_GE(got.size(), 4u);
    EXPECT_EQ(got[1].rfind("mark D1 reg:nixl::backend.submit argb=ffff9800 cat=5 ", 0), 0u)
        << got[1];
    EXPECT_TRUE(isPhaseMark(got[got.size() - 3])) << got[got.size() - 3];
    EXPECT_EQ(NIXL_SUCCESS, a->releaseXferReq(req));
}

TEST_F(NvtxAgent, AFailedCallEndsWithItsStatusOnAMarkBeforeThePop) {
    auto a = makeAgent("A");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
    rec_.take();
    const nixl_status_t gst = a->genNotif("nobody", "hello");
    ASSERT_NE(gst, NIXL_SUCCESS);
    const lines want = {
        "push D1 L0 reg:nixl::genNotif argb=ff009688 cat=8 " +
            rec_.payload("{key=\"remote_agent\" value=\"nobody\"}", 1),
        "mark D1 reg:nixl::genNotif argb=ff009688 cat=8 " +
            rec_.payload("{key=\"status\" value=\"" + std::string(nixlEnumStrings::statusStr(gst)) +
                             "\"}",
                         1),
        "pop D1 L0",
    };
    EXPECT_EQ(eventsOnly(rec_.take()), want);
}

// Without a tool the plugin declines every agent: one INFO line each, no warning or error, and
// the agents transfer as usual.
class NvtxAgentNoTool : public agentTest {
protected:
    NvtxAgentNoTool() : backends_("NIXL_TRACE_BACKENDS", "nvtx") {}

    scopedEnv backends_;
};

TEST_F(NvtxAgentNoTool, AgentsAreDeclinedQuietlyAndTransfer) {
    if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) {
        GTEST_SKIP() << "NVTX_INJECTION64_PATH is set (a tool is attached)";
    }
    const nixl::log::level before = nixl::log::getLevel();
    nixl::log::setLevel(nixl::log::level::INFO);
    stderrCapture cap;
    auto a = makeAgent("A");
    auto b = makeAgent("B");
    const std::string log = cap.stop();
    nixl::log::setLevel(before);
    size_t declined = 0;
    std::istringstream in(log);
    for (std::string l; std::getline(in, l);) {
        EXPECT_NE(l.rfind("[nixl W ", 0), 0u) << l;
        EXPECT_NE(l.rfind("[nixl E ", 0), 0u) << l;
        if (l.rfind("[nixl I ", 0) == 0 && l.find("nvtx declined") != std::string::npos) {
            ++declined;
        }
    }
    EXPECT_EQ(declined, 2u) << log;

    testBuffer aBuf(64, 5);
    testBuffer bBuf(64, 6);
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b));
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({aBuf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({bBuf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));
    nixl_opt_args_t args;
    args.notif = "untraced";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a->createXferReq(NIXL_WRITE, xferList({aBuf.desc()}), xferList({bBuf.desc()}), "B",
                               req, &args));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a, req));
    EXPECT_TRUE(holdsPattern(bBuf, 5));
    EXPECT_EQ((nixl_notifs_t{{"A", {"untraced"}}}), drain(*b));
    EXPECT_EQ(NIXL_SUCCESS, a->releaseXferReq(req));
}

} // namespace
} // namespace nixl_agent_test
