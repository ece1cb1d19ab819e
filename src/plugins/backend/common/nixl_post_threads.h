/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_post_threads.h
 * @brief The thread management a backend's posting pool (num_threads) needs, written once:
 *        starting the threads, one queue of jobs under one lock with its condition variables,
 *        stopping and joining. Header-only; each backend's pool keeps its own policy (what a
 *        job is, what running it does, whether it goes back into the queue).
 *
 * A thread waits until the queue holds a job or a stop was asked; it pops the front job and
 * hands it to the pool's run function with the lock held. The run function may unlock to do
 * the work and must return with the lock held again; every job's end wakes the waiters of
 * await(). After stop() the threads go on taking jobs until the queue is empty (run is told
 * it runs stopping), so a pool that wants nothing run any more empties the queue in stop()'s
 * hook, which runs under the lock as the stop is asked.
 *
 * Thread safety: start() and stop() are called by one thread (the engine's constructor and
 * destructor) while no other uses the object. Every other member may be called from any
 * thread; the queue (and whatever bookkeeping the pool keeps with it) is guarded by the one
 * lock lock() takes, which the run function holds when called. The lock is a leaf as far as
 * this class is concerned: it calls nothing else while holding it, except run and the stop
 * hook, which the pool writes.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_COMMON_NIXL_POST_THREADS_H
#define NIXL_SRC_PLUGINS_BACKEND_COMMON_NIXL_POST_THREADS_H

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "nixl_plugin_sdk_common.h"

/** @brief Threads taking jobs of type Job from one queue under one lock. */
template <typename Job> class nixlPostThreads {
public:
    using lock_t = std::unique_lock<std::mutex>;
    /**
     * Runs job (already out of the queue) on a pool thread; called with lk held, may unlock
     * it, returns with it held. stopping: stop() was called (the job should do nothing more
     * than its accounting).
     */
    using run_fn = std::function<void(lock_t &lk, Job &job, bool stopping)>;

    nixlPostThreads() = default;
    nixlPostThreads(const nixlPostThreads &) = delete;
    nixlPostThreads &
    operator=(const nixlPostThreads &) = delete;
    ~nixlPostThreads() {
        stop();
    }

    /**
     * Starts n threads running run; false, with one line naming agent, backend and the
     * thread that could not start, if one cannot (those started are stopped again).
     */
    bool
    start(size_t n, run_fn run, std::string_view backend, const std::string &agent) {
        run_ = std::move(run);
        try {
            for (size_t i = 0; i < n; ++i) {
                threads_.emplace_back([this] { loop(); });
            }
        }
        catch (const std::exception &e) {
            NIXL_SDK_ERROR("agent " << agent << ": " << backend
                                    << ": cannot start posting thread " << threads_.size() + 1
                                    << " of num_threads=" << n << ": " << e.what());
            stop();
            return false;
        }
        return true;
    }

    /**
     * Asks the threads to stop, calling hook(queue) under the lock first (to drop or mark
     * queued jobs), and joins them once they have emptied the queue. Nothing if none run.
     */
    template <typename Hook>
    void
    stop(Hook &&hook) {
        if (threads_.empty()) {
            return;
        }
        {
            std::lock_guard<std::mutex> g(mu_);
            stop_ = true;
            hook(queue_);
        }
        queued_.notify_all();
        for (std::thread &t : threads_) {
            t.join();
        }
        threads_.clear();
    }

    void
    stop() {
        stop([](std::deque<Job> &) {});
    }

    /** Takes the lock that guards the queue (and the pool's bookkeeping kept with it). */
    lock_t
    lock() {
        return lock_t(mu_);
    }

    /** The queue; lock held. */
    std::deque<Job> &
    queueLocked() noexcept {
        return queue_;
    }

    /** stop() was called; lock held. */
    bool
    stoppingLocked() const noexcept {
        return stop_;
    }

    /** Wakes threads for n jobs just queued (any lock state). */
    void
    wake(size_t n = 1) {
        if (n == 1) {
            queued_.notify_one();
        } else if (n > 1) {
            queued_.notify_all();
        }
    }

    /** Waits, lock held through lk, until done() holds; checked again after every job. */
    template <typename Pred>
    void
    await(lock_t &lk, Pred done) {
        done_.wait(lk, std::move(done));
    }

private:
    void
    loop() {
        lock_t lk(mu_);
        for (;;) {
            queued_.wait(lk, [this] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) {
                return; // stopping, and every queued job was taken
            }
            Job job = std::move(queue_.front());
            queue_.pop_front();
            run_(lk, job, stop_);
            done_.notify_all();
        }
    }

    run_fn run_;
    std::mutex mu_;
    std::condition_variable queued_; ///< a job was queued, or stop
    std::condition_variable done_; ///< a job ended
    std::deque<Job> queue_;
    bool stop_ = false; ///< mu_
    std::vector<std::thread> threads_;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_COMMON_NIXL_POST_THREADS_H
