/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_lease.h"

#include <algorithm>

#include "common/nixl_log.h"

nixlEtcdLease::nixlEtcdLease(nixlEtcdClient &client, std::string agent, std::string prefix)
    : client_(client),
      agent_(std::move(agent)),
      prefix_(std::move(prefix)) {}

nixlEtcdLease::~nixlEtcdLease() {
    int64_t lease = 0;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        lease = lease_;
    }
    cv_.notify_all();
    if (keepalive_.joinable()) {
        keepalive_.join();
    }
    if (lease != 0) {
        // Our keys go with it: peers see the DELETE at once instead of after the TTL. Bounded
        // and on a connection of its own: a destructor must not wait for the request timeout
        // (docs/metadata-etcd.md, the lease).
        const auto bound = std::min(client_.config().requestTimeout, nixl_etcd_revoke_timeout);
        const nixl_status_t st = client_.leaseRevoke(lease, bound);
        if (st != NIXL_SUCCESS && st != NIXL_ERR_NOT_FOUND) {
            NIXL_WARN << "etcd: agent " << agent_ << ": lease " << lease
                      << " not revoked; its keys stay until it expires";
        }
    }
}

nixl_status_t
nixlEtcdLease::start() {
    std::lock_guard lock(mutex_);
    if (started_) {
        return NIXL_SUCCESS;
    }
    int64_t id = 0;
    int64_t ttl = 0;
    nixl_status_t st = client_.leaseGrant(client_.config().leaseTtl.count(), id, &ttl);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    st = client_.put(prefix_, "", id);
    if (st != NIXL_SUCCESS) {
        client_.leaseRevoke(id);
        return st;
    }
    lease_ = id;
    grantedTtl_ = ttl;
    started_ = true;
    anchored_ = true;
    keepalive_ = std::thread([this] { keepaliveLoop(); });
    NIXL_DEBUG << "etcd: agent " << agent_ << " registered at " << client_.currentEndpoint()
               << " under " << prefix_ << " (lease " << id << ", TTL " << ttl << " s)";
    return NIXL_SUCCESS;
}

nixl_status_t
nixlEtcdLease::publish(std::string_view label, std::string_view blob) {
    std::lock_guard lock(mutex_);
    if (!started_) {
        NIXL_ERROR << "etcd: agent " << agent_ << ": publish of '" << label
                   << "' before the etcd connection was started";
        return NIXL_ERR_NOT_ALLOWED;
    }
    if (!anchored_) {
        // invalidateLocalMD deleted it. A NIXL 1.4 peer that loads this blob watches only our
        // prefix key, and a deletion of a key that does not exist is no event: it would keep
        // us after our next invalidateLocalMD or lease expiry.
        if (client_.put(prefix_, "", lease_) == NIXL_SUCCESS) {
            anchored_ = true;
        }
    }
    nixl_status_t st = client_.put(prefix_ + std::string(label), blob, lease_);
    if (st == NIXL_ERR_NOT_FOUND) {
        // The lease ended before the keepalive thread noticed: a new one now, then this key.
        const int64_t old = lease_;
        regrantLocked();
        if (lease_ != old) {
            NIXL_WARN << "etcd: agent " << agent_ << ": lease " << old << " was gone; wrote our "
                      << published_.size() + 1 << " keys again on lease " << lease_;
            st = client_.put(prefix_ + std::string(label), blob, lease_);
        }
    }
    if (st == NIXL_SUCCESS) {
        published_.insert_or_assign(std::string(label), std::string(blob));
    }
    return st;
}

nixl_status_t
nixlEtcdLease::removeLocal() {
    std::lock_guard lock(mutex_);
    const nixl_status_t st = client_.deletePrefix(prefix_);
    if (st == NIXL_SUCCESS) {
        published_.clear();
        anchored_ = false;
    }
    return st;
}

void
nixlEtcdLease::regrantLocked() {
    int64_t id = 0;
    int64_t ttl = 0;
    if (client_.leaseGrant(client_.config().leaseTtl.count(), id, &ttl) != NIXL_SUCCESS) {
        return; // the next round tries again
    }
    lease_ = id;
    grantedTtl_ = ttl;
    regrants_.fetch_add(1, std::memory_order_relaxed);
    nixl_status_t st = client_.put(prefix_, "", id);
    anchored_ = st == NIXL_SUCCESS;
    for (const auto &[label, blob] : published_) {
        if (st != NIXL_SUCCESS) {
            break;
        }
        st = client_.put(prefix_ + label, blob, id);
    }
}

void
nixlEtcdLease::keepaliveLoop() {
    std::unique_lock lock(mutex_);
    bool failing = false;
    while (!stopping_) {
        // A third of the TTL leaves two more tries before the lease expires; after a failure
        // try again sooner.
        auto interval = std::chrono::milliseconds(std::max<int64_t>(grantedTtl_ * 1000 / 3, 200));
        if (failing) {
            interval = std::min(interval, std::chrono::milliseconds(1000));
        }
        if (cv_.wait_for(lock, interval, [this] { return stopping_; })) {
            break;
        }
        const int64_t id = lease_;
        // A renewal later than the next one is worthless, and the destructor joins this
        // thread: bounded by the interval (at least 1 s), not the request timeout.
        const auto bound = std::min(client_.config().requestTimeout,
                                    std::max(interval, std::chrono::milliseconds(1000)));
        lock.unlock();
        int64_t ttl = 0;
        const nixl_status_t st = client_.leaseKeepAlive(id, ttl, bound);
        lock.lock();
        if (stopping_) {
            break;
        }
        if (st == NIXL_SUCCESS) {
            keepalives_.fetch_add(1, std::memory_order_relaxed);
            if (failing) {
                NIXL_WARN << "etcd: agent " << agent_ << ": lease " << id << " renewed again";
            }
            failing = false;
        } else if (st == NIXL_ERR_NOT_FOUND) {
            if (id == lease_) {
                NIXL_WARN << "etcd: agent " << agent_ << ": lease " << id
                          << " expired; granting a new one and writing our "
                          << published_.size() + 1 << " keys again";
                regrantLocked();
            }
            failing = lease_ == id; // regrant failed: retry soon
        } else {
            failing = true; // the client logged why
        }
    }
}

int64_t
nixlEtcdLease::leaseId() const {
    std::lock_guard lock(mutex_);
    return lease_;
}
