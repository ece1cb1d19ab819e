/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: local and partial metadata, loading and merging remote metadata, invalidation,
// connections, and corrupted blobs.

#include <random>
#include <sstream>

#include "agent_test_utils.h"
#include "common/nixl_log.h"
#include "metadata/md_blob_nixl.h"

namespace nixl_agent_test {
namespace {

class agentMetadataTest : public agentTest {
protected:
    void
    SetUp() override {
        a_ = makeAgent("A");
        b_ = makeAgent("B");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a_));
        ASSERT_EQ(NIXL_SUCCESS, addTest(*b_));
        ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({aBuf_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS,
                  b_->registerMem(regList({b0_.desc(), b1_.desc(), b2_.desc()})));
    }

    /** A writes aBuf_[0, len) into dst of B; returns the final status. */
    nixl_status_t
    writeToB(const testBuffer &dst, size_t len) {
        nixlXferReqH *req = nullptr;
        nixl_status_t st = a_->createXferReq(
            NIXL_WRITE, xferList({aBuf_.desc(0, len)}), xferList({dst.desc(0, len)}), "B", req);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        st = runXfer(*a_, req);
        EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
        return st;
    }

    testBuffer aBuf_{512, 1};
    testBuffer b0_{512, 10};
    testBuffer b1_{512, 11};
    testBuffer b2_{512, 12};
    std::unique_ptr<nixlAgent> a_;
    std::unique_ptr<nixlAgent> b_;
};

TEST_F(agentMetadataTest, FullMetadataRoundTrip) {
    nixl_blob_t blob;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(blob));
    EXPECT_FALSE(blob.empty());
    std::string name;
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(blob, name));
    EXPECT_EQ("B", name);
    EXPECT_EQ(NIXL_SUCCESS, a_->checkRemoteMD("B", xferList({b0_.desc(), b2_.desc(8, 8)})));
    ASSERT_EQ(NIXL_SUCCESS, writeToB(b1_, 512));
    EXPECT_TRUE(holdsPattern(b1_, 1));
    EXPECT_TRUE(holdsPattern(b0_, 10));
    EXPECT_TRUE(holdsPattern(b2_, 12));
    // Loading the same blob again is a no-op merge.
    EXPECT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(blob, name));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b2_, 512));
    EXPECT_TRUE(holdsPattern(b2_, 1));
}

TEST_F(agentMetadataTest, GetLocalMDWithoutBackendIsInvalidParam) {
    auto lone = makeAgent("L");
    nixl_blob_t blob;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, lone->getLocalMD(blob));
    EXPECT_EQ(NIXL_ERR_BACKEND, lone->getLocalPartialMD(nixl_reg_dlist_t(DRAM_SEG), blob));
}

TEST_F(agentMetadataTest, LoadOwnBlobIsInvalidParam) {
    nixl_blob_t blob;
    ASSERT_EQ(NIXL_SUCCESS, a_->getLocalMD(blob));
    std::string name;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->loadRemoteMD(blob, name));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
}

TEST_F(agentMetadataTest, PartialMetadataMerging) {
    // Connection info only.
    nixl_blob_t conn;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalPartialMD(nixl_reg_dlist_t(DRAM_SEG), conn));
    std::string name;
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(conn, name));
    EXPECT_EQ("B", name);
    EXPECT_EQ(NIXL_SUCCESS, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", xferList({b0_.desc()})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, writeToB(b0_, 512));
    EXPECT_EQ(NIXL_SUCCESS, a_->makeConnection("B"));

    // Sections for b0 and b2 only, no connection info.
    nixl_blob_t part;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalPartialMD(regList({b0_.desc(), b2_.desc()}), part));
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(part, name));
    EXPECT_EQ(NIXL_SUCCESS, a_->checkRemoteMD("B", xferList({b0_.desc(), b2_.desc()})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", xferList({b1_.desc()})));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b0_, 512));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b2_, 256));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, writeToB(b1_, 512));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    EXPECT_TRUE(holdsPattern(b2_, 1, 0, 256));
    EXPECT_TRUE(sameBytes(b2_, 256, testBuffer(512, 12), 256, 256));
    EXPECT_TRUE(holdsPattern(b1_, 11));

    // The full blob adds b1.
    nixl_blob_t full;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(full));
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(full, name));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b1_, 512));
    EXPECT_TRUE(holdsPattern(b1_, 1));
}

TEST_F(agentMetadataTest, PartialWithoutConnInfoNeedsKnownAgent) {
    nixl_blob_t part;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalPartialMD(regList({b0_.desc()}), part));
    std::string name;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_BACKEND, a_->loadRemoteMD(part, name));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "B"}));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));

    nixl_opt_args_t with_conn;
    with_conn.includeConnInfo = true;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalPartialMD(regList({b0_.desc()}), part, &with_conn));
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(part, name));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b0_, 512));
    EXPECT_TRUE(holdsPattern(b0_, 1));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, writeToB(b1_, 512));
}

TEST_F(agentMetadataTest, PartialOfUnregisteredDescIsNotFound) {
    testBuffer stray(64);
    nixl_blob_t part;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, b_->getLocalPartialMD(regList({b0_.desc(), stray.desc()}), part));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent B", "descriptor 1"}));
    // A sub-range of a registration is not a registered descriptor either.
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, b_->getLocalPartialMD(regList({b0_.desc(0, 64)}), part));
}

TEST_F(agentMetadataTest, ConnInfoChangeIsNotAllowedUntilInvalidated) {
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
    // A new agent with the same name has other connection info.
    testBuffer fresh(512, 30);
    b_.reset();
    b_ = makeAgent("B");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b_));
    ASSERT_EQ(NIXL_SUCCESS, b_->registerMem(regList({fresh.desc()})));
    nixl_blob_t blob;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(blob));
    std::string name;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_ALLOWED, a_->loadRemoteMD(blob, name));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "B"}));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", xferList({fresh.desc()})));

    ASSERT_EQ(NIXL_SUCCESS, a_->invalidateRemoteMD("B"));
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(blob, name));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(fresh, 512));
    EXPECT_TRUE(holdsPattern(fresh, 1));
}

TEST_F(agentMetadataTest, InvalidateRemoteMD) {
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
    stderrCapture self_cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a_->invalidateRemoteMD("A"));
    EXPECT_TRUE(oneErrorLine(self_cap.stop(), {"agent A"}));
    stderrCapture unknown_cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->invalidateRemoteMD("nobody"));
    EXPECT_TRUE(oneErrorLine(unknown_cap.stop(), {"agent A", "nobody"}));

    ASSERT_EQ(NIXL_SUCCESS, a_->invalidateRemoteMD("B"));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->invalidateRemoteMD("B"));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, writeToB(b0_, 512));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->makeConnection("B"));
    EXPECT_TRUE(holdsPattern(b0_, 10));
    // Loading again restores everything.
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b0_, 512));
    EXPECT_TRUE(holdsPattern(b0_, 1));
}

TEST_F(agentMetadataTest, CheckRemoteMD) {
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
    EXPECT_EQ(NIXL_SUCCESS, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    EXPECT_EQ(NIXL_SUCCESS, a_->checkRemoteMD("B", xferList({b1_.desc(100, 10)})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", xferList({b1_.desc(100, 10, 3)})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", xferList({aBuf_.desc()})));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND,
              a_->checkRemoteMD("B", xferList({b1_.desc()}, VRAM_SEG)));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("C", nixl_xfer_dlist_t(DRAM_SEG)));
    // Silent: a negative answer is not an error.
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("C", xferList({b1_.desc()})));
    EXPECT_TRUE(errorLines(cap.stop()).empty());
}

TEST_F(agentMetadataTest, MakeConnection) {
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->makeConnection("B"));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "B"}));
    EXPECT_EQ(NIXL_SUCCESS, a_->makeConnection("A")); // itself
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
    EXPECT_EQ(NIXL_SUCCESS, a_->makeConnection("B"));
    EXPECT_EQ(NIXL_SUCCESS, a_->makeConnection("B")); // idempotent
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b0_, 512));
    EXPECT_TRUE(holdsPattern(b0_, 1));
}

TEST_F(agentMetadataTest, MetadataOfDestroyedAgentDisconnects) {
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(
                  NIXL_WRITE, xferList({aBuf_.desc()}), xferList({b0_.desc()}), "B", req));
    b_.reset();
    EXPECT_EQ(NIXL_ERR_REMOTE_DISCONNECT, a_->postXferReq(req));
    EXPECT_EQ(NIXL_ERR_REMOTE_DISCONNECT, a_->getXferStatus(req));
    EXPECT_TRUE(holdsPattern(b0_, 10));
    nixlDlistH *dl = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->prepXferDlist("B", xferList({b0_.desc()}), dl));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentMetadataTest, FailedLoadRollsBack) {
    // A well-formed blob whose second descriptor carries public data the backend refuses.
    nixl_blob_t good;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(good));
    nixlMdBlob decoded;
    std::string error;
    ASSERT_EQ(NIXL_SUCCESS, nixlMdDecode(good, decoded, error)) << error;
    ASSERT_EQ(1u, decoded.sections.size());
    ASSERT_EQ(3u, decoded.sections[0].descs.size());
    decoded.sections[0].descs[1].publicData = "not a TEST record";
    const nixl_blob_t bad = nixlMdEncode(decoded);

    // Unknown agent: nothing of it is kept.
    std::string name;
    EXPECT_NE(NIXL_SUCCESS, a_->loadRemoteMD(bad, name));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));

    // Known agent (connection info loaded): the descriptors this call loaded are unloaded
    // again, the earlier state stays.
    nixl_blob_t conn;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalPartialMD(nixl_reg_dlist_t(DRAM_SEG), conn));
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(conn, name));
    EXPECT_NE(NIXL_SUCCESS, a_->loadRemoteMD(bad, name));
    EXPECT_EQ(NIXL_SUCCESS, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    for (const testBuffer *buf : {&b0_, &b1_, &b2_}) {
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", xferList({buf->desc()})));
    }
    // The good blob still loads completely afterwards.
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(good, name));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b1_, 512));
    EXPECT_TRUE(holdsPattern(b1_, 1));
}

// A blob spliced from two agents' (B's header and connection info, C's sections) must not
// load: its descriptors would be reached through B's connection while describing C's memory
// (issue 29, item 5). The TEST backend's public data names its engine (a token checked against
// the connection info), so the load is refused with one line naming the agent and descriptor.
TEST_F(agentMetadataTest, SplicedBlobOfTwoAgentsIsRefused) {
    auto c = makeAgent("C");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*c));
    testBuffer c0{512, 20};
    ASSERT_EQ(NIXL_SUCCESS, c->registerMem(regList({c0.desc()})));
    nixl_blob_t blobB, blobC;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(blobB));
    ASSERT_EQ(NIXL_SUCCESS, c->getLocalMD(blobC));
    nixlMdBlob spliced, fromC;
    std::string error;
    ASSERT_EQ(NIXL_SUCCESS, nixlMdDecode(blobB, spliced, error)) << error;
    ASSERT_EQ(NIXL_SUCCESS, nixlMdDecode(blobC, fromC, error)) << error;
    spliced.sections = fromC.sections;

    std::string name = "unchanged";
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_MISMATCH, a_->loadRemoteMD(nixlMdEncode(spliced), name));
    const std::string log = cap.stop();
    std::ostringstream addr;
    addr << std::hex << c0.desc().addr;
    EXPECT_TRUE(oneErrorLine(log, {"'A'", "'B'", addr.str()})) << log;
    EXPECT_EQ("unchanged", name);
    // Nothing was loaded: no transfer can be aimed at C's memory under B's name.
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    nixlXferReqH *req = nullptr;
    EXPECT_NE(NIXL_SUCCESS,
              a_->createXferReq(
                  NIXL_WRITE, xferList({aBuf_.desc()}), xferList({c0.desc()}), "B", req));
    EXPECT_TRUE(holdsPattern(c0, 20));

    // The honest blobs still load and transfer.
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(blobB, name));
    EXPECT_EQ(NIXL_SUCCESS, writeToB(b1_, 512));
    EXPECT_TRUE(holdsPattern(b1_, 1));
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(blobC, name));
    EXPECT_EQ("C", name);
}

// ---- NIXL 1.4's layout (docs/metadata.md, Interoperability) ----

TEST_F(agentMetadataTest, LocalMetadataIsNixlLayoutWithOursInside) {
    nixl_blob_t full;
    nixl_blob_t partial;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(full));
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalPartialMD(regList({b1_.desc()}), partial));
    for (const nixl_blob_t *blob : {&full, &partial}) {
        nixlMdBlob nixl_part;
        std::string_view own;
        std::string error;
        ASSERT_EQ(NIXL_SUCCESS, nixlMdDecodeNixl(*blob, nixl_part, own, error)) << error;
        EXPECT_EQ("B", nixl_part.agentName);
        // TEST has no NIXL form: a NIXL peer sees B with nothing it could load.
        EXPECT_TRUE(nixl_part.conns.empty());
        EXPECT_TRUE(nixl_part.sections.empty());
        EXPECT_FALSE(own.empty());
        nixl_md_form_t form = nixl_md_form_t::NIXL;
        nixlMdBlob decoded;
        ASSERT_EQ(NIXL_SUCCESS, nixlMdDecode(*blob, decoded, error, &form)) << error;
        EXPECT_EQ(nixl_md_form_t::COMBINED, form);
    }
}

TEST_F(agentMetadataTest, NixlLayoutBlobLoadsThroughTheSameFlow) {
    // B's own conn info and public data in NIXL's layout, as a NIXL agent whose backend wrote
    // these forms would send them: core hands them to the backend unchanged.
    nixl_blob_t blob;
    ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(blob));
    nixlMdBlob decoded;
    std::string error;
    ASSERT_EQ(NIXL_SUCCESS, nixlMdDecode(blob, decoded, error)) << error;
    const std::string nixl_blob = nixlMdEncodeNixl(decoded, nullptr);
    nixl_md_form_t form = nixl_md_form_t::LIBNIXL;
    nixlMdBlob again;
    ASSERT_EQ(NIXL_SUCCESS, nixlMdDecode(nixl_blob, again, error, &form)) << error;
    EXPECT_EQ(nixl_md_form_t::NIXL, form);

    std::string name;
    ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(nixl_blob, name));
    EXPECT_EQ("B", name);
    ASSERT_EQ(NIXL_SUCCESS, writeToB(b1_, 512));
    EXPECT_TRUE(holdsPattern(b1_, 1));
    // Same rules as our own form: a reload is a no-op merge, invalidation forgets it.
    EXPECT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(nixl_blob, name));
    EXPECT_EQ(NIXL_SUCCESS, a_->invalidateRemoteMD("B"));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
}

TEST_F(agentMetadataTest, NixlLayoutWithForeignBytesIsRefusedByTheBackend) {
    // Spec 2.9's shape with a TEST conn entry whose bytes TEST did not write.
    nixlMdBlob b;
    b.agentName = "B";
    b.conns = {{"TEST", "\xaa\xbb\xcc\xdd"}};
    b.sections = {{"TEST", DRAM_SEG, {{b0_.desc().addr, 512, 0, "\x01\x02\x03"}}}};
    std::string name = "unchanged";
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_MISMATCH, a_->loadRemoteMD(nixlMdEncodeNixl(b, nullptr), name));
    EXPECT_EQ(1u, errorLines(cap.stop()).size());
    EXPECT_EQ("unchanged", name);
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
}

TEST_F(agentMetadataTest, MetadataFormatNixlLooksLikeANixlPeer) {
    nixl_blob_t blob;
    {
        scopedEnv env("NIXL_METADATA_FORMAT", "NIXL");
        ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(blob));
    }
    nixl_md_form_t form = nixl_md_form_t::LIBNIXL;
    nixlMdBlob decoded;
    std::string error;
    ASSERT_EQ(NIXL_SUCCESS, nixlMdDecode(blob, decoded, error, &form)) << error;
    EXPECT_EQ(nixl_md_form_t::NIXL, form);
    // TEST has no NIXL form, so nothing is left for A to load: one line and BACKEND, as for
    // any blob without connection info.
    std::string name;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_BACKEND, a_->loadRemoteMD(blob, name));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "B"}));
}

TEST_F(agentMetadataTest, BadMetadataFormatIsOneLine) {
    scopedEnv env("NIXL_METADATA_FORMAT", "json");
    nixl_blob_t blob = "kept";
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, b_->getLocalMD(blob));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent B", "NIXL_METADATA_FORMAT", "json"}));
    EXPECT_EQ("kept", blob);
    stderrCapture cap2;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, b_->getLocalPartialMD(regList({b1_.desc()}), blob));
    EXPECT_TRUE(oneErrorLine(cap2.stop(), {"agent B", "NIXL_METADATA_FORMAT"}));
}

// ---- corrupted blobs ----

class agentBlobCorruptionTest : public agentMetadataTest {
protected:
    void
    SetUp() override {
        nixl::log::setRateLimiting(false); // every refusal's own line is checked
        agentMetadataTest::SetUp();
        ASSERT_EQ(NIXL_SUCCESS, b_->getLocalMD(blob_));
    }

    void
    TearDown() override {
        nixl::log::setRateLimiting(true);
        agentMetadataTest::TearDown();
    }

    /** Loads a bad blob into A: expected status, one ERROR line naming A, nothing loaded. */
    void
    expectRefused(const std::string &bad, const std::string &what) {
        std::string name = "unchanged";
        stderrCapture cap;
        nixl_status_t st = a_->loadRemoteMD(bad, name);
        std::string log = cap.stop();
        EXPECT_EQ(NIXL_ERR_MISMATCH, st) << what;
        EXPECT_TRUE(oneErrorLine(log, {"agent A"})) << what;
        EXPECT_EQ("unchanged", name) << what;
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)))
            << what;
    }

    /** After all the abuse the agent still loads the real blob and transfers. */
    void
    expectStillWorks() {
        std::string name;
        ASSERT_EQ(NIXL_SUCCESS, a_->loadRemoteMD(blob_, name));
        EXPECT_EQ("B", name);
        EXPECT_EQ(NIXL_SUCCESS, writeToB(b2_, 512));
        EXPECT_TRUE(holdsPattern(b2_, 1));
    }

    nixl_blob_t blob_;
};

TEST_F(agentBlobCorruptionTest, TruncatedAtEveryLength) {
    for (size_t len = 0; len < blob_.size(); ++len) {
        expectRefused(blob_.substr(0, len), "truncated to " + std::to_string(len));
        if (HasFailure()) {
            break;
        }
    }
    expectStillWorks();
}

TEST_F(agentBlobCorruptionTest, ExtendedBlob) {
    expectRefused(blob_ + std::string(1, '\0'), "one byte appended");
    expectRefused(blob_ + blob_, "blob twice");
    expectStillWorks();
}

TEST_F(agentBlobCorruptionTest, RandomGarbage) {
    std::mt19937 rng(1234);
    for (size_t len : {1, 7, 23, 24, 25, 64, 200, 4096}) {
        for (int round = 0; round < 8; ++round) {
            std::string bad(len, '\0');
            for (auto &c : bad) {
                c = static_cast<char>(rng());
            }
            expectRefused(bad, "garbage of " + std::to_string(len) + " bytes");
        }
    }
    // Garbage behind a valid header of the right total length.
    for (int round = 0; round < 64; ++round) {
        std::string bad = blob_;
        for (size_t i = nixl_md_header_size; i < bad.size(); ++i) {
            bad[i] = static_cast<char>(rng());
        }
        expectRefused(bad, "garbage body, round " + std::to_string(round));
    }
    expectStillWorks();
}

uint32_t
loadLe32(const std::string &s, size_t off) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) {
        v = (v << 8) | static_cast<unsigned char>(s[off + i]);
    }
    return v;
}

void
storeLe32(std::string &s, size_t off, uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        s[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
}

TEST_F(agentBlobCorruptionTest, OversizedCounts) {
    // Offsets follow the layout of docs/metadata.md; each is checked against the decoded
    // value before it is patched.
    nixlMdBlob decoded;
    std::string error;
    ASSERT_EQ(NIXL_SUCCESS, nixlMdDecode(blob_, decoded, error)) << error;
    ASSERT_EQ(1u, decoded.conns.size());
    ASSERT_EQ(1u, decoded.sections.size());
    // The counts patched are those of libnixl's own blob, which getLocalMD carries inside NIXL
    // 1.4's layout (docs/metadata.md, Interoperability): offsets start where it does.
    nixlMdBlob nixl_part;
    std::string_view own;
    ASSERT_EQ(NIXL_SUCCESS, nixlMdDecodeNixl(blob_, nixl_part, own, error)) << error;
    ASSERT_FALSE(own.empty());
    const size_t base = static_cast<size_t>(own.data() - blob_.data());
    const size_t conn_count_off = base + nixl_md_header_size + 4 + decoded.agentName.size();
    ASSERT_EQ(decoded.conns.size(), loadLe32(blob_, conn_count_off));
    size_t off = conn_count_off + 4;
    for (const auto &c : decoded.conns) {
        off += 4 + c.backend.size() + 4 + c.connInfo.size();
    }
    const size_t section_count_off = off;
    ASSERT_EQ(decoded.sections.size(), loadLe32(blob_, section_count_off));
    const size_t desc_count_off =
        section_count_off + 4 + 4 + decoded.sections[0].backend.size() + 4;
    ASSERT_EQ(decoded.sections[0].descs.size(), loadLe32(blob_, desc_count_off));
    const size_t public_len_off = desc_count_off + 4 + 24;
    ASSERT_EQ(decoded.sections[0].descs[0].publicData.size(), loadLe32(blob_, public_len_off));
    const size_t name_len_off = base + nixl_md_header_size;
    ASSERT_EQ(decoded.agentName.size(), loadLe32(blob_, name_len_off));

    for (size_t at : {name_len_off, conn_count_off, section_count_off, desc_count_off,
                      public_len_off}) {
        for (uint32_t value : {0xffffffffu, 0x7fffffffu, 0x10000u,
                               static_cast<uint32_t>(blob_.size())}) {
            std::string bad = blob_;
            storeLe32(bad, at, value);
            expectRefused(bad, "count at " + std::to_string(at) + " set to " +
                                   std::to_string(value));
        }
    }
    expectStillWorks();
}

TEST_F(agentBlobCorruptionTest, FlippedBytes) {
    // Every byte flipped in turn. Structural damage is refused by the decoder with
    // NIXL_ERR_MISMATCH; damage inside opaque payloads (connection info, public data,
    // addresses) may parse and is then judged by the backend. Either way the call fails or
    // succeeds cleanly, logs at most what it reports, and the agent keeps working.
    for (size_t i = 0; i < blob_.size(); ++i) {
        std::string bad = blob_;
        bad[i] = static_cast<char>(bad[i] ^ 0x5a);
        nixlMdBlob decoded;
        std::string error;
        const bool parses = nixlMdDecode(bad, decoded, error) == NIXL_SUCCESS;
        std::string name;
        stderrCapture cap;
        nixl_status_t st = a_->loadRemoteMD(bad, name);
        std::string log = cap.stop();
        if (!parses) {
            EXPECT_EQ(NIXL_ERR_MISMATCH, st) << "byte " << i;
            EXPECT_TRUE(oneErrorLine(log, {"agent A"})) << "byte " << i;
        } else if (st != NIXL_SUCCESS) {
            // Judged by core or by the backend: a documented status and one ERROR line naming
            // the agent, written where the damage was detected (core's "agent A", TEST's
            // "agent 'A'"); never a second line from core repeating the backend's.
            EXPECT_TRUE(st == NIXL_ERR_MISMATCH || st == NIXL_ERR_BACKEND ||
                        st == NIXL_ERR_NOT_FOUND || st == NIXL_ERR_NOT_ALLOWED)
                << "byte " << i << ": " << nixlEnumStrings::statusStr(st);
            const std::vector<std::string> lines = errorLines(log);
            EXPECT_EQ(1u, lines.size()) << "byte " << i << ":\n" << log;
            for (const auto &line : lines) {
                EXPECT_TRUE(line.find("agent A") != std::string::npos ||
                            line.find("agent 'A'") != std::string::npos)
                    << line;
            }
        }
        if (st == NIXL_SUCCESS) {
            ASSERT_EQ(NIXL_SUCCESS, a_->invalidateRemoteMD(name)) << "byte " << i;
        } else {
            EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)))
                << "byte " << i;
        }
        if (HasFailure()) {
            break;
        }
    }
    expectStillWorks();
}

} // namespace
} // namespace nixl_agent_test
