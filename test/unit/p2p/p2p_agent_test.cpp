/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// sendLocalMD / sendLocalPartialMD / fetchRemoteMD / invalidateLocalMD over P2P between agents
// of this process with the TEST backend, which moves real bytes: metadata exchanged through the
// listener, then a verified WRITE with a notification. Also the options (token, sync mode,
// port in use) and the calls' parameter checks.

#include <gtest/gtest.h>

#include <stdexcept>

#include "p2p_test_utils.h"

using namespace nixl_p2p_test;

namespace {

struct testBuf {
    explicit testBuf(size_t n, uint8_t seed) : bytes(n) {
        for (size_t i = 0; i < n; ++i) {
            bytes[i] = static_cast<uint8_t>(seed * 31 + i * 7);
        }
    }

    nixlBasicDesc
    desc() const {
        return nixlBasicDesc(reinterpret_cast<uintptr_t>(bytes.data()), bytes.size(), 0);
    }

    nixl_reg_dlist_t
    reg() const {
        nixl_reg_dlist_t l(DRAM_SEG);
        l.addDesc(nixlBlobDesc(desc(), ""));
        return l;
    }

    nixl_xfer_dlist_t
    xfer() const {
        nixl_xfer_dlist_t l(DRAM_SEG);
        l.addDesc(desc());
        return l;
    }

    std::vector<uint8_t> bytes;
};

class p2pAgentTest : public ::testing::Test {
protected:
    p2pAgentTest()
        : bind_("NIXL_P2P_BIND_ADDR", "127.0.0.1"),
          token_("NIXL_P2P_TOKEN", nullptr),
          timeout_("NIXL_P2P_TIMEOUT_MS", nullptr),
          maxFrame_("NIXL_P2P_MAX_FRAME", nullptr),
          maxConns_("NIXL_P2P_MAX_CONNECTIONS", nullptr),
          etcd_("NIXL_ETCD_ENDPOINTS", nullptr),
          telemetry_("NIXL_TELEMETRY_ENABLE", nullptr) {}

    static std::unique_ptr<nixlAgent>
    agentWithTest(const std::string &name, const nixlAgentConfig &cfg = listenConfig()) {
        auto a = std::make_unique<nixlAgent>(name, cfg);
        nixlBackendH *h = nullptr;
        EXPECT_EQ(NIXL_SUCCESS, a->createBackend("TEST", {}, h));
        return a;
    }

    /** A WRITEs its buffer over B's with a notification; B checks the bytes on its arrival. */
    static void
    writeAndVerify(nixlAgent &a, const testBuf &src, nixlAgent &b, testBuf &dst) {
        nixl_opt_args_t args;
        args.notif = "p2p-done";
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, a.createXferReq(NIXL_WRITE, src.xfer(), dst.xfer(), "B", req, &args));
        nixl_status_t st = a.postXferReq(req);
        for (int i = 0; i < 100000 && st == NIXL_IN_PROG; ++i) {
            st = a.getXferStatus(req);
        }
        ASSERT_EQ(NIXL_SUCCESS, st);
        nixl_notifs_t notifs;
        ASSERT_TRUE(waitFor([&] {
            return b.getNotifs(notifs) == NIXL_SUCCESS && notifs.count("A") == 1;
        }));
        ASSERT_EQ(notifs["A"], std::vector<std::string>{"p2p-done"});
        EXPECT_EQ(dst.bytes, src.bytes);
        EXPECT_EQ(NIXL_SUCCESS, a.releaseXferReq(req));
    }

    scopedEnv bind_;
    scopedEnv token_;
    scopedEnv timeout_;
    scopedEnv maxFrame_;
    scopedEnv maxConns_;
    scopedEnv etcd_;
    scopedEnv telemetry_;
};

TEST_F(p2pAgentTest, PushAndFetchThenWriteWithNotification) {
    auto a = agentWithTest("A");
    auto b = agentWithTest("B");
    ASSERT_NE(portOf(*a), 0);
    ASSERT_NE(portOf(*b), 0);
    testBuf src(4096, 1);
    testBuf dst(4096, 2);
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(src.reg()));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(dst.reg()));

    // A asks B's listener for B's metadata and pushes its own there.
    nixl_opt_args_t to_b = at(portOf(*b));
    ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("B", &to_b));
    ASSERT_EQ(NIXL_SUCCESS, a->sendLocalMD(&to_b));
    ASSERT_TRUE(idle(*a));
    EXPECT_EQ(NIXL_SUCCESS, a->checkRemoteMD("B", dst.xfer()));
    EXPECT_EQ(NIXL_SUCCESS, b->checkRemoteMD("A", src.xfer()));
    const auto sa = nixlAgentInternals::p2pStats(*a);
    EXPECT_EQ(sa.opsDone, 2u);
    EXPECT_EQ(sa.opsFailed, 0u);
    EXPECT_EQ(nixlAgentInternals::p2pStats(*b).requestsServed, 2u);
    writeAndVerify(*a, src, *b, dst);
}

TEST_F(p2pAgentTest, PartialMetadataAddsOnlyTheListedBuffers) {
    auto a = agentWithTest("A");
    auto b = agentWithTest("B", nixlAgentConfig());
    EXPECT_EQ(portOf(*b), 0); // no listener: pushes only
    testBuf one(256, 3);
    testBuf two(256, 4);
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(one.reg()));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(two.reg()));
    nixl_opt_args_t to_a = at(portOf(*a));
    // Connection info first (empty list), then buffer one.
    ASSERT_EQ(NIXL_SUCCESS, b->sendLocalPartialMD(nixl_reg_dlist_t(DRAM_SEG), &to_a));
    ASSERT_EQ(NIXL_SUCCESS, b->sendLocalPartialMD(one.reg(), &to_a));
    ASSERT_TRUE(idle(*b));
    EXPECT_EQ(NIXL_SUCCESS, a->checkRemoteMD("B", one.xfer()));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("B", two.xfer()));
    ASSERT_EQ(NIXL_SUCCESS, b->sendLocalPartialMD(two.reg(), &to_a));
    ASSERT_TRUE(idle(*b));
    EXPECT_EQ(NIXL_SUCCESS, a->checkRemoteMD("B", two.xfer()));
}

TEST_F(p2pAgentTest, InvalidateLocalMDMakesThePeerForgetUs) {
    auto a = agentWithTest("A");
    auto b = agentWithTest("B");
    nixl_opt_args_t to_a = at(portOf(*a));
    ASSERT_EQ(NIXL_SUCCESS, b->sendLocalMD(&to_a));
    ASSERT_TRUE(idle(*b));
    ASSERT_EQ(NIXL_SUCCESS, a->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    ASSERT_EQ(NIXL_SUCCESS, b->invalidateLocalMD(&to_a));
    ASSERT_TRUE(idle(*b));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(nixlAgentInternals::p2pStats(*b).opsFailed, 0u);
}

TEST_F(p2pAgentTest, OperationsToOnePeerKeepTheirOrder) {
    auto a = agentWithTest("A");
    auto b = agentWithTest("B", nixlAgentConfig());
    // Many registrations make the push far larger than the invalidation that follows it.
    std::vector<testBuf> bufs;
    for (int i = 0; i < 2000; ++i) {
        bufs.emplace_back(64, static_cast<uint8_t>(i));
    }
    nixl_reg_dlist_t regs(DRAM_SEG);
    for (const auto &buf : bufs) {
        regs.addDesc(nixlBlobDesc(buf.desc(), ""));
    }
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regs));
    nixl_opt_args_t to_a = at(portOf(*a));
    for (int round = 0; round < 5; ++round) {
        ASSERT_EQ(NIXL_SUCCESS, b->sendLocalMD(&to_a));
        ASSERT_EQ(NIXL_SUCCESS, b->invalidateLocalMD(&to_a));
        ASSERT_TRUE(idle(*b));
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
        // A does not know B now: that invalidation is a success too (nothing to forget).
        ASSERT_EQ(NIXL_SUCCESS, b->invalidateLocalMD(&to_a));
        ASSERT_EQ(NIXL_SUCCESS, b->sendLocalMD(&to_a));
        ASSERT_TRUE(idle(*b));
        EXPECT_EQ(nixlAgentInternals::p2pStats(*b).opsFailed, 0u);
        EXPECT_EQ(NIXL_SUCCESS, a->checkRemoteMD("B", bufs[1999].xfer()));
        ASSERT_EQ(NIXL_SUCCESS, a->invalidateRemoteMD("B"));
    }
}

TEST_F(p2pAgentTest, QueuedInvalidateStillGoesOutWhenTheAgentIsDestroyed) {
    auto a = agentWithTest("A");
    {
        auto b = agentWithTest("B");
        nixl_opt_args_t to_a = at(portOf(*a));
        ASSERT_EQ(NIXL_SUCCESS, b->sendLocalMD(&to_a));
        ASSERT_EQ(NIXL_SUCCESS, b->invalidateLocalMD(&to_a));
        // No wait: ~nixlAgent completes the queue before it stops the thread.
    }
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).requestsServed, 2u);
}

TEST_F(p2pAgentTest, TokenAccepted) {
    scopedEnv token("NIXL_P2P_TOKEN", "s3cret-token");
    auto a = agentWithTest("A");
    auto b = agentWithTest("B");
    nixl_opt_args_t to_a = at(portOf(*a));
    stderrCapture cap;
    ASSERT_EQ(NIXL_SUCCESS, b->sendLocalMD(&to_a));
    ASSERT_TRUE(idle(*b));
    EXPECT_TRUE(errorLines(cap.stop()).empty());
    EXPECT_EQ(NIXL_SUCCESS, a->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
}

TEST_F(p2pAgentTest, TokenRefusedWithOneLineOnEachSide) {
    std::unique_ptr<nixlAgent> a;
    {
        scopedEnv token("NIXL_P2P_TOKEN", "s3cret-token");
        a = agentWithTest("A");
    }
    auto b = agentWithTest("B"); // no token
    std::unique_ptr<nixlAgent> c;
    {
        scopedEnv token("NIXL_P2P_TOKEN", "wrong-token");
        c = agentWithTest("C");
    }
    nixl_opt_args_t to_a = at(portOf(*a));
    for (nixlAgent *peer : {b.get(), c.get()}) {
        stderrCapture cap;
        ASSERT_EQ(NIXL_SUCCESS, peer->sendLocalMD(&to_a));
        ASSERT_TRUE(idle(*peer));
        const std::string log = cap.stop();
        const auto lines = errorLines(log);
        ASSERT_EQ(lines.size(), 2u) << log;
        // The listener's line, then the sender's (it logs after reading the answer).
        EXPECT_NE(lines[0].find("agent A: P2P listener: refused peer 127.0.0.1:"),
                  std::string::npos)
            << lines[0];
        EXPECT_NE(lines[0].find(peer == b.get() ? "presented no token" : "presented a wrong token"),
                  std::string::npos)
            << lines[0];
        EXPECT_NE(lines[1].find("sendLocalMD via 127.0.0.1:"), std::string::npos) << lines[1];
        EXPECT_NE(lines[1].find("NIXL_ERR_NOT_ALLOWED"), std::string::npos) << lines[1];
        // The token itself never appears in a log.
        EXPECT_EQ(log.find("s3cret"), std::string::npos);
        EXPECT_EQ(log.find("wrong-token"), std::string::npos);
    }
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("C", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).badPeers, 2u);
}

TEST_F(p2pAgentTest, FetchOfAnotherNameIsRefusedAndLoadsNothing) {
    auto a = agentWithTest("A");
    auto b = agentWithTest("B");
    nixl_opt_args_t to_b = at(portOf(*b));
    stderrCapture cap;
    ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("C", &to_b));
    ASSERT_TRUE(idle(*a));
    EXPECT_TRUE(oneErrorLine(cap.stop(),
                             {"agent A: fetchRemoteMD(C) via 127.0.0.1:", "NIXL_ERR_NOT_FOUND",
                              "serves agent B, not C", "nothing was loaded"}));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("C", nixl_xfer_dlist_t(DRAM_SEG)));
}

TEST_F(p2pAgentTest, FetchWhereNobodyListensFailsWithOneLine) {
    auto a = agentWithTest("A");
    deadPort nobody;
    ASSERT_NE(nobody.port(), 0);
    nixl_opt_args_t there = at(nobody.port());
    stderrCapture cap;
    ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("B", &there));
    ASSERT_TRUE(idle(*a));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"fetchRemoteMD(B) via 127.0.0.1:" +
                                              std::to_string(nobody.port()),
                                          "cannot connect: Connection refused"}));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).opsFailed, 1u);
}

TEST_F(p2pAgentTest, ListenerOnlyStartsWithUseListenThread) {
    auto quiet = agentWithTest("Q", nixlAgentConfig());
    EXPECT_EQ(portOf(*quiet), 0);
}

TEST_F(p2pAgentTest, PortInUseFailsConstructionNamingIt) {
    auto a = agentWithTest("A");
    nixlAgentConfig cfg = listenConfig();
    cfg.listenPort = portOf(*a);
    const std::string where = "127.0.0.1:" + std::to_string(cfg.listenPort);
    stderrCapture cap;
    try {
        nixlAgent b("B", cfg);
        FAIL() << "constructed an agent on a port in use";
    }
    catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("Address already in use"), std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent B: cannot listen for P2P metadata on " + where}));
}

TEST_F(p2pAgentTest, BadOptionsFailConstruction) {
    const std::string long_token(257, 't');
    for (const auto &[var, value] : std::vector<std::pair<const char *, const char *>>{
             {"NIXL_P2P_BIND_ADDR", "localhost"},
             {"NIXL_P2P_TIMEOUT_MS", "0"},
             {"NIXL_P2P_MAX_FRAME", "100"},
             {"NIXL_P2P_MAX_CONNECTIONS", "0"},
             {"NIXL_P2P_TOKEN", long_token.c_str()}}) {
        scopedEnv env(var, value);
        stderrCapture cap;
        EXPECT_THROW(nixlAgent("A", listenConfig()), std::invalid_argument) << var;
        EXPECT_TRUE(oneErrorLine(cap.stop(), {var}));
    }
}

TEST_F(p2pAgentTest, SyncModeNoneRunsAsRWWithTheListener) {
    using m = nixl_thread_sync_t;
    EXPECT_EQ(nixlAgentInternals::syncMode(nixlAgent("A", listenConfig(m::NIXL_THREAD_SYNC_NONE))),
              m::NIXL_THREAD_SYNC_RW);
    EXPECT_EQ(nixlAgentInternals::syncMode(nixlAgent("B", listenConfig(m::NIXL_THREAD_SYNC_STRICT))),
              m::NIXL_THREAD_SYNC_STRICT);
    EXPECT_EQ(nixlAgentInternals::syncMode(nixlAgent("C", nixlAgentConfig())),
              m::NIXL_THREAD_SYNC_NONE);
}

TEST_F(p2pAgentTest, FetchWithoutListenerNeedsALockingSyncMode) {
    auto b = agentWithTest("B");
    testBuf dst(128, 5);
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(dst.reg()));
    nixl_opt_args_t to_b = at(portOf(*b));
    auto none = agentWithTest("N", nixlAgentConfig());
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, none->fetchRemoteMD("B", &to_b));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent N: fetchRemoteMD(B)", "useListenThread"}));

    nixlAgentConfig strict;
    strict.syncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT;
    auto s = agentWithTest("S", strict);
    ASSERT_EQ(NIXL_SUCCESS, s->fetchRemoteMD("B", &to_b));
    ASSERT_TRUE(idle(*s));
    EXPECT_EQ(NIXL_SUCCESS, s->checkRemoteMD("B", dst.xfer()));
}

TEST_F(p2pAgentTest, CallParametersAreChecked) {
    auto a = agentWithTest("A");
    nixl_opt_args_t bad_ip;
    bad_ip.ipAddr = "host.example";
    bad_ip.port = 1234;
    nixl_opt_args_t bad_port = at(0);
    bad_port.port = 70000;
    for (const nixl_opt_args_t *o : {&bad_ip, &bad_port}) {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->sendLocalMD(o));
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->invalidateLocalMD(o));
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->fetchRemoteMD("B", o));
        EXPECT_EQ(errorLines(cap.stop()).size(), 3u);
    }
    nixl_opt_args_t self = at(portOf(*a));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->fetchRemoteMD("A", &self));
}

TEST_F(p2pAgentTest, WithoutPeerOrStoreTheCallsSaySo) {
    auto a = agentWithTest("A", nixlAgentConfig());
    testBuf buf(64, 1);
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(buf.reg()));
    {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->sendLocalMD());
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->sendLocalPartialMD(buf.reg()));
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->fetchRemoteMD("B"));
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->invalidateLocalMD());
        const auto lines = errorLines(cap.stop());
        ASSERT_EQ(lines.size(), 4u);
        EXPECT_NE(lines[0].find("no central store configured (NIXL_ETCD_ENDPOINTS)"),
                  std::string::npos);
    }
    scopedEnv etcd("NIXL_ETCD_ENDPOINTS", "http://127.0.0.1:2379");
    EXPECT_EQ(NIXL_ERR_NOT_SUPPORTED, a->sendLocalMD());
    EXPECT_EQ(NIXL_ERR_NOT_SUPPORTED, a->sendLocalPartialMD(buf.reg()));
    EXPECT_EQ(NIXL_ERR_NOT_SUPPORTED, a->fetchRemoteMD("B"));
    EXPECT_EQ(NIXL_ERR_NOT_SUPPORTED, a->invalidateLocalMD());
}

} // namespace
