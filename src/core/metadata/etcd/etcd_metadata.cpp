/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_metadata.h"

#include <algorithm>
#include <optional>
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
      prefix_(nixlEtcdAgentPrefix(client_.config().nameSpace, agent_)),
      agentsPrefix_(client_.config().nameSpace + "/") {
    if (!validAgentName(agent_)) {
        NIXL_ERROR << "etcd: agent name '" << agent_ << "' is empty or contains '/'";
        throw std::invalid_argument("etcd: agent name '" + agent_ + "' is empty or contains '/'");
    }
}

nixlEtcdMetadata::~nixlEtcdMetadata() {
    // The streams first (their threads call into us), then the keepalive thread.
    std::map<std::string, std::unique_ptr<nixlEtcdWatch>> own;
    {
        std::lock_guard lock(peersMutex_);
        own.swap(ownWatches_);
        subscribers_.clear();
    }
    own.clear();
    peerWatch_.reset();
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
    nixl_status_t st = NIXL_ERR_UNKNOWN;
    fetchMany({agent}, label, timeout, [&](fetch_result_t &r) {
        st = r.status;
        if (st == NIXL_SUCCESS) {
            blob = std::move(r.blob);
            if (revision != nullptr) {
                *revision = r.revision;
            }
        }
    });
    return st;
}

void
nixlEtcdMetadata::fetchMany(const std::vector<std::string> &agents,
                            std::string_view label,
                            std::chrono::milliseconds timeout,
                            const fetch_cb_t &cb) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto deliver = [&](const std::string &agent, nixl_status_t st, std::string blob,
                       int64_t rev) {
        fetch_result_t r{agent, st, std::move(blob), rev};
        cb(r);
    };
    // At the agent's shutdown nobody wants the answer: every agent not delivered yet gets
    // NIXL_ERR_CANCELED, with one line for all of them.
    std::vector<std::string> abandoned;
    auto abandon = [&](const std::string &agent) {
        abandoned.push_back(agent);
        deliver(agent, NIXL_ERR_CANCELED, {}, 0);
    };
    auto sayAbandoned = [&] {
        if (!abandoned.empty()) {
            NIXL_INFO << "etcd: agent " << agent_ << ": " << abandoned.size()
                      << " fetch(es) of label '" << label << "' abandoned (first: "
                      << abandoned.front() << "): the agent is shutting down";
        }
    };
    if (client_.shuttingDown()) {
        for (const std::string &agent : agents) {
            abandon(agent);
        }
        sayAbandoned();
        return;
    }
    // The deletion stream before the reads, so the revisions read are ones it covers and a
    // later watchAgent costs no request. Its failure is logged; the reads do not need it.
    ensurePeerWatch();

    struct pending_t {
        std::string agent;
        int64_t readAt = 0;
        bool arrived = false;
    };
    std::map<std::string, pending_t> pending; // key -> agent not published at readAt
    std::vector<std::string> keys;
    std::vector<std::string> names;
    auto flush = [&] {
        if (keys.empty()) {
            return;
        }
        std::vector<std::optional<nixlEtcdKv>> kvs;
        int64_t rev = 0;
        const nixl_status_t st = client_.getMany(keys, kvs, &rev);
        for (size_t i = 0; i < keys.size(); ++i) {
            if (st != NIXL_SUCCESS) {
                deliver(names[i], st, {}, 0);
            } else if (kvs[i]) {
                deliver(names[i], NIXL_SUCCESS, std::move(kvs[i]->value), rev);
            } else {
                pending[keys[i]] = pending_t{names[i], rev};
            }
        }
        keys.clear();
        names.clear();
    };
    for (const std::string &agent : agents) {
        if (!validAgentName(agent)) {
            NIXL_ERROR << "etcd: agent " << agent_ << ": fetch of agent '" << agent
                       << "': the name is empty or contains '/'";
            deliver(agent, NIXL_ERR_INVALID_PARAM, {}, 0);
            continue;
        }
        if (client_.shuttingDown()) {
            abandon(agent);
            continue;
        }
        keys.push_back(nixlEtcdAgentPrefix(client_.config().nameSpace, agent) +
                       std::string(label));
        names.push_back(agent);
        if (keys.size() == nixl_etcd_max_batch_keys) {
            flush();
        }
    }
    flush();
    if (pending.empty() || client_.shuttingDown()) {
        for (const auto &[key, p] : pending) {
            abandon(p.agent);
        }
        sayAbandoned();
        return;
    }

    // Not there yet: one watch of puts over the span of the missing keys, from just after the
    // oldest revision read, so a put between a read and the watch is not missed.
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<std::string, nixlEtcdKv>> arrived; // agent, kv
    int64_t from = 0;
    for (const auto &[key, p] : pending) {
        from = from == 0 ? p.readAt : std::min(from, p.readAt);
    }
    std::string span_end = pending.rbegin()->first;
    span_end.push_back('\0'); // the key right after the last one
    size_t left = pending.size();
    nixlEtcdWatch watch(
        client_,
        pending.begin()->first,
        span_end,
        from + 1,
        [&](const std::vector<nixlEtcdEvent> &events) {
            std::lock_guard lock(m);
            for (const auto &ev : events) {
                auto it = pending.find(ev.kv.key);
                // A put older than our read was followed by a delete: not the value.
                if (ev.type != nixl_etcd_event_type_t::PUT || it == pending.end() ||
                    it->second.arrived || ev.kv.modRevision <= it->second.readAt) {
                    continue;
                }
                it->second.arrived = true;
                arrived.emplace_back(it->second.agent, ev.kv);
            }
            cv.notify_all();
        },
        nixlEtcdWatch::filter_t::PUTS_ONLY);
    // The agent's shutdown ends the wait for peers at once, whatever etcdWatchTimeout says.
    const uint64_t waker = client_.addShutdownWaker([&] {
        std::lock_guard lock(m);
        cv.notify_all();
    });
    while (left > 0) {
        std::vector<std::pair<std::string, nixlEtcdKv>> batch;
        {
            std::unique_lock lock(m);
            if (!cv.wait_until(lock, deadline, [&] {
                    return !arrived.empty() || client_.shuttingDown();
                }) ||
                arrived.empty()) {
                break;
            }
            batch.swap(arrived);
        }
        for (auto &[agent, kv] : batch) {
            --left;
            deliver(agent, NIXL_SUCCESS, std::move(kv.value), kv.modRevision);
        }
    }
    client_.removeShutdownWaker(waker);
    watch.stop();
    // Arrived between the deadline and the stop: found after all.
    for (auto &[agent, kv] : arrived) {
        deliver(agent, NIXL_SUCCESS, std::move(kv.value), kv.modRevision);
    }
    const bool shutdown = client_.shuttingDown();
    for (const auto &[key, p] : pending) {
        if (p.arrived) {
            continue;
        }
        if (shutdown) {
            abandon(p.agent);
        } else {
            NIXL_ERROR << "etcd: agent " << agent_ << ": " << key << " did not appear within "
                       << timeout.count() << " ms";
            deliver(p.agent, NIXL_ERR_NOT_FOUND, {}, 0);
        }
    }
    sayAbandoned();
}

nixl_status_t
nixlEtcdMetadata::ensurePeerWatch() {
    std::lock_guard open(peerWatchOpen_);
    {
        std::lock_guard lock(peersMutex_);
        if (peerWatchFrom_ > 0) {
            return NIXL_SUCCESS;
        }
    }
    // Each fetch thread used to wait here a whole request timeout, one after the other, while
    // the agent was being destroyed: the shutdown ends the wait (waitCreated) and opens nothing.
    if (client_.shuttingDown()) {
        return NIXL_ERR_CANCELED;
    }
    if (!peerWatch_) {
        peerWatch_ = std::make_unique<nixlEtcdWatch>(
            client_,
            agentsPrefix_,
            nixlEtcdClient::prefixEnd(agentsPrefix_),
            0,
            [this](const std::vector<nixlEtcdEvent> &events) { onPeerDeletes(events); },
            nixlEtcdWatch::filter_t::DELETES_ONLY);
    }
    if (!peerWatch_->waitCreated(client_.config().requestTimeout)) {
        if (client_.shuttingDown()) {
            return NIXL_ERR_CANCELED;
        }
        NIXL_ERROR << "etcd: agent " << agent_ << ": the watch of " << agentsPrefix_
                   << " was not confirmed within " << client_.config().requestTimeout.count()
                   << " ms; it keeps retrying (peers read meanwhile get watches of their own)";
        return NIXL_ERR_BACKEND;
    }
    std::lock_guard lock(peersMutex_);
    // Started "from now": it delivers every deletion after the revision it was confirmed at.
    peerWatchFrom_ = peerWatch_->createdRevision();
    peerWatchAt_ = std::max(peerWatchAt_, peerWatchFrom_);
    historyFloor_ = std::max(historyFloor_, peerWatchFrom_);
    return NIXL_SUCCESS;
}

namespace {

/** Agents whose deletions are remembered for replay; more clears the history. */
constexpr size_t nixl_etcd_delete_history = 4096;
/** Longest key whose deletion is remembered; real keys are a name and a short label. */
constexpr size_t nixl_etcd_history_key_max = 512;

} // namespace

void
nixlEtcdMetadata::onPeerDeletes(const std::vector<nixlEtcdEvent> &events) {
    std::lock_guard lock(peersMutex_);
    for (const auto &ev : events) {
        peerWatchAt_ = std::max(peerWatchAt_, ev.kv.modRevision);
        const std::string &key = ev.kv.key;
        if (ev.type != nixl_etcd_event_type_t::DELETE || key.size() <= agentsPrefix_.size() ||
            key.compare(0, agentsPrefix_.size(), agentsPrefix_) != 0) {
            continue;
        }
        const size_t slash = key.find('/', agentsPrefix_.size());
        if (slash == std::string::npos) {
            continue; // not an agent's key
        }
        const std::string agent = key.substr(agentsPrefix_.size(), slash - agentsPrefix_.size());
        const std::string label = key.substr(slash + 1);
        if (key.size() <= nixl_etcd_history_key_max) {
            auto a = deleted_.find(agent);
            const bool fresh = a == deleted_.end() || a->second.count(label) == 0;
            if (fresh && (deletedEntries_ >= client_.config().deleteHistoryMax ||
                          (a == deleted_.end() && deleted_.size() >= nixl_etcd_delete_history))) {
                // Older readers fall back to watches of their own (historyFloor_).
                deleted_.clear();
                deletedEntries_ = 0;
                historyFloor_ = peerWatchAt_;
            }
            auto [pos, added] = deleted_[agent].try_emplace(label, 0);
            deletedEntries_ += added ? 1 : 0;
            pos->second = std::max(pos->second, ev.kv.modRevision);
        } else if (ev.kv.modRevision > historyFloor_) {
            // Not remembered: a watch registered later from an older revision must not rely on
            // the history to replay it.
            historyFloor_ = ev.kv.modRevision;
        }
        auto it = subscribers_.find(agent);
        if (it != subscribers_.end() && ev.kv.modRevision > it->second.fromRevision) {
            it->second.cb(agent, nixl_etcd_event_type_t::DELETE, label);
        }
    }
}

nixl_status_t
nixlEtcdMetadata::watchAgent(const std::string &agent, int64_t fromRevision, peer_event_cb_t cb) {
    if (!validAgentName(agent)) {
        NIXL_ERROR << "etcd: agent " << agent_ << ": watch of agent '" << agent
                   << "': the name is empty or contains '/'";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (client_.shuttingDown()) {
        return NIXL_ERR_CANCELED; // nobody will hear of the peer's deletions any more
    }
    const nixl_status_t st = ensurePeerWatch();
    std::unique_ptr<nixlEtcdWatch> old;
    {
        std::lock_guard lock(peersMutex_);
        const int64_t from = fromRevision > 0 ? fromRevision : peerWatchAt_;
        old = std::exchange(ownWatches_[agent], nullptr);
        ownWatches_.erase(agent);
        subscribers_.erase(agent);
        if (st == NIXL_SUCCESS && from >= historyFloor_) {
            // Deletions the stream delivered before this call are in the history.
            auto hist = deleted_.find(agent);
            if (hist != deleted_.end()) {
                for (const auto &[label, rev] : hist->second) {
                    if (rev > from) {
                        cb(agent, nixl_etcd_event_type_t::DELETE, label);
                    }
                }
            }
            subscribers_[agent] = subscriber_t{from, std::move(cb)};
            cb = nullptr;
        }
    }
    old.reset();
    if (!cb) {
        return NIXL_SUCCESS;
    }
    // Read before the shared stream covers it: a stream of its own from that revision.
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
        },
        nixlEtcdWatch::filter_t::DELETES_ONLY);
    const bool created = watch->waitCreated(client_.config().requestTimeout);
    {
        std::lock_guard lock(peersMutex_);
        old = std::exchange(ownWatches_[agent], std::move(watch));
        ++ownWatchCount_;
    }
    old.reset();
    if (!created && client_.shuttingDown()) {
        return NIXL_ERR_CANCELED;
    }
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
        std::lock_guard lock(peersMutex_);
        subscribers_.erase(agent);
        auto it = ownWatches_.find(agent);
        if (it == ownWatches_.end()) {
            return;
        }
        old = std::move(it->second);
        ownWatches_.erase(it);
    }
}

uint64_t
nixlEtcdMetadata::ownWatches() const {
    std::lock_guard lock(peersMutex_);
    return ownWatchCount_;
}

size_t
nixlEtcdMetadata::deleteHistorySize() const {
    std::lock_guard lock(peersMutex_);
    return deletedEntries_;
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
