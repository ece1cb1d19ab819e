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

// nixlbench's target never calls its agent after setup. On shm the initiator copies to and from
// such a peer itself (process_vm_writev/readv); before, the first RMA waited for a connection
// answer only the target's progress sends, and failed after the stall timeout.
TEST_P(lfTwoProcTest, IdleTargetWriteThenRead) {
    if (std::string(GetParam()) != "shm") {
        GTEST_SKIP() << "only shm moves data without the target's progress";
    }
    ASSERT_EQ(peer_.cmd("hang"), "ready");
    constexpr size_t n = 16, len = 64 << 10;
    const uintptr_t src = reinterpret_cast<uintptr_t>(local_.data());
    const uintptr_t dst = src + buf_len / 2;
    std::vector<std::pair<uintptr_t, size_t>> wsrc, rdst, remote;
    for (size_t i = 0; i < n; ++i) {
        wsrc.push_back({src + i * len, len});
        rdst.push_back({dst + i * len, len});
        // Remote order reversed, so a mix-up of descriptors shows in the data read back.
        remote.push_back({peer_.bufAddr + (n - 1 - i) * len, len});
    }
    fillPattern(local_.data(), n * len, 41);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, xferList(wsrc), xferList(remote), "peer", req),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a_->agent, req), NIXL_SUCCESS);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);

    ASSERT_EQ(a_->agent->createXferReq(NIXL_READ, xferList(rdst), xferList(remote), "peer", req),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a_->agent, req), NIXL_SUCCESS);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(local_.data() + buf_len / 2, n * len, 41), -1);
}

TEST_P(lfTwoProcTest, PoolThreadsPostManyDescriptors) {
    // num_threads 1 and 2, turns of 100 descriptors: 4,096 descriptors of 1 KiB in reverse
    // order posted by the pool while the caller does not poll (A has a progress thread).
    const size_t n = 4096;
    std::vector<std::pair<uintptr_t, size_t>> l;
    std::vector<std::pair<uintptr_t, size_t>> r;
    for (size_t j = 0; j < n; ++j) {
        const size_t k = n - 1 - j;
        l.emplace_back(reinterpret_cast<uintptr_t>(local_.data()) + k * 1024, 1024);
        r.emplace_back(peer_.bufAddr + k * 1024, 1024);
    }
    for (const char *threads : {"1", "2"}) {
        SCOPED_TRACE(std::string("num_threads=") + threads);
        lfSetup s;
        s.provider = GetParam();
        s.progThread = true;
        s.extra["num_threads"] = threads;
        s.extra["split_batch_size"] = "100";
        auto p = lfAgent::make(std::string("P") + threads, s);
        ASSERT_TRUE(p);
        ASSERT_EQ(p->registerDram(reinterpret_cast<uintptr_t>(local_.data()), buf_len),
                  NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(p->agent->loadRemoteMD(peer_.md, name), NIXL_SUCCESS);
        const std::string md = p->md();
        ASSERT_EQ(peer_.cmd("load", &md), "ok");
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(p->agent->createXferReq(NIXL_WRITE, xferList(l), xferList(r), "peer", req),
                  NIXL_SUCCESS);
        // One request posted again and again: a repost may come while the pool thread that
        // completed the previous post is still leaving its turn.
        for (uint32_t round = 0; round < 20; ++round) {
            const uint32_t seed = 40 + 100 * static_cast<uint32_t>(threads[0] - '0') + round;
            fillPattern(local_.data(), n * 1024, seed);
            nixl_opt_args_t extra;
            extra.notif = patternString(1000, seed);
            // More than split_batch_size descriptors: nothing is posted on this thread.
            ASSERT_EQ(p->agent->postXferReq(req, &extra), NIXL_IN_PROG) << "round " << round;
            // The notification goes after every descriptor completed: the data is there.
            ASSERT_EQ(peer_.cmd("notif 1000 " + std::to_string(seed) + " P" + threads), "ok")
                << "round " << round;
            EXPECT_EQ(
                peer_.cmd("check 0 " + std::to_string(n * 1024) + " " + std::to_string(seed)),
                "ok");
            ASSERT_EQ(waitXfer(*p->agent, req), NIXL_SUCCESS) << "round " << round;
        }
        EXPECT_EQ(p->agent->releaseXferReq(req), NIXL_SUCCESS);
        const uint32_t seed = 40 + static_cast<uint32_t>(threads[0] - '0');

        ASSERT_EQ(peer_.cmd("fill " + std::to_string(seed + 10)), "ok");
        std::fill(local_.begin(), local_.end(), 0);
        ASSERT_EQ(p->agent->createXferReq(NIXL_READ, xferList(l), xferList(r), "peer", req),
                  NIXL_SUCCESS);
        ASSERT_EQ(runXfer(*p->agent, req), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(local_.data(), n * 1024, seed + 10), -1);
        EXPECT_EQ(p->agent->releaseXferReq(req), NIXL_SUCCESS);

        // Released right after its post, five times: the pool lets go of it, nothing breaks.
        for (int round = 0; round < 5; ++round) {
            ASSERT_EQ(p->agent->createXferReq(NIXL_WRITE, xferList(l), xferList(r), "peer", req),
                      NIXL_SUCCESS);
            ASSERT_EQ(p->agent->postXferReq(req), NIXL_IN_PROG);
            EXPECT_EQ(p->agent->releaseXferReq(req), NIXL_SUCCESS);
        }
        {
            // Back to back, no progress thread, 64 KiB blocks: the caller reads the last
            // completions (while the pool thread may still be leaving its last turn) and
            // reposts at once.
            lfSetup qs = s;
            qs.progThread = false;
            qs.extra["split_batch_size"] = "16";
            auto q = lfAgent::make(std::string("Q") + threads, qs);
            ASSERT_TRUE(q);
            ASSERT_EQ(q->registerDram(reinterpret_cast<uintptr_t>(local_.data()), buf_len),
                      NIXL_SUCCESS);
            ASSERT_EQ(q->agent->loadRemoteMD(peer_.md, name), NIXL_SUCCESS);
            std::vector<std::pair<uintptr_t, size_t>> ql;
            std::vector<std::pair<uintptr_t, size_t>> qr;
            for (size_t k = 0; k < buf_len / 65536; ++k) {
                ql.emplace_back(reinterpret_cast<uintptr_t>(local_.data()) + k * 65536, 65536);
                qr.emplace_back(peer_.bufAddr + k * 65536, 65536);
            }
            nixlXferReqH *qreq = nullptr;
            ASSERT_EQ(q->agent->createXferReq(NIXL_WRITE, xferList(ql), xferList(qr), "peer",
                                              qreq),
                      NIXL_SUCCESS);
            // tcp moves 8 MiB in tens of ms here: fewer rounds (the race was seen on shm).
            const int rounds = std::string(GetParam()) == "shm" ? 100 : 10;
            for (int round = 0; round < rounds; ++round) {
                ASSERT_EQ(runXfer(*q->agent, qreq), NIXL_SUCCESS) << "back-to-back " << round;
            }
            EXPECT_EQ(q->agent->releaseXferReq(qreq), NIXL_SUCCESS);
        }
        // Destroyed with a request queued in its pool (the agent releases it first).
        ASSERT_EQ(p->agent->createXferReq(NIXL_WRITE, xferList(l), xferList(r), "peer", req),
                  NIXL_SUCCESS);
        ASSERT_EQ(p->agent->postXferReq(req), NIXL_IN_PROG);
        p.reset();
    }
}

/** Agent B in this process, connected both ways with A: a peer that must stay unaffected. */
std::unique_ptr<lfAgent>
makeBystander(lfAgent &a, std::vector<uint8_t> &buf, const char *provider) {
    lfSetup s;
    s.provider = provider;
    auto b = lfAgent::make("B", s);
    if (!b || b->registerDram(reinterpret_cast<uintptr_t>(buf.data()), buf.size()) !=
            NIXL_SUCCESS) {
        return nullptr;
    }
    std::string name;
    if (a.agent->loadRemoteMD(b->md(), name) != NIXL_SUCCESS ||
        b->agent->loadRemoteMD(a.md(), name) != NIXL_SUCCESS) {
        return nullptr;
    }
    return b;
}

/** A WRITE of 64 KiB from A's buffer to B's, with B progressing; its status. */
nixl_status_t
writeTo(lfAgent &a, std::vector<uint8_t> &src, lfAgent &b, std::vector<uint8_t> &dst) {
    nixlXferReqH *req = nullptr;
    nixl_status_t st = a.agent->createXferReq(
        NIXL_WRITE, xferList({{reinterpret_cast<uintptr_t>(src.data()), 65536}}),
        xferList({{reinterpret_cast<uintptr_t>(dst.data()), 65536}}), "B", req);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    notifBox box;
    st = runXfer(*a.agent, req, [&] { box.poll(*b.agent); });
    a.agent->releaseXferReq(req);
    return st;
}

TEST_P(lfTwoProcTest, PeerKilledWhileIdle) {
    std::vector<uint8_t> bbuf(1 << 20);
    auto b = makeBystander(*a_, bbuf, GetParam());
    ASSERT_TRUE(b);
    peer_.kill();
    peer_.wait();
    nixlXferReqH *req = makeReq(NIXL_WRITE, 4096, std::nullopt);
    ASSERT_NE(req, nullptr);
    EXPECT_EQ(runXfer(*a_->agent, req), NIXL_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
    fillPattern(local_.data(), 65536, 31);
    EXPECT_EQ(writeTo(*a_, local_, *b, bbuf), NIXL_SUCCESS); // the other peer is unaffected
    EXPECT_EQ(firstMismatch(bbuf.data(), 65536, 31), -1);
}

TEST_P(lfTwoProcTest, PeerKilledMidTransfer) {
    std::vector<uint8_t> bbuf(1 << 20);
    auto b = makeBystander(*a_, bbuf, GetParam());
    ASSERT_TRUE(b);
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
    fillPattern(local_.data(), 65536, 32);
    EXPECT_EQ(writeTo(*a_, local_, *b, bbuf), NIXL_SUCCESS); // the other peer is unaffected
    EXPECT_EQ(firstMismatch(bbuf.data(), 65536, 32), -1);
}

INSTANTIATE_TEST_SUITE_P(providers,
                         lfTwoProcTest,
                         ::testing::Values("shm", "tcp;ofi_rxm"),
                         [](const auto &info) {
                             return std::string(info.param[0] == 's' ? "shm" : "tcp");
                         });

} // namespace
