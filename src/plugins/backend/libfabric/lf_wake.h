/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_wake.h
 * @brief How the LIBFABRIC progress thread is woken: an eventfd that ends its wait, the flag
 *        saying it waits idle (so posters know to write it), and the stop request.
 *
 * Thread safety: open() and the destructor run with no progress thread; every other member may
 * be called from any thread. The idle flag pairs with the rails' mutexes: the progress thread
 * raises it (seq_cst) before it checks the rails under their mutexes, and a poster reads it
 * (seq_cst) after it unlocked the rail it added work to, so either the thread sees the work or
 * the poster sees the flag and writes the eventfd.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_WAKE_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_WAKE_H

#include <atomic>
#include <cstdint>

#include <sys/eventfd.h>
#include <unistd.h>

namespace nixlLf {

class lfProgressWake {
public:
    lfProgressWake() = default;
    lfProgressWake(const lfProgressWake &) = delete;
    lfProgressWake &
    operator=(const lfProgressWake &) = delete;

    ~lfProgressWake() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }

    /** Creates the eventfd; false (errno set) if it cannot. */
    bool
    open() noexcept {
        fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        return fd_ >= 0;
    }

    /** What the progress thread polls for a wake-up (-1 before open). */
    int
    fd() const noexcept {
        return fd_;
    }

    /** Asks the progress thread to end, and ends its wait. */
    void
    stop() noexcept {
        stop_.store(true, std::memory_order_release);
        if (fd_ >= 0) {
            signal();
        }
    }

    bool
    stopping() const noexcept {
        return stop_.load(std::memory_order_acquire);
    }

    /** Progress thread: about to check the rails before an idle wait. */
    void
    enterIdle() noexcept {
        idle_.store(true, std::memory_order_seq_cst);
    }

    /** Progress thread: not (or no longer) waiting idle; its short waits end by themselves. */
    void
    leaveIdle() noexcept {
        idle_.store(false, std::memory_order_relaxed);
    }

    /** A poster, after unlocking the rail it left work on: wakes the thread if it waits idle. */
    void
    wakeIfIdle() const noexcept {
        if (fd_ >= 0 && idle_.load(std::memory_order_seq_cst)) {
            signal();
        }
    }

    /** Progress thread: takes a wake-up that ended its wait. */
    void
    drain() const noexcept {
        uint64_t v = 0;
        [[maybe_unused]] ssize_t n = ::read(fd_, &v, sizeof(v));
    }

private:
    void
    signal() const noexcept {
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(fd_, &one, sizeof(one));
    }

    int fd_ = -1;
    std::atomic<bool> stop_{false};
    std::atomic<bool> idle_{false};
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_WAKE_H
