/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlPostThreads (src/plugins/backend/common/nixl_post_threads.h), the threads and queue both
// posting pools are built on, without a plugin: every job runs once, await sees each job's end,
// and stop() either lets the threads run what is queued (told they are stopping) or, through
// its hook, drops it. Ordering is forced with promises, never with sleeps.

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <vector>

#include "nixl_post_threads.h"

namespace {

using threads_t = nixlPostThreads<int>;

TEST(lfPostThreads, RunsEveryJobOnceAndAwaitSeesThemEnd) {
    threads_t pool;
    std::vector<int> ran(100, 0); // the pool's lock guards it
    size_t done = 0;
    ASSERT_TRUE(pool.start(
        3,
        [&](threads_t::lock_t &lk, int &job, bool stopping) {
            EXPECT_FALSE(stopping);
            lk.unlock(); // the work runs without the lock
            lk.lock();
            ++ran[job];
            ++done;
        },
        "TEST", "agentA"));
    {
        auto lk = pool.lock();
        for (int i = 0; i < 100; ++i) {
            pool.queueLocked().push_back(i);
        }
    }
    pool.wake(100);
    {
        auto lk = pool.lock();
        pool.await(lk, [&] { return done == 100; });
        EXPECT_TRUE(pool.queueLocked().empty());
    }
    pool.stop();
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(ran[i], 1) << "job " << i;
    }
}

/** One thread held inside job 0 until stop() is asked; jobs 1 and 2 are queued meanwhile. */
struct heldPool {
    threads_t pool;
    std::promise<void> started;
    std::promise<void> gate;
    std::vector<std::pair<int, bool>> ran; ///< job, stopping (the pool's lock)

    void
    start() {
        ASSERT_TRUE(pool.start(
            1,
            [this](threads_t::lock_t &lk, int &job, bool stopping) {
                if (job == 0) {
                    lk.unlock();
                    started.set_value();
                    gate.get_future().wait();
                    lk.lock();
                }
                ran.emplace_back(job, stopping);
            },
            "TEST", "agentA"));
        {
            auto lk = pool.lock();
            pool.queueLocked().push_back(0);
        }
        pool.wake();
        started.get_future().wait();
        {
            auto lk = pool.lock();
            pool.queueLocked().push_back(1);
            pool.queueLocked().push_back(2);
        }
    }
};

TEST(lfPostThreads, StopLetsTheThreadsRunWhatIsQueuedAsStopping) {
    heldPool h;
    h.start();
    // The hook runs under the lock as the stop is asked: job 0 goes on only after it.
    h.pool.stop([&](std::deque<int> &queue) {
        EXPECT_EQ(queue.size(), 2u);
        h.gate.set_value();
    });
    const std::vector<std::pair<int, bool>> want{{0, false}, {1, true}, {2, true}};
    EXPECT_EQ(h.ran, want);
}

TEST(lfPostThreads, StopHookCanDropWhatIsQueued) {
    heldPool h;
    h.start();
    h.pool.stop([&](std::deque<int> &queue) {
        queue.clear();
        h.gate.set_value();
    });
    const std::vector<std::pair<int, bool>> want{{0, false}};
    EXPECT_EQ(h.ran, want);
}

TEST(lfPostThreads, StopWithoutThreadsDoesNothing) {
    threads_t pool;
    bool called = false;
    pool.stop([&](std::deque<int> &) { called = true; });
    EXPECT_FALSE(called);
}

} // namespace
