/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Output handles of prepXferDlist (both overloads), makeXferReq and createXferReq: NIXL 1.4
// sets them to nullptr on entry, so a program may test `== nullptr` after a failed call even
// when the variable held something before. Every failure path starts from a garbage pointer.

#include "agent_test_utils.h"

namespace nixl_agent_test {
namespace {

constexpr size_t chunk = 64;
constexpr size_t buf_len = chunk * 4;

/** A pointer value no call may leave behind: not null, not a handle of any agent. */
template<typename T>
T *
garbage() {
    return reinterpret_cast<T *>(static_cast<uintptr_t>(0xdeadbeef0));
}

/** Operation object holding 7 (neither READ nor WRITE), made by copying bytes. */
nixl_xfer_op_t
badOpValue() {
    nixl_xfer_op_t op = NIXL_READ;
    const uint32_t raw = 7;
    static_assert(sizeof(op) == sizeof(raw));
    std::memcpy(&op, &raw, sizeof(raw));
    return op;
}

class agentOutHandleTest : public agentTest {
protected:
    void
    SetUp() override {
        a_ = makeAgent("A");
        b_ = makeAgent("B");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a_));
        ASSERT_EQ(NIXL_SUCCESS, addTest(*b_, {}, &hb_));
        ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({a0_.desc(), odd_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, b_->registerMem(regList({b0_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*a_, *b_));
    }

    /** prepXferDlist through the overload taking an agent name; out starts as garbage. */
    nixl_status_t
    prep(const std::string &agent,
         const nixl_xfer_dlist_t &descs,
         nixlDlistH *&out,
         const nixl_opt_args_t *extra = nullptr) {
        out = garbage<nixlDlistH>();
        return a_->prepXferDlist(agent, descs, out, extra);
    }

    testBuffer a0_{buf_len, 1};
    testBuffer odd_{32, 2};
    testBuffer b0_{buf_len, 3};
    testBuffer stray_{64, 4};
    std::unique_ptr<nixlAgent> a_;
    std::unique_ptr<nixlAgent> b_;
    nixlBackendH *hb_ = nullptr;
};

TEST_F(agentOutHandleTest, PrepXferDlistFailuresLeaveNull) {
    nixl_opt_args_t foreign;
    foreign.backends = {hb_};
    struct failure_t {
        const char *what;
        std::string agent;
        nixl_xfer_dlist_t descs;
        const nixl_opt_args_t *extra;
        nixl_status_t expect;
    };
    const failure_t failures[] = {
        {"unregistered local", NIXL_INIT_AGENT, xferList({stray_.desc()}), nullptr,
         NIXL_ERR_NOT_FOUND},
        {"unknown agent", "C", xferList({b0_.desc()}), nullptr, NIXL_ERR_NOT_FOUND},
        {"not registered by the peer", "B", xferList({a0_.desc()}), nullptr, NIXL_ERR_NOT_FOUND},
        {"loopback of foreign memory", "A", xferList({b0_.desc()}), nullptr, NIXL_ERR_NOT_FOUND},
        {"foreign hint", NIXL_INIT_AGENT, xferList({a0_.desc()}), &foreign,
         NIXL_ERR_INVALID_PARAM},
    };
    stderrCapture quiet;
    for (const auto &f : failures) {
        nixlDlistH *dl = nullptr;
        EXPECT_EQ(f.expect, prep(f.agent, f.descs, dl, f.extra)) << f.what;
        EXPECT_EQ(nullptr, dl) << f.what;
    }
    // The overload without an agent name.
    nixlDlistH *dl = garbage<nixlDlistH>();
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist(xferList({stray_.desc()}), dl));
    EXPECT_EQ(nullptr, dl);
    dl = garbage<nixlDlistH>();
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->prepXferDlist(xferList({a0_.desc()}), dl, &foreign));
    EXPECT_EQ(nullptr, dl);
    // Success still overwrites the garbage with a usable handle.
    dl = garbage<nixlDlistH>();
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({a0_.desc()}), dl));
    EXPECT_NE(nullptr, dl);
    EXPECT_NE(garbage<nixlDlistH>(), dl);
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(dl));
}

TEST_F(agentOutHandleTest, MakeXferReqFailuresLeaveNull) {
    nixlDlistH *local = nullptr;
    nixlDlistH *remote = nullptr;
    nixlDlistH *odd_local = nullptr;
    nixlDlistH *stale_local = nullptr;
    testBuffer temp(chunk, 5);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({temp.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(chunkList(a0_, 4, chunk), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", chunkList(b0_, 4, chunk), remote));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({odd_.desc()}), odd_local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({temp.desc()}), stale_local));
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({temp.desc()})));
    nixl_opt_args_t foreign;
    foreign.backends = {hb_};

    struct failure_t {
        const char *what;
        nixl_xfer_op_t op;
        const nixlDlistH *local;
        std::vector<int> li;
        const nixlDlistH *remote;
        std::vector<int> ri;
        const nixl_opt_args_t *extra;
        nixl_status_t expect;
    };
    const failure_t failures[] = {
        {"bad operation", badOpValue(), local, {0}, remote, {0}, nullptr, NIXL_ERR_INVALID_PARAM},
        {"null local list", NIXL_WRITE, nullptr, {0}, remote, {0}, nullptr,
         NIXL_ERR_INVALID_PARAM},
        {"garbage remote list", NIXL_WRITE, local, {0}, garbage<nixlDlistH>(), {0}, nullptr,
         NIXL_ERR_INVALID_PARAM},
        {"sides swapped", NIXL_WRITE, remote, {0}, local, {0}, nullptr, NIXL_ERR_INVALID_PARAM},
        {"count mismatch", NIXL_WRITE, local, {0, 1}, remote, {0}, nullptr,
         NIXL_ERR_INVALID_PARAM},
        {"no indices", NIXL_WRITE, local, {}, remote, {}, nullptr, NIXL_ERR_INVALID_PARAM},
        {"index out of range", NIXL_WRITE, local, {4}, remote, {0}, nullptr,
         NIXL_ERR_INVALID_PARAM},
        {"length mismatch", NIXL_WRITE, odd_local, {0}, remote, {0}, nullptr,
         NIXL_ERR_INVALID_PARAM},
        {"no common hinted backend", NIXL_WRITE, local, {0}, remote, {0}, &foreign,
         NIXL_ERR_INVALID_PARAM},
        {"deregistered memory", NIXL_WRITE, stale_local, {0}, remote, {0}, nullptr,
         NIXL_ERR_NOT_FOUND},
    };
    stderrCapture quiet;
    for (const auto &f : failures) {
        nixlXferReqH *req = garbage<nixlXferReqH>();
        EXPECT_EQ(f.expect,
                  a_->makeXferReq(f.op, f.local, f.li, f.remote, f.ri, req, f.extra))
            << f.what;
        EXPECT_EQ(nullptr, req) << f.what;
    }
    // Metadata of the peer invalidated after the list was prepared.
    ASSERT_EQ(NIXL_SUCCESS, a_->invalidateRemoteMD("B"));
    nixlXferReqH *req = garbage<nixlXferReqH>();
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->makeXferReq(NIXL_WRITE, local, {0}, remote, {0}, req));
    EXPECT_EQ(nullptr, req);
    (void)quiet.stop();
    for (nixlDlistH *dl : {local, remote, odd_local, stale_local}) {
        EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(dl));
    }
    EXPECT_TRUE(holdsPattern(b0_, 3));
}

TEST_F(agentOutHandleTest, CreateXferReqFailuresLeaveNull) {
    nixl_opt_args_t foreign;
    foreign.backends = {hb_};
    const nixl_xfer_dlist_t empty(DRAM_SEG);
    const auto l1 = xferList({a0_.desc(0, chunk)});
    const auto r1 = xferList({b0_.desc(0, chunk)});
    struct failure_t {
        const char *what;
        nixl_xfer_op_t op;
        nixl_xfer_dlist_t local;
        nixl_xfer_dlist_t remote;
        std::string agent;
        const nixl_opt_args_t *extra;
        nixl_status_t expect;
    };
    const failure_t failures[] = {
        {"bad operation", badOpValue(), l1, r1, "B", nullptr, NIXL_ERR_INVALID_PARAM},
        {"foreign hint", NIXL_WRITE, l1, r1, "B", &foreign, NIXL_ERR_INVALID_PARAM},
        {"empty lists", NIXL_WRITE, empty, empty, "B", nullptr, NIXL_ERR_INVALID_PARAM},
        {"count mismatch", NIXL_WRITE, xferList({a0_.desc(0, chunk), a0_.desc(chunk, chunk)}), r1,
         "B", nullptr, NIXL_ERR_INVALID_PARAM},
        {"length mismatch", NIXL_WRITE, l1, xferList({b0_.desc(0, chunk / 2)}), "B", nullptr,
         NIXL_ERR_INVALID_PARAM},
        {"unknown agent", NIXL_WRITE, l1, r1, "C", nullptr, NIXL_ERR_NOT_FOUND},
        {"unregistered local", NIXL_WRITE, xferList({stray_.desc()}), r1, "B", nullptr,
         NIXL_ERR_NOT_FOUND},
        {"not registered by the peer", NIXL_WRITE, l1, xferList({b0_.desc(buf_len - 32, chunk)}),
         "B", nullptr, NIXL_ERR_NOT_FOUND},
    };
    stderrCapture quiet;
    for (const auto &f : failures) {
        nixlXferReqH *req = garbage<nixlXferReqH>();
        EXPECT_EQ(f.expect, a_->createXferReq(f.op, f.local, f.remote, f.agent, req, f.extra))
            << f.what;
        EXPECT_EQ(nullptr, req) << f.what;
    }
    (void)quiet.stop();
    nixlXferReqH *req = garbage<nixlXferReqH>();
    ASSERT_EQ(NIXL_SUCCESS, a_->createXferReq(NIXL_WRITE, l1, r1, "B", req));
    EXPECT_NE(nullptr, req);
    EXPECT_NE(garbage<nixlXferReqH>(), req);
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_TRUE(holdsPattern(b0_, 3));
}

} // namespace
} // namespace nixl_agent_test
