/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: registerMem / deregisterMem, rollback, and requests over deregistered memory.

#include "agent_test_utils.h"

namespace nixl_agent_test {
namespace {

class agentMemoryTest : public agentTest {
protected:
    void
    SetUp() override {
        a_ = makeAgent("A");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a_, {}, &ha_));
    }

    /** TEST's own view: is d covered by a live registration of A's backend? */
    bool
    backendHas(const nixlBasicDesc &d) {
        std::vector<nixl_query_resp_t> resp;
        nixl_opt_args_t hint;
        hint.backends = {ha_};
        EXPECT_EQ(NIXL_SUCCESS, a_->queryMem(regList({d}), resp, &hint));
        return resp.size() == 1 && resp[0].has_value();
    }

    std::unique_ptr<nixlAgent> a_;
    nixlBackendH *ha_ = nullptr;
};

TEST_F(agentMemoryTest, RegisterAndDeregister) {
    testBuffer buf(1024);
    nixl_reg_dlist_t list = regList({buf.desc(0, 512), buf.desc(512, 512)});
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(list));
    EXPECT_TRUE(backendHas(buf.desc(0, 512)));
    EXPECT_TRUE(backendHas(buf.desc(512, 512)));
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(list));
    EXPECT_FALSE(backendHas(buf.desc(0, 512)));
    EXPECT_FALSE(backendHas(buf.desc(512, 512)));
    // Registered again after deregistration: a fresh registration, not a duplicate.
    EXPECT_EQ(NIXL_SUCCESS, a_->registerMem(list));
}

TEST_F(agentMemoryTest, RegisterWithHint) {
    testBuffer buf(64);
    nixl_opt_args_t hint;
    hint.backends = {ha_};
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({buf.desc()}), &hint));
    EXPECT_TRUE(backendHas(buf.desc()));
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({buf.desc()}), &hint));
}

TEST_F(agentMemoryTest, UnsupportedMemTypeIsNotFound) {
    testBuffer buf(64);
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->registerMem(regList({buf.desc()}, VRAM_SEG)));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "VRAM_SEG"}));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->registerMem(regList({buf.desc()}, FILE_SEG)));
}

// What cannot be memory is refused by the agent before any backend sees the list (TEST took all
// of these): address 0 and length 0 of DRAM, a range that wraps, one ending beyond 2^57.
TEST_F(agentMemoryTest, RangesThatCannotBeMemoryAreRefusedBeforeTheBackend) {
    testBuffer buf(64);
    const uintptr_t top = uintptr_t{1} << 57;
    struct badCase {
        nixlBasicDesc desc;
        const char *why;
    };
    const badCase cases[] = {
        {nixlBasicDesc(0, 64, 0), "address 0"},
        {nixlBasicDesc(buf.addr(), 0, 0), "length 0"},
        {nixlBasicDesc(buf.addr(), SIZE_MAX, 0), "wraps"},
        {nixlBasicDesc(UINTPTR_MAX - 8, 64, 0), "wraps"},
        {nixlBasicDesc(top - 16, 32, 0), "2^57"},
    };
    for (const badCase &c : cases) {
        SCOPED_TRACE(c.why);
        // Descriptor 0 is good: it must not reach the backend either.
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->registerMem(regList({buf.desc(0, 32), c.desc})));
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "registerMem", "descriptor 1", c.why}));
        EXPECT_FALSE(backendHas(buf.desc(0, 32)));
    }
    // The same range without the bad descriptor registers.
    EXPECT_EQ(NIXL_SUCCESS, a_->registerMem(regList({buf.desc(0, 32)})));
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({buf.desc(0, 32)})));
}

// Address 0 is an offset or a device address for the other kinds, and length 0 means "to the
// end" for BLK, OBJ and FILE: the agent lets them through to the backends (TEST supports none,
// hence NOT_FOUND rather than INVALID_PARAM).
TEST_F(agentMemoryTest, AddressZeroAndLengthZeroPassForNonDramKinds) {
    for (nixl_mem_t mem : {BLK_SEG, OBJ_SEG, FILE_SEG}) {
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->registerMem(regList({nixlBasicDesc(0, 0, 3)}, mem)));
        EXPECT_EQ(NIXL_ERR_NOT_FOUND,
                  a_->registerMem(regList({nixlBasicDesc(0, SIZE_MAX, 3)}, mem)));
    }
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->registerMem(regList({nixlBasicDesc(0, 4096, 0)}, VRAM_SEG)));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM,
              a_->registerMem(regList({nixlBasicDesc(0x1000, 0, 0)}, VRAM_SEG)));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM,
              a_->registerMem(regList({nixlBasicDesc(4096, SIZE_MAX, 3)}, FILE_SEG)));
}

TEST_F(agentMemoryTest, RegisterWithoutBackendIsNotFound) {
    auto lone = makeAgent("L");
    testBuffer buf(64);
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, lone->registerMem(regList({buf.desc()})));
}

TEST_F(agentMemoryTest, DuplicateRegistrationIsRefusedAndKeepsTheFirst) {
    testBuffer buf(64);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({buf.desc()})));
    EXPECT_NE(NIXL_SUCCESS, a_->registerMem(regList({buf.desc()})));
    // The same descriptor twice in one list is refused as a whole too.
    testBuffer other(64);
    EXPECT_NE(NIXL_SUCCESS, a_->registerMem(regList({other.desc(), other.desc()})));
    EXPECT_FALSE(backendHas(other.desc()));
    // Exactly one registration of buf exists: one deregistration removes it, a second finds
    // nothing.
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({buf.desc()})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(regList({buf.desc()})));
    EXPECT_FALSE(backendHas(buf.desc()));
}

TEST_F(agentMemoryTest, DeregisterUnregisteredIsNotFound) {
    testBuffer buf(64);
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(regList({buf.desc()})));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "descriptor 0"}));
}

TEST_F(agentMemoryTest, DeregisterPartialMatchIsNotFoundAndDeregistersNothing) {
    testBuffer buf(1024);
    testBuffer other(256);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({buf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({other.desc()})));

    // A sub-range, a longer range, another device: none matches exactly.
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(regList({buf.desc(0, 512)})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(regList({buf.desc(1, 1023)})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(regList({buf.desc(0, 1024, 7)})));
    // A good descriptor first, then a bad one: the good one must stay registered.
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND,
              a_->deregisterMem(regList({other.desc(), buf.desc(0, 1000)})));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "descriptor 1"}));
    EXPECT_TRUE(backendHas(buf.desc()));
    EXPECT_TRUE(backendHas(other.desc()));
    // Still usable for transfers.
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(NIXL_WRITE,
                                xferList({other.desc()}),
                                xferList({buf.desc(0, 256)}),
                                "A",
                                req));
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(sameBytes(other, 0, buf, 0, 256));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({other.desc(), buf.desc()})));
}

TEST_F(agentMemoryTest, DeregisterWrongMemTypeIsNotFound) {
    testBuffer buf(64);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({buf.desc()})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(regList({buf.desc()}, VRAM_SEG)));
    EXPECT_TRUE(backendHas(buf.desc()));
}

TEST_F(agentMemoryTest, FailedRegistrationRollsBackAndRetrySucceeds) {
    auto agent = makeAgent("R");
    nixlBackendH *h = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, addTest(*agent, {{"fail_register_at", "3"}}, &h));
    testBuffer buf(4096, 5);
    testBuffer peer_buf(4096, 6);
    nixl_reg_dlist_t list = regList({buf.desc(0, 1024), buf.desc(1024, 1024),
                                     buf.desc(2048, 1024), buf.desc(3072, 1024)});
    auto has = [&](const nixlBasicDesc &d) {
        std::vector<nixl_query_resp_t> resp;
        nixl_opt_args_t hint;
        hint.backends = {h};
        EXPECT_EQ(NIXL_SUCCESS, agent->queryMem(regList({d}), resp, &hint));
        return resp.size() == 1 && resp[0].has_value();
    };

    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_BACKEND, agent->registerMem(list));
    std::string log = cap.stop();
    EXPECT_FALSE(errorLines(log).empty());
    // Descriptors 0 and 1 were registered before descriptor 2 failed: rolled back.
    for (int i = 0; i < 4; ++i) {
        EXPECT_FALSE(has(list[i])) << "descriptor " << i;
    }
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, agent->deregisterMem(regList({buf.desc(0, 1024)})));
    nixl_blob_t md;
    ASSERT_EQ(NIXL_SUCCESS, agent->getLocalMD(md));
    nixl_blob_t conn_only;
    ASSERT_EQ(NIXL_SUCCESS, agent->getLocalPartialMD(nixl_reg_dlist_t(DRAM_SEG), conn_only));
    EXPECT_EQ(conn_only, md); // the full metadata lists no registration at all

    // The same registration again: no duplicate refusal, every descriptor registered once.
    ASSERT_EQ(NIXL_SUCCESS, agent->registerMem(list));
    for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(has(list[i])) << "descriptor " << i;
    }
    // And it works end to end for a peer.
    auto peer = makeAgent("P");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*peer));
    ASSERT_EQ(NIXL_SUCCESS, peer->registerMem(regList({peer_buf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*agent, *peer));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              peer->createXferReq(NIXL_WRITE,
                                  chunkList(peer_buf, 4, 1024),
                                  chunkList(buf, 4, 1024),
                                  "R",
                                  req));
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*peer, req));
    EXPECT_TRUE(holdsPattern(buf, 6));
    EXPECT_EQ(NIXL_SUCCESS, peer->releaseXferReq(req));
    ASSERT_EQ(NIXL_SUCCESS, agent->deregisterMem(list));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, agent->deregisterMem(regList({buf.desc(0, 1024)})));
}

TEST_F(agentMemoryTest, DeregisteredLocalMemoryFailsNextPost) {
    testBuffer src(256, 1);
    testBuffer dst(256, 2);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({dst.desc()})));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(
                  NIXL_WRITE, xferList({src.desc()}), xferList({dst.desc()}), "A", req));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(dst, 1));

    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({src.desc()})));
    dst.fill(9);
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->postXferReq(req));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
    EXPECT_TRUE(holdsPattern(dst, 9));
    // Registering the same range again gives new backend metadata: the old request stays
    // refused rather than using stale metadata.
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({src.desc()})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->postXferReq(req));
    EXPECT_TRUE(holdsPattern(dst, 9));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentMemoryTest, DeregisteredLoopbackTargetFailsNextPost) {
    testBuffer src(256, 1);
    testBuffer dst(256, 2);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({dst.desc()})));
    nixlDlistH *local = nullptr;
    nixlDlistH *remote = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(NIXL_INIT_AGENT, xferList({src.desc()}), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("A", xferList({dst.desc()}), remote));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_WRITE, local, {0}, remote, {0}, req));
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({dst.desc()})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->postXferReq(req));
    EXPECT_TRUE(holdsPattern(dst, 2));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
}

TEST_F(agentMemoryTest, ListsOverDeregisteredMemoryAreRefused) {
    testBuffer src(256, 1);
    testBuffer dst(256, 2);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({dst.desc()})));
    nixlDlistH *local = nullptr;
    nixlDlistH *self = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({src.desc()}), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("A", xferList({dst.desc()}), self));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_WRITE, local, {0}, self, {0}, req));
    ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));

    // Source deregistered and registered again: the list still names the old registration.
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({src.desc()})));
    req = nullptr;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->makeXferReq(NIXL_WRITE, local, {0}, self, {0}, req));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
    EXPECT_EQ(nullptr, req);
    // The loopback target list likewise.
    nixlDlistH *fresh = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({src.desc()}), fresh));
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_WRITE, fresh, {0}, self, {0}, req));
    ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({dst.desc()})));
    req = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->makeXferReq(NIXL_WRITE, fresh, {0}, self, {0}, req));
    EXPECT_TRUE(holdsPattern(dst, 2));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(self));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(fresh));
}

/**
 * A and B whose TEST backends complete a posted request only after `polls` status checks, so
 * a request stays in flight, by construction, until the test polls it through.
 */
class agentDeregisterInFlightTest : public agentTest {
protected:
    void
    SetUp() override {
        a_ = makeAgent("A");
        b_ = makeAgent("B");
        const nixl_b_params_t slow = {{"async", "true"}, {"async_polls", "100"}};
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a_, slow));
        ASSERT_EQ(NIXL_SUCCESS, addTest(*b_));
        ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({local_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, b_->registerMem(regList({remote_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
    }

    testBuffer local_{4096, 1};
    testBuffer remote_{4096, 2};
    std::unique_ptr<nixlAgent> a_;
    std::unique_ptr<nixlAgent> b_;
};

// deregisterMem of a buffer a posted READ lands in returned SUCCESS and the data landed later.
TEST_F(agentDeregisterInFlightTest, DeregisterWhileReadInFlightIsRefusedUntilComplete) {
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->createXferReq(NIXL_READ, xferList({local_.desc()}),
                                              xferList({remote_.desc()}), "B", req));
    ASSERT_EQ(NIXL_IN_PROG, a_->postXferReq(req));
    for (int i = 0; i < 2; ++i) {
        stderrCapture cap;
        EXPECT_EQ(NIXL_ERR_REPOST_ACTIVE, a_->deregisterMem(regList({local_.desc()})));
        std::ostringstream handle;
        handle << static_cast<const void *>(req);
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "deregisterMem", "descriptor 0",
                                              handle.str(), "READ", "B"}));
        EXPECT_TRUE(holdsPattern(local_, 1));
    }
    // Still registered: the request completes into it, and then it can go.
    ASSERT_EQ(NIXL_SUCCESS, waitXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(local_, 2));
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({local_.desc()})));
    EXPECT_EQ(NIXL_SUCCESS, a_->getXferStatus(req));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentDeregisterInFlightTest, ReleasedRequestNoLongerHoldsTheMemory) {
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->createXferReq(NIXL_READ, xferList({local_.desc()}),
                                              xferList({remote_.desc()}), "B", req));
    ASSERT_EQ(NIXL_IN_PROG, a_->postXferReq(req));
    EXPECT_EQ(NIXL_ERR_REPOST_ACTIVE, a_->deregisterMem(regList({local_.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req)); // aborts it
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({local_.desc()})));
    EXPECT_TRUE(holdsPattern(local_, 1));
}

// A request that finished without being polled does not hold the memory: deregisterMem polls
// it once, and getXferStatus then reports the outcome.
TEST(agentDeregisterInFlight, FinishedUnpolledRequestDoesNotHoldTheMemory) {
    scopedEnv telemetry("NIXL_TELEMETRY_ENABLE", nullptr);
    nixlAgent a("A", nixlAgentConfig());
    nixlBackendH *h = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a.createBackend("TEST", {{"async", "true"}, {"async_polls", "0"}}, h));
    testBuffer src(256, 1);
    testBuffer dst(256, 2);
    ASSERT_EQ(NIXL_SUCCESS, a.registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a.registerMem(regList({dst.desc()})));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a.createXferReq(NIXL_WRITE, xferList({src.desc()}), xferList({dst.desc()}), "A", req));
    ASSERT_EQ(NIXL_IN_PROG, a.postXferReq(req));
    // The loopback target is the request's remote side.
    ASSERT_EQ(NIXL_SUCCESS, a.deregisterMem(regList({dst.desc()})));
    EXPECT_TRUE(holdsPattern(dst, 1));
    EXPECT_EQ(NIXL_SUCCESS, a.getXferStatus(req));
    EXPECT_EQ(NIXL_SUCCESS, a.releaseXferReq(req));
}

TEST_F(agentMemoryTest, UnrelatedDeregistrationKeepsRequestsValid) {
    testBuffer src(256, 1);
    testBuffer dst(256, 2);
    testBuffer unrelated(64);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({src.desc(), dst.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({unrelated.desc()})));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(
                  NIXL_WRITE, xferList({src.desc()}), xferList({dst.desc()}), "A", req));
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({unrelated.desc()})));
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(dst, 1));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

} // namespace
} // namespace nixl_agent_test
