/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * TEST plugin through its C ABI (see test_backend_test.cpp): malformed metadata and lists, and
 * peers that go away (destroyed, re-created, deregistered memory).
 */
#include "test_backend_fixture.h"

namespace nixlTestBackendUt {
namespace {

// ---------------------------------------------------------------------------------------------
// Validation of what peers hand over

TEST_F(testBackend, BadConnInfoIsMismatch) {
    testEngine a("A");
    testEngine b("B");
    ASSERT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(b.status(), NIXL_PLUGIN_SUCCESS);
    const std::string good = b.connInfo();
    const std::vector<std::string> bad = {
        "",
        "garbage",
        good.substr(0, good.size() / 2),
        std::string("\0\1\2\3", 4),
        "x" + good,
    };
    for (const std::string &conn : bad) {
        size_t mark = logRecorder::instance().mark();
        EXPECT_EQ(a.loadConn("B", conn), NIXL_PLUGIN_ERR_MISMATCH) << conn;
        expectOneError(mark, {"agent 'A'", "remote 'B'", "loadRemoteConnInfo"});
    }
    // Well-formed, but another agent's.
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(a.loadConn("C", good), NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'C'", "agent 'B'"});

    EXPECT_EQ(a.loadConn("B", good), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(a.loadConn("B", good), NIXL_PLUGIN_SUCCESS); // idempotent
}

TEST_F(testBackend, BadPublicDataIsMismatch) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    const std::string pub = s.b.publicData(s.mdB);
    nixl_be_md_t *md = nullptr;

    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(s.bufB.data(), s.bufB.size(), pub.substr(1), "B", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "bytes"});

    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(s.bufB.data(), s.bufB.size(), pub + "x", "B", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});

    // Right size, wrong range.
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(s.bufB.data() + 1, s.bufB.size() - 1, pub, "B", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});

    // Right size, corrupted bytes.
    std::string flipped = pub;
    flipped[0] = static_cast<char>(flipped[0] ^ 0x5a);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(s.bufB.data(), s.bufB.size(), flipped, "B", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});

    // B's public data presented as A's.
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.b.loadRemoteMD(s.bufB.data(), s.bufB.size(), pub, "A", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'B'", "remote 'A'"});

    // Public data of an agent whose connection info was never loaded.
    testEngine c("C");
    mark = logRecorder::instance().mark();
    EXPECT_EQ(c.loadRemoteMD(s.bufB.data(), s.bufB.size(), pub, "B", &md),
              NIXL_PLUGIN_ERR_NOT_FOUND);
    expectOneError(mark, {"agent 'C'", "remote 'B'"});
    EXPECT_EQ(md, nullptr);
}

TEST_F(testBackend, PrepRejectsInconsistentListsNamingTheDescriptor) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    nixl_be_req_t *req = nullptr;

    xferLists counts;
    counts.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 8);
    counts.addLocal(s.bufA.data() + 8, s.mdA, 8);
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, counts, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "2 local", "1 remote"});

    xferLists lengths;
    lengths.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 8);
    lengths.add(s.bufA.data() + 8, s.mdA, s.bufB.data() + 8, s.remoteB, 8);
    lengths.remoteDescs()[1].len = 9;
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, lengths, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 1", "length"});

    xferLists outside;
    outside.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 8);
    outside.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 8);
    outside.add(s.bufA.data(), s.mdA, s.bufB.data() + s.bufB.size() - 4, s.remoteB, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, outside, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 2", "outside"});

    xferLists localOutside;
    localOutside.add(s.bufA.data() + s.bufA.size() - 1, s.mdA, s.bufB.data(), s.remoteB, 2);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_READ, localOutside, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 0", "outside"});

    // Local metadata in the remote list, and B's own local metadata handed to A.
    xferLists wrongMd;
    wrongMd.add(s.bufA.data(), s.mdA, s.bufB.data(), s.mdA, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, wrongMd, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 0"});
    xferLists foreignMd;
    foreignMd.add(s.bufA.data(), s.mdB, s.bufB.data(), s.remoteB, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, foreignMd, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 0"});

    // B's metadata used for a transfer to another agent.
    testEngine c("C");
    ASSERT_EQ(s.a.loadConn("C", c.connInfo()), NIXL_PLUGIN_SUCCESS);
    xferLists wrongAgent = slice(s, 0, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, wrongAgent, "C", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'C'", "desc 0", "agent 'B'"});

    xferLists unknown = slice(s, 0, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, unknown, "Nobody", &req), NIXL_PLUGIN_ERR_NOT_FOUND);
    expectOneError(mark, {"agent 'A'", "remote 'Nobody'"});
    EXPECT_EQ(req, nullptr);

    // Zero-length descriptors are valid and move nothing.
    xferLists empty;
    empty.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 0);
    ASSERT_EQ(s.a.prep(NIXL_WRITE, empty, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_WRITE, empty, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, UnknownOperationsAndMemoryKindsAreRefused) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    nixl_be_req_t *req = nullptr;

    // Values outside the enums, as a buggy or newer caller could pass them through the ABI.
    xferLists w = slice(s, 0, 64);
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(7, w, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "operation 7"});
    EXPECT_EQ(req, nullptr);

    std::vector<unsigned char> buf(64);
    nixl_be_desc_t d{reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, {nullptr, 0}};
    for (uint32_t mem : {static_cast<uint32_t>(VRAM_SEG), static_cast<uint32_t>(FILE_SEG), 9u}) {
        nixl_be_md_t *md = nullptr;
        mark = logRecorder::instance().mark();
        EXPECT_EQ(ops().register_mem(s.a.get(), &d, mem, &md), NIXL_PLUGIN_ERR_NOT_SUPPORTED);
        expectOneError(mark, {"agent 'A'", "memory type " + std::to_string(mem)});
        EXPECT_EQ(md, nullptr);
    }

    const std::string pub = s.b.publicData(s.mdB);
    nixl_be_desc_t rd{reinterpret_cast<uintptr_t>(s.bufB.data()), s.bufB.size(), 0, str(pub)};
    nixl_be_md_t *rmd = nullptr;
    mark = logRecorder::instance().mark();
    EXPECT_EQ(ops().load_remote_md(s.a.get(), &rd, VRAM_SEG, str(std::string("B")), &rmd),
              NIXL_PLUGIN_ERR_NOT_SUPPORTED);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "memory type 1"});

    // Lists of another kind.
    std::vector<nixl_be_xfer_desc_t> local = {
        {reinterpret_cast<uintptr_t>(s.bufA.data()), 64, 0, s.mdA}};
    std::vector<nixl_be_xfer_desc_t> remote = {
        {reinterpret_cast<uintptr_t>(s.bufB.data()), 64, 0, s.remoteB}};
    const nixl_be_xfer_list_t vram_local = {VRAM_SEG, 0, local.data(), local.size()};
    const nixl_be_xfer_list_t dram_remote = {DRAM_SEG, 0, remote.data(), remote.size()};
    mark = logRecorder::instance().mark();
    EXPECT_EQ(ops().prep_xfer(s.a.get(), NIXL_WRITE, &vram_local, &dram_remote,
                              str(std::string("B")), nullptr, &req),
              NIXL_PLUGIN_ERR_NOT_SUPPORTED);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "DRAM_SEG"});
}

// ---------------------------------------------------------------------------------------------
// Peers that go away

TEST_F(testBackend, DestroyedPeerReportsRemoteDisconnect) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);

    s.b.destroy();
    fill(s.bufA, 31);
    const std::vector<unsigned char> kept = s.bufB;
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});
    EXPECT_EQ(s.bufB, kept); // the destroyed engine's memory is not touched
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.genNotif("B", "anyone?"), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, DestroyedPeerFailsRunningAsyncRequest) {
    pairSetup s({{"async", "true"}, {"async_polls", "0"}});
    ASSERT_TRUE(s.ok());
    const std::vector<unsigned char> before = s.bufB;
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_IN_PROG);
    s.b.destroy();
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.bufB, before);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, RecreatedAgentIsDistinguishedFromTheDestroyedOne) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    const std::string oldConn = s.b.connInfo();
    s.b.destroy();

    testEngine b2("B");
    ASSERT_EQ(b2.status(), NIXL_PLUGIN_SUCCESS);
    const std::string newConn = b2.connInfo();
    EXPECT_NE(newConn, oldConn);
    std::vector<unsigned char> buf2(256);
    fill(buf2, 3);
    nixl_be_md_t *md2 = b2.reg(buf2.data(), buf2.size());
    const std::string pub2 = b2.publicData(md2);

    // A still holds the old connection: the new agent's metadata does not belong to it.
    nixl_be_md_t *remote2 = nullptr;
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(buf2.data(), buf2.size(), pub2, "B", &remote2),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});

    // Stale connection info loads (with a warning) and transfers then report the disconnect.
    testEngine c("C");
    std::vector<unsigned char> bufC(256);
    nixl_be_md_t *mdC = c.reg(bufC.data(), bufC.size());
    mark = logRecorder::instance().mark();
    EXPECT_EQ(c.loadConn("B", oldConn), NIXL_PLUGIN_SUCCESS);
    EXPECT_TRUE(errorsSince(mark).empty());
    EXPECT_EQ(logRecorder::instance().since(mark, NIXL_PLUGIN_LOG_WARN).size(), 1u);
    EXPECT_EQ(c.genNotif("B", "old"), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);

    // After a reconnect with the new connection info, A reaches the new engine.
    EXPECT_EQ(ops().disconnect(s.a.get(), str(std::string("B"))), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().unload_md(s.a.get(), s.remoteB), NIXL_PLUGIN_SUCCESS);
    s.remoteB = nullptr;
    ASSERT_EQ(s.a.loadConn("B", newConn), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.loadRemoteMD(buf2.data(), buf2.size(), pub2, "B", &remote2),
              NIXL_PLUGIN_SUCCESS);
    xferLists w;
    w.add(s.bufA.data(), s.mdA, buf2.data(), remote2, buf2.size());
    nixl_be_req_t *req = nullptr;
    nixl_be_opt_args_t opt = notifArgs("new");
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(std::memcmp(buf2.data(), s.bufA.data(), buf2.size()), 0);
    EXPECT_EQ(b2.notifs(), (notif_vec_t{{"A", "new"}}));
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().deregister_mem(c.get(), mdC), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, DeregisteredRemoteMemoryIsNeverTouched) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    std::vector<unsigned char> extra(128);
    fill(extra, 4);
    nixl_be_md_t *mdExtra = s.b.reg(extra.data(), extra.size());
    nixl_be_md_t *remoteExtra = nullptr;
    ASSERT_EQ(s.a.loadRemoteMD(extra.data(), extra.size(), s.b.publicData(mdExtra), "B",
                               &remoteExtra),
              NIXL_PLUGIN_SUCCESS);

    xferLists w;
    w.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 64);
    w.add(s.bufA.data() + 64, s.mdA, extra.data(), remoteExtra, 64);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops().deregister_mem(s.b.get(), mdExtra), NIXL_PLUGIN_SUCCESS);

    const std::vector<unsigned char> keptB = s.bufB;
    const std::vector<unsigned char> keptExtra = extra;
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_BACKEND);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 1", "deregistered"});
    EXPECT_EQ(s.bufB, keptB); // all or nothing
    EXPECT_EQ(extra, keptExtra);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().unload_md(s.a.get(), remoteExtra), NIXL_PLUGIN_SUCCESS);
}

} // namespace
} // namespace nixlTestBackendUt
