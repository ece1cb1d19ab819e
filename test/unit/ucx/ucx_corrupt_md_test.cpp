/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Corrupted metadata of a UCX agent must be refused, never crash the loading process: every
// byte of a real blob (two registrations) is changed in turn and the result loaded. Before the
// UCX plugin checked its connection info and public data, about one such blob in 170 crashed
// inside UCX (SIGSEGV in uct_rkey_release, or UCX's address-version assertion).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "metadata/md_blob.h"
#include "ucx_test_utils.h"

using namespace nixl_ucx_test;

namespace {

class ucxCorruptMdTest : public ::testing::Test {
protected:
    static constexpr size_t buf_len = 1 << 16;

    void
    SetUp() override {
        src_ = ucxAgent::make("corruptSrc", ucxSetup{});
        dst_ = ucxAgent::make("corruptDst", ucxSetup{});
        ASSERT_TRUE(src_ && dst_);
        mem1_ = std::make_unique<testMem>(buf_len);
        mem2_ = std::make_unique<testMem>(buf_len);
        ASSERT_EQ(src_->registerDram(mem1_->addr(), buf_len), NIXL_SUCCESS);
        ASSERT_EQ(src_->registerDram(mem2_->addr(), buf_len), NIXL_SUCCESS);
        dstMem_ = std::make_unique<testMem>(buf_len);
        ASSERT_EQ(dst_->registerDram(dstMem_->addr(), buf_len), NIXL_SUCCESS);
        blob_ = src_->md();
        ASSERT_FALSE(blob_.empty());
    }

    /** Loads blob into dst; a blob that loads is then forgotten again. */
    nixl_status_t
    loadAndForget(const std::string &blob) {
        std::string name;
        const nixl_status_t st = dst_->agent->loadRemoteMD(blob, name);
        if (st == NIXL_SUCCESS) {
            EXPECT_EQ(dst_->agent->invalidateRemoteMD(name), NIXL_SUCCESS) << name;
        }
        return st;
    }

    /** READ of the first buffer of src into dst's buffer after loading blob; true if it moved. */
    bool
    readWorks(const std::string &blob) {
        std::string name;
        if (dst_->agent->loadRemoteMD(blob, name) != NIXL_SUCCESS) {
            return false;
        }
        fillPattern(mem1_->data(), 4096, 7);
        nixlXferReqH *req = nullptr;
        bool ok = dst_->agent->createXferReq(NIXL_READ,
                                             xferList({{dstMem_->addr(), 4096}}),
                                             xferList({{mem1_->addr(), 4096}}),
                                             name,
                                             req) == NIXL_SUCCESS;
        if (ok) {
            ok = runXfer(*dst_->agent, req, [this] { box_.poll(*src_->agent); }) ==
                    NIXL_SUCCESS &&
                firstMismatch(dstMem_->data(), 4096, 7) == -1;
            dst_->agent->releaseXferReq(req);
        }
        EXPECT_EQ(dst_->agent->invalidateRemoteMD(name), NIXL_SUCCESS);
        return ok;
    }

    std::unique_ptr<ucxAgent> src_;
    std::unique_ptr<ucxAgent> dst_;
    std::unique_ptr<testMem> mem1_;
    std::unique_ptr<testMem> mem2_;
    std::unique_ptr<testMem> dstMem_;
    notifBox box_;
    std::string blob_;
};

TEST_F(ucxCorruptMdTest, EveryByteChangedIsRefusedOrHarmless) {
    // The untouched blob loads and works, so the refusals below are about the damage.
    ASSERT_TRUE(readWorks(blob_));

    std::mt19937 rng(20261130);
    size_t refused = 0;
    size_t loaded = 0;
    for (size_t i = 0; i < blob_.size(); ++i) {
        const uint8_t flips[] = {0x01, 0x80, static_cast<uint8_t>(1 + rng() % 255)};
        for (uint8_t flip : flips) {
            std::string bad = blob_;
            bad[i] = static_cast<char>(static_cast<uint8_t>(bad[i]) ^ flip);
            const nixl_status_t st = loadAndForget(bad);
            ASSERT_NE(st, NIXL_IN_PROG) << "byte " << i;
            (st == NIXL_SUCCESS ? loaded : refused) += 1;
        }
    }
    std::printf("blob of %zu bytes: %zu changed blobs refused, %zu loaded\n",
                blob_.size(),
                refused,
                loaded);
    // What the blob format itself does not check may change and still load: the agent name, a
    // device id, a section's backend name or memory kind (the section is then skipped), an
    // address turned into the other registration's. Everything else is refused.
    EXPECT_GT(refused, loaded);
    // The agent is still healthy afterwards.
    EXPECT_TRUE(readWorks(blob_));
}

// A blob spliced from two agents' (src's header and connection info, another agent's
// sections) must be refused at load (issue 29, item 5): before, it loaded and only the post
// failed ("memory not accessible"). Each registration's public data names the engine that
// made it, and that must be the engine of the connection info it is loaded with.
TEST_F(ucxCorruptMdTest, SplicedBlobOfTwoAgentsIsRefusedAtLoad) {
    auto other = ucxAgent::make("corruptOther", ucxSetup{});
    ASSERT_TRUE(other);
    testMem otherMem(buf_len);
    fillPattern(otherMem.data(), buf_len, 9);
    ASSERT_EQ(other->registerDram(otherMem.addr(), buf_len), NIXL_SUCCESS);
    nixlMdBlob spliced, fromOther;
    std::string error;
    ASSERT_EQ(nixlMdDecode(blob_, spliced, error), NIXL_SUCCESS) << error;
    ASSERT_EQ(nixlMdDecode(other->md(), fromOther, error), NIXL_SUCCESS) << error;
    spliced.sections = fromOther.sections;

    std::string name = "unchanged";
    EXPECT_EQ(dst_->agent->loadRemoteMD(nixlMdEncode(spliced), name), NIXL_ERR_MISMATCH);
    EXPECT_EQ(name, "unchanged");
    // Nothing of it stayed: no request can be aimed at the other agent's memory as src's.
    nixlXferReqH *req = nullptr;
    EXPECT_NE(dst_->agent->createXferReq(NIXL_WRITE,
                                         xferList({{dstMem_->addr(), 4096}}),
                                         xferList({{otherMem.addr(), 4096}}),
                                         src_->name,
                                         req),
              NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(otherMem.data(), buf_len, 9), -1);

    // The honest blob still loads and moves data.
    EXPECT_TRUE(readWorks(blob_));
}

} // namespace
