/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// A same-host peer in another process gets private UCX workers (docs/backends/ucx.md), which
// are expensive to create; they are made at the connection's first use, not when the peer's
// metadata is loaded, and exactly once per lane however many threads use the peer first at
// the same moment. The engine's DEBUG line "UCX lane <i> to <peer> on <worker> (created now)"
// is the observable: one per private worker created.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/nixl_log.h"
#include "ucx_test_utils.h"
#include "../../common/log_capture.h"

using namespace nixl_ucx_test;

namespace {

/** Lines of log that contain every one of needles. */
size_t
countLines(const std::string &log, std::initializer_list<std::string> needles) {
    size_t n = 0;
    size_t pos = 0;
    while (pos < log.size()) {
        size_t end = log.find('\n', pos);
        if (end == std::string::npos) {
            end = log.size();
        }
        const std::string_view line(log.data() + pos, end - pos);
        bool all = true;
        for (const auto &s : needles) {
            all = all && line.find(s) != std::string_view::npos;
        }
        n += all ? 1 : 0;
        pos = end + 1;
    }
    return n;
}

/** DEBUG logging for the scope (the engine's lane lines are DEBUG). */
struct debugLog {
    nixl::log::level old = nixl::log::getLevel();

    debugLog() {
        nixl::log::setLevel(nixl::log::level::DEBUG);
    }

    ~debugLog() {
        nixl::log::setLevel(old);
    }
};

constexpr size_t kPeers = 4;
constexpr size_t kThreads = 8;

TEST(ucxLazy, LoadCreatesNoWorkerAndConcurrentFirstUseBuildsOnce) {
    ucxSetup s;
    s.progThread = true; // the progress thread visits the workers while they are made
    s.sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_RW;
    s.params["num_workers"] = "2";
    auto a = ucxAgent::make("A", s);
    ASSERT_TRUE(a);
    testMem buf(1 << 16);
    ASSERT_EQ(a->registerDram(buf.addr(), buf.size()), NIXL_SUCCESS);

    std::vector<std::unique_ptr<peerProcess>> peers;
    for (size_t i = 0; i < kPeers; ++i) {
        peerConfig cfg;
        cfg.name = "P" + std::to_string(i);
        cfg.bufSize = 1 << 16;
        auto p = std::make_unique<peerProcess>();
        std::string err;
        ASSERT_TRUE(p->start(cfg, err)) << err;
        peers.push_back(std::move(p));
    }

    debugLog dbg;
    std::string log;
    {
        nixl_test::stderrCapture cap;
        for (auto &p : peers) {
            std::string got;
            ASSERT_EQ(a->agent->loadRemoteMD(p->md(), got), NIXL_SUCCESS);
            ASSERT_EQ(got, p->name());
        }
        log = cap.stop();
    }
    // The engine saw every peer as a same-host peer on private workers (so the check below
    // is about them) and made none of those workers.
    EXPECT_EQ(countLines(log, {"UCX connection to P", "on private workers"}), kPeers) << log;
    EXPECT_EQ(countLines(log, {"(created now)"}), 0u) << log;

    // kThreads threads use P0 first at the same moment; each lane's worker is made once.
    const peerProcess &p0 = *peers[0];
    std::vector<nixlXferReqH *> reqs(kThreads, nullptr);
    std::vector<nixl_status_t> sts(kThreads, NIXL_ERR_UNKNOWN);
    {
        nixl_test::stderrCapture cap;
        std::atomic<size_t> arrived{0};
        std::vector<std::thread> ts;
        for (size_t t = 0; t < kThreads; ++t) {
            ts.emplace_back([&, t] {
                arrived.fetch_add(1);
                while (arrived.load() < kThreads) {
                    std::this_thread::yield();
                }
                const size_t off = t * 1024;
                sts[t] = a->agent->createXferReq(NIXL_WRITE,
                                                 xferList({{buf.addr() + off, 1024}}),
                                                 xferList({{p0.bufAddr() + off, 1024}}),
                                                 p0.name(),
                                                 reqs[t]);
            });
        }
        for (auto &t : ts) {
            t.join();
        }
        log = cap.stop();
    }
    for (size_t t = 0; t < kThreads; ++t) {
        EXPECT_EQ(sts[t], NIXL_SUCCESS) << "thread " << t << ": " << log;
    }
    EXPECT_EQ(countLines(log, {"(created now)", "A->P0/0"}), 1u) << log;
    EXPECT_EQ(countLines(log, {"(created now)", "A->P0/1"}), 1u) << log;
    EXPECT_EQ(countLines(log, {"(created now)"}), 2u) << log;

    // The lanes work: every request moves its bytes (P0 checks them).
    fillPattern(buf.data(), kThreads * 1024, 21);
    for (size_t t = 0; t < kThreads; ++t) {
        ASSERT_EQ(runXfer(*a->agent, reqs[t]), NIXL_SUCCESS) << "thread " << t;
        EXPECT_EQ(a->agent->releaseXferReq(reqs[t]), NIXL_SUCCESS);
    }
    EXPECT_EQ(peers[0]->cmd("check 21 0 " + std::to_string(kThreads * 1024)), "ok");

    // The other peers' first use is a notification; their workers are made then.
    ASSERT_EQ(peers[1]->cmd("expect A hi"), "ok");
    {
        nixl_test::stderrCapture cap;
        EXPECT_EQ(a->agent->genNotif("P1", "hi"), NIXL_SUCCESS);
        log = cap.stop();
    }
    EXPECT_EQ(countLines(log, {"(created now)", "A->P1/"}), 2u) << log;
    EXPECT_EQ(countLines(log, {"(created now)"}), 2u) << log;
    EXPECT_EQ(peers[1]->cmd("await hi"), "ok");
    // A goes first, then the peers (the orderly shutdown of docs/backends/ucx.md, Limits):
    // with UCX_TLS=tcp a peer that exits while A's endpoints to it are still being wired up
    // can abort inside UCX 1.13 (1 run in 3 here before this order). That includes a peer
    // whose wireup reply to A is still queued when A goes (ucp_request.c:684, "got REP
    // message", 1 run in 20 with UCX_TLS=tcp): the genNotif above made both of P1's lanes but
    // used one, and the threads' lanes to P0 need not cover both. A flushed WRITE on every
    // lane completes only once A has that lane's reply, so after these no reply is pending.
    for (size_t i = 0; i < 2; ++i) {
        for (size_t lane = 0; lane < 2; ++lane) {
            nixl_opt_args_t extra;
            extra.customParam = "worker_id=" + std::to_string(lane);
            nixlXferReqH *req = nullptr;
            ASSERT_EQ(a->agent->createXferReq(NIXL_WRITE, xferList({{buf.addr(), 64}}),
                                              xferList({{peers[i]->bufAddr(), 64}}),
                                              peers[i]->name(), req, &extra),
                      NIXL_SUCCESS);
            ASSERT_EQ(runXfer(*a->agent, req), NIXL_SUCCESS) << peers[i]->name() << "/" << lane;
            EXPECT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
        }
    }
    a.reset();
    for (auto &p : peers) {
        EXPECT_EQ(p->cmd("exit"), "bye");
        EXPECT_EQ(p->wait(), 0);
    }
}

TEST(ucxLazy, PeerGoneBeforeFirstUseIsRemoteDisconnect) {
    ucxSetup s;
    auto a = ucxAgent::make("A", s);
    ASSERT_TRUE(a);
    testMem buf(4096);
    ASSERT_EQ(a->registerDram(buf.addr(), buf.size()), NIXL_SUCCESS);
    peerConfig cfg;
    cfg.name = "B";
    cfg.bufSize = 4096;
    peerProcess b;
    std::string err;
    ASSERT_TRUE(b.start(cfg, err)) << err;
    std::string got;
    ASSERT_EQ(a->agent->loadRemoteMD(b.md(), got), NIXL_SUCCESS);
    b.kill();
    b.wait();
    // The first use finds B gone, whether while making the lanes or at the transfer.
    nixlXferReqH *req = nullptr;
    nixl_status_t st = a->agent->createXferReq(NIXL_WRITE, xferList({{buf.addr(), 4096}}),
                                               xferList({{b.bufAddr(), 4096}}), "B", req);
    if (st == NIXL_SUCCESS) {
        st = runXfer(*a->agent, req);
        EXPECT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
    }
    EXPECT_EQ(st, NIXL_ERR_REMOTE_DISCONNECT) << nixlEnumStrings::statusStr(st);
}

} // namespace
