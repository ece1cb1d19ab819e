/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_lease.h
 * @brief Our own keys in etcd: the lease they hang on, kept alive by a thread every third of the
 *        granted TTL, granted again (and every key written again, one WARN line) when it was
 *        lost, and revoked at destruction so peers see our keys go at once. Part of
 *        nixlEtcdMetadata (etcd_metadata.h has the key layout and the whole story).
 *
 * Thread safety: all methods may be called from any thread; the lease, what we published and
 * the thread's state are guarded by one mutex, which no request other than the keepalive's
 * runs outside of (publishes are serialised with a regrant). The counters are atomics.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_LEASE_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_LEASE_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "etcd_client.h"

/** Bound on the lease revoke of the destructor: a clean exit must not wait for the request
 *  timeout (the lease expires by itself after its TTL anyway). */
inline constexpr std::chrono::milliseconds nixl_etcd_revoke_timeout{2000};

class nixlEtcdLease {
public:
    /** client must outlive this object; prefix = our agent's key prefix. No I/O. */
    nixlEtcdLease(nixlEtcdClient &client, std::string agent, std::string prefix);
    /** Stops the keepalive thread, revokes the lease (best effort, bounded by
     *  nixl_etcd_revoke_timeout). */
    ~nixlEtcdLease();

    nixlEtcdLease(const nixlEtcdLease &) = delete;
    nixlEtcdLease &
    operator=(const nixlEtcdLease &) = delete;

    /** Grants the lease, writes our prefix key, starts the keepalive thread. Once. */
    nixl_status_t
    start();

    /** Writes prefix + label = blob on the lease, and remembers it for a new lease. After
     *  removeLocal() the prefix key is written first again: NIXL 1.4 peers watch only that key
     *  (nixl-wire.md 4.3), so without it they would never see our next invalidation. */
    nixl_status_t
    publish(std::string_view label, std::string_view blob);

    /** Deletes every key under our prefix (the prefix key too) and forgets what we published. */
    nixl_status_t
    removeLocal();

    /** The current lease (0 before start()). */
    int64_t
    leaseId() const;

    /** Keepalives that succeeded so far (tests). */
    uint64_t
    keepalives() const noexcept {
        return keepalives_.load(std::memory_order_relaxed);
    }

    /** Leases granted again after one was lost (tests). */
    uint64_t
    leaseRegrants() const noexcept {
        return regrants_.load(std::memory_order_relaxed);
    }

private:
    void
    keepaliveLoop();
    /** The lease is gone: a new one and every key again. Called with mutex_ held. */
    void
    regrantLocked();

    nixlEtcdClient &client_;
    const std::string agent_;
    const std::string prefix_;

    mutable std::mutex mutex_;
    std::condition_variable cv_;
    bool started_ = false;
    bool stopping_ = false;
    int64_t lease_ = 0;
    int64_t grantedTtl_ = 0;
    /** Our prefix key is in etcd as far as we know (false after removeLocal()). */
    bool anchored_ = false;
    std::atomic<uint64_t> keepalives_{0};
    std::atomic<uint64_t> regrants_{0};
    /** label -> blob: what we published, written again on a new lease. */
    std::map<std::string, std::string, std::less<>> published_;
    std::thread keepalive_;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_LEASE_H
