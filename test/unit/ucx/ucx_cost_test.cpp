/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// estimateXferCost on UCX: an analytical estimate from UCX's model of the request's endpoint.
// Asserts only what the model promises (a positive duration that grows with the bytes, the
// method, the status after the peer is gone); the measured times it prints next to the
// estimates are for docs/backends/ucx.md, never asserted.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "ucx_test_utils.h"

using namespace nixl_ucx_test;

namespace {

class ucxCostTest : public ::testing::TestWithParam<bool> {
protected:
    static constexpr size_t buf_len = 16 << 20;

    void
    SetUp() override {
        ucxSetup s;
        s.params["ucx_direct_cma"] = GetParam() ? "yes" : "no";
        a_ = ucxAgent::make("costA", s);
        b_ = ucxAgent::make("costB", s);
        ASSERT_TRUE(a_ && b_);
        src_ = std::make_unique<testMem>(buf_len);
        dst_ = std::make_unique<testMem>(buf_len);
        ASSERT_EQ(a_->registerDram(src_->addr(), buf_len), NIXL_SUCCESS);
        ASSERT_EQ(b_->registerDram(dst_->addr(), buf_len), NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
    }

    /** A WRITE of n descriptors of len bytes each (consecutive ranges). */
    nixlXferReqH *
    makeReq(size_t n, size_t len, bool notif = false) {
        std::vector<std::pair<uintptr_t, size_t>> l;
        std::vector<std::pair<uintptr_t, size_t>> r;
        for (size_t i = 0; i < n; ++i) {
            l.emplace_back(src_->addr() + i * len, len);
            r.emplace_back(dst_->addr() + i * len, len);
        }
        nixl_opt_args_t extra;
        if (notif) {
            extra.notif = std::string("done");
        }
        nixlXferReqH *req = nullptr;
        EXPECT_EQ(a_->agent->createXferReq(
                      NIXL_WRITE, xferList(l), xferList(r), "costB", req, &extra),
                  NIXL_SUCCESS);
        return req;
    }

    std::chrono::microseconds
    estimate(nixlXferReqH *req, std::chrono::microseconds *margin = nullptr) {
        std::chrono::microseconds d{-1};
        std::chrono::microseconds m{-1};
        nixl_cost_t method = static_cast<nixl_cost_t>(7);
        EXPECT_EQ(a_->agent->estimateXferCost(req, d, m, method), NIXL_SUCCESS);
        EXPECT_EQ(method, nixl_cost_t::ANALYTICAL_BACKEND);
        EXPECT_GE(m.count(), 0);
        if (margin != nullptr) {
            *margin = m;
        }
        return d;
    }

    std::unique_ptr<ucxAgent> a_;
    std::unique_ptr<ucxAgent> b_;
    std::unique_ptr<testMem> src_;
    std::unique_ptr<testMem> dst_;
    notifBox boxB_;
};

TEST_P(ucxCostTest, GrowsWithTheBytes) {
    nixlXferReqH *small = makeReq(1, 4096);
    nixlXferReqH *large = makeReq(1, 8 << 20);
    nixlXferReqH *many = makeReq(1024, 4096);
    nixlXferReqH *withNotif = makeReq(1, 4096, true);
    ASSERT_TRUE(small && large && many && withNotif);
    std::chrono::microseconds margin{};
    const auto ts = estimate(small, &margin);
    const auto tl = estimate(large);
    const auto tm = estimate(many);
    const auto tn = estimate(withNotif);
    EXPECT_GT(ts.count(), 0);
    EXPECT_GT(tl, ts);
    // 1024 descriptors: 1024 times the bytes and the per-descriptor latency.
    EXPECT_GT(tm, ts);
    EXPECT_GE(tn, ts);
    EXPECT_EQ(margin.count(), 16 * ts.count()); // documented: 16 times the estimate
    // The estimate does not disturb the request: it still runs and arrives.
    fillPattern(src_->data(), 4096, 3);
    EXPECT_EQ(runXfer(*a_->agent, small, [this] { boxB_.poll(*b_->agent); }), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst_->data(), 4096, 3), -1);
    for (nixlXferReqH *r : {small, large, many, withNotif}) {
        EXPECT_EQ(a_->agent->releaseXferReq(r), NIXL_SUCCESS);
    }
}

TEST_P(ucxCostTest, RefusedOnceThePeerIsForgotten) {
    nixlXferReqH *req = makeReq(1, 4096);
    ASSERT_NE(req, nullptr);
    ASSERT_EQ(a_->agent->invalidateRemoteMD("costB"), NIXL_SUCCESS);
    std::chrono::microseconds d{};
    std::chrono::microseconds m{};
    nixl_cost_t method{};
    EXPECT_NE(a_->agent->estimateXferCost(req, d, m, method), NIXL_SUCCESS);
    a_->agent->releaseXferReq(req);
}

// Prints estimate and measured time side by side (median of 9 runs); asserts nothing about them.
TEST_P(ucxCostTest, PrintsEstimateAgainstMeasured) {
    for (size_t len : {size_t(4096), size_t(64) << 10, size_t(1) << 20, size_t(16) << 20}) {
        nixlXferReqH *req = makeReq(1, len);
        ASSERT_NE(req, nullptr);
        const auto est = estimate(req);
        std::vector<double> us;
        for (int i = 0; i < 9; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            ASSERT_EQ(runXfer(*a_->agent, req, [this] { boxB_.poll(*b_->agent); }),
                      NIXL_SUCCESS);
            us.push_back(std::chrono::duration<double, std::micro>(
                             std::chrono::steady_clock::now() - t0)
                             .count());
        }
        std::sort(us.begin(), us.end());
        std::printf("cost %s path: %9zu bytes: estimate %8lld us, measured median %10.1f us\n",
                    GetParam() ? "direct" : "ucx",
                    len,
                    static_cast<long long>(est.count()),
                    us[us.size() / 2]);
        EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
    }
}

INSTANTIATE_TEST_SUITE_P(Paths,
                         ucxCostTest,
                         ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &i) {
                             return i.param ? "direct" : "ucx";
                         });

} // namespace
