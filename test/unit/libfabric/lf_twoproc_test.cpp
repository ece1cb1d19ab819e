/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Agent "A" here, agent "peer" in a re-executed child, per provider: WRITE with a notification
// the peer checks the data against when it arrives, READ of the peer's buffer, and the peer
// SIGKILLed while a transfer to it runs.

#include <gtest/gtest.h>

#include <cstring>

#include "lf_test_utils.h"

using namespace nixl_lf_test;

namespace {

class lfTwoProcTest : public ::testing::TestWithParam<const char *> {
protected:
    static constexpr size_t buf_len = 8 << 20;

    void
    SetUp() override {
        lfSetup s;
        s.provider = GetParam();
        a_ = lfAgent::make("A", s);
        ASSERT_TRUE(a_);
        local_.assign(buf_len, 0);
        ASSERT_EQ(a_->registerDram(reinterpret_cast<uintptr_t>(local_.data()), buf_len),
                  NIXL_SUCCESS);
        std::string err;
        ASSERT_TRUE(peer_.start(GetParam(), buf_len, err)) << err;
        std::string name;
        ASSERT_EQ(a_->agent->loadRemoteMD(peer_.md, name), NIXL_SUCCESS);
        ASSERT_EQ(name, "peer");
        const std::string md = a_->md();
        ASSERT_EQ(peer_.cmd("load", &md), "ok");
    }

    nixlXferReqH *
    makeReq(nixl_xfer_op_t op, size_t len, const std::optional<std::string> &notif) {
        nixl_opt_args_t extra;
        if (notif) {
            extra.notif = *notif;
        }
        nixlXferReqH *req = nullptr;
        EXPECT_EQ(a_->agent->createXferReq(
                      op, xferList({{reinterpret_cast<uintptr_t>(local_.data()), len}}),
                      xferList({{peer_.bufAddr, len}}), "peer", req, &extra),
                  NIXL_SUCCESS);
        return req;
    }

    std::unique_ptr<lfAgent> a_;
    std::vector<uint8_t> local_;
    peerProcess peer_;
};

TEST_P(lfTwoProcTest, WriteNotifRead) {
    fillPattern(local_.data(), buf_len, 21);
    const std::string msg = patternString(100000, 22);
    nixlXferReqH *req = makeReq(NIXL_WRITE, buf_len, msg);
    ASSERT_NE(req, nullptr);
    ASSERT_EQ(runXfer(*a_->agent, req), NIXL_SUCCESS);
    // The peer answers once the notification arrived; the data must be there by then.
    ASSERT_EQ(peer_.cmd("notif 100000 22"), "ok");
    EXPECT_EQ(peer_.cmd("check 0 " + std::to_string(buf_len) + " 21"), "ok");
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);

    ASSERT_EQ(peer_.cmd("fill 23"), "ok");
    std::fill(local_.begin(), local_.end(), 0);
    req = makeReq(NIXL_READ, buf_len, std::nullopt);
    ASSERT_EQ(runXfer(*a_->agent, req), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(local_.data(), buf_len, 23), -1);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST_P(lfTwoProcTest, PeerKilledMidTransfer) {
    // The peer stops calling its agent (answering "ready" first), so a transfer to it cannot
    // finish where the target must progress; then it is killed and reaped.
    ASSERT_EQ(peer_.cmd("hang"), "ready");
    nixlXferReqH *req = makeReq(NIXL_WRITE, buf_len, std::string("never"));
    ASSERT_NE(req, nullptr);
    nixl_status_t first = a_->agent->postXferReq(req);
    peer_.kill();
    peer_.wait();
    if (first == NIXL_IN_PROG) {
        first = waitXfer(*a_->agent, req);
    }
    // The peer never progressed, so the transfer cannot have completed: it fails, no hang.
    EXPECT_EQ(first, NIXL_ERR_REMOTE_DISCONNECT) << nixlEnumStrings::statusStr(first);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
    // The agent has dropped the dead peer, as with UCX: a new request to it is refused.
    nixl_opt_args_t extra;
    nixlXferReqH *req2 = nullptr;
    EXPECT_NE(a_->agent->createXferReq(
                  NIXL_WRITE, xferList({{reinterpret_cast<uintptr_t>(local_.data()), 64}}),
                  xferList({{peer_.bufAddr, 64}}), "peer", req2, &extra),
              NIXL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(providers,
                         lfTwoProcTest,
                         ::testing::Values("shm", "tcp;ofi_rxm"),
                         [](const auto &info) {
                             return std::string(info.param[0] == 's' ? "shm" : "tcp");
                         });

} // namespace
