/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Many threads on one agent with a UCX backend (RW sync mode, where getNotifs shares the
// reader lock with the transfer calls): threads posting and polling loopback WRITEs with
// notifications, a thread sending standalone notifications to the agent (from itself and from
// a second agent), and several threads draining the agent's notifications at once. Every
// notification must come out of exactly one drain. Meant to run under ThreadSanitizer.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "ucx_test_utils.h"

using namespace nixl_ucx_test;

namespace {

struct notifThreadsParam {
    const char *name;
    bool direct;
    bool progThread;
};

class ucxNotifThreadsTest : public ::testing::TestWithParam<notifThreadsParam> {};

constexpr int posters = 3;
constexpr int drainers = 3;
constexpr int rounds = 30;
constexpr int standalone = 30;
constexpr size_t slot_len = 64 << 10;

TEST_P(ucxNotifThreadsTest, ConcurrentDrainsDeliverEveryNotificationOnce) {
    ucxSetup s;
    s.sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_RW;
    s.params["ucx_direct_cma"] = GetParam().direct ? "yes" : "no";
    s.progThread = GetParam().progThread;
    testMem mem(2 * posters * slot_len); // before the agents: it must outlive them
    auto a = ucxAgent::make("A", s);
    auto b = ucxAgent::make("B", s);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->registerDram(mem.addr(), mem.size()), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(b->agent->loadRemoteMD(a->md(), name), NIXL_SUCCESS);
    ASSERT_EQ(a->agent->loadRemoteMD(b->md(), name), NIXL_SUCCESS);

    const size_t expected = static_cast<size_t>(posters) * rounds + 2 * standalone;
    std::atomic<bool> go{false};
    std::atomic<size_t> delivered{0};
    std::atomic<bool> stop{false}; // all delivered, or a drainer gave up
    std::vector<std::string> failures(posters + 1 + drainers);
    std::vector<nixl_notifs_t> got(drainers);
    std::vector<std::thread> threads;
    auto waitGo = [&] {
        while (!go.load(std::memory_order_acquire)) {
        }
    };
    for (int t = 0; t < posters; ++t) {
        threads.emplace_back([&, t] {
            waitGo();
            const uintptr_t from = mem.addr() + 2 * t * slot_len;
            uint8_t *to = mem.data() + (2 * t + 1) * slot_len;
            nixlXferReqH *req = nullptr;
            if (a->agent->createXferReq(NIXL_WRITE, xferList({{from, slot_len}}),
                                        xferList({{from + slot_len, slot_len}}), "A",
                                        req) != NIXL_SUCCESS) {
                failures[t] = "createXferReq";
                return;
            }
            for (int i = 0; i < rounds; ++i) {
                const uint32_t seed = static_cast<uint32_t>(100 * t + i);
                fillPattern(mem.data() + 2 * t * slot_len, slot_len, seed);
                nixl_opt_args_t extra;
                extra.notif = "p" + std::to_string(t) + "." + std::to_string(i);
                const nixl_status_t st = runXfer(*a->agent, req, nullptr, &extra);
                if (st != NIXL_SUCCESS || firstMismatch(to, slot_len, seed) != -1) {
                    failures[t] = "transfer " + std::to_string(i) + ": " +
                        nixlEnumStrings::statusStr(st);
                    break;
                }
            }
            if (a->agent->releaseXferReq(req) != NIXL_SUCCESS) {
                failures[t] = "releaseXferReq";
            }
        });
    }
    threads.emplace_back([&] {
        waitGo();
        for (int i = 0; i < standalone; ++i) {
            if (a->agent->genNotif("A", "s" + std::to_string(i)) != NIXL_SUCCESS ||
                b->agent->genNotif("A", "y" + std::to_string(i)) != NIXL_SUCCESS) {
                failures[posters] = "genNotif " + std::to_string(i);
                break;
            }
        }
        // B's sends may still wait in its worker: keep B progressing until A has them all.
        nixl_notifs_t none;
        while (!stop.load(std::memory_order_acquire)) {
            if (b->agent->getNotifs(none) != NIXL_SUCCESS || !none.empty()) {
                failures[posters] = "B's getNotifs";
                break;
            }
        }
    });
    for (int d = 0; d < drainers; ++d) {
        threads.emplace_back([&, d] {
            waitGo();
            const bool all = waitFor([&] {
                if (stop.load(std::memory_order_acquire)) {
                    return true;
                }
                size_t before = 0;
                for (const auto &[k, v] : got[d]) {
                    before += v.size();
                }
                if (a->agent->getNotifs(got[d]) != NIXL_SUCCESS) {
                    failures[posters + 1 + d] = "getNotifs";
                    return true;
                }
                size_t after = 0;
                for (const auto &[k, v] : got[d]) {
                    after += v.size();
                }
                return delivered.fetch_add(after - before, std::memory_order_acq_rel) +
                    (after - before) >= expected;
            });
            if (!all) {
                failures[posters + 1 + d] = "not every notification arrived in time";
            }
            stop.store(true, std::memory_order_release);
        });
    }
    go.store(true, std::memory_order_release);
    for (auto &th : threads) {
        th.join();
    }
    for (size_t i = 0; i < failures.size(); ++i) {
        EXPECT_EQ("", failures[i]) << "thread " << i;
    }

    // A last drain finds nothing: nothing was delivered twice or late.
    nixl_notifs_t rest;
    ASSERT_EQ(a->agent->getNotifs(rest), NIXL_SUCCESS);
    std::map<std::string, int> seen; // "sender/message" -> times delivered
    for (const nixl_notifs_t &m : got) {
        for (const auto &[sender, msgs] : m) {
            for (const nixl_blob_t &msg : msgs) {
                ++seen[sender + "/" + msg];
            }
        }
    }
    for (const auto &[sender, msgs] : rest) {
        for (const nixl_blob_t &msg : msgs) {
            ++seen[sender + "/" + msg];
        }
    }
    std::map<std::string, int> want;
    for (int t = 0; t < posters; ++t) {
        for (int i = 0; i < rounds; ++i) {
            want["A/p" + std::to_string(t) + "." + std::to_string(i)] = 1;
        }
    }
    for (int i = 0; i < standalone; ++i) {
        want["A/s" + std::to_string(i)] = 1;
        want["B/y" + std::to_string(i)] = 1;
    }
    EXPECT_EQ(want, seen);

    // Settle the A -> B direction before the agents go (see ucxPairTest::TearDown).
    ASSERT_EQ(a->agent->genNotif("B", "bye"), NIXL_SUCCESS);
    notifBox box;
    EXPECT_TRUE(waitFor([&] {
        nixl_notifs_t ignored;
        a->agent->getNotifs(ignored);
        box.poll(*b->agent);
        return box.count("A", "bye") == 1;
    }));
}

INSTANTIATE_TEST_SUITE_P(Paths,
                         ucxNotifThreadsTest,
                         ::testing::Values(notifThreadsParam{"direct", true, false},
                                           notifThreadsParam{"ucp_pt", false, true}),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
