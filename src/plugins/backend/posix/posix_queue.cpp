/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The three I/O engines behind nixlPosixQueue. Each keeps per-slot control blocks for its
// depth, so submission allocates nothing.
#include "posix_queue.h"

#include <aio.h>
#include <libaio.h>
#include <liburing.h>

#include <cerrno>
#include <new>
#include <vector>

namespace {

/** io_uring: one ring per queue; SQEs are flushed on submit and on every reap. */
class nixlPosixUringQueue final : public nixlPosixQueue {
public:
    explicit nixlPosixUringQueue(uint32_t depth)
        : nixlPosixQueue(nixl_posix_engine_t::URING, depth) {}

    int
    init() noexcept {
        const int rc = io_uring_queue_init(static_cast<unsigned>(depth()), &ring_, 0);
        ready_ = rc == 0;
        return rc;
    }

    ~nixlPosixUringQueue() override {
        if (ready_) {
            io_uring_queue_exit(&ring_);
        }
    }

    int
    submit(nixlPosixIo *const *ios, size_t n, size_t &accepted) noexcept override {
        accepted = 0;
        while (accepted < n) {
            io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
            if (sqe == nullptr) {
                break;
            }
            nixlPosixIo *io = ios[accepted];
            const auto len = static_cast<unsigned>(io->chunk());
            if (io->write) {
                io_uring_prep_write(sqe, io->fd, io->buf + io->done, len, io->offset + io->done);
            } else {
                io_uring_prep_read(sqe, io->fd, io->buf + io->done, len, io->offset + io->done);
            }
            io_uring_sqe_set_data(sqe, io);
            ++accepted;
        }
        flush();
        return 0;
    }

    int
    reap(nixlPosixCompletion *out, size_t max, bool wait, size_t &got) noexcept override {
        got = 0;
        flush();
        io_uring_cqe *cqe = nullptr;
        if (wait) {
            int rc;
            do {
                rc = io_uring_wait_cqe(&ring_, &cqe);
            } while (rc == -EINTR);
            if (rc < 0) {
                return rc;
            }
        }
        while (got < max && io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
            out[got++] = {static_cast<nixlPosixIo *>(io_uring_cqe_get_data(cqe)), cqe->res};
            io_uring_cqe_seen(&ring_, cqe);
        }
        return 0;
    }


private:
    /* Prepared SQEs stay in the ring when the kernel is busy (EAGAIN, EBUSY) or a signal
     * came (EINTR); the next flush hands them over. */
    void
    flush() noexcept {
        if (io_uring_sq_ready(&ring_) != 0) {
            io_uring_submit(&ring_);
        }
    }

    io_uring ring_{};
    bool ready_ = false;
};

/** Linux AIO (libaio): one context; an iocb per slot, freed when its event is reaped. */
class nixlPosixLinuxAioQueue final : public nixlPosixQueue {
public:
    explicit nixlPosixLinuxAioQueue(uint32_t depth)
        : nixlPosixQueue(nixl_posix_engine_t::LINUX_AIO, depth),
          cbs_(depth),
          free_(depth),
          batch_(depth),
          events_(depth) {
        for (uint32_t i = 0; i < depth; ++i) {
            free_[i] = &cbs_[i];
        }
    }

    int
    init() noexcept {
        return io_setup(static_cast<int>(depth()), &ctx_);
    }

    ~nixlPosixLinuxAioQueue() override {
        if (ctx_ != nullptr) {
            io_destroy(ctx_);
        }
    }

    int
    submit(nixlPosixIo *const *ios, size_t n, size_t &accepted) noexcept override {
        accepted = 0;
        const size_t take = n < free_.size() ? n : free_.size();
        for (size_t i = 0; i < take; ++i) {
            iocb *cb = free_[free_.size() - 1 - i];
            nixlPosixIo *io = ios[i];
            if (io->write) {
                io_prep_pwrite(cb, io->fd, io->buf + io->done, io->chunk(),
                               static_cast<long long>(io->offset + io->done));
            } else {
                io_prep_pread(cb, io->fd, io->buf + io->done, io->chunk(),
                              static_cast<long long>(io->offset + io->done));
            }
            cb->data = io;
            batch_[i] = cb;
        }
        size_t sent = 0;
        while (sent < take) {
            const int rc = io_submit(ctx_, static_cast<long>(take - sent), batch_.data() + sent);
            if (rc > 0) {
                sent += static_cast<size_t>(rc);
                continue;
            }
            if (rc == -EINTR) {
                continue;
            }
            free_.resize(free_.size() - sent);
            accepted = sent;
            // EAGAIN: out of kernel resources for now; the caller offers these again later.
            return rc == -EAGAIN || rc == 0 ? 0 : rc;
        }
        free_.resize(free_.size() - sent);
        accepted = sent;
        return 0;
    }

    int
    reap(nixlPosixCompletion *out, size_t max, bool wait, size_t &got) noexcept override {
        got = 0;
        const long want = static_cast<long>(max < events_.size() ? max : events_.size());
        timespec zero{0, 0};
        int rc;
        do {
            rc = io_getevents(ctx_, wait ? 1 : 0, want, events_.data(), wait ? nullptr : &zero);
        } while (rc == -EINTR);
        if (rc < 0) {
            return rc;
        }
        for (int i = 0; i < rc; ++i) {
            free_.push_back(events_[i].obj);
            out[got++] = {static_cast<nixlPosixIo *>(events_[i].data),
                          static_cast<int64_t>(static_cast<long>(events_[i].res))};
        }
        return 0;
    }


private:
    io_context_t ctx_ = nullptr;
    std::vector<iocb> cbs_;
    std::vector<iocb *> free_;
    std::vector<iocb *> batch_;
    std::vector<io_event> events_;
};

/** POSIX AIO (glibc's, thread-backed): an aiocb per slot, completion found by aio_error. */
class nixlPosixAioQueue final : public nixlPosixQueue {
public:
    explicit nixlPosixAioQueue(uint32_t depth)
        : nixlPosixQueue(nixl_posix_engine_t::POSIX_AIO, depth),
          slots_(depth),
          free_(depth) {
        for (uint32_t i = 0; i < depth; ++i) {
            free_[i] = i;
        }
        busy_.reserve(depth);
        waitList_.reserve(depth);
    }

    ~nixlPosixAioQueue() override {
        // The request drains before it frees the queue; this is the last guard against a
        // thread of glibc writing into freed control blocks.
        for (uint32_t s : busy_) {
            aio_cancel(slots_[s].cb.aio_fildes, &slots_[s].cb);
        }
        for (uint32_t s : busy_) {
            while (aio_error(&slots_[s].cb) == EINPROGRESS) {
                const aiocb *one[1] = {&slots_[s].cb};
                aio_suspend(one, 1, nullptr);
            }
            aio_return(&slots_[s].cb);
        }
    }

    int
    submit(nixlPosixIo *const *ios, size_t n, size_t &accepted) noexcept override {
        accepted = 0;
        while (accepted < n && !free_.empty()) {
            const uint32_t s = free_.back();
            nixlPosixIo *io = ios[accepted];
            aiocb &cb = slots_[s].cb;
            cb = aiocb{};
            cb.aio_fildes = io->fd;
            cb.aio_buf = io->buf + io->done;
            cb.aio_nbytes = io->chunk();
            cb.aio_offset = static_cast<off_t>(io->offset + io->done);
            cb.aio_sigevent.sigev_notify = SIGEV_NONE;
            const int rc = io->write ? aio_write(&cb) : aio_read(&cb);
            if (rc != 0) {
                const int err = errno;
                return err == EAGAIN ? 0 : -err;
            }
            slots_[s].io = io;
            free_.pop_back();
            busy_.push_back(s);
            ++accepted;
        }
        return 0;
    }

    int
    reap(nixlPosixCompletion *out, size_t max, bool wait, size_t &got) noexcept override {
        got = 0;
        for (;;) {
            for (size_t i = 0; i < busy_.size() && got < max;) {
                const uint32_t s = busy_[i];
                const int e = aio_error(&slots_[s].cb);
                if (e == EINPROGRESS) {
                    ++i;
                    continue;
                }
                const ssize_t r = aio_return(&slots_[s].cb);
                out[got++] = {slots_[s].io, e == 0 ? static_cast<int64_t>(r) : -int64_t{e}};
                busy_[i] = busy_.back();
                busy_.pop_back();
                free_.push_back(s);
            }
            if (got != 0 || !wait || busy_.empty()) {
                return 0;
            }
            waitList_.clear();
            for (uint32_t s : busy_) {
                waitList_.push_back(&slots_[s].cb);
            }
            aio_suspend(waitList_.data(), static_cast<int>(waitList_.size()), nullptr);
        }
    }


private:
    struct slot_t {
        aiocb cb{};
        nixlPosixIo *io = nullptr;
    };

    std::vector<slot_t> slots_;
    std::vector<uint32_t> free_;
    std::vector<uint32_t> busy_;
    std::vector<const aiocb *> waitList_;
};

} // namespace

std::unique_ptr<nixlPosixQueue>
nixlPosixMakeQueue(nixl_posix_engine_t kind, uint32_t depth, int &err) {
    err = 0;
    switch (kind) {
    case nixl_posix_engine_t::URING: {
        auto q = std::make_unique<nixlPosixUringQueue>(depth);
        if (const int rc = q->init(); rc < 0) {
            err = -rc;
            return nullptr;
        }
        return q;
    }
    case nixl_posix_engine_t::LINUX_AIO: {
        auto q = std::make_unique<nixlPosixLinuxAioQueue>(depth);
        if (const int rc = q->init(); rc < 0) {
            err = -rc;
            return nullptr;
        }
        return q;
    }
    case nixl_posix_engine_t::POSIX_AIO:
        return std::make_unique<nixlPosixAioQueue>(depth);
    }
    err = EINVAL;
    return nullptr;
}

nixlPosixQueuePool::nixlPosixQueuePool(nixl_posix_engine_t kind, uint32_t depth, size_t max_idle)
    : kind_(kind),
      depth_(depth),
      maxIdle_(max_idle) {
    idle_.reserve(max_idle); // put() then never allocates
}

std::unique_ptr<nixlPosixQueue>
nixlPosixQueuePool::acquire(int &err) {
    {
        std::lock_guard<std::mutex> lk(mu_);
        if (!idle_.empty()) {
            std::unique_ptr<nixlPosixQueue> q = std::move(idle_.back());
            idle_.pop_back();
            err = 0;
            return q;
        }
    }
    return nixlPosixMakeQueue(kind_, depth_, err);
}

void
nixlPosixQueuePool::put(std::unique_ptr<nixlPosixQueue> queue) noexcept {
    std::unique_lock<std::mutex> lk(mu_);
    if (idle_.size() < maxIdle_) {
        idle_.push_back(std::move(queue));
        return;
    }
    lk.unlock();
    queue.reset(); // tearing a queue down is a syscall or two: outside the lock
}
