/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_pool.h
 * @brief The UCX engine's posting pool (num_threads > 0): threads that run the batches of
 *        split_batch_size descriptors a long post is cut into.
 *
 * The pool knows requests only as batches to run: what a batch does, and what completing a
 * post does, are the two functions given to start() (the engine picks the data path there).
 *
 * The threads, their queue and its lock are nixlPostThreads (backend/common/nixl_post_threads.h);
 * this class is the UCX policy over them: a job is one batch, run once, never queued again.
 *
 * Thread safety: submit() and await() may be called from any thread; the queue, the stop flag
 * and every request's splitJobs are guarded by the pool's own lock, a leaf lock as far as the
 * pool is concerned (the batch functions run without it). start() and stop() are called by
 * the engine's constructor and destructor only.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_POOL_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_POOL_H

#include <cstddef>
#include <functional>
#include <string>

#include "nixl_post_threads.h"

class nixlUcxReq;

/** @brief Threads taking batches of pooled posts from one queue. */
class nixlUcxPostPool {
public:
    /** Runs descriptors [begin, end) of a request. */
    using batch_fn = std::function<void(nixlUcxReq &req, size_t begin, size_t end)>;
    /** Completes a post whose last batch finished (every other batch's work is visible). */
    using finish_fn = std::function<void(nixlUcxReq &req)>;

    nixlUcxPostPool() = default;
    nixlUcxPostPool(const nixlUcxPostPool &) = delete;
    nixlUcxPostPool &
    operator=(const nixlUcxPostPool &) = delete;
    ~nixlUcxPostPool() {
        stop();
    }

    /** Starts threads threads; false (one line naming agent) if one cannot be started. */
    bool
    start(size_t threads, batch_fn batch, finish_fn finish, const std::string &agent);
    /** Queued batches are skipped (their requests cancelled), then the threads are joined. */
    void
    stop();
    /**
     * Queues req's descriptors in batches of batch (req.splitLeft and the split fields set by
     * the caller); returns the number of batches.
     */
    size_t
    submit(nixlUcxReq &req, size_t batch);
    /** Waits until no batch of req is queued or running (release, repost). */
    void
    await(nixlUcxReq &req);

private:
    struct job_t {
        nixlUcxReq *req;
        size_t begin; ///< descriptors [begin, end)
        size_t end;
    };

    /** A pool thread: runs one batch (lk held on entry and return, not during the batch). */
    void
    run(nixlPostThreads<job_t>::lock_t &lk, const job_t &job, bool stopping);

    batch_fn batch_;
    finish_fn finish_;
    nixlPostThreads<job_t> threads_; ///< last: its threads stop before the functions go
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_POOL_H
