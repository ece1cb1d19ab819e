/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Two (or three) agents with UCX backends in one process, through the public nixlAgent API.
// Every transfer is checked byte for byte. The suites run once per data path (direct cma and
// UCX's own ucp_put/get) and with the progress thread off and on.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <tuple>

#include "ucx_test_utils.h"

using namespace nixl_ucx_test;

namespace {

struct pathParam {
    const char *name;
    bool direct;
    bool progThread;
};

ucxSetup
setupFor(const pathParam &p, nixl_b_params_t extra = {}) {
    ucxSetup s;
    s.params = std::move(extra);
    s.params["ucx_direct_cma"] = p.direct ? "yes" : "no";
    s.progThread = p.progThread;
    return s;
}

class ucxPairTest : public ::testing::TestWithParam<pathParam> {
protected:
    static constexpr size_t buf_len = 8 << 20;

    void
    SetUp() override {
        a_ = ucxAgent::make("A", setupFor(GetParam()));
        b_ = ucxAgent::make("B", setupFor(GetParam()));
        ASSERT_TRUE(a_ && b_);
        srcA_ = std::make_unique<testMem>(buf_len);
        dstB_ = std::make_unique<testMem>(buf_len);
        ASSERT_EQ(a_->registerDram(srcA_->addr(), buf_len), NIXL_SUCCESS);
        ASSERT_EQ(b_->registerDram(dstB_->addr(), buf_len), NIXL_SUCCESS);
        exchange();
    }

    // Orderly shutdown (docs/backends/ucx.md, Limits): UCX 1.13 over tcp can abort inside UCX
    // when an agent goes while its peer still has a wireup message queued to it (seen once in
    // ucx_tls_tcp at load 20+, in MakeConnectionIsOptional, whose connection was still being
    // set up when the fixture destroyed both agents). A notification each way completes the
    // setup in both directions before the agents go. Tests that left a side without the
    // other's metadata have no connection in that direction to settle.
    void
    TearDown() override {
        if (!a_ || !b_) {
            return;
        }
        for (auto [from, box, toName, fromName] :
             {std::tuple{a_.get(), &boxB_, "B", "A"}, std::tuple{b_.get(), &boxA_, "A", "B"}}) {
            if (from->agent->genNotif(toName, "teardown") != NIXL_SUCCESS) {
                continue;
            }
            // Captured by name: clang 14 refuses a lambda naming a structured binding.
            EXPECT_TRUE(waitFor([&, box = box, fromName = fromName] {
                boxA_.poll(*a_->agent); // progresses the sender too
                boxB_.poll(*b_->agent);
                return box->count(fromName, "teardown") > 0;
            })) << fromName << " -> " << toName << " teardown notification";
        }
    }

    void
    exchange() {
        std::string name;
        ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
        ASSERT_EQ(name, "B");
        ASSERT_EQ(b_->agent->loadRemoteMD(a_->md(), name), NIXL_SUCCESS);
        ASSERT_EQ(name, "A");
    }

    /** What a target without a progress thread must do for UCX's software RMA to move. */
    std::function<void()>
    pollB() {
        return [this] { boxB_.poll(*b_->agent); };
    }

    nixl_status_t
    xfer(nixl_xfer_op_t op,
         const nixl_xfer_dlist_t &l,
         const nixl_xfer_dlist_t &r,
         const std::string &remote,
         const std::optional<std::string> &notif = std::nullopt,
         ucxAgent *from = nullptr) {
        ucxAgent &src = from != nullptr ? *from : *a_;
        nixl_opt_args_t extra;
        extra.notif = notif;
        nixlXferReqH *req = nullptr;
        nixl_status_t st = src.agent->createXferReq(op, l, r, remote, req, &extra);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        st = runXfer(*src.agent, req, pollB());
        EXPECT_EQ(src.agent->releaseXferReq(req), NIXL_SUCCESS);
        return st;
    }

    bool
    waitNotif(notifBox &box, nixlAgent &agent, const std::string &sender, const std::string &msg) {
        return waitFor([&] {
            box.poll(agent);
            return box.count(sender, msg) > 0;
        });
    }

    // Buffers first: they must outlive the agents, whose teardown may still progress UCX.
    std::unique_ptr<testMem> srcA_;
    std::unique_ptr<testMem> dstB_;
    std::unique_ptr<ucxAgent> a_;
    std::unique_ptr<ucxAgent> b_;
    notifBox boxA_;
    notifBox boxB_;
};

TEST_P(ucxPairTest, WriteThenReadWithNotification) {
    const size_t len = 1 << 20;
    fillPattern(srcA_->data(), len, 11);
    ASSERT_EQ(xfer(NIXL_WRITE,
                   xferList({{srcA_->addr(), len}}),
                   xferList({{dstB_->addr() + 4096, len}}),
                   "B",
                   "written"),
              NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dstB_->data() + 4096, len, 11), -1);
    ASSERT_TRUE(waitNotif(boxB_, *b_->agent, "A", "written"));

    // Read it back into another part of A's buffer.
    std::memset(srcA_->data() + len, 0, len);
    ASSERT_EQ(xfer(NIXL_READ,
                   xferList({{srcA_->addr() + len, len}}),
                   xferList({{dstB_->addr() + 4096, len}}),
                   "B",
                   "read"),
              NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(srcA_->data() + len, len, 11), -1);
    ASSERT_TRUE(waitNotif(boxB_, *b_->agent, "A", "read"));
    EXPECT_EQ(boxA_.total(), 0u);
}

TEST_P(ucxPairTest, RepostReusesTheRequest) {
    const size_t len = 256 << 10;
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE,
                                       xferList({{srcA_->addr(), len}}),
                                       xferList({{dstB_->addr(), len}}),
                                       "B",
                                       req),
              NIXL_SUCCESS);
    for (uint32_t i = 0; i < 5; ++i) {
        fillPattern(srcA_->data(), len, 100 + i);
        nixl_opt_args_t extra;
        extra.notif = "round" + std::to_string(i);
        ASSERT_EQ(runXfer(*a_->agent, req, pollB(), &extra), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(dstB_->data(), len, 100 + i), -1);
        EXPECT_TRUE(waitNotif(boxB_, *b_->agent, "A", "round" + std::to_string(i)));
    }
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST_P(ucxPairTest, LoopbackToOwnAgent) {
    const size_t len = 3 << 20;
    fillPattern(srcA_->data(), len, 21);
    std::memset(srcA_->data() + 4 * 1024 * 1024, 0, len);
    nixlXferReqH *req = nullptr;
    nixl_opt_args_t extra;
    extra.notif = "self";
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE,
                                       xferList({{srcA_->addr(), len}}),
                                       xferList({{srcA_->addr() + (4 << 20), len}}),
                                       "A",
                                       req,
                                       &extra),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a_->agent, req), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(srcA_->data() + (4 << 20), len, 21), -1);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
    EXPECT_TRUE(waitNotif(boxA_, *a_->agent, "A", "self"));

    // And a standalone notification to itself.
    ASSERT_EQ(a_->agent->genNotif("A", "hello me"), NIXL_SUCCESS);
    EXPECT_TRUE(waitNotif(boxA_, *a_->agent, "A", "hello me"));
}

TEST_P(ucxPairTest, SixtyFourMiBBlocks) {
    const size_t len = 64 << 20;
    testMem src(len);
    testMem dst(len);
    testMem back(len);
    ASSERT_EQ(a_->registerDram(src.addr(), len), NIXL_SUCCESS);
    ASSERT_EQ(a_->registerDram(back.addr(), len), NIXL_SUCCESS);
    ASSERT_EQ(b_->registerDram(dst.addr(), len), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(a_->agent->invalidateRemoteMD("B"), NIXL_SUCCESS);
    ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
    fillPattern(src.data(), len, 64);
    ASSERT_EQ(xfer(NIXL_WRITE, xferList({{src.addr(), len}}), xferList({{dst.addr(), len}}), "B",
                   "big"),
              NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst.data(), len, 64), -1);
    EXPECT_TRUE(waitNotif(boxB_, *b_->agent, "A", "big"));
    ASSERT_EQ(xfer(NIXL_READ, xferList({{back.addr(), len}}), xferList({{dst.addr(), len}}), "B"),
              NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(back.data(), len, 64), -1);
}

TEST_P(ucxPairTest, ThousandsOfSmallDescriptors) {
    // 3000 descriptors of 1..2048 bytes with gaps between them, in both directions.
    std::vector<std::pair<uintptr_t, size_t>> l;
    std::vector<std::pair<uintptr_t, size_t>> r;
    size_t loff = 0;
    size_t roff = 0;
    for (size_t i = 0; i < 3000; ++i) {
        const size_t n = 1 + (i * 7919) % 2048;
        l.emplace_back(srcA_->addr() + loff, n);
        r.emplace_back(dstB_->addr() + roff, n);
        fillPattern(srcA_->data() + loff, n, 5000 + static_cast<uint32_t>(i));
        loff += n + 8;
        roff += n + 24;
    }
    ASSERT_LT(roff, buf_len);
    std::memset(dstB_->data(), 0, roff);
    ASSERT_EQ(xfer(NIXL_WRITE, xferList(l), xferList(r), "B", "many"), NIXL_SUCCESS);
    for (size_t i = 0; i < r.size(); ++i) {
        ASSERT_EQ(firstMismatch(reinterpret_cast<uint8_t *>(r[i].first), r[i].second,
                                5000 + static_cast<uint32_t>(i)),
                  -1)
            << "descriptor " << i;
    }
    EXPECT_TRUE(waitNotif(boxB_, *b_->agent, "A", "many"));
    std::memset(srcA_->data(), 0, loff);
    ASSERT_EQ(xfer(NIXL_READ, xferList(l), xferList(r), "B"), NIXL_SUCCESS);
    for (size_t i = 0; i < l.size(); ++i) {
        ASSERT_EQ(firstMismatch(reinterpret_cast<uint8_t *>(l[i].first), l[i].second,
                                5000 + static_cast<uint32_t>(i)),
                  -1)
            << "descriptor " << i;
    }
}

TEST_P(ucxPairTest, NotificationComesAfterTheData) {
    // B checks its buffer the moment each notification shows up; it must already hold the
    // data of that round.
    const size_t len = 512 << 10;
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE,
                                       xferList({{srcA_->addr(), len}}),
                                       xferList({{dstB_->addr(), len}}),
                                       "B",
                                       req),
              NIXL_SUCCESS);
    for (uint32_t round = 0; round < 20; ++round) {
        fillPattern(srcA_->data(), len, 700 + round);
        nixl_opt_args_t extra;
        extra.notif = std::to_string(round);
        long long mismatch = -2;
        auto check_b = [&] {
            nixl_notifs_t fresh;
            b_->agent->getNotifs(fresh);
            for (const auto &m : fresh["A"]) {
                if (m == std::to_string(round)) {
                    mismatch = firstMismatch(dstB_->data(), len, 700 + round);
                }
            }
        };
        ASSERT_EQ(runXfer(*a_->agent, req, check_b, &extra), NIXL_SUCCESS);
        ASSERT_TRUE(waitFor([&] {
            check_b();
            return mismatch != -2;
        }));
        ASSERT_EQ(mismatch, -1) << "round " << round << ": notification before the data";
    }
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST_P(ucxPairTest, NotificationsOfAnySize) {
    for (size_t len : {size_t(0), size_t(1), size_t(8191), size_t(70000), size_t(10 << 20)}) {
        const std::string msg = patternString(len, static_cast<uint32_t>(len));
        ASSERT_EQ(a_->agent->genNotif("B", msg), NIXL_SUCCESS) << len;
        ASSERT_TRUE(waitFor([&] {
            boxA_.poll(*a_->agent); // the sender progresses its side of a large message
            boxB_.poll(*b_->agent);
            return boxB_.count("A", msg) == 1;
        })) << "notification of "
            << len << " bytes";
    }
    // A 4 MiB notification attached to a transfer.
    const std::string big = patternString(4 << 20, 77);
    fillPattern(srcA_->data(), 4096, 78);
    ASSERT_EQ(xfer(NIXL_WRITE, xferList({{srcA_->addr(), 4096}}),
                   xferList({{dstB_->addr(), 4096}}), "B", big),
              NIXL_SUCCESS);
    EXPECT_TRUE(waitNotif(boxB_, *b_->agent, "A", big));
    EXPECT_EQ(firstMismatch(dstB_->data(), 4096, 78), -1);
}

TEST_P(ucxPairTest, NotificationsAreKeyedBySender) {
    auto c = ucxAgent::make("C", setupFor(GetParam()));
    ASSERT_TRUE(c);
    std::string name;
    ASSERT_EQ(c->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
    ASSERT_EQ(b_->agent->loadRemoteMD(c->md(), name), NIXL_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(a_->agent->genNotif("B", "a" + std::to_string(i)), NIXL_SUCCESS);
        ASSERT_EQ(c->agent->genNotif("B", "c" + std::to_string(i)), NIXL_SUCCESS);
    }
    // Without a progress thread a sender's engine moves a queued message on its next call.
    notifBox box_c;
    ASSERT_TRUE(waitFor([&] {
        boxA_.poll(*a_->agent);
        box_c.poll(*c->agent);
        boxB_.poll(*b_->agent);
        return boxB_.total() == 6;
    })) << "from A: " << boxB_.from("A").size() << ", from C: " << boxB_.from("C").size();
    ASSERT_EQ(boxB_.total(), 6u);
    EXPECT_EQ(boxB_.from("A"), (std::vector<std::string>{"a0", "a1", "a2"}));
    EXPECT_EQ(boxB_.from("C"), (std::vector<std::string>{"c0", "c1", "c2"}));
}

TEST_P(ucxPairTest, ReleaseWhileRunning) {
    // Documented: SUCCESS once nothing can touch the buffers any more. On the UCX path the
    // posted operations cannot be recalled; if they do not finish within ucx_release_timeout_ms
    // (0 here, so the target in this thread gets the chance to progress) the answer is
    // NIXL_ERR_REPOST_ACTIVE and the caller releases again later.
    // The WRITE cannot finish before the release, however the threads are scheduled (with a
    // progress thread it otherwise could, and its notification would then rightly be sent):
    // the direct copy is held after 1 MiB (fault injection), and on the UCX path B2 shares
    // no cma transport with A2 and has no progress thread, so the software RMA waits for this
    // thread to poll B2.
    const size_t len = 32 << 20;
    testMem src(len);
    testMem dst(len);
    auto a = ucxAgent::make("A2", setupFor(GetParam(), {{"ucx_release_timeout_ms", "0"},
                                                        {"ucx_fault_direct_hold_bytes",
                                                         std::to_string(1 << 20)}}));
    ucxSetup silent = setupFor(GetParam(), {{"engine_config", "TLS=" + tlsWithoutCma()}});
    silent.progThread = false;
    auto b = ucxAgent::make("B2", silent);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->registerDram(src.addr(), len), NIXL_SUCCESS);
    ASSERT_EQ(b->registerDram(dst.addr(), len), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);
    ASSERT_EQ(b->agent->loadRemoteMD(a->md(), name), NIXL_SUCCESS);
    // One notification each way while both engines are polled, so that UCX's wireup is over
    // before B2 goes quiet: UCX 1.13 aborts when a tcp endpoint fails (B2 destroyed) with a
    // wireup message still queued on it.
    notifBox box;
    notifBox boxA;
    ASSERT_EQ(a->agent->genNotif("B2", "hello"), NIXL_SUCCESS);
    ASSERT_TRUE(waitFor([&] {
        boxA.poll(*a->agent);
        box.poll(*b->agent);
        return box.count("A2", "hello") == 1;
    }));
    ASSERT_EQ(b->agent->genNotif("A2", "hi"), NIXL_SUCCESS);
    ASSERT_TRUE(waitFor([&] {
        box.poll(*b->agent);
        boxA.poll(*a->agent);
        return boxA.count("B2", "hi") == 1;
    }));
    nixlXferReqH *req = nullptr;
    nixl_opt_args_t extra;
    extra.notif = "never";
    ASSERT_EQ(a->agent->createXferReq(NIXL_WRITE,
                                      xferList({{src.addr(), len}}),
                                      xferList({{dst.addr(), len}}),
                                      "B2",
                                      req,
                                      &extra),
              NIXL_SUCCESS);
    nixl_status_t st = a->agent->postXferReq(req);
    ASSERT_EQ(st, NIXL_IN_PROG) << nixlEnumStrings::statusStr(st);
    nixl_status_t rel = a->agent->releaseXferReq(req);
    if (rel == NIXL_ERR_REPOST_ACTIVE) {
        // Still allocated and still valid: let the target progress, then release again.
        ASSERT_TRUE(waitFor([&] {
            box.poll(*b->agent);
            return a->agent->getXferStatus(req) != NIXL_IN_PROG;
        }));
        ASSERT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
    } else {
        ASSERT_EQ(rel, NIXL_SUCCESS);
    }
    // No notification for a released request, and the engine stays usable.
    fillPattern(src.data(), 4096, 5);
    ASSERT_EQ(a->agent->createXferReq(NIXL_WRITE, xferList({{src.addr(), 4096}}),
                                      xferList({{dst.addr(), 4096}}), "B2", req),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a->agent, req, [&] { box.poll(*b->agent); }), NIXL_SUCCESS);
    EXPECT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst.data(), 4096, 5), -1);
    box.poll(*b->agent);
    EXPECT_EQ(box.count("A2", "never"), 0u);
}

TEST_P(ucxPairTest, InvalidateAndReload) {
    ASSERT_EQ(a_->agent->invalidateRemoteMD("B"), NIXL_SUCCESS);
    nixlXferReqH *req = nullptr;
    EXPECT_EQ(a_->agent->createXferReq(NIXL_WRITE, xferList({{srcA_->addr(), 64}}),
                                       xferList({{dstB_->addr(), 64}}), "B", req),
              NIXL_ERR_NOT_FOUND);
    std::string name;
    ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
    ASSERT_EQ(a_->agent->makeConnection("B"), NIXL_SUCCESS);
    fillPattern(srcA_->data(), 8192, 9);
    ASSERT_EQ(xfer(NIXL_WRITE, xferList({{srcA_->addr(), 8192}}),
                   xferList({{dstB_->addr(), 8192}}), "B", "again"),
              NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dstB_->data(), 8192, 9), -1);
    EXPECT_TRUE(waitNotif(boxB_, *b_->agent, "A", "again"));
}

TEST_P(ucxPairTest, MakeConnectionIsOptional) {
    EXPECT_EQ(a_->agent->makeConnection("B"), NIXL_SUCCESS);
    EXPECT_EQ(a_->agent->makeConnection("A"), NIXL_SUCCESS);
    EXPECT_EQ(a_->agent->makeConnection("nobody"), NIXL_ERR_NOT_FOUND);
}

INSTANTIATE_TEST_SUITE_P(Paths,
                         ucxPairTest,
                         ::testing::Values(pathParam{"direct", true, false},
                                           pathParam{"direct_pt", true, true},
                                           pathParam{"ucp", false, false},
                                           pathParam{"ucp_pt", false, true}),
                         [](const auto &info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------

TEST(ucxInproc, StaleRemoteKeyIsReported) {
    // Direct path only: UCX 1.13's software RMA would write into the unmapped target range.
    if (!cmaInTls()) {
        GTEST_SKIP() << "UCX_TLS excludes cma";
    }
    auto a = ucxAgent::make("A", {});
    auto b = ucxAgent::make("B", {});
    ASSERT_TRUE(a && b);
    testMem src(1 << 20);
    auto dst = std::make_unique<testMem>(1 << 20);
    ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
    ASSERT_EQ(b->registerDram(dst->addr(), dst->size()), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a->agent->createXferReq(NIXL_WRITE, xferList({{src.addr(), 4096}}),
                                      xferList({{dst->addr(), 4096}}), "B", req),
              NIXL_SUCCESS);
    fillPattern(src.data(), 4096, 3);
    ASSERT_EQ(runXfer(*a->agent, req), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst->data(), 4096, 3), -1);

    // B releases the registration (A is not told) and unmaps the memory.
    ASSERT_EQ(b->deregisterDram(dst->addr(), dst->size()), NIXL_SUCCESS);
    dst->unmap();
    EXPECT_EQ(runXfer(*a->agent, req), NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST(ucxInproc, UnreachablePeerIsRefused) {
    ucxSetup tcp;
    tcp.params["engine_config"] = "TLS=tcp";
    ucxSetup shm;
    shm.params["engine_config"] = "TLS=sysv,posix,self";
    auto a = ucxAgent::make("A", tcp);
    auto b = ucxAgent::make("B", shm);
    ASSERT_TRUE(a && b);
    testMem buf(4096);
    ASSERT_EQ(b->registerDram(buf.addr(), buf.size()), NIXL_SUCCESS);
    std::string name;
    EXPECT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_ERR_BACKEND);
}

TEST(ucxInproc, ParametersAreValidated) {
    for (const auto &bad : std::vector<nixl_b_params_t>{
             {{"num_workers", "0"}},
             {{"num_workers", "many"}},
             {{"ucx_error_handling_mode", "sometimes"}},
             {{"ucx_direct_cma", "maybe"}},
             {{"engine_config", "TLS"}},
             {{"engine_config", "=1"}},
             {{"ucx_peer_check_ms", "0"}},
             {{"ucx_fault_direct_hold_bytes", "lots"}},
         }) {
        ucxSetup s;
        s.params = bad;
        nixl_status_t st = NIXL_SUCCESS;
        auto a = ucxAgent::make("A", s, &st);
        EXPECT_FALSE(a) << bad.begin()->first << "=" << bad.begin()->second;
        EXPECT_NE(st, NIXL_SUCCESS);
    }
}

TEST(ucxInproc, PluginAndBackendParameters) {
    nixlAgent agent("P", nixlAgentConfig());
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(agent.getPluginParams("UCX", mems, params), NIXL_SUCCESS);
    EXPECT_NE(std::find(mems.begin(), mems.end(), DRAM_SEG), mems.end());
    for (const char *key : {"ucx_devices", "num_workers", "ucx_error_handling_mode",
                            "engine_config"}) {
        EXPECT_EQ(params.count(key), 1u) << key;
    }
    nixlBackendH *be = nullptr;
    ASSERT_EQ(agent.createBackend("UCX",
                                  {{"num_workers", "3"},
                                   {"device_list", "lo"},
                                   {"engine_config", "UCX_RNDV_THRESH=65536"}},
                                  be),
              NIXL_SUCCESS);
    ASSERT_EQ(agent.getBackendParams(be, mems, params), NIXL_SUCCESS);
    EXPECT_EQ(params["num_workers"], "3");
    EXPECT_EQ(params["ucx_error_handling_mode"], "peer");
    EXPECT_EQ(mems.front(), DRAM_SEG);
}

TEST(ucxInproc, WorkersAndThreads) {
    // Four workers, four threads posting at once (RW sync mode), some pinned by worker_id.
    ucxSetup s;
    s.params["num_workers"] = "4";
    s.sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_RW;
    for (bool direct : {true, false}) {
        s.params["ucx_direct_cma"] = direct ? "yes" : "no";
        s.progThread = !direct || !cmaInTls(); // a UCX-path target must progress
        auto a = ucxAgent::make("A", s);
        auto b = ucxAgent::make("B", s);
        ASSERT_TRUE(a && b);
        const size_t per = 1 << 20;
        testMem src(4 * per);
        testMem dst(4 * per);
        ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
        ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);
        ASSERT_EQ(b->agent->loadRemoteMD(a->md(), name), NIXL_SUCCESS);
        std::atomic<int> ok{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                const uint32_t seed = 900 + t;
                for (int round = 0; round < 5; ++round) {
                    fillPattern(src.data() + t * per, per, seed + round * 10);
                    nixl_opt_args_t extra;
                    if (t % 2 == 0) {
                        extra.customParam = "worker_id=" + std::to_string(t);
                    }
                    nixlXferReqH *req = nullptr;
                    if (a->agent->createXferReq(NIXL_WRITE,
                                                xferList({{src.addr() + t * per, per}}),
                                                xferList({{dst.addr() + t * per, per}}),
                                                "B",
                                                req,
                                                &extra) != NIXL_SUCCESS) {
                        return;
                    }
                    nixl_status_t st = runXfer(*a->agent, req);
                    a->agent->releaseXferReq(req);
                    if (st != NIXL_SUCCESS ||
                        firstMismatch(dst.data() + t * per, per, seed + round * 10) != -1) {
                        return;
                    }
                }
                ok.fetch_add(1);
            });
        }
        for (auto &th : threads) {
            th.join();
        }
        EXPECT_EQ(ok.load(), 4) << (direct ? "direct" : "ucp");

        nixlXferReqH *req = nullptr;
        nixl_opt_args_t extra;
        extra.customParam = "worker_id=4";
        EXPECT_EQ(a->agent->createXferReq(NIXL_WRITE, xferList({{src.addr(), 64}}),
                                          xferList({{dst.addr(), 64}}), "B", req, &extra),
                  NIXL_ERR_INVALID_PARAM);
    }
}

TEST(ucxInproc, ProgressThreadDeliversWithoutPolling) {
    // B has a progress thread and never calls into its agent while A's UCX-path WRITE runs.
    ucxSetup s;
    s.params["ucx_direct_cma"] = "no";
    s.progThread = true;
    s.pthrDelayUs = 500;
    auto a = ucxAgent::make("A", s);
    auto b = ucxAgent::make("B", s);
    ASSERT_TRUE(a && b);
    testMem src(2 << 20);
    testMem dst(2 << 20);
    ASSERT_EQ(a->registerDram(src.addr(), src.size()), NIXL_SUCCESS);
    ASSERT_EQ(b->registerDram(dst.addr(), dst.size()), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);
    fillPattern(src.data(), src.size(), 31);
    nixlXferReqH *req = nullptr;
    nixl_opt_args_t extra;
    extra.notif = "pt";
    ASSERT_EQ(a->agent->createXferReq(NIXL_WRITE, xferList({{src.addr(), src.size()}}),
                                      xferList({{dst.addr(), dst.size()}}), "B", req, &extra),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a->agent, req), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst.data(), dst.size(), 31), -1);
    a->agent->releaseXferReq(req);
    notifBox box;
    EXPECT_TRUE(waitFor([&] {
        box.poll(*b->agent);
        return box.count("A", "pt") == 1;
    }));
}

} // namespace
