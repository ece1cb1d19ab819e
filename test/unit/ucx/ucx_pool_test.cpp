/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// num_threads > 0 (NIXL's thread-pool engine): a request of more descriptors than
// split_batch_size is posted in batches by the engine's threads. Two agents of one process,
// on the direct path (memcpy) and the UCP path, with the progress thread off and on; the
// two-process cases (process_vm_writev and UCP between processes) are in ucx_twoproc_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <tuple>

#include "ucx_test_utils.h"
#include "../../common/log_capture.h"

using namespace nixl_ucx_test;
using nixl_test::stderrCapture;

namespace {

#if defined(__SANITIZE_THREAD__)
// In one process the notification reaches B through UCX's shared memory, which TSan does not
// see (tsan.supp says why), so a read of the data at its arrival is reported against the pool
// thread's copy. Under TSan the data is checked once the request completed (a status TSan
// sees); ucxTwoProcTest.PoolThreads* checks it at the notification in every build.
constexpr bool check_at_notif = false;
#else
constexpr bool check_at_notif = true;
#endif

struct poolParam {
    const char *name;
    bool direct;
    bool progThread;
    const char *threads;
};

class ucxPoolTest : public ::testing::TestWithParam<poolParam> {
protected:
    static constexpr size_t buf_len = 32 << 20;
    /** Small enough that the requests below make dozens to hundreds of batches. */
    static constexpr const char *split = "64";

    ucxSetup
    setup(bool pool) const {
        ucxSetup s;
        s.params["ucx_direct_cma"] = GetParam().direct ? "yes" : "no";
        // A UCP-path release waits for what the request posted to reach the target (its
        // flush); under ThreadSanitizer 32 MiB of software RMA take longer than the default
        // 2 s, after which release says NIXL_ERR_REPOST_ACTIVE. Generous, as every wait here.
        s.params["ucx_release_timeout_ms"] = "60000";
        if (pool) {
            s.params["num_threads"] = GetParam().threads;
            s.params["split_batch_size"] = split;
        }
        s.progThread = GetParam().progThread;
        return s;
    }

    void
    SetUp() override {
        a_ = ucxAgent::make("A", setup(true));
        b_ = ucxAgent::make("B", setup(false));
        ASSERT_TRUE(a_ && b_);
        src_ = std::make_unique<testMem>(buf_len);
        dst_ = std::make_unique<testMem>(buf_len);
        ASSERT_EQ(a_->registerDram(src_->addr(), buf_len), NIXL_SUCCESS);
        ASSERT_EQ(b_->registerDram(dst_->addr(), buf_len), NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
        ASSERT_EQ(b_->agent->loadRemoteMD(a_->md(), name), NIXL_SUCCESS);
    }

    void
    TearDown() override {
        // A notification each way settles UCX's wireup before the agents go (ucx_inproc_test).
        if (!a_ || !b_) {
            return;
        }
        for (auto [from, box, to, sender] :
             {std::tuple{a_.get(), &boxB_, "B", "A"}, std::tuple{b_.get(), &boxA_, "A", "B"}}) {
            if (from->agent->genNotif(to, "teardown") == NIXL_SUCCESS) {
                EXPECT_TRUE(waitFor([&, box = box, sender = sender] {
                    boxA_.poll(*a_->agent);
                    boxB_.poll(*b_->agent);
                    return box->count(sender, "teardown") > 0;
                }));
            }
        }
    }

    /** n descriptors of block bytes, in reverse order (a misplaced one fails the check). */
    void
    lists(size_t n, size_t block, nixl_xfer_dlist_t &l, nixl_xfer_dlist_t &r) const {
        std::vector<std::pair<uintptr_t, size_t>> lv;
        std::vector<std::pair<uintptr_t, size_t>> rv;
        for (size_t j = 0; j < n; ++j) {
            const size_t k = n - 1 - j;
            lv.emplace_back(src_->addr() + k * block, block);
            rv.emplace_back(dst_->addr() + k * block, block);
        }
        l = xferList(lv);
        r = xferList(rv);
    }

    /**
     * Posts req (notification msg), polls both agents until it completes, and checks that the
     * notification arrives exactly when all `len` bytes at check_at match seed: the check
     * runs the moment B first sees it. Returns the request's final status.
     */
    nixl_status_t
    runChecked(nixlXferReqH *req,
               const std::string &msg,
               const uint8_t *check_at,
               size_t len,
               uint32_t seed) {
        const size_t before = boxB_.count("A", msg);
        nixl_status_t st = a_->agent->postXferReq(req);
        // More than split_batch_size descriptors: the post only queues the batches.
        EXPECT_EQ(st, NIXL_IN_PROG);
        long long bad_at_notif = -2; // not seen yet
        EXPECT_TRUE(waitFor([&] {
            if (st == NIXL_IN_PROG) {
                st = a_->agent->getXferStatus(req);
            }
            boxB_.poll(*b_->agent);
            if (bad_at_notif == -2 && boxB_.count("A", msg) > before &&
                (check_at_notif || st != NIXL_IN_PROG)) {
                bad_at_notif = firstMismatch(check_at, len, seed);
            }
            return st != NIXL_IN_PROG && bad_at_notif != -2;
        })) << "status " << st;
        EXPECT_EQ(bad_at_notif, -1) << "data incomplete when the notification arrived";
        return st;
    }

    /** Sends a marker A -> B after everything else and waits for it. */
    void
    marker(const std::string &m) {
        ASSERT_EQ(a_->agent->genNotif("B", m), NIXL_SUCCESS);
        ASSERT_TRUE(waitFor([&] {
            boxA_.poll(*a_->agent);
            boxB_.poll(*b_->agent);
            return boxB_.count("A", m) == 1;
        }));
    }

    std::unique_ptr<testMem> src_;
    std::unique_ptr<testMem> dst_;
    std::unique_ptr<ucxAgent> a_;
    std::unique_ptr<ucxAgent> b_;
    notifBox boxA_;
    notifBox boxB_;
};

TEST_P(ucxPoolTest, ManyBatchesWriteAndReadVerified) {
    const size_t n = 4096;
    const size_t block = 1024;
    nixl_xfer_dlist_t l(DRAM_SEG);
    nixl_xfer_dlist_t r(DRAM_SEG);
    lists(n, block, l, r);
    nixl_opt_args_t extra;
    extra.notif = "pool-w";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, l, r, "B", req, &extra), NIXL_SUCCESS);
    // Three posts of one request (reposts too go through the pool), new data each time.
    for (uint32_t round = 0; round < 3; ++round) {
        fillPattern(src_->data(), n * block, 30 + round);
        std::memset(dst_->data(), 0, n * block);
        ASSERT_EQ(runChecked(req, "pool-w", dst_->data(), n * block, 30 + round), NIXL_SUCCESS)
            << "round " << round;
    }
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);

    // READ: B's data back into A's cleared buffer; B is told after A has all of it.
    std::memset(src_->data(), 0, n * block);
    extra.notif = "pool-r";
    ASSERT_EQ(a_->agent->createXferReq(NIXL_READ, l, r, "B", req, &extra), NIXL_SUCCESS);
    ASSERT_EQ(runChecked(req, "pool-r", src_->data(), n * block, 32), NIXL_SUCCESS);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);

    marker("after");
    EXPECT_EQ(boxB_.count("A", "pool-w"), 3u);
    EXPECT_EQ(boxB_.count("A", "pool-r"), 1u);
}

TEST_P(ucxPoolTest, UnevenBatchesAndEmptyDescriptors) {
    // 1000 descriptors of varying length (some empty): 15 full batches and one of 40.
    const size_t n = 1000;
    std::vector<std::pair<uintptr_t, size_t>> lv;
    std::vector<std::pair<uintptr_t, size_t>> rv;
    size_t off = 0;
    for (size_t i = 0; i < n; ++i) {
        const size_t len = i % 7 == 3 ? 0 : 100 + (i * 37) % 3000;
        lv.emplace_back(src_->addr() + off, len);
        rv.emplace_back(dst_->addr() + off, len);
        off += len;
    }
    fillPattern(src_->data(), off, 7);
    std::memset(dst_->data(), 0, off);
    nixl_opt_args_t extra;
    extra.notif = "uneven";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, xferList(lv), xferList(rv), "B", req, &extra),
              NIXL_SUCCESS);
    ASSERT_EQ(runChecked(req, "uneven", dst_->data(), off, 7), NIXL_SUCCESS);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST_P(ucxPoolTest, SmallRequestPostsOnTheCaller) {
    // At most split_batch_size descriptors: the path of num_threads=0, unchanged.
    fillPattern(src_->data(), 4096, 3);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, xferList({{src_->addr(), 4096}}),
                                       xferList({{dst_->addr(), 4096}}), "B", req),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a_->agent, req, [&] { boxB_.poll(*b_->agent); }), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst_->data(), 4096, 3), -1);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST_P(ucxPoolTest, ReleaseWhileBatchesRun) {
    // 8192 descriptors of 4 KiB in batches of 64: the post returns with every batch queued,
    // and the release comes right after it, while they are being posted.
    const size_t n = 8192;
    const size_t block = 4096;
    nixl_xfer_dlist_t l(DRAM_SEG);
    nixl_xfer_dlist_t r(DRAM_SEG);
    lists(n, block, l, r);
    // A UCP-path release waits for UCX's operations, which a target without a progress thread
    // only completes while polled: B is served throughout, as a separate process would be.
    std::atomic<bool> done{false};
    notifBox served;
    std::thread server([&] {
        while (!done.load()) {
            served.poll(*b_->agent);
        }
    });
    for (int round = 0; round < 5; ++round) {
        nixl_opt_args_t extra;
        extra.notif = "released";
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, l, r, "B", req, &extra), NIXL_SUCCESS);
        ASSERT_EQ(a_->agent->postXferReq(req), NIXL_IN_PROG);
        EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS) << "round " << round;
    }
    done = true;
    server.join();
    // At most one notification per post (only a post that completed before its release).
    marker("after-release");
    EXPECT_LE(served.count("A", "released") + boxB_.count("A", "released"), 5u);
    // The engine is still whole: a pooled transfer afterwards moves all its data.
    fillPattern(src_->data(), n * block, 91);
    nixl_opt_args_t extra;
    extra.notif = "again";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, l, r, "B", req, &extra), NIXL_SUCCESS);
    ASSERT_EQ(runChecked(req, "again", dst_->data(), n * block, 91), NIXL_SUCCESS);
    EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
}

TEST_P(ucxPoolTest, AgentDestroyedWithBatchesQueued) {
    const size_t n = 8192;
    const size_t block = 4096;
    nixl_xfer_dlist_t l(DRAM_SEG);
    nixl_xfer_dlist_t r(DRAM_SEG);
    lists(n, block, l, r);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, l, r, "B", req), NIXL_SUCCESS);
    ASSERT_EQ(a_->agent->postXferReq(req), NIXL_IN_PROG);
    // Not released: the agent's destruction releases it (the running batches are waited for,
    // the queued ones skipped) and the engine joins its threads. A UCP-path target must be
    // served meanwhile for UCX's operations to finish.
    std::atomic<bool> done{false};
    std::thread server([&] {
        while (!done.load()) {
            boxB_.poll(*b_->agent);
        }
    });
    a_.reset();
    done = true;
    server.join();
    // B is unharmed: another agent can still write to it.
    auto c = ucxAgent::make("C", setup(true));
    ASSERT_TRUE(c);
    ASSERT_EQ(c->registerDram(src_->addr(), buf_len), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(c->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
    fillPattern(src_->data(), n * block, 5);
    ASSERT_EQ(c->agent->createXferReq(NIXL_WRITE, l, r, "B", req), NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*c->agent, req, [&] { boxB_.poll(*b_->agent); }), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst_->data(), n * block, 5), -1);
    EXPECT_EQ(c->agent->releaseXferReq(req), NIXL_SUCCESS);
    b_.reset(); // no teardown handshake: A is gone
}

INSTANTIATE_TEST_SUITE_P(Paths,
                         ucxPoolTest,
                         ::testing::Values(poolParam{"direct_1", true, false, "1"},
                                           poolParam{"direct_2", true, false, "2"},
                                           poolParam{"direct_pt_2", true, true, "2"},
                                           poolParam{"ucp_1", false, false, "1"},
                                           poolParam{"ucp_2", false, false, "2"},
                                           poolParam{"ucp_pt_2", false, true, "2"}),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace

TEST(ucxPoolParams, BadValuesAreRefusedInOneLine) {
    for (const auto &[key, value] : std::vector<std::pair<std::string, std::string>>{
             {"num_threads", "-1"},
             {"num_threads", "two"},
             {"num_threads", "65"},
             {"num_threads", "99999999999999999999999"},
             {"num_threads", "1.5"},
             {"split_batch_size", "0"},
             {"split_batch_size", "-4"},
             {"split_batch_size", "x"},
             {"split_batch_size", "1048577"},
         }) {
        ucxSetup s;
        s.params[key] = value;
        stderrCapture log;
        nixl_status_t st = NIXL_SUCCESS;
        auto a = ucxAgent::make("P", s, &st);
        const std::string text = log.stop();
        EXPECT_FALSE(a) << key << "=" << value;
        EXPECT_EQ(st, NIXL_ERR_INVALID_PARAM) << key << "=" << value;
        size_t lines = 0;
        for (size_t pos = 0; (pos = text.find(key, pos)) != std::string::npos; ++pos) {
            ++lines;
            pos = text.find('\n', pos);
            if (pos == std::string::npos) {
                break;
            }
        }
        EXPECT_EQ(lines, 1u) << key << "=" << value << ":\n" << text;
    }
}

TEST(ucxPoolParams, AcceptedAndAdvertised) {
    nixlAgent agent("P", nixlAgentConfig());
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(agent.getPluginParams("UCX", mems, params), NIXL_SUCCESS);
    EXPECT_EQ(params["num_threads"], "0");
    EXPECT_EQ(params["split_batch_size"], "1024");
    for (const char *n : {"0", "1", "2", "64"}) {
        ucxSetup s;
        s.params["num_threads"] = n;
        s.params["split_batch_size"] = "1";
        nixl_status_t st = NIXL_ERR_UNKNOWN;
        EXPECT_TRUE(ucxAgent::make(std::string("T") + n, s, &st)) << n;
        EXPECT_EQ(st, NIXL_SUCCESS) << n;
    }
}
