/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: prepared lists, request creation, posting, status, telemetry, release, loopback,
// invalidated and disconnected peers.

#include <functional>

#include "agent/agent_data.h" // nixlBackendH (NIXL installs it as agent_data.h)
#include "agent_test_utils.h"
#include "common/nixl_log.h"

namespace nixl_agent_test {
namespace {

constexpr size_t chunk = 64;
constexpr size_t chunks = 16;
constexpr size_t buf_len = chunk * chunks;

/**
 * An operation object holding 7, neither NIXL_READ nor NIXL_WRITE. Made by copying bytes: a
 * static_cast of an out-of-range value to this enum (no fixed underlying type) would itself be
 * undefined; the agent is expected to inspect the bytes the same way.
 */
const nixl_xfer_op_t &
badOp() {
    static nixl_xfer_op_t op = NIXL_READ;
    static const bool filled = [] {
        const uint32_t raw = 7;
        static_assert(sizeof(op) == sizeof(raw));
        std::memcpy(&op, &raw, sizeof(raw));
        return true;
    }();
    (void)filled;
    return op; // a reference: the invalid value is never loaded here
}

/** Two agents A and B with the TEST backend, each with two registered buffers, MD exchanged. */
class agentXferTest : public agentTest {
protected:
    void
    setUpAgents(const nixl_b_params_t &a_params = {},
                const nixlAgentConfig &a_cfg = nixlAgentConfig()) {
        a_ = makeAgent("A", a_cfg);
        b_ = makeAgent("B");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a_, a_params, &ha_));
        ASSERT_EQ(NIXL_SUCCESS, addTest(*b_, {}, &hb_));
        ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({a0_.desc(), a1_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, b_->registerMem(regList({b0_.desc(), b1_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*a_, *b_));
    }

    void
    SetUp() override {
        setUpAgents();
    }

    nixlXferReqH *
    create(nixl_xfer_op_t op,
           const nixl_xfer_dlist_t &local,
           const nixl_xfer_dlist_t &remote,
           const std::string &agent = "B",
           const nixl_opt_args_t *extra = nullptr) {
        nixlXferReqH *req = nullptr;
        EXPECT_EQ(NIXL_SUCCESS, a_->createXferReq(op, local, remote, agent, req, extra));
        return req;
    }

    testBuffer a0_{buf_len, 1};
    testBuffer a1_{buf_len, 2};
    testBuffer b0_{buf_len, 3};
    testBuffer b1_{buf_len, 4};
    std::unique_ptr<nixlAgent> a_;
    std::unique_ptr<nixlAgent> b_;
    nixlBackendH *ha_ = nullptr;
    nixlBackendH *hb_ = nullptr;
};

TEST_F(agentXferTest, WriteThenReadBack) {
    nixlXferReqH *w = create(NIXL_WRITE, chunkList(a0_, 4, 256), chunkList(b0_, 4, 256));
    ASSERT_NE(nullptr, w);
    EXPECT_EQ(NIXL_ERR_NOT_POSTED, a_->getXferStatus(w));
    ASSERT_EQ(NIXL_SUCCESS, a_->postXferReq(w));
    EXPECT_EQ(NIXL_SUCCESS, a_->getXferStatus(w));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    EXPECT_TRUE(holdsPattern(a0_, 1));

    nixlXferReqH *r = create(NIXL_READ, xferList({a1_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, r);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, r));
    EXPECT_TRUE(holdsPattern(a1_, 1));
    EXPECT_TRUE(holdsPattern(b1_, 4)); // untouched
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(w));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(r));
}

TEST_F(agentXferTest, SubRangesAndCrossedDescriptors) {
    // Descriptor i of the local list goes to descriptor i of the remote list, whatever the
    // order in memory.
    nixl_xfer_dlist_t local = xferList({a0_.desc(0, 100), a0_.desc(500, 24)});
    nixl_xfer_dlist_t remote = xferList({b1_.desc(900, 100), b1_.desc(0, 24)});
    nixlXferReqH *req = create(NIXL_WRITE, local, remote);
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(sameBytes(a0_, 0, b1_, 900, 100));
    EXPECT_TRUE(sameBytes(a0_, 500, b1_, 0, 24));
    testBuffer original(buf_len, 4);
    EXPECT_TRUE(sameBytes(original, 24, b1_, 24, 876));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentXferTest, CreateXferReqInvalidParam) {
    nixlXferReqH *req = nullptr;
    const auto l1 = xferList({a0_.desc(0, 64)});
    const auto l2 = xferList({a0_.desc(0, 64), a0_.desc(64, 64)});
    const auto r1 = xferList({b0_.desc(0, 64)});
    const auto r1_short = xferList({b0_.desc(0, 32)});
    const nixl_xfer_dlist_t empty(DRAM_SEG);
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->createXferReq(NIXL_WRITE, l2, r1, "B", req));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->createXferReq(NIXL_WRITE, empty, empty, "B", req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->createXferReq(NIXL_WRITE, l1, r1_short, "B", req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->createXferReq(badOp(), l1, r1, "B", req));
    nixl_opt_args_t foreign;
    foreign.backends = {hb_};
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->createXferReq(NIXL_WRITE, l1, r1, "B", req, &foreign));
    EXPECT_EQ(nullptr, req);
}

TEST_F(agentXferTest, CreateXferReqNotFound) {
    nixlXferReqH *req = nullptr;
    testBuffer stray(64);
    {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_NOT_FOUND,
                  a_->createXferReq(
                      NIXL_WRITE, xferList({a0_.desc(0, 64)}), xferList({b0_.desc(0, 64)}), "C",
                      req));
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "C"}));
    }
    {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_NOT_FOUND,
                  a_->createXferReq(NIXL_WRITE,
                                    xferList({a0_.desc(0, 64), stray.desc()}),
                                    xferList({b0_.desc(0, 64), b0_.desc(64, 64)}),
                                    "B",
                                    req));
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "descriptor 1"}));
    }
    {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_NOT_FOUND,
                  a_->createXferReq(NIXL_WRITE,
                                    xferList({a0_.desc(0, 64)}),
                                    xferList({b0_.desc(buf_len - 32, 64)}),
                                    "B",
                                    req));
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "descriptor 0"}));
    }
    // Another device id is other memory.
    EXPECT_EQ(NIXL_ERR_NOT_FOUND,
              a_->createXferReq(
                  NIXL_WRITE, xferList({a0_.desc(0, 64)}), xferList({b0_.desc(0, 64, 1)}), "B",
                  req));
    EXPECT_EQ(nullptr, req);
    EXPECT_TRUE(holdsPattern(b0_, 3));
}

TEST_F(agentXferTest, PrepXferDlistSides) {
    nixlDlistH *local = nullptr;
    nixlDlistH *local2 = nullptr;
    nixlDlistH *remote = nullptr;
    nixlDlistH *loop = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->prepXferDlist(NIXL_INIT_AGENT, chunkList(a0_, chunks, chunk), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(chunkList(a1_, chunks, chunk), local2));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", chunkList(b0_, chunks, chunk), remote));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("A", chunkList(a1_, chunks, chunk), loop));
    EXPECT_NE(nullptr, local);
    EXPECT_NE(nullptr, local2);
    EXPECT_NE(nullptr, remote);
    EXPECT_NE(nullptr, loop);
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local2));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(loop));
}

TEST_F(agentXferTest, PrepXferDlistNotFound) {
    testBuffer stray(64);
    nixlDlistH *dl = nullptr;
    {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist(xferList({a0_.desc(), stray.desc()}), dl));
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "descriptor 1"}));
    }
    // B's memory is not local memory of A, A's is not B's, and loopback needs A's own.
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist(xferList({b0_.desc()}), dl));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist("B", xferList({a0_.desc()}), dl));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist("A", xferList({b0_.desc()}), dl));
    // Crossing the end of a registration.
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist("B", xferList({b0_.desc(1, buf_len)}), dl));
    {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist("C", xferList({b0_.desc()}), dl));
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "C"}));
    }
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist(xferList({a0_.desc()}, VRAM_SEG), dl));
    EXPECT_EQ(nullptr, dl);
}

TEST_F(agentXferTest, MakeXferReqWithIndexSelection) {
    nixlDlistH *local = nullptr;
    nixlDlistH *remote = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(chunkList(a0_, chunks, chunk), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", chunkList(b0_, chunks, chunk), remote));
    // Local chunk i goes to remote chunk 15 - i, for the even i only.
    std::vector<int> li;
    std::vector<int> ri;
    for (int i = 0; i < static_cast<int>(chunks); i += 2) {
        li.push_back(i);
        ri.push_back(static_cast<int>(chunks) - 1 - i);
    }
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_WRITE, local, li, remote, ri, req));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    testBuffer original(buf_len, 3);
    for (size_t i = 0; i < chunks; ++i) {
        const size_t dst = (chunks - 1 - i) * chunk;
        if (i % 2 == 0) {
            EXPECT_TRUE(sameBytes(a0_, i * chunk, b0_, dst, chunk)) << "chunk " << i;
        } else {
            EXPECT_TRUE(sameBytes(original, dst, b0_, dst, chunk)) << "chunk " << i;
        }
    }
    // The same lists serve a READ too.
    nixlXferReqH *rd = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_READ, local, {3}, remote, {7}, rd));
    a0_.fill(50);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, rd));
    EXPECT_TRUE(sameBytes(b0_, 7 * chunk, a0_, 3 * chunk, chunk));
    EXPECT_TRUE(holdsPattern(a0_, 50, 0, 3 * chunk));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(rd));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
}

TEST_F(agentXferTest, MakeXferReqInvalidParam) {
    testBuffer odd(32);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({odd.desc()})));
    nixlDlistH *local = nullptr;
    nixlDlistH *remote = nullptr;
    nixlDlistH *odd_local = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(chunkList(a0_, 4, chunk), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", chunkList(b0_, 4, chunk), remote));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({odd.desc()}), odd_local));
    nixlDlistH *b_local = nullptr;
    nixlDlistH *b_remote = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, b_->prepXferDlist(chunkList(b0_, 4, chunk), b_local));
    ASSERT_EQ(NIXL_SUCCESS, b_->prepXferDlist("A", chunkList(a0_, 4, chunk), b_remote));

    nixlXferReqH *req = nullptr;
    {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM,
                  a_->makeXferReq(NIXL_WRITE, local, {0, 1}, remote, {0}, req));
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
    }
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, local, {}, remote, {}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, local, {4}, remote, {0}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, local, {0}, remote, {4}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, local, {-1}, remote, {0}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, local, {0}, remote, {-1}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM,
              a_->makeXferReq(NIXL_WRITE, odd_local, {0}, remote, {0}, req)); // 32 vs 64 bytes
    // Wrong sides: remote list first, two local lists, two remote lists.
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, remote, {0}, local, {0}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, local, {0}, local, {0}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, remote, {0}, remote, {0}, req));
    // Null handles and handles of another agent.
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, nullptr, {0}, remote, {0}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(NIXL_WRITE, local, {0}, nullptr, {0}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM,
              a_->makeXferReq(NIXL_WRITE, b_local, {0}, b_remote, {0}, req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->makeXferReq(badOp(), local, {0}, remote, {0}, req));
    // A backend hint that is not in the lists.
    nixl_opt_args_t foreign;
    foreign.backends = {hb_};
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM,
              a_->makeXferReq(NIXL_WRITE, local, {0}, remote, {0}, req, &foreign));
    EXPECT_EQ(nullptr, req);

    // A released list is no longer accepted.
    ASSERT_EQ(NIXL_SUCCESS, a_->releasedDlistH(odd_local));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM,
              a_->makeXferReq(NIXL_WRITE, odd_local, {0}, remote, {0}, req));
    EXPECT_TRUE(holdsPattern(b0_, 3));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
    EXPECT_EQ(NIXL_SUCCESS, b_->releasedDlistH(b_local));
    EXPECT_EQ(NIXL_SUCCESS, b_->releasedDlistH(b_remote));
}

TEST_F(agentXferTest, ReleasedDlistHErrors) {
    nixlDlistH *dl = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({a0_.desc()}), dl));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->releasedDlistH(nullptr));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, b_->releasedDlistH(dl)); // not B's
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(dl));
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->releasedDlistH(dl));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
}

class agentTelemetryTest : public agentXferTest {
protected:
    void
    SetUp() override {
        setUpAgents({}, agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true));
    }

    /** Runs a WRITE of the given index selection over 16 contiguous chunks; its telemetry. */
    void
    mergeCase(const std::vector<int> &idx, bool skip_merge, size_t expect_descs) {
        nixlDlistH *local = nullptr;
        nixlDlistH *remote = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(chunkList(a0_, chunks, chunk), local));
        ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", chunkList(b0_, chunks, chunk), remote));
        nixl_opt_args_t extra;
        extra.skipDescMerge = skip_merge;
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_WRITE, local, idx, remote, idx, req, &extra));
        nixl_xfer_telem_t telem{};
        EXPECT_EQ(NIXL_ERR_NOT_POSTED, a_->getXferTelemetry(req, telem));
        a0_.fill(static_cast<uint32_t>(60 + expect_descs));
        b0_.fill(3);
        ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
        ASSERT_EQ(NIXL_SUCCESS, a_->getXferTelemetry(req, telem));
        EXPECT_EQ(expect_descs, telem.descCount);
        EXPECT_EQ(idx.size() * chunk, telem.totalBytes);
        testBuffer original(buf_len, 3);
        std::vector<bool> moved(chunks, false);
        for (int i : idx) {
            moved[i] = true;
        }
        for (size_t i = 0; i < chunks; ++i) {
            EXPECT_TRUE(sameBytes(moved[i] ? a0_ : original, i * chunk, b0_, i * chunk, chunk))
                << "chunk " << i;
        }
        EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
        EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
        EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
    }
};

// A released request handle is refused by every call that takes one, with one line each, and
// moves nothing (a post of it crashed and a status of it answered SUCCESS). Telemetry is on so
// that getXferTelemetry gets past its own NO_TELEMETRY check.
TEST_F(agentTelemetryTest, ReleasedRequestHandleIsRefusedEverywhere) {
    // Each refusal's own line is checked: more than the rate limit's lines a second, from
    // one call site.
    nixl::log::setRateLimiting(false);
    struct restore_t {
        ~restore_t() { nixl::log::setRateLimiting(true); }
    } restore;
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    b0_.fill(7);

    auto refused = [&](const char *call, const std::function<nixl_status_t()> &fn) {
        SCOPED_TRACE(call);
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, fn());
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", call, "released"}));
    };
    refused("postXferReq", [&] { return a_->postXferReq(req); });
    refused("getXferStatus", [&] { return a_->getXferStatus(req); });
    refused("releaseXferReq", [&] { return a_->releaseXferReq(req); });
    nixl_xfer_telem_t telem{};
    refused("getXferTelemetry", [&] { return a_->getXferTelemetry(req, telem); });
    nixlBackendH *backend = nullptr;
    refused("queryXferBackend", [&] { return a_->queryXferBackend(req, backend); });
    EXPECT_EQ(nullptr, backend);
    std::chrono::microseconds duration{};
    std::chrono::microseconds margin{};
    nixl_cost_t method{};
    refused("estimateXferCost",
            [&] { return a_->estimateXferCost(req, duration, margin, method); });
    EXPECT_TRUE(holdsPattern(b0_, 7));

    // New requests do not take the released one's place (its memory is kept and quarantined),
    // so the old handle stays refused while they live.
    std::vector<nixlXferReqH *> fresh;
    for (int i = 0; i < 8; ++i) {
        fresh.push_back(create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()})));
        ASSERT_NE(nullptr, fresh.back());
        EXPECT_NE(req, fresh.back());
    }
    refused("postXferReq", [&] { return a_->postXferReq(req); });
    EXPECT_TRUE(holdsPattern(b0_, 7));
    for (nixlXferReqH *f : fresh) {
        EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(f));
    }

    // A live request of another agent is not a request of this one.
    nixlXferReqH *theirs = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, b_->createXferReq(NIXL_WRITE, xferList({b1_.desc()}),
                                              xferList({a1_.desc()}), "A", theirs));
    refused("postXferReq", [&] { return a_->postXferReq(theirs); });
    refused("getXferStatus", [&] { return a_->getXferStatus(theirs); });
    refused("releaseXferReq", [&] { return a_->releaseXferReq(theirs); });
    EXPECT_TRUE(holdsPattern(a1_, 2));
    EXPECT_EQ(NIXL_SUCCESS, b_->releaseXferReq(theirs));
}

// An application looping on a released handle gets its status every time, and the log a few
// lines a second with a count of the rest, not one line per call.
TEST_F(agentXferTest, ReleasedHandleInALoopIsRateLimited) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    stderrCapture cap;
    for (int i = 0; i < 5000; ++i) {
        ASSERT_EQ(NIXL_ERR_INVALID_PARAM, a_->postXferReq(req));
    }
    const std::vector<std::string> lines = nixl_test::errorLines(cap.stop());
    // limited_lines_per_sec per second from the site; the loop may cross a second or two.
    EXPECT_GE(lines.size(), 1u);
    EXPECT_LE(lines.size(), 3 * nixl::log::limited_lines_per_sec + 3);
}

// Requests churned through the pool: after the quarantine a slot is reused, and the reused
// request works as a fresh one (nothing of the old one is left in it).
TEST_F(agentXferTest, PooledRequestsStartClean) {
    nixl_opt_args_t extra;
    extra.notif = std::string("first");
    nixlXferReqH *first = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}),
                                 "B", &extra);
    ASSERT_NE(nullptr, first);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, first));
    ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(first));
    bool reused = false;
    for (int i = 0; i < 4096 && !reused; ++i) {
        nixlXferReqH *r = create(NIXL_READ, xferList({a1_.desc(0, 64)}), xferList({b1_.desc(0, 64)}));
        ASSERT_NE(nullptr, r);
        if (r == first) {
            reused = true;
            EXPECT_EQ(NIXL_ERR_NOT_POSTED, a_->getXferStatus(r));
            ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, r));
            EXPECT_TRUE(holdsPattern(a1_, 4, 0, 64));
        }
        ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(r));
    }
    EXPECT_TRUE(reused);
    // One notification: the reused request carried none of the first one's.
    nixl_notifs_t notifs = drain(*b_);
    ASSERT_EQ(1u, notifs["A"].size());
    EXPECT_EQ("first", notifs["A"][0]);
}

TEST_F(agentTelemetryTest, ContiguousRunMergesIntoOneDescriptor) {
    std::vector<int> all;
    for (int i = 0; i < static_cast<int>(chunks); ++i) {
        all.push_back(i);
    }
    mergeCase(all, false, 1);
}

TEST_F(agentTelemetryTest, SkipDescMergeKeepsEveryDescriptor) {
    std::vector<int> all;
    for (int i = 0; i < static_cast<int>(chunks); ++i) {
        all.push_back(i);
    }
    mergeCase(all, true, chunks);
}

TEST_F(agentTelemetryTest, OnlyDenseRunsMerge) {
    mergeCase({0, 1, 2, 5, 6, 9}, false, 3);
    mergeCase({0, 2, 4, 6}, false, 4);
}

TEST_F(agentTelemetryTest, CreateXferReqDoesNotMerge) {
    nixlXferReqH *req =
        create(NIXL_WRITE, chunkList(a0_, chunks, chunk), chunkList(b0_, chunks, chunk));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    nixl_xfer_telem_t telem{};
    ASSERT_EQ(NIXL_SUCCESS, a_->getXferTelemetry(req, telem));
    EXPECT_EQ(chunks, telem.descCount);
    EXPECT_EQ(buf_len, telem.totalBytes);
    EXPECT_TRUE(holdsPattern(b0_, 1));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentTelemetryTest, AsyncTelemetryFollowsStatus) {
    auto c = makeAgent("C", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*c, {{"async", "true"}, {"async_polls", "2"}}));
    testBuffer c0(buf_len, 7);
    ASSERT_EQ(NIXL_SUCCESS, c->registerMem(regList({c0.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *c));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              c->createXferReq(NIXL_WRITE,
                               xferList({c0.desc(0, 100)}),
                               xferList({b1_.desc(0, 100)}),
                               "B",
                               req));
    nixl_xfer_telem_t telem{};
    const auto before = std::chrono::steady_clock::now();
    ASSERT_EQ(NIXL_IN_PROG, c->postXferReq(req));
    EXPECT_EQ(NIXL_IN_PROG, c->getXferTelemetry(req, telem));
    ASSERT_EQ(NIXL_SUCCESS, waitXfer(*c, req));
    const auto after = std::chrono::steady_clock::now();
    ASSERT_EQ(NIXL_SUCCESS, c->getXferTelemetry(req, telem));
    EXPECT_EQ(100u, telem.totalBytes);
    EXPECT_EQ(1u, telem.descCount);
    // Times are taken as raw ticks and converted here: same clock, units and anchor as
    // steady_clock (a millisecond of slack catches a wrong unit or anchor, not speed).
    const auto slack = std::chrono::milliseconds(1);
    EXPECT_GE(telem.startTime, before - slack);
    EXPECT_LE(telem.startTime, after + slack);
    EXPECT_LE(telem.postDuration, telem.xferDuration);
    EXPECT_LE(telem.xferDuration,
              std::chrono::duration_cast<chrono_period_us_t>(after - before) + slack);
    EXPECT_TRUE(sameBytes(c0, 0, b1_, 0, 100));
    EXPECT_EQ(NIXL_SUCCESS, c->releaseXferReq(req));
}

TEST_F(agentXferTest, TelemetryOffIsNoTelemetry) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    nixl_xfer_telem_t telem{};
    EXPECT_EQ(NIXL_ERR_NO_TELEMETRY, a_->getXferTelemetry(req, telem));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentXferTest, TelemetryEnvironmentOverridesConfig) {
    testBuffer c0(256, 8);
    auto check = [&](const char *env, bool capture, nixl_status_t expect) {
        scopedEnv e("NIXL_TELEMETRY_ENABLE", env);
        auto c = makeAgent("C", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, capture));
        ASSERT_EQ(NIXL_SUCCESS, addTest(*c));
        ASSERT_EQ(NIXL_SUCCESS, c->registerMem(regList({c0.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *c));
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(NIXL_SUCCESS,
                  c->createXferReq(NIXL_WRITE, xferList({c0.desc()}), xferList({b1_.desc(0, 256)}),
                                   "B", req));
        ASSERT_EQ(NIXL_SUCCESS, runXfer(*c, req));
        nixl_xfer_telem_t telem{};
        EXPECT_EQ(expect, c->getXferTelemetry(req, telem))
            << "NIXL_TELEMETRY_ENABLE=" << env << " captureTelemetry=" << capture;
        if (expect == NIXL_SUCCESS) {
            EXPECT_EQ(256u, telem.totalBytes);
        }
        EXPECT_EQ(NIXL_SUCCESS, c->releaseXferReq(req));
    };
    check("false", true, NIXL_ERR_NO_TELEMETRY);
    check("0", true, NIXL_ERR_NO_TELEMETRY);
    check("true", false, NIXL_SUCCESS);
    check("on", false, NIXL_SUCCESS);
}

TEST_F(agentXferTest, RepostAfterCompletionMovesFreshData) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    for (uint32_t round = 0; round < 5; ++round) {
        a0_.fill(100 + round);
        ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req)) << "round " << round;
        EXPECT_TRUE(holdsPattern(b0_, 100 + round)) << "round " << round;
    }
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentXferTest, NullRequestHandles) {
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->postXferReq(nullptr));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->getXferStatus(nullptr));
    nixlBackendH *h = nullptr;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->queryXferBackend(nullptr, h));
    std::chrono::microseconds d{};
    std::chrono::microseconds m{};
    nixl_cost_t method{};
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->estimateXferCost(nullptr, d, m, method));
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->releaseXferReq(nullptr));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
}

TEST_F(agentXferTest, DoubleReleaseIsInvalidParam) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, b_->releaseXferReq(req)); // not B's request
    ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->releaseXferReq(req));
}

TEST_F(agentXferTest, EstimateXferCost) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    std::chrono::microseconds d{-1};
    std::chrono::microseconds m{-1};
    nixl_cost_t method = static_cast<nixl_cost_t>(5);
    ASSERT_EQ(NIXL_SUCCESS, a_->estimateXferCost(req, d, m, method));
    // TEST models 10,000 bytes per microsecond, rounded up.
    EXPECT_EQ(std::chrono::microseconds(1), d);
    EXPECT_EQ(std::chrono::microseconds(0), m);
    EXPECT_EQ(nixl_cost_t::ANALYTICAL_BACKEND, method);
    ASSERT_EQ(NIXL_SUCCESS, a_->invalidateRemoteMD("B"));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->estimateXferCost(req, d, m, method));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentXferTest, PostFailureDoesNotWedgeTheRequest) {
    setUpAgents({{"fail_post_at", "2"}});
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    a0_.fill(70);
    EXPECT_EQ(NIXL_ERR_BACKEND, a_->postXferReq(req));
    EXPECT_EQ(NIXL_ERR_BACKEND, a_->getXferStatus(req));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(b0_, 70));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

class agentAsyncXferTest : public agentXferTest {
protected:
    void
    SetUp() override {
        setUpAgents({{"async", "true"}, {"async_polls", "3"}});
    }
};

TEST_F(agentAsyncXferTest, InProgressUntilPolled) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_IN_PROG, a_->postXferReq(req));
    EXPECT_EQ(NIXL_IN_PROG, a_->getXferStatus(req));
    ASSERT_EQ(NIXL_SUCCESS, waitXfer(*a_, req));
    EXPECT_EQ(NIXL_SUCCESS, a_->getXferStatus(req)); // the final status is kept
    EXPECT_TRUE(holdsPattern(b0_, 1));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentAsyncXferTest, RepostWhileRunningIsRepostActive) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_IN_PROG, a_->postXferReq(req));
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_REPOST_ACTIVE, a_->postXferReq(req));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
    ASSERT_EQ(NIXL_SUCCESS, waitXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    // After completion a re-post is accepted and moves the current data.
    a0_.fill(80);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(b0_, 80));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentAsyncXferTest, ReleaseOfRunningRequestAborts) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_IN_PROG, a_->postXferReq(req));
    ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_TRUE(holdsPattern(b0_, 3));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->releaseXferReq(req));
}

TEST_F(agentAsyncXferTest, FailedReleaseKeepsTheRequest) {
    setUpAgents({{"async", "true"}, {"async_polls", "3"}, {"fail_release", "true"}});
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_IN_PROG, a_->postXferReq(req));
    EXPECT_EQ(NIXL_ERR_REPOST_ACTIVE, a_->releaseXferReq(req));
    // Not freed: it still completes and can then be released.
    ASSERT_EQ(NIXL_SUCCESS, waitXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->releaseXferReq(req));
}

TEST_F(agentAsyncXferTest, InvalidatedRemoteIsNotFoundOnPostAndStatus) {
    nixlXferReqH *running = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    nixlXferReqH *idle = create(NIXL_WRITE, xferList({a1_.desc()}), xferList({b1_.desc()}));
    ASSERT_NE(nullptr, running);
    ASSERT_NE(nullptr, idle);
    nixlDlistH *remote = nullptr;
    nixlDlistH *local = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", xferList({b1_.desc()}), remote));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({a1_.desc()}), local));
    ASSERT_EQ(NIXL_IN_PROG, a_->postXferReq(running));
    ASSERT_EQ(NIXL_SUCCESS, a_->invalidateRemoteMD("B"));

    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->getXferStatus(running));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "B"}));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->postXferReq(idle));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->postXferReq(running));
    nixlXferReqH *req = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->makeXferReq(NIXL_WRITE, local, {0}, remote, {0}, req));
    EXPECT_TRUE(holdsPattern(b0_, 3));
    EXPECT_TRUE(holdsPattern(b1_, 4));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(running));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(idle));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
}

TEST_F(agentXferTest, DisconnectDropsRemoteUntilReloaded) {
    setUpAgents({{"disconnect_after", "2"}});
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    a0_.fill(90);
    EXPECT_EQ(NIXL_ERR_REMOTE_DISCONNECT, a_->postXferReq(req));
    EXPECT_EQ(NIXL_ERR_REMOTE_DISCONNECT, a_->getXferStatus(req));
    EXPECT_TRUE(holdsPattern(b0_, 1));

    nixlDlistH *dl = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist("B", xferList({b0_.desc()}), dl));
    nixlXferReqH *other = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND,
              a_->createXferReq(
                  NIXL_WRITE, xferList({a1_.desc()}), xferList({b1_.desc()}), "B", other));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->postXferReq(req));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->genNotif("B", "hello"));

    // Loading B's metadata again reconnects.
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(
                  NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}), "B", other));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, other));
    EXPECT_TRUE(holdsPattern(b0_, 90));
    EXPECT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", xferList({b0_.desc()}), dl));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(dl));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(other));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentXferTest, LoopbackWriteAndRead) {
    // Own name as the remote agent, with createXferReq and with prepared lists.
    nixlXferReqH *w =
        create(NIXL_WRITE, xferList({a0_.desc(0, 512)}), xferList({a1_.desc(512, 512)}), "A");
    ASSERT_NE(nullptr, w);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, w));
    EXPECT_TRUE(sameBytes(a0_, 0, a1_, 512, 512));
    testBuffer a1_orig(buf_len, 2);
    EXPECT_TRUE(sameBytes(a1_orig, 0, a1_, 0, 512));

    nixlDlistH *local = nullptr;
    nixlDlistH *self = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(chunkList(a0_, chunks, chunk), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("A", chunkList(a1_, chunks, chunk), self));
    a1_.fill(33);
    nixlXferReqH *r = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_READ, local, {0, 1}, self, {4, 5}, r));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, r));
    EXPECT_TRUE(sameBytes(a1_, 4 * chunk, a0_, 0, 2 * chunk));
    EXPECT_TRUE(holdsPattern(a1_, 33));
    EXPECT_TRUE(holdsPattern(b0_, 3));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(w));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(r));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(self));
}

TEST_F(agentXferTest, ThreeAgents) {
    auto c = makeAgent("C");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*c));
    testBuffer c0(buf_len, 5);
    ASSERT_EQ(NIXL_SUCCESS, c->registerMem(regList({c0.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*c, *a_));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *c));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*a_, *c));

    // A writes its first half to B and its second half to C.
    nixlXferReqH *to_b =
        create(NIXL_WRITE, xferList({a0_.desc(0, 512)}), xferList({b0_.desc(0, 512)}));
    nixlXferReqH *to_c =
        create(NIXL_WRITE, xferList({a0_.desc(512, 512)}), xferList({c0.desc(512, 512)}), "C");
    ASSERT_NE(nullptr, to_b);
    ASSERT_NE(nullptr, to_c);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, to_b));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, to_c));
    EXPECT_TRUE(sameBytes(a0_, 0, b0_, 0, 512));
    EXPECT_TRUE(sameBytes(a0_, 512, c0, 512, 512));
    // C reads what A put into B, and A's first buffer through A.
    nixlXferReqH *from_b = nullptr;
    nixlXferReqH *from_a = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, c->createXferReq(NIXL_READ, xferList({c0.desc(0, 256)}),
                                             xferList({b0_.desc(0, 256)}), "B", from_b));
    ASSERT_EQ(NIXL_SUCCESS, c->createXferReq(NIXL_READ, xferList({c0.desc(256, 256)}),
                                             xferList({a1_.desc(0, 256)}), "A", from_a));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*c, from_b));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*c, from_a));
    EXPECT_TRUE(sameBytes(a0_, 0, c0, 0, 256));
    EXPECT_TRUE(sameBytes(a1_, 0, c0, 256, 256));
    // B does not know C: nothing can go from B to C.
    nixlXferReqH *none = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, b_->createXferReq(NIXL_WRITE, xferList({b0_.desc()}),
                                                    xferList({c0.desc()}), "C", none));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(to_b));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(to_c));
    EXPECT_EQ(NIXL_SUCCESS, c->releaseXferReq(from_b));
    EXPECT_EQ(NIXL_SUCCESS, c->releaseXferReq(from_a));
}

TEST_F(agentXferTest, QueryXferBackend) {
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}));
    ASSERT_NE(nullptr, req);
    nixlBackendH *h = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->queryXferBackend(req, h));
    EXPECT_EQ(ha_, h);
    ASSERT_NE(nullptr, h);
    EXPECT_EQ("TEST", h->getType());
    EXPECT_TRUE(h->supportsRemote());
    EXPECT_TRUE(h->supportsLocal());
    EXPECT_TRUE(h->supportsNotif());
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentXferTest, HintedRequests) {
    nixl_opt_args_t hint;
    hint.backends = {ha_};
    nixlXferReqH *req = create(NIXL_WRITE, xferList({a0_.desc()}), xferList({b0_.desc()}), "B",
                               &hint);
    ASSERT_NE(nullptr, req);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    nixlDlistH *local = nullptr;
    nixlDlistH *remote = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({a1_.desc()}), local, &hint));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", xferList({b1_.desc()}), remote, &hint));
    nixlXferReqH *made = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_WRITE, local, {0}, remote, {0}, made, &hint));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, made));
    EXPECT_TRUE(holdsPattern(b1_, 2));
    nixl_opt_args_t foreign;
    foreign.backends = {hb_};
    nixlDlistH *bad = nullptr;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->prepXferDlist(xferList({a1_.desc()}), bad, &foreign));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(made));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
}

} // namespace
} // namespace nixl_agent_test
