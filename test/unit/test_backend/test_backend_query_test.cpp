/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * TEST plugin through its C ABI (see test_backend_test.cpp): queryMem and cost estimates,
 * posts from several threads, and the allocation-free hot path.
 */
#include "test_backend_fixture.h"

namespace nixlTestBackendUt {
namespace {

// ---------------------------------------------------------------------------------------------
// Queries

TEST_F(testBackend, QueryMemAnswersCoveredDescriptors) {
    testEngine a("A");
    std::vector<unsigned char> buf(1000);
    nixl_be_md_t *md = a.reg(buf.data() + 100, 500);
    const uintptr_t base = reinterpret_cast<uintptr_t>(buf.data());
    nixl_be_desc_t q[4] = {{base + 100, 500, 0, {nullptr, 0}},
                           {base + 200, 10, 0, {nullptr, 0}},
                           {base + 590, 20, 0, {nullptr, 0}},
                           {base, 50, 0, {nullptr, 0}}};
    query_answer_t answer;
    nixl_be_query_sink_t sink{&answer, putQuery};
    ASSERT_EQ(ops().query_mem(a.get(), q, 4, DRAM_SEG, &sink), NIXL_PLUGIN_SUCCESS);
    const kv_map_t yes = {{"registered", "true"}};
    EXPECT_EQ(answer.size(), 2u);
    EXPECT_EQ(answer[0], yes);
    EXPECT_EQ(answer[1], yes);
    EXPECT_EQ(answer.count(2), 0u); // straddles the end
    EXPECT_EQ(answer.count(3), 0u);
    EXPECT_EQ(ops().deregister_mem(a.get(), md), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, EstimateXferCostModelsTenGigabytesPerSecond) {
    pairSetup s({}, 1 << 20);
    ASSERT_TRUE(s.ok());
    xferLists w;
    w.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 500000);
    w.add(s.bufA.data() + 500000, s.mdA, s.bufB.data() + 500000, s.remoteB, 500000);
    int64_t duration = -1;
    int64_t margin = -1;
    uint32_t method = 99;
    ASSERT_EQ(ops().estimate_xfer_cost(s.a.get(), NIXL_WRITE, w.local(), w.remote(),
                                       str(std::string("B")), nullptr, &duration, &margin,
                                       &method),
              NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(duration, 100); // 1e6 bytes at 1e10 B/s = 100 us
    EXPECT_EQ(margin, 0);
    EXPECT_EQ(method, static_cast<uint32_t>(nixl_cost_t::ANALYTICAL_BACKEND));

    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_READ, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    duration = -1;
    ASSERT_EQ(ops().estimate_xfer_cost(s.a.get(), NIXL_READ, w.local(), w.remote(),
                                       str(std::string("B")), req, &duration, &margin, &method),
              NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(duration, 100);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

// ---------------------------------------------------------------------------------------------
// Threads and the hot path

class concurrencyTest : public testBackend, public ::testing::WithParamInterface<bool> {};

/*
 * Several threads post their own requests (each into a chunk of B written exactly once) while
 * another drains B's notifications and, on each one, reads the chunk it announces. If a
 * notification were queued before its data, that read would race with the copy (TSan reports
 * it) or see stale bytes (the byte check fails).
 */
TEST_P(concurrencyTest, PostsFromThreadsOnSeparateRequests) {
    constexpr size_t threads = 6;
    constexpr size_t rounds = 60;
    constexpr size_t chunk = 256;
    constexpr size_t gen_every = 10;
    const bool async = GetParam();
    pairSetup s({{"async", async ? "true" : "false"}}, threads * rounds * chunk);
    ASSERT_TRUE(s.ok());

    std::vector<xferLists> lists(threads * rounds);
    std::vector<nixl_be_req_t *> reqs(threads * rounds, nullptr);
    for (size_t i = 0; i < lists.size(); ++i) {
        lists[i] = slice(s, i * chunk, chunk);
        ASSERT_EQ(s.a.prep(NIXL_WRITE, lists[i], "B", &reqs[i]), NIXL_PLUGIN_SUCCESS);
    }

    const size_t expected = threads * rounds + threads * (rounds / gen_every);
    std::atomic<size_t> badChunks{0};
    std::atomic<size_t> badOrder{0};
    std::vector<std::thread> workers;
    for (size_t t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (size_t r = 0; r < rounds; ++r) {
                const size_t i = t * rounds + r;
                const std::string msg = std::to_string(i);
                nixl_be_opt_args_t opt = notifArgs(msg);
                nixl_plugin_status_t st = s.a.post(NIXL_WRITE, lists[i], "B", reqs[i], &opt);
                while (st == NIXL_PLUGIN_IN_PROG) {
                    st = s.a.check(reqs[i]);
                }
                EXPECT_EQ(st, NIXL_PLUGIN_SUCCESS);
                if ((r + 1) % gen_every == 0) {
                    EXPECT_EQ(s.a.genNotif("B", "gen"), NIXL_PLUGIN_SUCCESS);
                }
            }
        });
    }
    std::thread drainer([&] {
        notif_vec_t got;
        std::vector<long long> last(threads, -1);
        size_t seen = 0;
        while (seen < expected) {
            got.clear();
            ASSERT_EQ(s.b.drainInto(got), NIXL_PLUGIN_SUCCESS);
            for (const auto &[sender, msg] : got) {
                EXPECT_EQ(sender, "A");
                ++seen;
                if (msg == "gen") {
                    continue;
                }
                const size_t i = std::stoul(msg);
                if (!sameRange(s.bufA, s.bufB, i * chunk, chunk)) {
                    ++badChunks;
                }
                // One thread's posts complete in order, so their notifications arrive in order.
                const size_t t = i / rounds;
                if (static_cast<long long>(i) <= last[t]) {
                    ++badOrder;
                }
                last[t] = static_cast<long long>(i);
            }
            std::this_thread::yield();
        }
    });
    for (auto &w : workers) {
        w.join();
    }
    drainer.join();

    EXPECT_EQ(badChunks.load(), 0u);
    EXPECT_EQ(badOrder.load(), 0u);
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_TRUE(s.b.notifs().empty());
    for (nixl_be_req_t *req : reqs) {
        EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    }
}

INSTANTIATE_TEST_SUITE_P(inlineAndAsync,
                         concurrencyTest,
                         ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                             return info.param ? std::string("async") : std::string("inline");
                         });

TEST_F(testBackend, PostOfPreparedRequestAllocatesNothingWithoutNotif) {
    if (!allocCounter::available()) {
        GTEST_SKIP() << "allocation counting is off under sanitizers";
    }
    for (const char *async : {"false", "true"}) {
        pairSetup s({{"async", async}, {"async_polls", "2"}});
        ASSERT_TRUE(s.ok());
        xferLists w = slice(s, 0, 4096);
        nixl_be_req_t *req = nullptr;
        ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
        const nixl_be_xfer_list_t *local = w.local();
        const nixl_be_xfer_list_t *remote = w.remote();
        const std::string b = "B";
        const nixl_be_opt_args_t opt = noNotifArgs();
        for (const nixl_be_opt_args_t *o : {static_cast<const nixl_be_opt_args_t *>(nullptr),
                                            &opt}) {
            fill(s.bufA, o == nullptr ? 50 : 51);
            allocCounter::start();
            nixl_plugin_status_t st =
                ops().post_xfer(s.a.get(), NIXL_WRITE, local, remote, str(b), req, o);
            while (st == NIXL_PLUGIN_IN_PROG) {
                st = ops().check_xfer(s.a.get(), req);
            }
            const size_t allocs = allocCounter::stop();
            EXPECT_EQ(st, NIXL_PLUGIN_SUCCESS);
            EXPECT_EQ(allocs, 0u) << "async=" << async;
            EXPECT_EQ(s.bufB, s.bufA);
        }

        // Control: the counter does see the plugin's allocations (a notification is queued).
        const nixl_be_opt_args_t with = notifArgs("a notification longer than any small buffer");
        allocCounter::start();
        nixl_plugin_status_t st =
            ops().post_xfer(s.a.get(), NIXL_WRITE, local, remote, str(b), req, &with);
        while (st == NIXL_PLUGIN_IN_PROG) {
            st = ops().check_xfer(s.a.get(), req);
        }
        EXPECT_GT(allocCounter::stop(), 0u);
        EXPECT_EQ(st, NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(s.b.notifs().size(), 1u);
        EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    }
}

} // namespace
} // namespace nixlTestBackendUt
