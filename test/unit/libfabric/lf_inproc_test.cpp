/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Two agents with LIBFABRIC backends in one process, through the public nixlAgent API, once
// per provider (shm, tcp;ofi_rxm) with the progress thread off and on. Every transfer is
// checked byte for byte, and notifications are checked to arrive after the data.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <thread>

#include "lf_test_utils.h"
#include "lf_wire.h"
#include "metadata/md_blob.h"

using namespace nixl_lf_test;

namespace {

struct lfParam {
    const char *name;
    const char *provider;
    bool progThread;
};

class lfPairTest : public ::testing::TestWithParam<lfParam> {
protected:
    static constexpr size_t buf_len = 4 << 20;

    void
    make(nixl_thread_sync_t sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE) {
        lfSetup s;
        s.provider = GetParam().provider;
        s.progThread = GetParam().progThread;
        s.sync = sync;
        a_ = lfAgent::make("A", s);
        b_ = lfAgent::make("B", s);
        ASSERT_TRUE(a_ && b_);
        srcA_.assign(buf_len, 0);
        dstB_.assign(buf_len, 0);
        ASSERT_EQ(a_->registerDram(addr(srcA_), buf_len), NIXL_SUCCESS);
        ASSERT_EQ(b_->registerDram(addr(dstB_), buf_len), NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
        ASSERT_EQ(b_->agent->loadRemoteMD(a_->md(), name), NIXL_SUCCESS);
    }

    void
    SetUp() override {
        make();
    }

    static uintptr_t
    addr(std::vector<uint8_t> &v) {
        return reinterpret_cast<uintptr_t>(v.data());
    }

    /** The target reads its queue while the initiator waits: manual progress. */
    std::function<void()>
    pollB() {
        return [this] { boxB_.poll(*b_->agent); };
    }

    nixl_status_t
    xfer(nixl_xfer_op_t op,
         const nixl_xfer_dlist_t &l,
         const nixl_xfer_dlist_t &r,
         const std::optional<std::string> &notif = std::nullopt,
         lfAgent *from = nullptr,
         const std::string &remote = "B") {
        lfAgent &src = from != nullptr ? *from : *a_;
        nixl_opt_args_t extra;
        if (notif) {
            extra.notif = *notif;
        }
        nixlXferReqH *req = nullptr;
        nixl_status_t st = src.agent->createXferReq(op, l, r, remote, req, &extra);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        st = runXfer(*src.agent, req, pollB());
        EXPECT_EQ(src.agent->releaseXferReq(req), NIXL_SUCCESS);
        return st;
    }

    /** Waits for msg from A at B, then checks B's bytes: the data is there when it arrives. */
    void
    expectNotifThenData(const std::string &msg, size_t off, size_t len, uint32_t seed) {
        ASSERT_TRUE(waitFor([&] {
            boxB_.poll(*b_->agent);
            return boxB_.count("A", msg) > 0;
        }));
        for (size_t i = 0; i < len; ++i) {
            ASSERT_EQ(dstB_[off + i], patternByte(seed, i)) << "byte " << i;
        }
    }

    std::unique_ptr<lfAgent> a_, b_;
    std::vector<uint8_t> srcA_, dstB_;
    notifBox boxB_;
};

TEST_P(lfPairTest, WriteWithNotifThenRead) {
    fillPattern(srcA_.data(), buf_len, 1);
    auto l = xferList({{addr(srcA_), buf_len}});
    auto r = xferList({{addr(dstB_), buf_len}});
    ASSERT_EQ(xfer(NIXL_WRITE, l, r, std::string("w1")), NIXL_SUCCESS);
    expectNotifThenData("w1", 0, buf_len, 1);

    fillPattern(dstB_.data(), buf_len, 2);
    std::fill(srcA_.begin(), srcA_.end(), 0);
    ASSERT_EQ(xfer(NIXL_READ, l, r, std::string("r1")), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(srcA_.data(), buf_len, 2), -1);
    ASSERT_TRUE(waitFor([&] {
        boxB_.poll(*b_->agent);
        return boxB_.count("A", "r1") > 0;
    }));
}

TEST_P(lfPairTest, ThousandsOfDescriptorsAndReposts) {
    constexpr size_t n = 4096, sz = 512;
    std::vector<std::pair<uintptr_t, size_t>> lr, rr;
    for (size_t i = 0; i < n; ++i) {
        lr.emplace_back(addr(srcA_) + i * sz, sz);
        rr.emplace_back(addr(dstB_) + (n - 1 - i) * sz, sz); // reversed order on the target
    }
    auto l = xferList(lr), r = xferList(rr);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, l, r, "B", req), NIXL_SUCCESS);
    for (uint32_t round = 0; round < 3; ++round) {
        fillPattern(srcA_.data(), n * sz, 10 + round);
        ASSERT_EQ(runXfer(*a_->agent, req, pollB()), NIXL_SUCCESS);
        for (size_t i = 0; i < n; ++i) {
            ASSERT_EQ(std::memcmp(&dstB_[(n - 1 - i) * sz], &srcA_[i * sz], sz), 0)
                << "round " << round << " descriptor " << i;
        }
    }
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST_P(lfPairTest, LargeNotifications) {
    const std::string big = patternString(3 << 20, 5);
    ASSERT_EQ(a_->agent->genNotif("B", big), NIXL_SUCCESS);
    fillPattern(srcA_.data(), 4096, 6);
    ASSERT_EQ(xfer(NIXL_WRITE, xferList({{addr(srcA_), 4096}}), xferList({{addr(dstB_), 4096}}),
                   patternString(1 << 20, 7)),
              NIXL_SUCCESS);
    expectNotifThenData(patternString(1 << 20, 7), 0, 4096, 6);
    ASSERT_TRUE(waitFor([&] {
        boxB_.poll(*b_->agent);
        return boxB_.count("A", big) == 1;
    }));
    // Empty notifications are notifications too.
    ASSERT_EQ(a_->agent->genNotif("B", ""), NIXL_SUCCESS);
    ASSERT_TRUE(waitFor([&] {
        boxB_.poll(*b_->agent);
        return boxB_.count("A", "") == 1;
    }));
}

TEST_P(lfPairTest, Loopback) {
    std::vector<uint8_t> other(buf_len);
    ASSERT_EQ(a_->registerDram(addr(other), buf_len), NIXL_SUCCESS);
    fillPattern(srcA_.data(), buf_len, 3);
    nixl_opt_args_t extra;
    extra.notif = std::string("self");
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, xferList({{addr(srcA_), buf_len}}),
                                       xferList({{addr(other), buf_len}}), "A", req, &extra),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a_->agent, req), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(other.data(), buf_len, 3), -1);
    notifBox boxA;
    ASSERT_TRUE(waitFor([&] {
        boxA.poll(*a_->agent);
        return boxA.count("A", "self") == 1;
    }));
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST_P(lfPairTest, OutOfRangeDescriptorRefused) {
    auto l = xferList({{addr(srcA_), 64}});
    auto r = xferList({{addr(dstB_) + buf_len - 32, 64}});
    nixlXferReqH *req = nullptr;
    EXPECT_NE(a_->agent->createXferReq(NIXL_WRITE, l, r, "B", req), NIXL_SUCCESS);
}

TEST_P(lfPairTest, SeveralPostingThreads) {
    TearDown();
    a_.reset();
    b_.reset();
    make(nixl_thread_sync_t::NIXL_THREAD_SYNC_RW);
    constexpr int threads = 4, rounds = 20;
    constexpr size_t slice = buf_len / threads;
    std::atomic<int> failures{0};
    std::atomic<bool> done{false};
    // Without a progress thread somebody must read B's queue for tcp data to land.
    std::thread target([&] {
        notifBox box;
        while (!done.load()) {
            box.poll(*b_->agent);
            std::this_thread::yield();
        }
    });
    fillPattern(srcA_.data(), buf_len, 4); // before any thread posts
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
            auto l = xferList({{addr(srcA_) + t * slice, slice}});
            auto r = xferList({{addr(dstB_) + t * slice, slice}});
            nixlXferReqH *req = nullptr;
            if (a_->agent->createXferReq(NIXL_WRITE, l, r, "B", req) != NIXL_SUCCESS) {
                ++failures;
                return;
            }
            for (int i = 0; i < rounds; ++i) {
                if (runXfer(*a_->agent, req) != NIXL_SUCCESS) {
                    ++failures;
                }
            }
            a_->agent->releaseXferReq(req);
        });
    }
    for (auto &t : ts) {
        t.join();
    }
    done = true;
    target.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(std::memcmp(srcA_.data(), dstB_.data(), buf_len), 0);
}

INSTANTIATE_TEST_SUITE_P(providers,
                         lfPairTest,
                         ::testing::Values(lfParam{"shm", "shm", false},
                                           lfParam{"shm_progthread", "shm", true},
                                           lfParam{"tcp", "tcp;ofi_rxm", false},
                                           lfParam{"tcp_progthread", "tcp;ofi_rxm", true}),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(lfParams, PluginAndBackendParams) {
    nixlAgentConfig cfg(false, false, default_comm_port, nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE,
                        1, 0);
    nixlAgent agent("P", cfg);
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(agent.getPluginParams("LIBFABRIC", mems, params), NIXL_SUCCESS);
    EXPECT_EQ(mems, nixl_mem_list_t{DRAM_SEG});
    for (const char *k : {"provider", "num_threads", "split_batch_size", "max_bw_per_dram_seg"}) {
        EXPECT_EQ(params.count(k), 1u) << k;
    }
    // On by default (docs: why 10 s), and the notification memory bounded by default.
    EXPECT_EQ(params["stall_timeout_ms"], "10000");
    EXPECT_EQ(params["notif_peer_max_bytes"], "268435456");
    EXPECT_EQ(params["notif_total_max_bytes"], "1073741824");
    EXPECT_EQ(params["notif_send_max_bytes"], "67108864");
    EXPECT_EQ(params["progress_idle_ms"], "100");
    nixlBackendH *be = nullptr;
    params["provider"] = "tcp;ofi_rxm";
    ASSERT_EQ(agent.createBackend("LIBFABRIC", params, be), NIXL_SUCCESS);
    nixl_b_params_t got;
    ASSERT_EQ(agent.getBackendParams(be, mems, got), NIXL_SUCCESS);
    EXPECT_EQ(got["provider"], "tcp;ofi_rxm");
}

TEST(lfParams, RefusedWithInvalidParam) {
    for (const auto &[k, v] : std::vector<std::pair<std::string, std::string>>{
             {"num_threads", "-1"},
             {"num_threads", "x"},
             {"num_threads", "65"},
             {"num_threads", "99999999999999999999999"},
             {"split_batch_size", "0"},
             {"split_batch_size", "x"},
             {"max_bw_per_dram_seg", "fast"},
             {"stall_timeout_ms", "-1"},
             {"notif_peer_max_bytes", "1048576"}, // a 64 MiB notification would not fit
             {"notif_total_max_bytes", "x"},
             {"notif_send_max_bytes", "100"},
             {"progress_idle_ms", "0"},
             {"progress_idle_ms", "3600001"},
             {"no_such_option", "1"}}) {
        lfSetup s;
        s.extra[k] = v;
        nixl_status_t st = NIXL_SUCCESS;
        EXPECT_EQ(lfAgent::make("P", s, &st), nullptr);
        EXPECT_EQ(st, NIXL_ERR_INVALID_PARAM) << k << "=" << v;
    }
}

TEST(lfParams, UnknownProviderFails) {
    lfSetup s;
    s.provider = "no_such_provider";
    nixl_status_t st = NIXL_SUCCESS;
    EXPECT_EQ(lfAgent::make("P", s, &st), nullptr);
    EXPECT_NE(st, NIXL_SUCCESS);
}

TEST(lfMetadata, CorruptConnInfoRefused) {
    auto a = lfAgent::make("A", {});
    auto b = lfAgent::make("B", {});
    ASSERT_TRUE(a && b);
    // Damage in the part of the agent's blob that holds the backend's connection info and
    // public data: refused with a status, never a crash, and the good blob still loads.
    std::string md = b->md();
    std::string name;
    for (size_t i = md.size() / 2; i < md.size(); i += 7) {
        std::string bad = md;
        bad[i] = static_cast<char>(bad[i] ^ 0x5a);
        EXPECT_NE(a->agent->loadRemoteMD(bad, name), NIXL_SUCCESS) << "byte " << i;
    }
    EXPECT_EQ(a->agent->loadRemoteMD(md, name), NIXL_SUCCESS);
}

// Over tcp a blob spliced from two agents' (B's header and connection info, C's sections)
// loaded, and a WRITE aimed at C's addresses completed with status 0 and wrote into B's memory
// (issue 29, item 5). Public data now names the engine that registered it, checked against
// the connection info it is loaded with; and a descriptor must be the registration its public
// data seals (a length flipped to 0 loaded too).
TEST(lfMetadata, SplicedBlobAndChangedLengthRefused) {
    lfSetup s;
    s.provider = "tcp;ofi_rxm";
    auto a = lfAgent::make("A", s);
    auto b = lfAgent::make("B", s);
    auto c = lfAgent::make("C", s);
    ASSERT_TRUE(a && b && c);
    constexpr size_t len = 0x10000;
    std::vector<uint8_t> src(len), bufB(len, 0xbb), bufC(len, 0xcc);
    fillPattern(src.data(), len, 5);
    const auto at = [](std::vector<uint8_t> &v) { return reinterpret_cast<uintptr_t>(v.data()); };
    ASSERT_EQ(a->registerDram(at(src), len), NIXL_SUCCESS);
    ASSERT_EQ(b->registerDram(at(bufB), len), NIXL_SUCCESS);
    ASSERT_EQ(c->registerDram(at(bufC), len), NIXL_SUCCESS);
    const std::string blobB = b->md();
    nixlMdBlob spliced, fromC;
    std::string error;
    ASSERT_EQ(nixlMdDecode(blobB, spliced, error), NIXL_SUCCESS) << error;
    ASSERT_EQ(nixlMdDecode(c->md(), fromC, error), NIXL_SUCCESS) << error;
    nixlMdBlob zeroLen = spliced;
    spliced.sections = fromC.sections;
    ASSERT_EQ(zeroLen.sections.size(), 1u);
    ASSERT_EQ(zeroLen.sections[0].descs.size(), 1u);
    ASSERT_EQ(zeroLen.sections[0].descs[0].len, len);
    zeroLen.sections[0].descs[0].len = 0;

    for (const nixlMdBlob *bad : {&spliced, &zeroLen}) {
        std::string name = "unchanged";
        EXPECT_EQ(a->agent->loadRemoteMD(nixlMdEncode(*bad), name), NIXL_ERR_MISMATCH)
            << (bad == &spliced ? "spliced" : "length 0");
        EXPECT_EQ(name, "unchanged");
        nixl_xfer_dlist_t none(DRAM_SEG);
        EXPECT_EQ(a->agent->checkRemoteMD("B", none), NIXL_ERR_NOT_FOUND);
    }
    // No request can be aimed at C's memory under B's name.
    nixlXferReqH *req = nullptr;
    EXPECT_NE(a->agent->createXferReq(
                  NIXL_WRITE, xferList({{at(src), 4096}}), xferList({{at(bufC), 4096}}), "B", req),
              NIXL_SUCCESS);
    for (size_t i = 0; i < len; ++i) {
        ASSERT_EQ(bufB[i], 0xbb) << "byte " << i;
        ASSERT_EQ(bufC[i], 0xcc) << "byte " << i;
    }

    // The honest blob still loads and transfers.
    std::string name;
    ASSERT_EQ(a->agent->loadRemoteMD(blobB, name), NIXL_SUCCESS);
    ASSERT_EQ(a->agent->createXferReq(
                  NIXL_WRITE, xferList({{at(src), len}}), xferList({{at(bufB), len}}), "B", req),
              NIXL_SUCCESS);
    notifBox box;
    EXPECT_EQ(runXfer(*a->agent, req, [&] { box.poll(*b->agent); }), NIXL_SUCCESS);
    EXPECT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(bufB.data(), len, 5), -1);
}

} // namespace

namespace {

// A registration's slot in its owner's table comes from the peer: one past the storage the
// owner reserved (or past the table) would be read at every fast post, a SIGBUS once /dev/shm
// is full or a read out of the mapping. It is refused at load (issue 29, item 1).
TEST(lfMetadata, ForgedTableSlotRefused) {
    lfSetup s;
    s.provider = "shm"; // the peer's registration table is mapped only over shm
    auto a = lfAgent::make("A", s);
    auto b = lfAgent::make("B", s);
    ASSERT_TRUE(a && b);
    constexpr size_t len = 0x10000;
    std::vector<uint8_t> bufB(len, 0xbb);
    ASSERT_EQ(b->registerDram(reinterpret_cast<uintptr_t>(bufB.data()), len), NIXL_SUCCESS);
    nixlMdBlob blob;
    std::string error;
    ASSERT_EQ(nixlMdDecode(b->md(), blob, error), NIXL_SUCCESS) << error;
    ASSERT_EQ(blob.sections.size(), 1u);
    ASSERT_EQ(blob.sections[0].descs.size(), 1u);
    nixlLf::publicDataWire pd;
    ASSERT_TRUE(nixlLf::decodePublicData(blob.sections[0].descs[0].publicData, pd, error))
        << error;
    if (pd.slot == 0) {
        GTEST_SKIP() << "B has no registration table here (no POSIX shared memory)";
    }
    for (uint64_t forged : {uint64_t(1) << 19, (uint64_t(1) << 20) - 1, uint64_t(1) << 20,
                            UINT64_MAX}) {
        nixlMdBlob bad = blob;
        nixlLf::publicDataWire f = pd;
        f.slot = forged;
        bad.sections[0].descs[0].publicData = nixlLf::encodePublicData(f);
        std::string name;
        EXPECT_EQ(a->agent->loadRemoteMD(nixlMdEncode(bad), name), NIXL_ERR_MISMATCH) << forged;
    }
    std::string name;
    EXPECT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS); // the honest one still loads
}

struct staleCase {
    const char *name;
    const char *provider;
    bool fastRma;
    nixl_status_t expected; ///< NIXL_SUCCESS: any failure
};

class lfStaleKeyTest : public ::testing::TestWithParam<staleCase> {};

// B deregisters its buffer while A still holds its metadata: A's WRITE with the stale key must
// fail and leave B's memory as it was. shm's fast RMA (the initiator copies, the target checks
// no key) is refused by the initiator itself: the registration's slot in B's table no longer
// holds its id, so the post fails with NIXL_ERR_NOT_FOUND and nothing is copied. Without fast
// RMA the operation fails at the target (keys are never reused): tcp;ofi_rxm reports the
// failure; shm 1.17 drops it without an answer, so the request ends by stall_timeout_ms, left at
// its default here: the default must end it (well before the 60 s hang deadline of runXfer),
// since a user who never heard of the parameter must not hang.
TEST_P(lfStaleKeyTest, WriteWithReleasedKeyFailsAndWritesNothing) {
    lfSetup s;
    s.provider = GetParam().provider;
    s.extra["shm_fast_rma"] = GetParam().fastRma ? "yes" : "no";
    auto a = lfAgent::make("A", s);
    auto b = lfAgent::make("B", s);
    ASSERT_TRUE(a && b);
    std::vector<uint8_t> src(65536), dst(65536, 0xee);
    fillPattern(src.data(), src.size(), 41);
    ASSERT_EQ(a->registerDram(reinterpret_cast<uintptr_t>(src.data()), src.size()), NIXL_SUCCESS);
    ASSERT_EQ(b->registerDram(reinterpret_cast<uintptr_t>(dst.data()), dst.size()), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a->agent->createXferReq(
                  NIXL_WRITE, xferList({{reinterpret_cast<uintptr_t>(src.data()), src.size()}}),
                  xferList({{reinterpret_cast<uintptr_t>(dst.data()), dst.size()}}), "B", req),
              NIXL_SUCCESS);
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(dst.data()), dst.size(), 0, ""));
    ASSERT_EQ(b->agent->deregisterMem(l), NIXL_SUCCESS);
    notifBox box;
    nixl_status_t st = runXfer(*a->agent, req, [&] { box.poll(*b->agent); });
    EXPECT_NE(st, NIXL_SUCCESS);
    EXPECT_NE(st, NIXL_IN_PROG) << "hang: the default stall_timeout_ms did not end it";
    if (GetParam().expected != NIXL_SUCCESS) {
        EXPECT_EQ(st, GetParam().expected) << nixlEnumStrings::statusStr(st);
    }
    for (size_t i = 0; i < dst.size(); ++i) {
        ASSERT_EQ(dst[i], 0xee) << "byte " << i;
    }
    a->agent->releaseXferReq(req);
}

INSTANTIATE_TEST_SUITE_P(
    providers,
    lfStaleKeyTest,
    ::testing::Values(staleCase{"shm", "shm", true, NIXL_ERR_NOT_FOUND},
                      staleCase{"shm_delivery_complete", "shm", false, NIXL_ERR_BACKEND},
                      staleCase{"tcp", "tcp;ofi_rxm", true, NIXL_SUCCESS}),
    [](const auto &info) { return std::string(info.param.name); });

} // namespace
