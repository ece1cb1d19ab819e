/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Re-registration through the metadata exchanges: the peer deregisters a buffer, registers the
// same address again, and its new metadata reaches this agent over P2P (pushed or fetched) or
// etcd. The WRITE that follows must land in the new registration, as with loadRemoteMD called
// directly (rereg_test.cpp). TEST backend, agents of one process.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "agent/exchange.h"
#include "nixl.h"
#include "p2p_test_utils.h"
#ifdef NIXL_REREG_ETCD
#include "../../common/etcd_server.h"
#endif

namespace {

using nixl_p2p_test::at;
using nixl_p2p_test::idle;
using nixl_p2p_test::listenConfig;
using nixl_p2p_test::portOf;
using nixl_test::scopedEnv;

constexpr size_t len = 16 << 10;

nixl_reg_dlist_t
regList(uintptr_t addr, size_t n) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(addr, n, 0, ""));
    return l;
}

nixl_xfer_dlist_t
xferList(uintptr_t addr, size_t n) {
    nixl_xfer_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBasicDesc(addr, n, 0));
    return l;
}

std::unique_ptr<nixlAgent>
agentWithTest(const std::string &name, const nixlAgentConfig &cfg) {
    auto a = std::make_unique<nixlAgent>(name, cfg);
    nixlBackendH *h = nullptr;
    EXPECT_EQ(a->createBackend("TEST", {}, h), NIXL_SUCCESS);
    return a;
}

/** A WRITE of byte v from a's src into b's x; the status, and whether every byte arrived. */
::testing::AssertionResult
writeLands(nixlAgent &a, uint8_t *src, uint8_t *x, uint8_t v) {
    std::memset(src, v, len);
    std::memset(x, 0, len);
    nixlXferReqH *req = nullptr;
    nixl_status_t st = a.createXferReq(NIXL_WRITE, xferList(reinterpret_cast<uintptr_t>(src), len),
                                       xferList(reinterpret_cast<uintptr_t>(x), len), "B", req);
    if (st != NIXL_SUCCESS) {
        return ::testing::AssertionFailure() << "createXferReq: " << st;
    }
    st = a.postXferReq(req);
    for (int i = 0; i < 100000 && st == NIXL_IN_PROG; ++i) {
        st = a.getXferStatus(req);
    }
    a.releaseXferReq(req);
    if (st != NIXL_SUCCESS) {
        return ::testing::AssertionFailure() << "transfer: " << st;
    }
    for (size_t i = 0; i < len; ++i) {
        if (x[i] != v) {
            return ::testing::AssertionFailure() << "byte " << i << " did not arrive";
        }
    }
    return ::testing::AssertionSuccess();
}

class reregExchangeTest : public ::testing::Test {
protected:
    void
    SetUp() override {
        src_ = static_cast<uint8_t *>(std::calloc(1, len));
        x_ = static_cast<uint8_t *>(std::calloc(1, len));
    }
    void
    TearDown() override {
        std::free(src_);
        std::free(x_);
    }
    uintptr_t
    xaddr() const {
        return reinterpret_cast<uintptr_t>(x_);
    }

    uint8_t *src_ = nullptr;
    uint8_t *x_ = nullptr;
};

// B pushes its metadata to A's listener; A writes; B re-registers and pushes again.
TEST_F(reregExchangeTest, P2PPush) {
    auto a = agentWithTest("A", listenConfig());
    auto b = agentWithTest("B", nixlAgentConfig());
    ASSERT_EQ(a->registerMem(regList(reinterpret_cast<uintptr_t>(src_), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->registerMem(regList(xaddr(), len)), NIXL_SUCCESS);
    nixl_opt_args_t to_a = at(portOf(*a));
    ASSERT_EQ(b->sendLocalMD(&to_a), NIXL_SUCCESS);
    ASSERT_TRUE(idle(*b));
    EXPECT_TRUE(writeLands(*a, src_, x_, 1));
    ASSERT_EQ(b->deregisterMem(regList(xaddr(), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->registerMem(regList(xaddr(), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->sendLocalPartialMD(regList(xaddr(), len), &to_a), NIXL_SUCCESS);
    ASSERT_TRUE(idle(*b));
    EXPECT_TRUE(writeLands(*a, src_, x_, 2));
    EXPECT_EQ(b->deregisterMem(regList(xaddr(), len)), NIXL_SUCCESS);
    EXPECT_EQ(a->deregisterMem(regList(reinterpret_cast<uintptr_t>(src_), len)), NIXL_SUCCESS);
}

// A fetches B's metadata from B's listener, before and after B re-registered.
TEST_F(reregExchangeTest, P2PFetch) {
    auto a = agentWithTest("A", listenConfig());
    auto b = agentWithTest("B", listenConfig());
    ASSERT_EQ(a->registerMem(regList(reinterpret_cast<uintptr_t>(src_), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->registerMem(regList(xaddr(), len)), NIXL_SUCCESS);
    nixl_opt_args_t to_b = at(portOf(*b));
    ASSERT_EQ(a->fetchRemoteMD("B", &to_b), NIXL_SUCCESS);
    ASSERT_TRUE(idle(*a));
    EXPECT_TRUE(writeLands(*a, src_, x_, 3));
    ASSERT_EQ(b->deregisterMem(regList(xaddr(), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->registerMem(regList(xaddr(), len)), NIXL_SUCCESS);
    ASSERT_EQ(a->fetchRemoteMD("B", &to_b), NIXL_SUCCESS);
    ASSERT_TRUE(idle(*a));
    EXPECT_TRUE(writeLands(*a, src_, x_, 4));
    EXPECT_EQ(b->deregisterMem(regList(xaddr(), len)), NIXL_SUCCESS);
    EXPECT_EQ(a->deregisterMem(regList(reinterpret_cast<uintptr_t>(src_), len)), NIXL_SUCCESS);
}

#ifdef NIXL_REREG_ETCD
// B publishes to etcd, A fetches; B re-registers and publishes again, A fetches again.
TEST_F(reregExchangeTest, Etcd) {
    nixl_test::etcdCluster server(nixl_test::etcdCluster::options{});
    scopedEnv ep("NIXL_ETCD_ENDPOINTS", server.endpoints().c_str());
    scopedEnv ns("NIXL_ETCD_NAMESPACE", "/t-rereg/");
    scopedEnv rt("NIXL_ETCD_REQUEST_TIMEOUT_MS", "20000");
    nixlAgentConfig cfg;
    cfg.etcdWatchTimeout = std::chrono::microseconds(std::chrono::seconds(30));
    auto a = agentWithTest("A", cfg);
    auto b = agentWithTest("B", cfg);
    ASSERT_EQ(a->registerMem(regList(reinterpret_cast<uintptr_t>(src_), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->registerMem(regList(xaddr(), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->sendLocalMD(), NIXL_SUCCESS);
    ASSERT_TRUE(idle(*b));
    ASSERT_EQ(a->fetchRemoteMD("B"), NIXL_SUCCESS);
    ASSERT_TRUE(idle(*a));
    EXPECT_TRUE(writeLands(*a, src_, x_, 5));
    ASSERT_EQ(b->deregisterMem(regList(xaddr(), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->registerMem(regList(xaddr(), len)), NIXL_SUCCESS);
    ASSERT_EQ(b->sendLocalMD(), NIXL_SUCCESS);
    ASSERT_TRUE(idle(*b));
    ASSERT_EQ(a->fetchRemoteMD("B"), NIXL_SUCCESS);
    ASSERT_TRUE(idle(*a));
    EXPECT_TRUE(writeLands(*a, src_, x_, 6));
    EXPECT_EQ(b->deregisterMem(regList(xaddr(), len)), NIXL_SUCCESS);
    EXPECT_EQ(a->deregisterMem(regList(reinterpret_cast<uintptr_t>(src_), len)), NIXL_SUCCESS);
}
#endif

} // namespace
