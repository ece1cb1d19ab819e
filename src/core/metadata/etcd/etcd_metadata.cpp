/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_metadata.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include "common/nixl_log.h"

namespace {

// A '/' in a name would let agent "A/x" appear under agent "A"'s prefix (and its watch).
bool
validAgentName(std::string_view name) {
    return !name.empty() && name.find('/') == std::string_view::npos;
}

} // namespace

std::string
nixlEtcdAgentPrefix(std::string_view name_space, std::string_view agent) {
    std::string p;
    p.reserve(name_space.size() + agent.size() + 2);
    p.append(name_space).append("/").append(agent).append("/");
    return p;
}

nixlEtcdMetadata::nixlEtcdMetadata(std::string agent, nixlEtcdConfig cfg)
    : agent_(std::move(agent)),
      client_(std::move(cfg)),
      prefix_(nixlEtcdAgentPrefix(client_.config().nameSpace, agent_)) {
    if (!validAgentName(agent_)) {
        NIXL_ERROR << "etcd: agent name '" << agent_ << "' is empty or contains '/'";
        throw std::invalid_argument("etcd: agent name '" + agent_ + "' is empty or contains '/'");
    }
}

nixlEtcdMetadata::~nixlEtcdMetadata() {
    std::map<std::string, std::unique_ptr<nixlEtcdWatch>> watches;
    {
        std::lock_guard lock(watchMutex_);
        watches.swap(watches_);
    }
    watches.clear();
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
        // Our keys go with it: peers see the DELETE at once instead of after the TTL.
        const nixl_status_t st = client_.leaseRevoke(lease);
        if (st != NIXL_SUCCESS && st != NIXL_ERR_NOT_FOUND) {
            NIXL_WARN << "etcd: agent " << agent_ << ": lease " << lease
                      << " not revoked; its keys stay until it expires";
        }
    }
}

nixl_status_t
nixlEtcdMetadata::start() {
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
    keepalive_ = std::thread([this] { keepaliveLoop(); });
    NIXL_DEBUG << "etcd: agent " << agent_ << " registered at " << client_.currentEndpoint()
               << " under " << prefix_ << " (lease " << id << ", TTL " << ttl << " s)";
    return NIXL_SUCCESS;
}

nixl_status_t
nixlEtcdMetadata::publish(std::string_view label, std::string_view blob) {
    std::lock_guard lock(mutex_);
    if (!started_) {
        NIXL_ERROR << "etcd: agent " << agent_ << ": publish of '" << label
                   << "' before the etcd connection was started";
        return NIXL_ERR_NOT_ALLOWED;
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
nixlEtcdMetadata::fetch(const std::string &agent,
                        std::string_view label,
                        std::chrono::milliseconds timeout,
                        std::string &blob,
                        int64_t *revision) {
    if (!validAgentName(agent)) {
        NIXL_ERROR << "etcd: agent " << agent_ << ": fetch of agent '" << agent
                   << "': the name is empty or contains '/'";
        return NIXL_ERR_INVALID_PARAM;
    }
    const std::string key =
        nixlEtcdAgentPrefix(client_.config().nameSpace, agent) + std::string(label);
    std::optional<nixlEtcdKv> kv;
    int64_t rev = 0;
    nixl_status_t st = client_.get(key, kv, &rev);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    if (kv) {
        blob = std::move(kv->value);
        if (revision != nullptr) {
            *revision = rev;
        }
        return NIXL_SUCCESS;
    }
    // Not there yet: watch the key from just after the revision we read, so a put between the
    // get and the watch is not missed.
    std::mutex m;
    std::condition_variable cv;
    std::optional<nixlEtcdKv> got;
    nixlEtcdWatch watch(client_, key, "", rev + 1, [&](const std::vector<nixlEtcdEvent> &events) {
        for (const auto &ev : events) {
            if (ev.type == nixl_etcd_event_type_t::PUT) {
                std::lock_guard lock(m);
                if (!got) {
                    got = ev.kv;
                }
                cv.notify_all();
                return;
            }
        }
    });
    {
        std::unique_lock lock(m);
        cv.wait_for(lock, timeout, [&] { return got.has_value(); });
    }
    watch.stop();
    if (!got) {
        NIXL_ERROR << "etcd: agent " << agent_ << ": " << key << " did not appear within "
                   << timeout.count() << " ms";
        return NIXL_ERR_NOT_FOUND;
    }
    blob = std::move(got->value);
    if (revision != nullptr) {
        *revision = got->modRevision;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlEtcdMetadata::watchAgent(const std::string &agent, int64_t fromRevision, peer_event_cb_t cb) {
    if (!validAgentName(agent)) {
        NIXL_ERROR << "etcd: agent " << agent_ << ": watch of agent '" << agent
                   << "': the name is empty or contains '/'";
        return NIXL_ERR_INVALID_PARAM;
    }
    const std::string pfx = nixlEtcdAgentPrefix(client_.config().nameSpace, agent);
    auto watch = std::make_unique<nixlEtcdWatch>(
        client_,
        pfx,
        nixlEtcdClient::prefixEnd(pfx),
        fromRevision > 0 ? fromRevision + 1 : 0,
        [agent, pfx, cb = std::move(cb)](const std::vector<nixlEtcdEvent> &events) {
            for (const auto &ev : events) {
                cb(agent, ev.type, ev.kv.key.substr(std::min(pfx.size(), ev.kv.key.size())));
            }
        });
    const bool created = watch->waitCreated(client_.config().requestTimeout);
    std::unique_ptr<nixlEtcdWatch> old;
    {
        std::lock_guard lock(watchMutex_);
        old = std::exchange(watches_[agent], std::move(watch));
    }
    old.reset();
    if (!created) {
        NIXL_ERROR << "etcd: agent " << agent_ << ": watch of agent " << agent
                   << " not confirmed within " << client_.config().requestTimeout.count()
                   << " ms; it keeps retrying";
        return NIXL_ERR_BACKEND;
    }
    return NIXL_SUCCESS;
}

void
nixlEtcdMetadata::unwatchAgent(const std::string &agent) {
    std::unique_ptr<nixlEtcdWatch> old;
    {
        std::lock_guard lock(watchMutex_);
        auto it = watches_.find(agent);
        if (it == watches_.end()) {
            return;
        }
        old = std::move(it->second);
        watches_.erase(it);
    }
}

nixl_status_t
nixlEtcdMetadata::removeLocal() {
    std::lock_guard lock(mutex_);
    const nixl_status_t st = client_.deletePrefix(prefix_);
    if (st == NIXL_SUCCESS) {
        published_.clear();
    }
    return st;
}

int64_t
nixlEtcdMetadata::leaseId() const {
    std::lock_guard lock(mutex_);
    return lease_;
}

uint64_t
nixlEtcdMetadata::keepalives() const {
    std::lock_guard lock(mutex_);
    return keepalives_;
}

uint64_t
nixlEtcdMetadata::leaseRegrants() const {
    std::lock_guard lock(mutex_);
    return regrants_;
}

void
nixlEtcdMetadata::regrantLocked() {
    int64_t id = 0;
    int64_t ttl = 0;
    if (client_.leaseGrant(client_.config().leaseTtl.count(), id, &ttl) != NIXL_SUCCESS) {
        return; // the next round tries again
    }
    lease_ = id;
    grantedTtl_ = ttl;
    ++regrants_;
    nixl_status_t st = client_.put(prefix_, "", id);
    for (const auto &[label, blob] : published_) {
        if (st != NIXL_SUCCESS) {
            break;
        }
        st = client_.put(prefix_ + label, blob, id);
    }
}

void
nixlEtcdMetadata::keepaliveLoop() {
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
        lock.unlock();
        int64_t ttl = 0;
        const nixl_status_t st = client_.leaseKeepAlive(id, ttl);
        lock.lock();
        if (stopping_) {
            break;
        }
        if (st == NIXL_SUCCESS) {
            ++keepalives_;
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
