/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent under concurrent use: STRICT and RW sync modes with transfer threads, a thread
// changing registrations and a thread exchanging notifications; NONE mode single-threaded.
// Meant to run under ThreadSanitizer as well. No sleeps: threads start on a shared flag and run
// a fixed number of iterations.

#include <atomic>
#include <map>
#include <thread>

#include "agent_test_utils.h"

namespace nixl_agent_test {
namespace {

constexpr int worker_threads = 4;
constexpr int iterations = 40;
constexpr size_t slot_len = 4096;

class agentThreadsTest : public agentTest,
                         public ::testing::WithParamInterface<nixl_thread_sync_t> {};

std::string
modeName(nixl_thread_sync_t mode) {
    switch (mode) {
    case nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE:
        return "NONE";
    case nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT:
        return "STRICT";
    case nixl_thread_sync_t::NIXL_THREAD_SYNC_RW:
        return "RW";
    }
    return "BAD";
}

struct workerResult {
    int failures = 0;
    std::string firstFailure;

    void
    fail(const std::string &what) {
        if (failures++ == 0) {
            firstFailure = what;
        }
    }
};

TEST_P(agentThreadsTest, ConcurrentTransfersRegistrationsAndNotifications) {
    const nixl_thread_sync_t mode = GetParam();
    auto x = makeAgent("X", agentConfig(mode));
    auto y = makeAgent("Y", agentConfig(mode));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*x, {{"async", "true"}, {"async_polls", "2"}}));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*y));

    // Each worker owns a source, a read-back buffer on X and a slot on Y.
    std::vector<std::unique_ptr<testBuffer>> src;
    std::vector<std::unique_ptr<testBuffer>> back;
    std::vector<std::unique_ptr<testBuffer>> slot;
    for (int t = 0; t < worker_threads; ++t) {
        src.push_back(std::make_unique<testBuffer>(slot_len, 0));
        back.push_back(std::make_unique<testBuffer>(slot_len, 0));
        slot.push_back(std::make_unique<testBuffer>(slot_len, 0));
        ASSERT_EQ(NIXL_SUCCESS, x->registerMem(regList({src[t]->desc(), back[t]->desc()})));
        ASSERT_EQ(NIXL_SUCCESS, y->registerMem(regList({slot[t]->desc()})));
    }
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*y, *x));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*x, *y));

    std::vector<nixlXferReqH *> writes(worker_threads, nullptr);
    std::vector<nixlXferReqH *> reads(worker_threads, nullptr);
    std::vector<std::unique_ptr<testBuffer>> unrelated;
    for (int i = 0; i < 8; ++i) {
        unrelated.push_back(std::make_unique<testBuffer>(256, 0));
    }

    std::atomic<bool> go{false};
    std::atomic<int> workers_done{0};
    std::vector<workerResult> results(worker_threads + 2);
    std::vector<std::thread> threads;

    for (int t = 0; t < worker_threads; ++t) {
        threads.emplace_back([&, t] {
            workerResult &res = results[t];
            while (!go.load(std::memory_order_acquire)) {
            }
            nixlXferReqH *w = nullptr;
            nixlXferReqH *r = nullptr;
            nixl_status_t st = x->createXferReq(
                NIXL_WRITE, xferList({src[t]->desc()}), xferList({slot[t]->desc()}), "Y", w);
            if (st != NIXL_SUCCESS) {
                res.fail("createXferReq WRITE: " + nixlEnumStrings::statusStr(st));
                workers_done.fetch_add(1);
                return;
            }
            // The READ goes through prepared lists, so both creation paths run concurrently.
            nixlDlistH *local = nullptr;
            nixlDlistH *remote = nullptr;
            if (x->prepXferDlist(xferList({back[t]->desc()}), local) != NIXL_SUCCESS ||
                x->prepXferDlist("Y", xferList({slot[t]->desc()}), remote) != NIXL_SUCCESS ||
                x->makeXferReq(NIXL_READ, local, {0}, remote, {0}, r) != NIXL_SUCCESS) {
                res.fail("prepared READ could not be built");
            }
            writes[t] = w;
            reads[t] = r;
            for (int it = 0; it < iterations && r != nullptr; ++it) {
                const uint32_t seed = static_cast<uint32_t>(1000 * (t + 1) + it);
                src[t]->fill(seed);
                nixl_opt_args_t notif;
                notif.notif = "w" + std::to_string(t) + "." + std::to_string(it);
                st = runXfer(*x, w, &notif);
                if (st != NIXL_SUCCESS) {
                    res.fail("WRITE " + std::to_string(it) + ": " +
                             nixlEnumStrings::statusStr(st));
                    continue;
                }
                if (slot[t]->firstMismatch(seed) >= 0) {
                    res.fail("slot data wrong after WRITE " + std::to_string(it));
                }
                back[t]->fill(7);
                st = runXfer(*x, r);
                if (st != NIXL_SUCCESS) {
                    res.fail("READ " + std::to_string(it) + ": " + nixlEnumStrings::statusStr(st));
                    continue;
                }
                if (back[t]->firstMismatch(seed) >= 0) {
                    res.fail("read-back data wrong after READ " + std::to_string(it));
                }
            }
            if (local != nullptr && x->releasedDlistH(local) != NIXL_SUCCESS) {
                res.fail("releasedDlistH local");
            }
            if (remote != nullptr && x->releasedDlistH(remote) != NIXL_SUCCESS) {
                res.fail("releasedDlistH remote");
            }
            workers_done.fetch_add(1, std::memory_order_acq_rel);
        });
    }

    // Registers and deregisters memory no request uses, until the workers are done.
    threads.emplace_back([&] {
        workerResult &res = results[worker_threads];
        while (!go.load(std::memory_order_acquire)) {
        }
        size_t rounds = 0;
        while (workers_done.load(std::memory_order_acquire) < worker_threads || rounds < 4) {
            testBuffer &buf = *unrelated[rounds % unrelated.size()];
            nixl_reg_dlist_t list = regList({buf.desc()});
            if (x->registerMem(list) != NIXL_SUCCESS) {
                res.fail("registerMem of unrelated memory");
            }
            if (x->deregisterMem(list) != NIXL_SUCCESS) {
                res.fail("deregisterMem of unrelated memory");
            }
            ++rounds;
        }
    });

    // Sends standalone notifications and drains Y's, until everything expected arrived.
    std::map<std::string, std::vector<nixl_blob_t>> received;
    constexpr int gen_count = 50;
    threads.emplace_back([&] {
        workerResult &res = results[worker_threads + 1];
        while (!go.load(std::memory_order_acquire)) {
        }
        int sent = 0;
        size_t total = 0;
        const size_t expected = static_cast<size_t>(worker_threads) * iterations + gen_count;
        nixl_notifs_t map;
        nixl_notifs_t self;
        // Bounded: every round either sends or drains, and all sends happen in the first
        // gen_count rounds; the workers' notifications arrive as their transfers complete.
        while (total < expected ||
               workers_done.load(std::memory_order_acquire) < worker_threads) {
            if (sent < gen_count) {
                nixl_status_t st = x->genNotif("Y", "g" + std::to_string(sent));
                if (st != NIXL_SUCCESS) {
                    res.fail("genNotif: " + nixlEnumStrings::statusStr(st));
                }
                if (x->genNotif("X", "self" + std::to_string(sent)) != NIXL_SUCCESS) {
                    res.fail("genNotif loopback");
                }
                ++sent;
            }
            if (y->getNotifs(map) != NIXL_SUCCESS || x->getNotifs(self) != NIXL_SUCCESS) {
                res.fail("getNotifs");
                break;
            }
            total = 0;
            for (const auto &[k, v] : map) {
                total += v.size();
            }
            if (total > expected) {
                res.fail("more notifications than sent");
                break;
            }
            if (workers_done.load(std::memory_order_acquire) == worker_threads &&
                total < expected && sent == gen_count) {
                // Every transfer completed (so its notification was queued) and every
                // standalone one was sent: one more drain must find them all.
                if (y->getNotifs(map) != NIXL_SUCCESS) {
                    res.fail("getNotifs");
                }
                total = 0;
                for (const auto &[k, v] : map) {
                    total += v.size();
                }
                if (total != expected) {
                    res.fail("missing notifications: " + std::to_string(total) + " of " +
                             std::to_string(expected));
                }
                break;
            }
        }
        if (x->getNotifs(self) != NIXL_SUCCESS) {
            res.fail("getNotifs self");
        }
        for (const auto &[k, v] : map) {
            received[k] = v;
        }
        received["self:X"] = self["X"];
    });

    go.store(true, std::memory_order_release);
    for (auto &th : threads) {
        th.join();
    }
    for (size_t i = 0; i < results.size(); ++i) {
        EXPECT_EQ(0, results[i].failures) << "thread " << i << ": " << results[i].firstFailure;
    }

    // Everything X sent reached Y, keyed by X: per worker in posting order, plus the standalone
    // ones in sending order (the two kinds interleave arbitrarily).
    ASSERT_EQ(1u, received.count("X"));
    const std::vector<nixl_blob_t> &got = received["X"];
    std::vector<nixl_blob_t> gens;
    std::vector<std::vector<nixl_blob_t>> per_worker(worker_threads);
    for (const auto &m : got) {
        if (m[0] == 'g') {
            gens.push_back(m);
        } else {
            ASSERT_EQ('w', m[0]) << m;
            int t = std::stoi(m.substr(1));
            ASSERT_LT(t, worker_threads) << m;
            per_worker[t].push_back(m);
        }
    }
    ASSERT_EQ(static_cast<size_t>(gen_count), gens.size());
    for (int i = 0; i < gen_count; ++i) {
        EXPECT_EQ("g" + std::to_string(i), gens[i]);
    }
    for (int t = 0; t < worker_threads; ++t) {
        ASSERT_EQ(static_cast<size_t>(iterations), per_worker[t].size()) << "worker " << t;
        for (int it = 0; it < iterations; ++it) {
            EXPECT_EQ("w" + std::to_string(t) + "." + std::to_string(it), per_worker[t][it]);
        }
    }
    const std::vector<nixl_blob_t> &self = received["self:X"];
    ASSERT_EQ(static_cast<size_t>(gen_count), self.size());
    for (int i = 0; i < gen_count; ++i) {
        EXPECT_EQ("self" + std::to_string(i), self[i]);
    }
    for (int t = 0; t < worker_threads; ++t) {
        EXPECT_TRUE(holdsPattern(*slot[t], static_cast<uint32_t>(1000 * (t + 1) + iterations - 1)));
        if (writes[t] != nullptr) {
            EXPECT_EQ(NIXL_SUCCESS, x->releaseXferReq(writes[t]));
        }
        if (reads[t] != nullptr) {
            EXPECT_EQ(NIXL_SUCCESS, x->releaseXferReq(reads[t]));
        }
    }
}

TEST_P(agentThreadsTest, ConcurrentRequestCreationAndRelease) {
    const nixl_thread_sync_t mode = GetParam();
    auto x = makeAgent("X", agentConfig(mode));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*x));
    std::vector<std::unique_ptr<testBuffer>> bufs;
    for (int t = 0; t < worker_threads * 2; ++t) {
        bufs.push_back(std::make_unique<testBuffer>(512, static_cast<uint32_t>(t)));
        ASSERT_EQ(NIXL_SUCCESS, x->registerMem(regList({bufs[t]->desc()})));
    }
    std::atomic<bool> go{false};
    std::vector<workerResult> results(worker_threads);
    std::vector<std::thread> threads;
    for (int t = 0; t < worker_threads; ++t) {
        threads.emplace_back([&, t] {
            while (!go.load(std::memory_order_acquire)) {
            }
            testBuffer &from = *bufs[2 * t];
            testBuffer &to = *bufs[2 * t + 1];
            for (int it = 0; it < iterations; ++it) {
                nixlXferReqH *req = nullptr;
                const uint32_t seed = static_cast<uint32_t>(t * 100 + it);
                from.fill(seed);
                if (x->createXferReq(NIXL_WRITE, xferList({from.desc()}), xferList({to.desc()}),
                                     "X", req) != NIXL_SUCCESS) {
                    results[t].fail("createXferReq");
                    continue;
                }
                if (runXfer(*x, req) != NIXL_SUCCESS) {
                    results[t].fail("transfer");
                }
                if (to.firstMismatch(seed) >= 0) {
                    results[t].fail("data");
                }
                if (x->releaseXferReq(req) != NIXL_SUCCESS) {
                    results[t].fail("releaseXferReq");
                }
            }
        });
    }
    go.store(true, std::memory_order_release);
    for (auto &th : threads) {
        th.join();
    }
    for (int t = 0; t < worker_threads; ++t) {
        EXPECT_EQ(0, results[t].failures) << "thread " << t << ": " << results[t].firstFailure;
    }
}

INSTANTIATE_TEST_SUITE_P(syncModes,
                         agentThreadsTest,
                         ::testing::Values(nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT,
                                           nixl_thread_sync_t::NIXL_THREAD_SYNC_RW),
                         [](const ::testing::TestParamInfo<nixl_thread_sync_t> &info) {
                             return modeName(info.param);
                         });

TEST_F(agentTest, NoneModeSingleThreadSanity) {
    auto x = makeAgent("X", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE));
    auto y = makeAgent("Y", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*x, {{"async", "true"}}));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*y));
    testBuffer src(slot_len, 1);
    testBuffer dst(slot_len, 2);
    ASSERT_EQ(NIXL_SUCCESS, x->registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, y->registerMem(regList({dst.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*y, *x));
    nixl_opt_args_t notif;
    notif.notif = "done";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, x->createXferReq(NIXL_WRITE, xferList({src.desc()}),
                                             xferList({dst.desc()}), "Y", req, &notif));
    for (uint32_t it = 0; it < 10; ++it) {
        src.fill(it + 10);
        ASSERT_EQ(NIXL_IN_PROG, x->postXferReq(req));
        ASSERT_EQ(NIXL_SUCCESS, waitXfer(*x, req));
        EXPECT_TRUE(holdsPattern(dst, it + 10));
    }
    nixl_notifs_t map = drain(*y);
    EXPECT_EQ(std::vector<nixl_blob_t>(10, "done"), map["X"]);
    EXPECT_EQ(NIXL_SUCCESS, x->releaseXferReq(req));
}

} // namespace
} // namespace nixl_agent_test
