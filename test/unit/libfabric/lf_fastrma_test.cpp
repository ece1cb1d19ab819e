/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// shm's fast RMA (the initiator copies with CMA; the target checks no key) behind the target's
// registration table and deregistration fence (src/utils/regtable/reg_table.h):
// a registration released under a running transfer, in one process and across two, takes no
// byte after deregisterMem returned and the transfer fails; a peer killed while it holds a mark
// does not block the target's deregisterMem, while a live one does (until release_timeout_ms);
// a refused table leaves the peer on the delivery-complete path. Nothing sleeps: each step is
// driven by explicit calls (split_batch_size=1 posts one descriptor per progress call).

#include <gtest/gtest.h>

#include <cstring>
#include <dirent.h>
#include <set>
#include <sys/stat.h>
#include <tuple>
#include <utility>
#include <vector>

#include "../full_fs.h"
#include "lf_test_utils.h"

using namespace nixl_lf_test;

namespace {

constexpr size_t desc_len = 65536;
constexpr size_t ndesc = 256;

/** ndesc descriptors of desc_len bytes, back to back from base. */
nixl_xfer_dlist_t
slices(uintptr_t base) {
    std::vector<std::pair<uintptr_t, size_t>> r;
    for (size_t i = 0; i < ndesc; ++i) {
        r.emplace_back(base + i * desc_len, desc_len);
    }
    return xferList(r);
}

std::set<std::string>
lfTables() {
    std::set<std::string> out;
    if (DIR *d = ::opendir("/dev/shm")) {
        while (dirent *e = ::readdir(d)) {
            if (std::strncmp(e->d_name, "nixl-lf-", 8) == 0) {
                out.insert(e->d_name);
            }
        }
        ::closedir(d);
    }
    return out;
}

nixl_status_t
deregister(lfAgent &a, const std::vector<uint8_t> &buf) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, ""));
    return a.agent->deregisterMem(l);
}

/**
 * Completes one small WRITE from a's buffer to the remote one: shm's first operation to a peer
 * waits for the peer to answer its connection (the peer must progress); later fast RMA needs
 * nothing from it, so after this each progress call posts one more descriptor.
 */
void
warmUp(lfAgent &a,
       uintptr_t local,
       uintptr_t remote,
       const std::string &peer,
       const std::function<void()> &poll_peer) {
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a.agent->createXferReq(NIXL_WRITE, xferList({{local, 64}}),
                                     xferList({{remote, 64}}), peer, req),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a.agent, req, poll_peer), NIXL_SUCCESS);
    ASSERT_EQ(a.agent->releaseXferReq(req), NIXL_SUCCESS);
}

/** Polls req n times (each call posts one more descriptor); true if it is still running. */
bool
stepXfer(nixlAgent &agent, nixlXferReqH *req, int n) {
    for (int i = 0; i < n; ++i) {
        if (agent.getXferStatus(req) != NIXL_IN_PROG) {
            return false;
        }
    }
    return true;
}

TEST(lfFastRma, DeregisterStopsARunningTransferInProcess) {
    for (nixl_xfer_op_t op : {NIXL_WRITE, NIXL_READ}) {
        lfSetup s;
        s.provider = "shm";
        s.extra["split_batch_size"] = "1";
        auto a = lfAgent::make("A", s);
        lfSetup bs;
        bs.provider = "shm";
        auto b = lfAgent::make("B", bs);
        ASSERT_TRUE(a && b);
        std::vector<uint8_t> abuf(ndesc * desc_len), bbuf(ndesc * desc_len);
        fillPattern(abuf.data(), abuf.size(), op == NIXL_WRITE ? 51 : 0);
        fillPattern(bbuf.data(), bbuf.size(), op == NIXL_WRITE ? 0 : 52);
        ASSERT_EQ(a->registerDram(reinterpret_cast<uintptr_t>(abuf.data()), abuf.size()),
                  NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(reinterpret_cast<uintptr_t>(bbuf.data()), bbuf.size()),
                  NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);
        notifBox box;
        warmUp(*a, reinterpret_cast<uintptr_t>(abuf.data()),
               reinterpret_cast<uintptr_t>(bbuf.data()), "B", [&] { box.poll(*b->agent); });
        fillPattern(bbuf.data(), bbuf.size(), op == NIXL_WRITE ? 0 : 52);
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a->agent->createXferReq(op, slices(reinterpret_cast<uintptr_t>(abuf.data())),
                                          slices(reinterpret_cast<uintptr_t>(bbuf.data())), "B",
                                          req),
                  NIXL_SUCCESS);
        ASSERT_EQ(a->agent->postXferReq(req), NIXL_IN_PROG);
        ASSERT_TRUE(stepXfer(*a->agent, req, 4));
        // The first descriptors moved (fast RMA needs nothing from B), the last did not.
        const std::vector<uint8_t> &dst = op == NIXL_WRITE ? bbuf : abuf;
        const std::vector<uint8_t> &src = op == NIXL_WRITE ? abuf : bbuf;
        const size_t last = (ndesc - 1) * desc_len;
        EXPECT_EQ(std::memcmp(dst.data(), src.data(), desc_len), 0);
        EXPECT_NE(std::memcmp(dst.data() + last, src.data() + last, desc_len), 0);

        ASSERT_EQ(deregister(*b, bbuf), NIXL_SUCCESS);
        const std::vector<uint8_t> snapshot = bbuf, asnap = abuf;
        nixl_status_t st = waitXfer(*a->agent, req);
        EXPECT_EQ(st, NIXL_ERR_NOT_FOUND) << nixlEnumStrings::statusStr(st);
        EXPECT_TRUE(bbuf == snapshot) << "a byte of B's released buffer changed";
        EXPECT_TRUE(abuf == asnap) << "a READ went on from B's released buffer";
        EXPECT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
    }
}

TEST(lfFastRma, DeregisterStopsARunningTransferTwoProcess) {
    for (nixl_xfer_op_t op : {NIXL_WRITE, NIXL_READ}) {
        lfSetup s;
        s.provider = "shm";
        s.extra["split_batch_size"] = "1";
        auto a = lfAgent::make("A", s);
        ASSERT_TRUE(a);
        std::vector<uint8_t> abuf(ndesc * desc_len);
        fillPattern(abuf.data(), abuf.size(), 53);
        ASSERT_EQ(a->registerDram(reinterpret_cast<uintptr_t>(abuf.data()), abuf.size()),
                  NIXL_SUCCESS);
        peerProcess peer;
        std::string err;
        ASSERT_TRUE(peer.start("shm", ndesc * desc_len, err)) << err;
        std::string name;
        ASSERT_EQ(a->agent->loadRemoteMD(peer.md, name), NIXL_SUCCESS);
        warmUp(*a, reinterpret_cast<uintptr_t>(abuf.data()), peer.bufAddr, "peer", nullptr);
        ASSERT_EQ(peer.cmd("fill 7"), "ok");
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a->agent->createXferReq(op, slices(reinterpret_cast<uintptr_t>(abuf.data())),
                                          slices(peer.bufAddr), "peer", req),
                  NIXL_SUCCESS);
        ASSERT_EQ(a->agent->postXferReq(req), NIXL_IN_PROG);
        ASSERT_TRUE(stepXfer(*a->agent, req, 4));
        if (op == NIXL_WRITE) {
            EXPECT_EQ(peer.cmd("check 0 " + std::to_string(desc_len) + " 53"), "ok");
        } else {
            EXPECT_EQ(firstMismatch(abuf.data(), desc_len, 7), -1); // the peer's pattern
        }
        ASSERT_EQ(peer.cmd("dereg"), "ok");
        const std::vector<uint8_t> asnap = abuf;
        nixl_status_t st = waitXfer(*a->agent, req);
        EXPECT_EQ(st, NIXL_ERR_NOT_FOUND) << nixlEnumStrings::statusStr(st);
        EXPECT_EQ(peer.cmd("unchanged"), "ok") << "a byte of the peer's released buffer changed";
        EXPECT_TRUE(abuf == asnap) << "a READ went on from the peer's released buffer";
        EXPECT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
    }
}

// The peer posts a fast WRITE into A and keeps its mark (fault_hold_mark), as if killed in the
// middle of a copy. While it lives, A's deregisterMem of any registration waits for it and
// gives up after release_timeout_ms with NIXL_ERR_BACKEND (so the mark is really held); once
// it is killed and reaped, deregisterMem returns NIXL_SUCCESS (its marks are skipped).
TEST(lfFastRma, PeerKilledHoldingAMarkDoesNotBlockDeregister) {
    lfSetup s;
    s.provider = "shm";
    s.progThread = true; // answers the peer's first contact while this thread waits for it
    s.extra["release_timeout_ms"] = "300";
    auto a = lfAgent::make("A", s);
    ASSERT_TRUE(a);
    std::vector<uint8_t> target(1 << 20, 0), other(4096, 0);
    ASSERT_EQ(a->registerDram(reinterpret_cast<uintptr_t>(target.data()), target.size()),
              NIXL_SUCCESS);
    ASSERT_EQ(a->registerDram(reinterpret_cast<uintptr_t>(other.data()), other.size()),
              NIXL_SUCCESS);
    peerProcess peer;
    std::string err;
    ASSERT_TRUE(peer.start("shm", 1 << 20, err, "fault_hold_mark=yes")) << err;
    const std::string md = a->md();
    ASSERT_EQ(peer.cmd("load", &md), "ok");
    const std::string r = peer.cmd(
        "write_hold " + std::to_string(reinterpret_cast<uintptr_t>(target.data())) + " " +
        std::to_string(target.size()));
    ASSERT_TRUE(r == "holding " + std::to_string(NIXL_SUCCESS) ||
                r == "holding " + std::to_string(NIXL_IN_PROG))
        << r;
    // Posted once the connection is up (the peer progresses while idle); the copy then happens
    // inside the post, under the mark the peer keeps.
    ASSERT_TRUE(waitFor([&] { return firstMismatch(target.data(), target.size(), 7) == -1; }));
    EXPECT_EQ(deregister(*a, other), NIXL_ERR_BACKEND) << "the fence did not see the mark";
    peer.kill();
    peer.wait();
    EXPECT_EQ(deregister(*a, target), NIXL_SUCCESS);
}

// A table that fails the peer's checks (here: mode 0644 instead of 0600) is not mapped: the
// peer is reached with delivery-complete RMA. Data still moves; a stale key then fails at the
// target, which shm 1.17 never answers, so the request ends by stall_timeout_ms
// (NIXL_ERR_BACKEND), where the fast path would have refused it at once (NIXL_ERR_NOT_FOUND).
TEST(lfFastRma, RefusedTableKeepsDeliveryComplete) {
    lfSetup s;
    s.provider = "shm";
    // The second WRITE ends by this timeout; long enough that a preempted test thread cannot
    // make the first one look stalled.
    s.extra["stall_timeout_ms"] = "2000";
    auto a = lfAgent::make("A", s);
    ASSERT_TRUE(a);
    const std::set<std::string> before = lfTables();
    auto b = lfAgent::make("B", s);
    ASSERT_TRUE(b);
    std::string btable;
    for (const auto &t : lfTables()) {
        if (before.count(t) == 0) {
            btable = t;
        }
    }
    ASSERT_FALSE(btable.empty()) << "B's table not found in /dev/shm";
    ASSERT_EQ(::chmod(("/dev/shm/" + btable).c_str(), 0644), 0);

    std::vector<uint8_t> src(desc_len), dst(desc_len, 0xee);
    fillPattern(src.data(), src.size(), 61);
    ASSERT_EQ(a->registerDram(reinterpret_cast<uintptr_t>(src.data()), src.size()), NIXL_SUCCESS);
    ASSERT_EQ(b->registerDram(reinterpret_cast<uintptr_t>(dst.data()), dst.size()), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);
    auto write = [&](nixlXferReqH *&req) {
        return a->agent->createXferReq(
            NIXL_WRITE, xferList({{reinterpret_cast<uintptr_t>(src.data()), src.size()}}),
            xferList({{reinterpret_cast<uintptr_t>(dst.data()), dst.size()}}), "B", req);
    };
    notifBox box;
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(write(req), NIXL_SUCCESS);
    EXPECT_EQ(runXfer(*a->agent, req, [&] { box.poll(*b->agent); }), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst.data(), dst.size(), 61), -1);
    EXPECT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);

    std::fill(dst.begin(), dst.end(), 0xee);
    ASSERT_EQ(deregister(*b, dst), NIXL_SUCCESS);
    ASSERT_EQ(write(req), NIXL_SUCCESS);
    const nixl_status_t st = runXfer(*a->agent, req, [&] { box.poll(*b->agent); });
    EXPECT_EQ(st, NIXL_ERR_BACKEND) << nixlEnumStrings::statusStr(st);
    for (size_t i = 0; i < dst.size(); ++i) {
        ASSERT_EQ(dst[i], 0xee) << "byte " << i;
    }
    a->agent->releaseXferReq(req);
}

// One agent with shm_fast_rma=yes and one with no, both orders: the pair falls back to
// delivery-complete RMA in both directions (the "no" side publishes no table, and does not open
// the other's). Data arrives both ways; a WRITE into the target's deregistered buffer then fails
// through the provider's key check and changes no byte — which a fast copy, checking no table,
// would not do.
TEST(lfFastRma, MixedFastRmaPairUsesDeliveryComplete) {
    for (const bool a_fast : {true, false}) {
        SCOPED_TRACE(a_fast ? "A yes, B no" : "A no, B yes");
        lfSetup sa;
        sa.provider = "shm";
        // The failed WRITE ends by this timeout; long enough that a preempted test thread
        // cannot make the successful transfers before it look stalled.
        sa.extra["stall_timeout_ms"] = "2000";
        lfSetup sb = sa;
        sa.extra["shm_fast_rma"] = a_fast ? "yes" : "no";
        sb.extra["shm_fast_rma"] = a_fast ? "no" : "yes";
        auto a = lfAgent::make("A", sa);
        ASSERT_TRUE(a);
        auto b = lfAgent::make("B", sb);
        ASSERT_TRUE(b);
        std::vector<uint8_t> abuf(desc_len), bbuf(desc_len, 0xee);
        fillPattern(abuf.data(), abuf.size(), 71);
        ASSERT_EQ(a->registerDram(reinterpret_cast<uintptr_t>(abuf.data()), abuf.size()),
                  NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(reinterpret_cast<uintptr_t>(bbuf.data()), bbuf.size()),
                  NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);
        ASSERT_EQ(b->agent->loadRemoteMD(a->md(), name), NIXL_SUCCESS);
        const uintptr_t ap = reinterpret_cast<uintptr_t>(abuf.data());
        const uintptr_t bp = reinterpret_cast<uintptr_t>(bbuf.data());
        notifBox abox, bbox;
        auto run = [](lfAgent &from, nixl_xfer_op_t op, uintptr_t local, uintptr_t remote,
                      const std::string &peer, const std::function<void()> &poll_peer) {
            nixlXferReqH *req = nullptr;
            if (from.agent->createXferReq(op, xferList({{local, desc_len}}),
                                          xferList({{remote, desc_len}}), peer,
                                          req) != NIXL_SUCCESS) {
                return NIXL_ERR_UNKNOWN;
            }
            const nixl_status_t st = runXfer(*from.agent, req, poll_peer);
            from.agent->releaseXferReq(req);
            return st;
        };
        auto poll_b = [&] { bbox.poll(*b->agent); };
        auto poll_a = [&] { abox.poll(*a->agent); };
        // A WRITEs into B, A READs from B, B WRITEs into A: each checked.
        ASSERT_EQ(run(*a, NIXL_WRITE, ap, bp, "B", poll_b), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(bbuf.data(), bbuf.size(), 71), -1);
        fillPattern(bbuf.data(), bbuf.size(), 72);
        ASSERT_EQ(run(*a, NIXL_READ, ap, bp, "B", poll_b), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(abuf.data(), abuf.size(), 72), -1);
        fillPattern(bbuf.data(), bbuf.size(), 73);
        ASSERT_EQ(run(*b, NIXL_WRITE, bp, ap, "A", poll_a), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(abuf.data(), abuf.size(), 73), -1);

        std::fill(bbuf.begin(), bbuf.end(), 0xee);
        ASSERT_EQ(deregister(*b, bbuf), NIXL_SUCCESS);
        const nixl_status_t st = run(*a, NIXL_WRITE, ap, bp, "B", poll_b);
        EXPECT_EQ(st, NIXL_ERR_BACKEND) << nixlEnumStrings::statusStr(st);
        for (size_t i = 0; i < bbuf.size(); ++i) {
            ASSERT_EQ(bbuf[i], 0xee) << "byte " << i;
        }
    }
}

} // namespace

// A full /dev/shm (Docker's default is 64 MiB) is a status, never a SIGBUS (issue 29, item 1),
// as for UCX (ucxRegTable.ShmFullIsAStatusNotASignal). The children run in a private mount
// namespace with a 1 MiB tmpfs over /dev/shm (root only).
namespace {

/** Registers n 64-byte pieces of buf one by one; the status of the first failure, or SUCCESS. */
nixl_status_t
registerPieces(lfAgent &a, std::vector<uint8_t> &buf, size_t n, size_t &done) {
    for (done = 0; done < n; ++done) {
        nixl_status_t st = a.registerDram(reinterpret_cast<uintptr_t>(buf.data()) + done * 64, 64);
        if (st != NIXL_SUCCESS) {
            return st;
        }
    }
    return NIXL_SUCCESS;
}

constexpr size_t pieces = 20000; // past the slots the table reserves at creation

} // namespace

TEST(lfFastRma, DISABLED_ShmFullChildEngine) {
    ASSERT_TRUE(nixl_full_fs::inFullFsChild());
    // /dev/shm full before createBackend: shm cannot open its region; tcp still serves.
    lfSetup s;
    s.provider = "auto";
    nixl_status_t st = NIXL_ERR_UNKNOWN;
    auto a = lfAgent::make("shmfull", s, &st);
    if (a) {
        std::vector<uint8_t> buf(pieces * 64);
        size_t done = 0;
        EXPECT_EQ(registerPieces(*a, buf, pieces, done), NIXL_SUCCESS) << done;
    } else {
        EXPECT_LT(st, 0);
    }
    a.reset();
    nixl_full_fs::finishChild(::testing::Test::HasFailure());
}

TEST(lfFastRma, DISABLED_ShmFilledAfterCreateChildEngine) {
    ASSERT_TRUE(nixl_full_fs::inFullFsChild());
    lfSetup s;
    s.provider = "shm";
    nixl_status_t st = NIXL_ERR_UNKNOWN;
    auto a = lfAgent::make("shmfilled", s, &st);
    ASSERT_EQ(st, NIXL_SUCCESS);
    ASSERT_TRUE(nixl_full_fs::fillUp(nixl_full_fs::fullFsDir()));
    // Registrations past the reserved slots go in no slot (peers then use delivery-complete
    // RMA, one warning): every one succeeds, and each is released as usual.
    std::vector<uint8_t> buf(pieces * 64);
    size_t done = 0;
    EXPECT_EQ(registerPieces(*a, buf, pieces, done), NIXL_SUCCESS) << done;
    for (size_t i = 0; i < done; ++i) {
        nixl_reg_dlist_t l(DRAM_SEG);
        l.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()) + i * 64, 64, 0, ""));
        ASSERT_EQ(a->agent->deregisterMem(l), NIXL_SUCCESS) << i;
    }
    a.reset();
    nixl_full_fs::finishChild(::testing::Test::HasFailure());
}

TEST(lfFastRma, ShmFullIsAStatusNotASignal) {
    const std::string skip = nixl_full_fs::fullFsSkipReason();
    if (!skip.empty()) {
        GTEST_SKIP() << skip;
    }
    // The second child needs room for libfabric shm's region before it fills /dev/shm.
    for (const auto &[name, fill, size] : std::vector<std::tuple<std::string, bool, std::string>>{
             {"lfFastRma.DISABLED_ShmFullChildEngine", true, "1m"},
             {"lfFastRma.DISABLED_ShmFilledAfterCreateChildEngine", false, "64m"}}) {
        const int ws = nixl_full_fs::runInFullFs("/dev/shm", name, fill, size);
        EXPECT_TRUE(nixl_full_fs::passed(ws)) << name << ": " << nixl_full_fs::describe(ws);
    }
}
