/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "posix_request.h"

#include <cerrno>
#include <cstring>

#include "posix_file.h"

nixlPosixReq::nixlPosixReq(nixlPosixQueuePool &pool,
                           std::vector<nixlPosixIo> ios,
                           const std::string &agent)
    : pool_(pool),
      ios_(std::move(ios)),
      agent_(agent) {
    const size_t depth = pool_.depth();
    retry_.reserve(depth);
    batch_.reserve(depth);
    reaped_.resize(depth);
}

nixlPosixReq::~nixlPosixReq() {
    drain();
}

nixl_status_t
nixlPosixReq::post(const nixl_be_trace_ctx_t *trace_ctx, bool &ended) {
    std::lock_guard<std::mutex> lk(mu_);
    traceCtx_ = trace_ctx;
    remaining_ = 0;
    for (auto &io : ios_) {
        io.done = 0;
        io.retries = 0;
        remaining_ += io.len != 0 ? 1 : 0; // an empty descriptor has nothing to move
    }
    retry_.clear();
    next_ = 0;
    inFlight_ = 0;
    stalls_ = 0;
    failed_ = false;
    status_ = NIXL_SUCCESS;
    ended = false;
    if (queue_ == nullptr) {
        int err = 0;
        queue_ = pool_.acquire(err);
        if (queue_ == nullptr) {
            status_ = NIXL_ERR_BACKEND;
            ended = true;
            NIXL_SDK_ERROR_LIMITED("POSIX agent '" << agent_ << "': "
                                   << nixlPosixEngineName(pool_.kind()) << " queue of depth "
                                   << pool_.depth() << " cannot be set up: " << std::strerror(err)
                                   << (err == EAGAIN ? " (Linux AIO: fs.aio-max-nr reached)" : ""));
            return status_;
        }
    }
    running_ = true;
    topUp();
    return progressLocked(ended);
}

nixl_status_t
nixlPosixReq::check(bool &ended) {
    ended = false;
    std::unique_lock<std::mutex> lk(mu_, std::try_to_lock);
    if (!lk.owns_lock()) {
        return NIXL_IN_PROG; // another thread is progressing this request right now
    }
    return progressLocked(ended);
}

void
nixlPosixReq::drain() {
    std::lock_guard<std::mutex> lk(mu_);
    bool healthy = true;
    while (inFlight_ != 0) {
        size_t got = 0;
        if (queue_->reap(reaped_.data(), reaped_.size(), true, got) < 0) {
            healthy = false; // the queue itself failed: nothing more will come out of it
            break;
        }
        inFlight_ -= got;
    }
    running_ = false;
    returnQueue(healthy);
}

void
nixlPosixReq::returnQueue(bool healthy) noexcept {
    if (queue_ == nullptr) {
        return;
    }
    inFlight_ = 0;
    if (healthy) {
        pool_.put(std::move(queue_));
    }
    queue_.reset();
}

nixl_status_t
nixlPosixReq::progressLocked(bool &ended) {
    ended = false;
    if (!running_) {
        return status_;
    }
    for (;;) {
        size_t got = 0;
        const int rc = queue_->reap(reaped_.data(), reaped_.size(), false, got);
        if (rc < 0) {
            if (!failed_) {
                failed_ = true;
                status_ = NIXL_ERR_BACKEND;
                NIXL_SDK_ERROR_LIMITED("POSIX agent '" << agent_ << "' "
                                       << nixlPosixEngineName(queue_->kind())
                                       << " queue failed while reaping: " << std::strerror(-rc));
            }
            // What was in flight is lost to us; the queue is dropped, not reused.
            running_ = false;
            ended = true;
            returnQueue(false);
            return status_;
        }
        inFlight_ -= got;
        for (size_t i = 0; i < got; ++i) {
            complete(*reaped_[i].io, reaped_[i].result);
        }
        if (got == 0) {
            break;
        }
        topUp();
    }
    topUp();
    return finalStatus(ended);
}

nixl_status_t
nixlPosixReq::finalStatus(bool &ended) {
    if (inFlight_ != 0) {
        return NIXL_IN_PROG;
    }
    if (failed_ || remaining_ == 0) {
        running_ = false;
        ended = true;
        returnQueue(true);
        return status_; // NIXL_SUCCESS unless failed_
    }
    return NIXL_IN_PROG; // only retries left whose queue slots were all refused (EAGAIN)
}

void
nixlPosixReq::complete(nixlPosixIo &io, int64_t result) {
    if (failed_) {
        return; // the request already ended; only the count of in-flight I/Os matters
    }
    if (result == -EINTR || result == -EAGAIN) {
        if (++io.retries > max_retries) {
            fail(io, static_cast<int>(-result), "kept failing");
            return;
        }
        retry_.push_back(&io);
        return;
    }
    if (result < 0) {
        fail(io, static_cast<int>(-result), io.write ? "write" : "read");
        return;
    }
    if (result == 0) {
        // A READ at end of file (truncated under us) or a WRITE that moved nothing: never
        // reported as success, and retrying would spin.
        fail(io, 0, io.write ? "write moved no byte" : "read hit end of file (truncated?)");
        return;
    }
    io.retries = 0;
    io.done += static_cast<size_t>(result);
    if (io.done < io.len) {
        retry_.push_back(&io); // short transfer: continue from where it stopped
        return;
    }
    --remaining_;
}

void
nixlPosixReq::fail(const nixlPosixIo &io, int err, const char *what) {
    failed_ = true;
    status_ = NIXL_ERR_BACKEND;
    const char *name = err != 0 && strerrorname_np(err) != nullptr ? strerrorname_np(err) : "-";
    NIXL_SDK_ERROR_LIMITED("POSIX agent '" << agent_ << "' desc " << io.index << " file '"
                           << io.file->name << "' offset " << io.offset + io.done << ": "
                           << what << ": errno " << err << " " << name << " ("
                           << (err != 0 ? std::strerror(err) : "no errno") << ")");
}

void
nixlPosixReq::topUp() {
    while (!failed_) {
        const size_t room = queue_->depth() - inFlight_;
        if (room == 0) {
            return;
        }
        batch_.clear();
        size_t from_retry = 0;
        while (batch_.size() < room && from_retry < retry_.size()) {
            batch_.push_back(retry_[from_retry++]);
        }
        while (batch_.size() < room && next_ < ios_.size()) {
            nixlPosixIo &io = ios_[next_++];
            if (io.len != 0) {
                batch_.push_back(&io);
            }
        }
        if (batch_.empty()) {
            return;
        }
        size_t accepted = 0;
        const int rc = queue_->submit(batch_.data(), batch_.size(), accepted);
        inFlight_ += accepted;
        // What was not accepted goes back to where it came from, in order.
        const size_t retried_accepted = accepted < from_retry ? accepted : from_retry;
        retry_.erase(retry_.begin(), retry_.begin() + static_cast<long>(retried_accepted));
        if (rc < 0) {
            fail(*batch_[accepted], -rc, "submit");
            return;
        }
        // A queue that takes nothing while nothing of ours is in flight would leave the
        // request IN_PROG forever; after max_stalls such polls it fails instead.
        stalls_ = accepted == 0 && inFlight_ == 0 ? stalls_ + 1 : 0;
        if (stalls_ > max_stalls) {
            fail(*batch_[0], EAGAIN, "the queue keeps refusing submissions");
            return;
        }
        if (accepted < batch_.size()) {
            // The queue is full for now (EAGAIN): the new ones not taken are offered again
            // from the first of them.
            const size_t first_new = accepted > from_retry ? accepted : from_retry;
            if (first_new < batch_.size()) {
                next_ = static_cast<size_t>(batch_[first_new] - ios_.data());
            }
            return;
        }
    }
}
