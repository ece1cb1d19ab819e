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

using nixlUcx::finishReq;
using nixlUcx::goneStatus;
using nixlUcx::opName;
using nixlUcx::track;
using nixlUcx::wireLabel;
using namespace std::string_view_literals;

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
// The engine's side: cutting a post into batches, and what a batch does on each path

bool
nixlUcxEngine::startPool() {
    if (cfg_.numThreads == 0) {
        return true;
    }
    return pool_->start(
        cfg_.numThreads,
        [this](nixlUcxReq &req, size_t begin, size_t end) {
            if (req.path == nixlUcxReq::path_t::DIRECT) {
                copyDirectBatch(req, begin, end);
            } else {
                postUcxBatch(req, begin, end);
            }
        },
        [this](nixlUcxReq &req) {
            if (req.path == nixlUcxReq::path_t::DIRECT) {
                finishDirectSplit(req);
            } else {
                finishUcxSplit(req);
            }
        },
        localAgent);
}

nixl_status_t
nixlUcxEngine::postSplit(nixlUcxReq &req) const {
    const size_t batch = cfg_.splitBatch;
    const size_t n = (req.count + batch - 1) / batch;
    req.splitCancel.store(false, std::memory_order_relaxed);
    req.splitErr.store(NIXL_SUCCESS, std::memory_order_relaxed);
    req.splitBytes.store(0, std::memory_order_relaxed);
    req.splitLeft.store(n, std::memory_order_relaxed);
    if (req.path == nixlUcxReq::path_t::UCX) {
        std::lock_guard<std::mutex> g(req.lane->worker->lock);
        // The hold of 1 is dropped by the last batch (finishUcxSplit).
        if (nixl_status_t st; !startUcxPostLocked(req, st)) {
            return st;
        }
    } else if (tracing()) {
        req.wireTraced = true;
        tracePhase(req.traceCtx, NIXL_BE_PHASE_WIRE_SUBMITTED, wireLabel(req));
    }
    pool_->submit(req, batch);
    // In progress even if the pool has finished it already (getXferStatus then says so):
    // a pooled post returns at once with the same answer however the threads were scheduled.
    return NIXL_IN_PROG;
}

void
nixlUcxEngine::failSplit(nixlUcxReq &req, nixl_status_t st, const std::string &msg) const {
    nixl_status_t expected = NIXL_SUCCESS;
    if (req.splitErr.compare_exchange_strong(expected, st, std::memory_order_acq_rel)) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                << req.remoteAgent << ": " << msg);
    }
}
