/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file posix_request.h
 * @brief One prepared POSIX transfer: its descriptors as I/Os, the kernel queue it holds while
 *        a post runs (from the engine's pool), and the state of a post (what is submitted,
 *        what is to be retried, the first error).
 *
 * A post submits descriptors in order, as many as the queue takes (its depth); each check
 * reaps what finished, resubmits short transfers from where they stopped and those that came
 * back EINTR or EAGAIN, and tops the queue up. The first error (a negative result, end of file
 * on a READ, a WRITE that moves nothing) ends the request: nothing more is submitted, what is
 * in flight is waited for, and the request reports NIXL_ERR_BACKEND after one log line naming
 * the file, offset and errno. It never reports success unless every byte moved.
 *
 * Thread safety: post, check and release of one request are serialised by mu_. check uses
 * try_lock so that a poll never waits behind another thread's poll; release waits.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_REQUEST_H
#define NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_REQUEST_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nixl_backend_sdk.h"
#include "posix_queue.h"

class nixlPosixReq : public nixlBackendReqH {
public:
    /** Takes the I/Os prepXfer resolved; queues come from pool (which outlives the request),
     *  agent names log lines. */
    nixlPosixReq(nixlPosixQueuePool &pool, std::vector<nixlPosixIo> ios, const std::string &agent);
    ~nixlPosixReq() override;

    /**
     * Starts every descriptor over: NIXL_IN_PROG, or the final status when done already.
     * ended tells whether this call saw the request end (for the WIRE_COMPLETED phase).
     */
    nixl_status_t
    post(const nixl_be_trace_ctx_t *trace_ctx, bool &ended);
    /** Reaps and resubmits without blocking: NIXL_IN_PROG, NIXL_SUCCESS or the error; ended
     *  as for post (true in exactly one call per post). */
    nixl_status_t
    check(bool &ended);
    /** Waits for every submitted I/O to finish, so no I/O lands in freed memory. */
    void
    drain();

    nixl_posix_engine_t
    engine() const noexcept {
        return pool_.kind();
    }

    const nixl_be_trace_ctx_t *
    traceCtx() const noexcept {
        return traceCtx_;
    }

private:
    /** A submission gives up after this many EINTR/EAGAIN results in a row for one I/O. */
    static constexpr uint32_t max_retries = 1000;
    /** Polls in a row in which the queue took nothing with nothing in flight, before failing. */
    static constexpr uint32_t max_stalls = 100000;

    nixl_status_t
    progressLocked(bool &ended);
    void
    complete(nixlPosixIo &io, int64_t result);
    void
    fail(const nixlPosixIo &io, int err, const char *what);
    void
    topUp();
    nixl_status_t
    finalStatus(bool &ended);
    /** Gives the queue back to the pool once nothing is in flight (a failed queue is dropped). */
    void
    returnQueue(bool healthy) noexcept;

    std::mutex mu_;
    nixlPosixQueuePool &pool_;
    /** Held from post until the request ends or is released; null otherwise. */
    std::unique_ptr<nixlPosixQueue> queue_;
    std::vector<nixlPosixIo> ios_;
    const std::string &agent_;
    /** I/Os to submit again (short transfers, EINTR/EAGAIN), before new ones. */
    std::vector<nixlPosixIo *> retry_;
    std::vector<nixlPosixIo *> batch_;
    std::vector<nixlPosixCompletion> reaped_;
    /** The first I/O of ios_ not yet submitted in this post. */
    size_t next_ = 0;
    /** Submissions the queue holds. */
    size_t inFlight_ = 0;
    /** Polls in a row in which the queue took nothing while idle (see max_stalls). */
    uint32_t stalls_ = 0;
    /** Non-empty I/Os of this post not yet complete. */
    size_t remaining_ = 0;
    /** The post hit an error: nothing more is submitted, status_ holds it. */
    bool failed_ = false;
    /** A post is under way (it holds queue_). */
    bool running_ = false;
    nixl_status_t status_ = NIXL_SUCCESS;
    const nixl_be_trace_ctx_t *traceCtx_ = nullptr;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_REQUEST_H
