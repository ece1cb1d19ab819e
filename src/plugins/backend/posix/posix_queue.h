/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file posix_queue.h
 * @brief The I/O engine strategy of the POSIX backend: one kernel queue (io_uring, Linux AIO
 *        context, or a set of POSIX AIO control blocks) that takes reads and writes and hands
 *        back their results. The request (posix_request.h) decides what to submit; a queue only
 *        moves I/Os in and completions out.
 *
 * Thread safety: none. A queue belongs to one request, whose lock serialises every call.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_QUEUE_H
#define NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_QUEUE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "posix_config.h"

class nixlPosixFileMD;

/** One descriptor of a request: the part not yet moved is [done, len). */
struct nixlPosixIo {
    char *buf = nullptr;
    uint64_t offset = 0;
    size_t len = 0;
    size_t done = 0;
    int fd = -1;
    bool write = false;
    /** Descriptor index in the request, for log lines. */
    uint32_t index = 0;
    /** Consecutive submissions that came back EINTR/EAGAIN without progress. */
    uint32_t retries = 0;
    const nixlPosixFileMD *file = nullptr;

    /** Bytes one submission carries at most: a 32-bit length in io_uring's SQE. */
    static constexpr size_t max_chunk = size_t{1} << 30;

    size_t
    chunk() const noexcept {
        return len - done < max_chunk ? len - done : max_chunk;
    }
};

/** A finished submission: bytes moved (>= 0) or -errno. */
struct nixlPosixCompletion {
    nixlPosixIo *io;
    int64_t result;
};

class nixlPosixQueue {
public:
    nixlPosixQueue(nixl_posix_engine_t kind, uint32_t depth) : kind_(kind), depth_(depth) {}
    virtual ~nixlPosixQueue() = default;
    nixlPosixQueue(const nixlPosixQueue &) = delete;
    nixlPosixQueue &
    operator=(const nixlPosixQueue &) = delete;

    /**
     * Submits the remaining chunk of ios[0..n) in order. accepted is set to how many the queue
     * took (fewer than n when it is full: offer the rest again after a reap). Returns 0, or
     * -errno when ios[accepted] could not be submitted for a reason of its own (a closed fd,
     * an invalid argument): that I/O failed, the ones after it were not looked at.
     */
    virtual int
    submit(nixlPosixIo *const *ios, size_t n, size_t &accepted) noexcept = 0;

    /**
     * Moves up to max finished submissions into out and sets got. Never blocks unless wait is
     * true, then it waits for at least one (the caller has some in flight). Returns 0, or
     * -errno when the queue itself failed (its in-flight I/Os are then lost to the caller).
     */
    virtual int
    reap(nixlPosixCompletion *out, size_t max, bool wait, size_t &got) noexcept = 0;

    /** The most submissions in flight at once. */
    size_t
    depth() const noexcept {
        return depth_;
    }

    nixl_posix_engine_t
    kind() const noexcept {
        return kind_;
    }

private:
    const nixl_posix_engine_t kind_;
    const uint32_t depth_;
};

/**
 * A queue of the given engine and depth, or null with err set to the errno of the failed
 * setup (io_uring refused by seccomp: EPERM or ENOSYS; Linux AIO over aio-max-nr: EAGAIN).
 */
std::unique_ptr<nixlPosixQueue>
nixlPosixMakeQueue(nixl_posix_engine_t kind, uint32_t depth, int &err);

/**
 * The engine's idle queues, all of one engine kind and depth. A request holds a queue only
 * while a post of it runs, so kernel resources (io_uring rings, Linux AIO contexts, which count
 * against fs.aio-max-nr) follow the transfers in flight, not the requests an application keeps
 * prepared; reuse keeps queue setup off the steady-state post path.
 *
 * Thread safety: acquire and put lock mu_; any thread.
 */
class nixlPosixQueuePool {
public:
    /** Keeps at most max_idle idle queues; more are destroyed when returned. */
    nixlPosixQueuePool(nixl_posix_engine_t kind, uint32_t depth, size_t max_idle);

    /** An idle queue, or a new one; null with err set when a new one cannot be set up. */
    std::unique_ptr<nixlPosixQueue>
    acquire(int &err);
    /** Takes back a queue with nothing in flight. */
    void
    put(std::unique_ptr<nixlPosixQueue> queue) noexcept;

    nixl_posix_engine_t
    kind() const noexcept {
        return kind_;
    }

    uint32_t
    depth() const noexcept {
        return depth_;
    }

private:
    const nixl_posix_engine_t kind_;
    const uint32_t depth_;
    const size_t maxIdle_;
    std::mutex mu_;
    std::vector<std::unique_ptr<nixlPosixQueue>> idle_;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_QUEUE_H
