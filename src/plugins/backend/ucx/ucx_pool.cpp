/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: the posting pool of num_threads (NIXL's thread-pool engine).
//
// A post of more than split_batch_size descriptors is cut into batches of that many; the
// batches go to one queue that the engine's num_threads threads take from. The caller gets
// NIXL_IN_PROG at once. Whichever thread finishes a post's last batch completes it: on the
// direct path it sends the notification (every byte was copied by then) or finishes the
// request; on the UCX path it posts the flush (WRITE) and drops the hold that kept the
// request's UCX operations from completing it early, so the notification still goes after
// the flush or the gets, from the worker's progress. A post of at most split_batch_size
// descriptors never comes here: it takes the caller's path of num_threads=0 unchanged.
#include "ucx_internal.h"

#include <cstring>
#include <utility>


// ---------------------------------------------------------------------------------------------
// nixlUcxPostPool

bool
nixlUcxPostPool::start(size_t threads, batch_fn batch, finish_fn finish, const std::string &agent) {
    batch_ = std::move(batch);
    finish_ = std::move(finish);
    return threads_.start(
        threads,
        [this](nixlPostThreads<job_t>::lock_t &lk, job_t &job, bool stopping) {
            run(lk, job, stopping);
        },
        "UCX", agent);
}

void
nixlUcxPostPool::stop() {
    // Queued batches stay: the threads take them, cancelled, to complete their accounting.
    threads_.stop();
}

void
nixlUcxPostPool::run(nixlPostThreads<job_t>::lock_t &lk, const job_t &job, bool stopping) {
    nixlUcxReq &req = *job.req;
    if (stopping) {
        // The engine closes: the batches left only complete their requests' accounting.
        req.splitCancel.store(true, std::memory_order_relaxed);
    }
    lk.unlock();
    if (!req.splitCancel.load(std::memory_order_acquire)) {
        batch_(req, job.begin, job.end);
    }
    // acq_rel: the last batch sees every other batch's copies and errors.
    if (req.splitLeft.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        finish_(req);
    }
    lk.lock();
    // The last touch of req: once splitJobs is 0 (and await's waiters are woken after this),
    // release may delete it.
    --req.splitJobs;
}

size_t
nixlUcxPostPool::submit(nixlUcxReq &req, size_t batch) {
    size_t n = 0;
    {
        auto lk = threads_.lock();
        auto &q = threads_.queueLocked();
        for (size_t b = 0; b < req.count; b += batch) {
            q.push_back({&req, b, std::min(req.count, b + batch)});
            ++n;
        }
        req.splitJobs = n;
    }
    threads_.wake(n);
    return n;
}

void
nixlUcxPostPool::await(nixlUcxReq &req) {
    auto lk = threads_.lock();
    threads_.await(lk, [&req] { return req.splitJobs == 0; });
}

// ---------------------------------------------------------------------------------------------
// The engine's side: the pool runs each request's data path (ucx_path.h) on its batches

bool
nixlUcxEngine::startPool() {
    if (cfg_.numThreads == 0) {
        return true;
    }
    return pool_->start(
        cfg_.numThreads,
        [](nixlUcxReq &req, size_t begin, size_t end) { req.dataPath->runBatch(req, begin, end); },
        [](nixlUcxReq &req) { req.dataPath->finishSplit(req); },
        localAgent);
}

void
nixlUcxEngine::pathSubmit(nixlUcxReq &req) const {
    pool_->submit(req, cfg_.splitBatch);
}
