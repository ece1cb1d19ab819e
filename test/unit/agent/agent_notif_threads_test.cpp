/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// getNotifs beside the transfer calls on one agent: in RW mode it shares the reader lock, so a
// thread draining notifications does not stall the threads making, posting and polling
// transfers; and many threads posting, polling, sending and draining at once get every
// notification exactly once. Meant to run under ThreadSanitizer as well. No sleeps and no
// timing: the TEST backend's hold_notifs makes the threads meet inside the engine.

#include <atomic>
#include <map>
#include <thread>

#include "agent_test_utils.h"

namespace nixl_agent_test {
namespace {

// The TEST backend's hold_notifs: getNotifs, once inside the engine, waits until a postXfer and
// a checkXfer of that engine returned; postXfer waits until a getNotifs entered. With getNotifs
// under the writer lock (as it once was) both waits would be deadlocks, which the engine breaks
// after 60 s by failing the call: the test then fails instead of hanging.
TEST_F(agentTest, TransferCallsRunWhileAThreadIsInsideGetNotifs) {
    auto x = makeAgent("X", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_RW));
    ASSERT_EQ(NIXL_SUCCESS,
              addTest(*x, {{"async", "true"}, {"async_polls", "0"}, {"hold_notifs", "true"}}));
    testBuffer src(4096, 5);
    testBuffer dst(4096, 0);
    testBuffer other(4096, 0);
    ASSERT_EQ(NIXL_SUCCESS, x->registerMem(regList({src.desc(), dst.desc(), other.desc()})));

    nixl_opt_args_t notif;
    notif.notif = "held";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, x->createXferReq(NIXL_WRITE, xferList({src.desc()}),
                                             xferList({dst.desc()}), "X", req, &notif));

    nixl_notifs_t drained;
    nixl_status_t drain_st = NIXL_ERR_UNKNOWN;
    std::thread drainer([&] { drain_st = x->getNotifs(drained); });

    // Returns only once the drainer is inside the engine's getNotifs, which then waits for this
    // post and a status check: everything from here to the check runs while it is inside.
    EXPECT_EQ(NIXL_IN_PROG, x->postXferReq(req));
    nixlDlistH *local = nullptr;
    nixlDlistH *remote = nullptr;
    nixlXferReqH *made = nullptr;
    EXPECT_EQ(NIXL_SUCCESS, x->prepXferDlist(xferList({src.desc()}), local));
    EXPECT_EQ(NIXL_SUCCESS, x->prepXferDlist("X", xferList({other.desc()}), remote));
    EXPECT_EQ(NIXL_SUCCESS, x->makeXferReq(NIXL_WRITE, local, {0}, remote, {0}, made));
    EXPECT_EQ(NIXL_SUCCESS, x->genNotif("X", "standalone"));
    // Completes the transfer (async_polls 0), which queues "held", and releases the drainer.
    EXPECT_EQ(NIXL_SUCCESS, x->getXferStatus(req));
    drainer.join();

    EXPECT_EQ(NIXL_SUCCESS, drain_st);
    EXPECT_EQ((std::vector<nixl_blob_t>{"standalone", "held"}), drained["X"]);
    EXPECT_TRUE(holdsPattern(dst, 5));

    // The request made while the drainer was inside works (its post meets no drainer now: one
    // entered already).
    ASSERT_NE(nullptr, made);
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*x, made));
    EXPECT_TRUE(holdsPattern(other, 5));
    EXPECT_EQ(NIXL_SUCCESS, x->releaseXferReq(made));
    EXPECT_EQ(NIXL_SUCCESS, x->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, x->releasedDlistH(remote));
    EXPECT_EQ(NIXL_SUCCESS, x->releaseXferReq(req));
}

class agentNotifStressTest : public agentTest,
                             public ::testing::WithParamInterface<nixl_thread_sync_t> {};

constexpr int posters = 4;
constexpr int drainers = 3;
constexpr int rounds = 60;
constexpr int standalone = 60;

/** "p<t>.<i>" -> (t, i); false for a message of another shape. */
bool
parsePosted(const nixl_blob_t &m, int &t, int &i) {
    const size_t dot = m.find('.');
    if (m.size() < 4 || m[0] != 'p' || dot == std::string::npos) {
        return false;
    }
    t = std::stoi(m.substr(1, dot - 1));
    i = std::stoi(m.substr(dot + 1));
    return true;
}

// Agent X: posters make loopback WRITEs with a notification and poll them, one thread sends
// standalone notifications to X (from X itself and from Y), and several threads drain X's
// notifications at once. Every message must come out of exactly one drain; within one
// drainer's calls, each poster's messages keep their order (the inbox is one queue).
TEST_P(agentNotifStressTest, ConcurrentDrainsDeliverEveryNotificationOnce) {
    auto x = makeAgent("X", agentConfig(GetParam()));
    auto y = makeAgent("Y", agentConfig(GetParam()));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*x, {{"async", "true"}, {"async_polls", "1"}}));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*y));
    std::vector<std::unique_ptr<testBuffer>> src;
    std::vector<std::unique_ptr<testBuffer>> dst;
    for (int t = 0; t < posters; ++t) {
        src.push_back(std::make_unique<testBuffer>(1024, 0));
        dst.push_back(std::make_unique<testBuffer>(1024, 0));
        ASSERT_EQ(NIXL_SUCCESS, x->registerMem(regList({src[t]->desc(), dst[t]->desc()})));
    }
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*x, *y));

    std::atomic<bool> go{false};
    std::atomic<int> senders_left{posters + 1};
    std::vector<std::string> failures(posters + 1 + drainers);
    std::vector<nixl_notifs_t> got(drainers);
    std::vector<std::thread> threads;
    for (int t = 0; t < posters; ++t) {
        threads.emplace_back([&, t] {
            while (!go.load(std::memory_order_acquire)) {
            }
            nixlXferReqH *req = nullptr;
            if (x->createXferReq(NIXL_WRITE, xferList({src[t]->desc()}),
                                 xferList({dst[t]->desc()}), "X", req) != NIXL_SUCCESS) {
                failures[t] = "createXferReq";
            }
            for (int i = 0; i < rounds && req != nullptr; ++i) {
                const uint32_t seed = static_cast<uint32_t>(100 * t + i);
                src[t]->fill(seed);
                nixl_opt_args_t extra;
                extra.notif = "p" + std::to_string(t) + "." + std::to_string(i);
                const nixl_status_t st = runXfer(*x, req, &extra);
                if (st != NIXL_SUCCESS || dst[t]->firstMismatch(seed) >= 0) {
                    failures[t] = "transfer " + std::to_string(i) + ": " +
                        nixlEnumStrings::statusStr(st);
                    break;
                }
            }
            if (req != nullptr && x->releaseXferReq(req) != NIXL_SUCCESS) {
                failures[t] = "releaseXferReq";
            }
            senders_left.fetch_sub(1, std::memory_order_acq_rel);
        });
    }
    threads.emplace_back([&] {
        while (!go.load(std::memory_order_acquire)) {
        }
        for (int i = 0; i < standalone; ++i) {
            if (x->genNotif("X", "s" + std::to_string(i)) != NIXL_SUCCESS ||
                y->genNotif("X", "y" + std::to_string(i)) != NIXL_SUCCESS) {
                failures[posters] = "genNotif " + std::to_string(i);
                break;
            }
        }
        senders_left.fetch_sub(1, std::memory_order_acq_rel);
    });
    for (int d = 0; d < drainers; ++d) {
        threads.emplace_back([&, d] {
            while (!go.load(std::memory_order_acquire)) {
            }
            // Every message is queued before its sender counts down (the TEST backend
            // delivers synchronously), so one drain after the last sender finished is the
            // last one that can find anything.
            bool last = false;
            while (!last) {
                last = senders_left.load(std::memory_order_acquire) == 0;
                if (x->getNotifs(got[d]) != NIXL_SUCCESS) {
                    failures[posters + 1 + d] = "getNotifs";
                    break;
                }
            }
        });
    }
    go.store(true, std::memory_order_release);
    for (auto &th : threads) {
        th.join();
    }
    for (size_t i = 0; i < failures.size(); ++i) {
        EXPECT_EQ("", failures[i]) << "thread " << i;
    }

    std::map<std::string, int> seen; // "sender/message" -> times delivered
    for (int d = 0; d < drainers; ++d) {
        for (const auto &[sender, msgs] : got[d]) {
            std::vector<int> last_of(posters, -1);
            for (const nixl_blob_t &m : msgs) {
                ++seen[sender + "/" + m];
                int t = 0;
                int i = 0;
                if (sender == "X" && parsePosted(m, t, i)) {
                    ASSERT_LT(t, posters) << m;
                    EXPECT_LT(last_of[t], i) << "drainer " << d << " got " << m << " late";
                    last_of[t] = i;
                }
            }
        }
    }
    std::map<std::string, int> expected;
    for (int t = 0; t < posters; ++t) {
        for (int i = 0; i < rounds; ++i) {
            expected["X/p" + std::to_string(t) + "." + std::to_string(i)] = 1;
        }
    }
    for (int i = 0; i < standalone; ++i) {
        expected["X/s" + std::to_string(i)] = 1;
        expected["Y/y" + std::to_string(i)] = 1;
    }
    EXPECT_EQ(expected, seen);
}

INSTANTIATE_TEST_SUITE_P(syncModes,
                         agentNotifStressTest,
                         ::testing::Values(nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT,
                                           nixl_thread_sync_t::NIXL_THREAD_SYNC_RW),
                         [](const ::testing::TestParamInfo<nixl_thread_sync_t> &info) {
                             return info.param == nixl_thread_sync_t::NIXL_THREAD_SYNC_RW ?
                                 "RW" :
                                 "STRICT";
                         });

} // namespace
} // namespace nixl_agent_test
