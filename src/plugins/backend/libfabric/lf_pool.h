/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_pool.h
 * @brief The LIBFABRIC engine's posting pool (num_threads > 0): threads that post long requests
 *        a turn (split_batch_size descriptors) at a time, each request queued again behind the
 *        others after its turn until all of it is posted.
 *
 * The pool knows requests only as turns to post: what a turn does is the function given to
 * start() (the engine posts under the rail's mutex there). The threads, their queue and its
 * lock are nixlPostThreads (backend/common/nixl_post_threads.h); this class is the LIBFABRIC
 * policy over them.
 *
 * Thread safety: post() and forget() may be called from any thread; the queue, the stop flag
 * and every request's pool fields (poolQueued, poolRunning, poolCancel, poolAgain, and the
 * writes of poolActive) are guarded by the pool's own lock, a leaf lock as far as the pool is
 * concerned (a turn runs without it). start() and stop() are called by the engine's
 * constructor and destructor only.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_POOL_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_POOL_H

#include <cstddef>
#include <functional>
#include <string>

#include "nixl_post_threads.h"

namespace nixlLf {

class lfReq;

/** @brief Threads posting pooled requests turn by turn from one queue. */
class lfPostPool {
public:
    /** Posts one turn of req; true if descriptors remain to post. */
    using turn_fn = std::function<bool(lfReq &req)>;

    lfPostPool() = default;
    lfPostPool(const lfPostPool &) = delete;
    lfPostPool &
    operator=(const lfPostPool &) = delete;
    ~lfPostPool() {
        stop();
    }

    /** Starts threads threads; false (one line naming agent) if one cannot be started. */
    bool
    start(size_t threads, turn_fn turn, const std::string &agent);
    /** Drops the queued requests (left to the engine's teardown), then joins the threads. */
    void
    stop();
    /** Hands a posted request (posting, nothing posted yet) to the pool. */
    void
    post(lfReq *req);
    /** Release: takes req out of the queue and waits for a turn of it running to end. */
    void
    forget(lfReq *req);

private:
    using threads_t = nixlPostThreads<lfReq *>;

    /** A pool thread: posts one turn of req (lk held on entry and return, not during it). */
    void
    run(threads_t::lock_t &lk, lfReq *req, bool stopping);

    turn_fn turn_;
    threads_t threads_; ///< last: its threads stop before the function goes
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_POOL_H
