/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent with many registrations at once, as a KV cache makes them: one registerMem call of
// 200,000 blocks, every block prepared and moved, deregistration in other orders, and refused
// lists that must leave every registration in place. Before registration bookkeeping was
// O(N log N), these cases did not finish within the test timeout; they assert only behaviour.

#include <numeric>
#include <random>

#include "agent_test_utils.h"

namespace nixl_agent_test {
namespace {

constexpr size_t scale_blocks = 200000;
constexpr size_t scale_block = 16;

class agentScaleTest : public agentTest {
protected:
    void
    SetUp() override {
        a_ = makeAgent("A");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a_, {}, &ha_));
    }

    /** Registration list of the blocks of buf named by idx, in that order. */
    static nixl_reg_dlist_t
    blocks(const testBuffer &buf, const std::vector<size_t> &idx) {
        nixl_reg_dlist_t list(DRAM_SEG);
        for (size_t i : idx) {
            list.addDesc(buf.blob(i * scale_block, scale_block));
        }
        return list;
    }

    static nixl_xfer_dlist_t
    xferBlocks(const testBuffer &buf, const std::vector<size_t> &idx, size_t off = 0,
               size_t len = scale_block) {
        nixl_xfer_dlist_t list(DRAM_SEG);
        for (size_t i : idx) {
            list.addDesc(buf.desc(i * scale_block + off, len));
        }
        return list;
    }

    static std::vector<size_t>
    indices(size_t n) {
        std::vector<size_t> idx(n);
        std::iota(idx.begin(), idx.end(), 0);
        return idx;
    }

    static std::vector<size_t>
    shuffled(size_t n, uint32_t seed) {
        std::vector<size_t> idx = indices(n);
        std::mt19937 rng(seed);
        std::shuffle(idx.begin(), idx.end(), rng);
        return idx;
    }

    /** Indices of idx whose block TEST reports as registered (queryMem). */
    std::vector<bool>
    backendHas(const testBuffer &buf, const std::vector<size_t> &idx) {
        std::vector<nixl_query_resp_t> resp;
        nixl_opt_args_t hint;
        hint.backends = {ha_};
        EXPECT_EQ(NIXL_SUCCESS, a_->queryMem(blocks(buf, idx), resp, &hint));
        std::vector<bool> out;
        for (const auto &r : resp) {
            out.push_back(r.has_value());
        }
        return out;
    }

    /** prepXferDlist of the local side: the status, the list released. */
    nixl_status_t
    prepLocal(const nixl_xfer_dlist_t &list) {
        nixlDlistH *h = nullptr;
        nixl_status_t st = a_->prepXferDlist(NIXL_INIT_AGENT, list, h);
        if (st == NIXL_SUCCESS) {
            EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(h));
        }
        return st;
    }

    std::unique_ptr<nixlAgent> a_;
    nixlBackendH *ha_ = nullptr;
};

size_t
countTrue(const std::vector<bool> &v) {
    return static_cast<size_t>(std::count(v.begin(), v.end(), true));
}

TEST_F(agentScaleTest, ManyBlocksRegisterPrepAndDeregisterInOtherOrders) {
    testBuffer buf(scale_blocks * scale_block);
    const std::vector<size_t> all = indices(scale_blocks);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(blocks(buf, shuffled(scale_blocks, 1))));
    EXPECT_EQ(scale_blocks, countTrue(backendHas(buf, all)));

    // Every block, and a strict interior of every block, is covered by its registration; a
    // range across two neighbouring blocks is not (no single registration covers it).
    EXPECT_EQ(NIXL_SUCCESS, prepLocal(xferBlocks(buf, all)));
    EXPECT_EQ(NIXL_SUCCESS, prepLocal(xferBlocks(buf, all, 4, 8)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, prepLocal(xferBlocks(buf, {scale_blocks / 2}, 8, 16)));

    // Odd blocks in reverse order.
    std::vector<size_t> odd;
    for (size_t i = scale_blocks; i-- > 0;) {
        if (i % 2 == 1) {
            odd.push_back(i);
        }
    }
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(blocks(buf, odd)));
    std::vector<bool> has = backendHas(buf, all);
    for (size_t i = 0; i < scale_blocks; ++i) {
        ASSERT_EQ(i % 2 == 0, has[i]) << "block " << i;
    }
    std::vector<size_t> even;
    for (size_t i = 0; i < scale_blocks; i += 2) {
        even.push_back(i);
    }
    EXPECT_EQ(NIXL_SUCCESS, prepLocal(xferBlocks(buf, even)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, prepLocal(xferBlocks(buf, {odd.front()})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, prepLocal(xferBlocks(buf, {odd.back()})));

    // Even blocks in a shuffled order; then nothing is left.
    std::mt19937 rng(2);
    std::shuffle(even.begin(), even.end(), rng);
    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(blocks(buf, even)));
    EXPECT_EQ(0u, countTrue(backendHas(buf, all)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, prepLocal(xferBlocks(buf, {0})));
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(blocks(buf, {0})));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "descriptor 0"}));
}

TEST_F(agentScaleTest, PartlyUnknownDeregistrationChangesNothing) {
    testBuffer buf(scale_blocks * scale_block);
    const std::vector<size_t> all = indices(scale_blocks);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(blocks(buf, all)));

    // All blocks in reverse, then one that matches no registration exactly (a block's first
    // half): refused with one line naming the last descriptor, and nothing is deregistered.
    std::vector<size_t> rev(all.rbegin(), all.rend());
    nixl_reg_dlist_t list = blocks(buf, rev);
    list.addDesc(buf.blob(0, scale_block / 2));
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(list));
    EXPECT_TRUE(oneErrorLine(cap.stop(),
                             {"agent A", "descriptor " + std::to_string(scale_blocks),
                              "does not match a registration exactly"}));
    EXPECT_EQ(scale_blocks, countTrue(backendHas(buf, all)));
    EXPECT_EQ(NIXL_SUCCESS, prepLocal(xferBlocks(buf, all)));

    // The same descriptor listed twice deregisters it once; the list succeeds.
    nixl_reg_dlist_t twice = blocks(buf, {7, 7});
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(twice));
    EXPECT_EQ(scale_blocks - 1, countTrue(backendHas(buf, all)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->deregisterMem(blocks(buf, {7})));
    std::vector<size_t> rest;
    for (size_t i : shuffled(scale_blocks, 3)) {
        if (i != 7) {
            rest.push_back(i);
        }
    }
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(blocks(buf, rest)));
    EXPECT_EQ(0u, countTrue(backendHas(buf, all)));
}

TEST_F(agentScaleTest, DuplicateInALargeListRegistersNothing) {
    testBuffer buf(scale_blocks * scale_block);
    const std::vector<size_t> all = indices(scale_blocks);
    std::vector<size_t> dup = shuffled(scale_blocks, 4);
    dup.push_back(dup[scale_blocks / 3]);
    stderrCapture cap;
    EXPECT_NE(NIXL_SUCCESS, a_->registerMem(blocks(buf, dup)));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "descriptor " + std::to_string(scale_blocks),
                                          "already registered"}));
    EXPECT_EQ(0u, countTrue(backendHas(buf, all)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, prepLocal(xferBlocks(buf, {0})));

    // A fresh registration of all of them works, and one already registered is refused again
    // without disturbing the others.
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(blocks(buf, all)));
    testBuffer extra(scale_block);
    nixl_reg_dlist_t again = blocks(buf, {scale_blocks - 1});
    again.addDesc(extra.blob());
    EXPECT_NE(NIXL_SUCCESS, a_->registerMem(again));
    EXPECT_EQ(scale_blocks, countTrue(backendHas(buf, all)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, prepLocal(xferList({extra.desc()})));
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(blocks(buf, shuffled(scale_blocks, 5))));
}

TEST_F(agentScaleTest, NestedRegistrationsCoverAsBefore) {
    // One registration of the whole buffer over many block registrations: a range across two
    // blocks is covered only by the large one, both for the agent and for TEST's queryMem.
    testBuffer buf(scale_blocks * scale_block);
    const std::vector<size_t> all = indices(scale_blocks);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(blocks(buf, shuffled(scale_blocks, 8))));
    const nixlBasicDesc whole = buf.desc();
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({whole})));
    const std::vector<size_t> probes = {0, 1, scale_blocks / 2, scale_blocks - 2};
    for (size_t i : probes) {
        EXPECT_EQ(NIXL_SUCCESS, prepLocal(xferBlocks(buf, {i}, 8, scale_block)))
            << "block " << i;
        EXPECT_EQ(1u, countTrue(backendHas(buf, {i}))) << "block " << i;
    }
    std::vector<nixl_query_resp_t> resp;
    nixl_opt_args_t hint;
    hint.backends = {ha_};
    ASSERT_EQ(NIXL_SUCCESS, a_->queryMem(regList({buf.desc(8, scale_block)}), resp, &hint));
    EXPECT_TRUE(resp.at(0).has_value());

    ASSERT_EQ(NIXL_SUCCESS, a_->deregisterMem(regList({whole})));
    for (size_t i : probes) {
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, prepLocal(xferBlocks(buf, {i}, 8, scale_block)))
            << "block " << i;
    }
    ASSERT_EQ(NIXL_SUCCESS, a_->queryMem(regList({buf.desc(8, scale_block)}), resp, &hint));
    EXPECT_FALSE(resp.at(0).has_value());
    EXPECT_EQ(scale_blocks, countTrue(backendHas(buf, all)));
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(blocks(buf, all)));
}

TEST_F(agentScaleTest, ManyRemoteBlocksAreLoadedPreparedAndWritten) {
    auto b = makeAgent("B");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b));
    testBuffer src(scale_blocks * scale_block, 11);
    testBuffer dst(scale_blocks * scale_block, 12);
    const std::vector<size_t> all = indices(scale_blocks);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(blocks(src, shuffled(scale_blocks, 6))));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(blocks(dst, shuffled(scale_blocks, 7))));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a_));

    // Block i of A goes to block (n - 1 - i) of B: every remote block is resolved separately.
    std::vector<size_t> rev(all.rbegin(), all.rend());
    nixl_opt_args_t no_merge;
    no_merge.skipDescMerge = true;
    nixlDlistH *local = nullptr;
    nixlDlistH *remote = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(NIXL_INIT_AGENT, xferBlocks(src, all), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", xferBlocks(dst, rev), remote));
    std::vector<int> idx(scale_blocks);
    std::iota(idx.begin(), idx.end(), 0);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_WRITE, local, idx, remote, idx, req, &no_merge));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    for (size_t i = 0; i < scale_blocks; i += 997) {
        ASSERT_TRUE(sameBytes(src, i * scale_block, dst, (scale_blocks - 1 - i) * scale_block,
                              scale_block))
            << "block " << i;
    }
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
    EXPECT_EQ(NIXL_SUCCESS, a_->checkRemoteMD("B", xferBlocks(dst, rev)));

    EXPECT_EQ(NIXL_SUCCESS, b->deregisterMem(blocks(dst, rev)));
    EXPECT_EQ(NIXL_SUCCESS, a_->deregisterMem(blocks(src, rev)));
}

} // namespace
} // namespace nixl_agent_test
