/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The LIBFABRIC engine: the posting pool of num_threads.
//
// With num_threads = 0 a post posts its first split_batch_size descriptors on the caller and
// progress (getXferStatus or the progress thread) posts the rest, a turn at a time. With
// num_threads > 0 a post of more than split_batch_size descriptors posts nothing on the
// caller: the request goes to the pool's queue, and each turn (split_batch_size descriptors,
// postMoreLocked under the rail's mutex, as progress would) is posted by one of the pool's
// threads, which then queues the request again behind the others until all is posted. The
// rail's mutex still serialises the calls into libfabric (its rails are FI_THREAD_DOMAIN), so
// threads overlap only on different rails and with the completions of other turns; what the
// pool gives is a caller that does not post and a long list posted without anyone polling.
// Completion, notification and trace phases are those of num_threads = 0.
#include "lf_backend.h"

#include <algorithm>

namespace nixlLf {

bool
lfEngine::startPool() {
    try {
        for (size_t i = 0; i < cfg_.numThreads; ++i) {
            pool_.emplace_back([this] { poolLoop(); });
        }
    }
    catch (const std::exception &e) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC: cannot start posting thread "
                                << pool_.size() + 1 << " of num_threads=" << cfg_.numThreads
                                << ": " << e.what());
        stopPool();
        return false;
    }
    return true;
}

void
lfEngine::stopPool() {
    if (pool_.empty()) {
        return;
    }
    {
        std::lock_guard<std::mutex> g(poolMu_);
        poolStop_ = true;
        for (lfReq *req : poolQueue_) {
            req->poolQueued = false;
            req->poolActive.store(false, std::memory_order_release);
        }
        poolQueue_.clear();
    }
    poolCv_.notify_all();
    for (std::thread &t : pool_) {
        t.join();
    }
    pool_.clear();
}

void
lfEngine::poolLoop() {
    std::unique_lock<std::mutex> lk(poolMu_);
    for (;;) {
        poolCv_.wait(lk, [this] { return poolStop_ || !poolQueue_.empty(); });
        if (poolStop_) {
            return; // requests still queued are the engine's teardown's (as its rails close)
        }
        lfReq *req = poolQueue_.front();
        poolQueue_.pop_front();
        req->poolQueued = false;
        req->poolRunning = true;
        lk.unlock();
        const bool more = poolTurn(*req);
        lk.lock();
        req->poolRunning = false;
        // poolAgain: reposted after this turn looked at it (its answer is of the old post).
        const bool again = more || req->poolAgain;
        req->poolAgain = false;
        if (again && !req->poolCancel && !poolStop_) {
            // Behind the others: long requests share the threads turn by turn.
            poolQueue_.push_back(req);
            req->poolQueued = true;
            poolCv_.notify_one();
        } else {
            req->poolActive.store(false, std::memory_order_release);
        }
        poolDoneCv_.notify_all();
    }
}

void
lfEngine::poolPost(lfReq *req) const {
    {
        std::lock_guard<std::mutex> g(poolMu_);
        req->poolCancel = false;
        req->poolActive.store(true, std::memory_order_release);
        if (req->poolQueued) {
            return;
        }
        if (req->poolRunning) {
            // A turn of the previous post (which completed under it) is still on its way out:
            // it queues the request again when it ends.
            req->poolAgain = true;
            return;
        }
        poolQueue_.push_back(req);
        req->poolQueued = true;
    }
    poolCv_.notify_one();
}

bool
lfEngine::poolTurn(lfReq &req) const {
    lfRail &r = *req.rail;
    bool more = false;
    bool stalled = false;
    {
        std::lock_guard<std::mutex> g(r.mu);
        if (!req.posting) {
            return false; // failed (abandonLocked) or all posted
        }
        const size_t before = req.nextPost;
        postMoreLocked(r, &req);
        if (req.posting) {
            // The pool posts the rest, not progress: out of the rail's post queue (where
            // postMoreLocked left it after its turn, or when the transmit queue was full).
            auto &pq = r.postQueue;
            pq.erase(std::remove(pq.begin(), pq.end(), &req), pq.end());
        }
        // Completions (room in the transmit queue), other requests' turns, notifications.
        progressLocked(r);
        more = req.posting;
        stalled = more && req.nextPost == before;
    }
    wakeProgressIfIdle();
    if (stalled) {
        std::this_thread::yield(); // transmit queue full: let the completions come
    }
    return more;
}

void
lfEngine::poolForget(lfReq *req) const {
    std::unique_lock<std::mutex> lk(poolMu_);
    req->poolCancel = true;
    req->poolAgain = false;
    req->poolActive.store(false, std::memory_order_release);
    if (req->poolQueued) {
        poolQueue_.erase(std::find(poolQueue_.begin(), poolQueue_.end(), req));
        req->poolQueued = false;
    }
    poolDoneCv_.wait(lk, [req] { return !req->poolRunning; });
}

} // namespace nixlLf
