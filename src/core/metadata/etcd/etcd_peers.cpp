/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_peers.h"

#include <algorithm>
#include <utility>

#include "common/nixl_log.h"

nixlEtcdPeerWatch::nixlEtcdPeerWatch(nixlEtcdClient &client, std::string agent)
    : client_(client),
      agent_(std::move(agent)),
      agentsPrefix_(client_.config().nameSpace + "/") {}

nixlEtcdPeerWatch::~nixlEtcdPeerWatch() {
    // The streams first: their threads call into us.
    std::map<std::string, std::unique_ptr<nixlEtcdWatch>> own;
    {
        std::lock_guard lock(peersMutex_);
        own.swap(ownWatches_);
        subscribers_.clear();
    }
    own.clear();
    peerWatch_.reset();
}

nixl_status_t
nixlEtcdPeerWatch::ensureStream() {
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
nixlEtcdPeerWatch::onPeerDeletes(const std::vector<nixlEtcdEvent> &events) {
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
            const size_t entries = deletedEntries_.load(std::memory_order_relaxed);
            if (fresh && (entries >= client_.config().deleteHistoryMax ||
                          (a == deleted_.end() && deleted_.size() >= nixl_etcd_delete_history))) {
                // Older readers fall back to watches of their own (historyFloor_).
                deleted_.clear();
                deletedEntries_.store(0, std::memory_order_relaxed);
                historyFloor_ = peerWatchAt_;
            }
            auto [pos, added] = deleted_[agent].try_emplace(label, 0);
            if (added) {
                deletedEntries_.fetch_add(1, std::memory_order_relaxed);
            }
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
nixlEtcdPeerWatch::watchAgent(const std::string &agent, int64_t fromRevision, peer_event_cb_t cb) {
    if (!nixlEtcdValidAgentName(agent)) {
        NIXL_ERROR << "etcd: agent " << agent_ << ": watch of agent '" << agent
                   << "': the name is empty or contains '/'";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (client_.shuttingDown()) {
        return NIXL_ERR_CANCELED; // nobody will hear of the peer's deletions any more
    }
    const nixl_status_t st = ensureStream();
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
        ownWatchCount_.fetch_add(1, std::memory_order_relaxed);
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
nixlEtcdPeerWatch::unwatchAgent(const std::string &agent) {
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
