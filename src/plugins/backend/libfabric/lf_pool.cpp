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
// lfRail::postTurn under the rail's mutex, as progress would) is posted by one of the pool's
// threads, which then queues the request again behind the others until all is posted. The
// rail's mutex still serialises the calls into libfabric (its rails are FI_THREAD_DOMAIN), so
// threads overlap only on different rails and with the completions of other turns; what the
// pool gives is a caller that does not post and a long list posted without anyone polling.
// Completion, notification and trace phases are those of num_threads = 0.
#include "lf_backend.h"

#include <algorithm>
#include <utility>

namespace nixlLf {

// ---------------------------------------------------------------------------------------------
// lfPostPool

bool
lfPostPool::start(size_t threads, turn_fn turn, const std::string &agent) {
    turn_ = std::move(turn);
    return threads_.start(
        threads,
        [this](threads_t::lock_t &lk, lfReq *&req, bool stopping) { run(lk, req, stopping); },
        "LIBFABRIC", agent);
}

void
lfPostPool::stop() {
    // Requests still queued are the engine's teardown's (as its rails close): none is posted
    // again, and with the queue empty the threads end after the turns they are running.
    threads_.stop([](std::deque<lfReq *> &queue) {
        for (lfReq *req : queue) {
            req->poolQueued = false;
            req->poolActive.store(false, std::memory_order_release);
        }
        queue.clear();
    });
}

void
lfPostPool::run(threads_t::lock_t &lk, lfReq *req, bool stopping) {
    req->poolQueued = false;
    req->poolRunning = true;
    lk.unlock();
    const bool more = turn_(*req);
    lk.lock();
    req->poolRunning = false;
    // poolAgain: reposted after this turn looked at it (its answer is of the old post).
    const bool again = more || req->poolAgain;
    req->poolAgain = false;
    if (again && !req->poolCancel && !stopping && !threads_.stoppingLocked()) {
        // Behind the others: long requests share the threads turn by turn.
        threads_.queueLocked().push_back(req);
        req->poolQueued = true;
        threads_.wake();
    } else {
        req->poolActive.store(false, std::memory_order_release);
    }
}

void
lfPostPool::post(lfReq *req) {
    {
        auto lk = threads_.lock();
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
        threads_.queueLocked().push_back(req);
        req->poolQueued = true;
    }
    threads_.wake();
}

void
lfPostPool::forget(lfReq *req) {
    auto lk = threads_.lock();
    req->poolCancel = true;
    req->poolAgain = false;
    req->poolActive.store(false, std::memory_order_release);
    if (req->poolQueued) {
        auto &q = threads_.queueLocked();
        q.erase(std::find(q.begin(), q.end(), req));
        req->poolQueued = false;
    }
    threads_.await(lk, [req] { return !req->poolRunning; });
}

// ---------------------------------------------------------------------------------------------
// The engine's side: what a turn does

bool
lfEngine::startPool() {
    if (cfg_.numThreads == 0) {
        return true;
    }
    return pool_->start(cfg_.numThreads, [this](lfReq &req) { return poolTurn(req); },
                        localAgent);
}

bool
lfEngine::poolTurn(lfReq &req) const {
    bool stalled = false;
    const bool more = req.rail->postTurn(req, stalled);
    wakeProgressIfIdle();
    if (stalled) {
        std::this_thread::yield(); // transmit queue full: let the completions come
    }
    return more;
}

} // namespace nixlLf
