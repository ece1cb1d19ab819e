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

using nixlUcx::finishReq;
using nixlUcx::goneStatus;
using nixlUcx::opName;
using nixlUcx::track;
using nixlUcx::wireLabel;
using namespace std::string_view_literals;

bool
nixlUcxEngine::startPool() {
    try {
        for (size_t i = 0; i < cfg_.numThreads; ++i) {
            pool_.emplace_back([this] { poolLoop(); });
        }
    }
    catch (const std::exception &e) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX: cannot start posting thread "
                                << pool_.size() + 1 << " of num_threads=" << cfg_.numThreads
                                << ": " << e.what());
        stopPool();
        return false;
    }
    return true;
}

void
nixlUcxEngine::stopPool() {
    if (pool_.empty()) {
        return;
    }
    {
        std::lock_guard<std::mutex> g(poolLock_);
        poolStop_ = true;
    }
    poolCv_.notify_all();
    for (std::thread &t : pool_) {
        t.join();
    }
    pool_.clear();
}

void
nixlUcxEngine::poolLoop() {
    std::unique_lock<std::mutex> lk(poolLock_);
    for (;;) {
        poolCv_.wait(lk, [this] { return poolStop_ || !poolQueue_.empty(); });
        if (poolQueue_.empty()) {
            return; // stopping, and every queued batch was taken
        }
        const splitJob job = poolQueue_.front();
        poolQueue_.pop_front();
        nixlUcxReq &req = *job.req;
        if (poolStop_) {
            // The engine closes: the batches left only complete their requests' accounting.
            req.splitCancel.store(true, std::memory_order_relaxed);
        }
        lk.unlock();
        const bool direct = req.path == nixlUcxReq::path_t::DIRECT;
        if (!req.splitCancel.load(std::memory_order_acquire)) {
            if (direct) {
                copyDirectBatch(req, job.begin, job.end);
            } else {
                postUcxBatch(req, job.begin, job.end);
            }
        }
        // acq_rel: the last batch sees every other batch's copies and errors.
        if (req.splitLeft.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            if (direct) {
                finishDirectSplit(req);
            } else {
                finishUcxSplit(req);
            }
        }
        lk.lock();
        // The last touch of req: once splitJobs is 0, release may delete it.
        --req.splitJobs;
        poolDoneCv_.notify_all();
    }
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
        nixlUcxLane &lane = *req.lane;
        nixlUcxWorker &w = *lane.worker;
        std::lock_guard<std::mutex> g(w.lock);
        if (w.worker == nullptr || lane.ep == nullptr || !req.conn->usable()) {
            const nixl_status_t st = goneStatus(*req.conn);
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                    << req.remoteAgent << ": the connection is "
                                    << (st == NIXL_ERR_REMOTE_DISCONNECT ? "lost" : "closed"));
            finishReq(req, st);
            return st;
        }
        // Tracked: a worker torn down under the batches finishes the request. The hold of 1
        // is dropped by the last batch (finishUcxSplit), so no callback completes it before.
        track(req);
        req.outstanding = 1;
        if (tracing()) {
            tracePhase(req.traceCtx, NIXL_BE_PHASE_WIRE_SUBMITTED,
                       req.op == NIXL_WRITE ? "ucx.put"sv : "ucx.get"sv);
        }
    } else if (tracing()) {
        req.wireTraced = true;
        tracePhase(req.traceCtx, NIXL_BE_PHASE_WIRE_SUBMITTED, wireLabel(req));
    }
    {
        std::lock_guard<std::mutex> g(poolLock_);
        req.splitJobs = n;
        for (size_t b = 0; b < req.count; b += batch) {
            poolQueue_.push_back({&req, b, std::min(req.count, b + batch)});
        }
    }
    if (n == 1) {
        poolCv_.notify_one();
    } else {
        poolCv_.notify_all();
    }
    // In progress even if the pool has finished it already (getXferStatus then says so):
    // a pooled post returns at once with the same answer however the threads were scheduled.
    return NIXL_IN_PROG;
}

void
nixlUcxEngine::awaitSplit(nixlUcxReq &req) const {
    std::unique_lock<std::mutex> lk(poolLock_);
    poolDoneCv_.wait(lk, [&req] { return req.splitJobs == 0; });
}

void
nixlUcxEngine::failSplit(nixlUcxReq &req, nixl_status_t st, const std::string &msg) const {
    nixl_status_t expected = NIXL_SUCCESS;
    if (req.splitErr.compare_exchange_strong(expected, st, std::memory_order_acq_rel)) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                << req.remoteAgent << ": " << msg);
    }
}
