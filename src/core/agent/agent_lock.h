/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_lock.h
 * @brief The agent lock: one std::shared_mutex taken as nixl_thread_sync_t says (NONE: never,
 *        STRICT: always exclusive, RW: shared for readers), and its scoped guards. Not installed.
 *
 * Thread safety: nixlAgentLock is the agent's synchronisation itself; its mode never changes
 * after construction. A guard is used by the thread that made it.
 */
#ifndef NIXL_SRC_CORE_AGENT_AGENT_LOCK_H
#define NIXL_SRC_CORE_AGENT_AGENT_LOCK_H

#include <shared_mutex>

#include "nixl_types.h"

/** Lock whose behaviour follows nixl_thread_sync_t. */
class nixlAgentLock {
public:
    explicit nixlAgentLock(nixl_thread_sync_t mode) noexcept : mode_(mode) {}

    nixl_thread_sync_t
    mode() const noexcept {
        return mode_;
    }

    void
    lockWrite() {
        if (mode_ != nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE) {
            mutex_.lock();
        }
    }

    void
    unlockWrite() {
        if (mode_ != nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE) {
            mutex_.unlock();
        }
    }

    void
    lockRead() {
        if (mode_ == nixl_thread_sync_t::NIXL_THREAD_SYNC_RW) {
            mutex_.lock_shared();
        } else if (mode_ == nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT) {
            mutex_.lock();
        }
    }

    void
    unlockRead() {
        if (mode_ == nixl_thread_sync_t::NIXL_THREAD_SYNC_RW) {
            mutex_.unlock_shared();
        } else if (mode_ == nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT) {
            mutex_.unlock();
        }
    }

private:
    nixl_thread_sync_t mode_;
    std::shared_mutex mutex_;
};

class nixlWriteGuard {
public:
    explicit nixlWriteGuard(nixlAgentLock &l) : l_(l) {
        l_.lockWrite();
    }

    ~nixlWriteGuard() {
        l_.unlockWrite();
    }

    nixlWriteGuard(const nixlWriteGuard &) = delete;
    nixlWriteGuard &
    operator=(const nixlWriteGuard &) = delete;

private:
    nixlAgentLock &l_;
};

class nixlReadGuard {
public:
    explicit nixlReadGuard(nixlAgentLock &l) : l_(l) {
        l_.lockRead();
    }

    ~nixlReadGuard() {
        l_.unlockRead();
    }

    nixlReadGuard(const nixlReadGuard &) = delete;
    nixlReadGuard &
    operator=(const nixlReadGuard &) = delete;

private:
    nixlAgentLock &l_;
};

#endif // NIXL_SRC_CORE_AGENT_AGENT_LOCK_H
