/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_peers.h
 * @brief Deletions under peers' prefixes, for nixlEtcdMetadata::watchAgent: ONE stream over the
 *        whole namespace carrying deletions only (opened by the first watch), a bounded history
 *        of the deletions it delivered (replayed to a watch registered from an older revision),
 *        and a stream of its own for a peer read before the shared one covered it.
 *
 * Thread safety: all methods may be called from any thread. Callbacks run on a watch thread,
 * under the lock unwatchAgent takes: they must not call watchAgent or unwatchAgent or destroy
 * this object; no callback for an agent runs after unwatchAgent of it returned. The counters
 * are atomics (written under that lock).
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_PEERS_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_PEERS_H

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "etcd_client.h"

class nixlEtcdPeerWatch {
public:
    /** A deletion under a watched peer's prefix: label = key after the prefix ("" = prefix
     *  key); type is always DELETE. */
    using peer_event_cb_t = std::function<
        void(const std::string &agent, nixl_etcd_event_type_t type, const std::string &label)>;

    /** client must outlive this object; agent names us in log lines. No I/O. */
    nixlEtcdPeerWatch(nixlEtcdClient &client, std::string agent);
    /** Ends every stream (joins their threads). */
    ~nixlEtcdPeerWatch();

    nixlEtcdPeerWatch(const nixlEtcdPeerWatch &) = delete;
    nixlEtcdPeerWatch &
    operator=(const nixlEtcdPeerWatch &) = delete;

    /**
     * Opens the namespace's deletion stream (once) and waits for the server to confirm it:
     * revisions read after it returned are covered, so watching a peer read then costs no
     * request. NIXL_ERR_CANCELED once the client's shutdown began.
     */
    nixl_status_t
    ensureStream();

    /** See nixlEtcdMetadata::watchAgent. */
    nixl_status_t
    watchAgent(const std::string &agent, int64_t fromRevision, peer_event_cb_t cb);

    /** Ends the watch of agent (no-op when none). */
    void
    unwatchAgent(const std::string &agent);

    /** Peers watched on a stream of their own (tests). */
    uint64_t
    ownWatches() const noexcept {
        return ownWatchCount_.load(std::memory_order_relaxed);
    }

    /** Deletions remembered for replay now (tests). */
    size_t
    deleteHistorySize() const noexcept {
        return deletedEntries_.load(std::memory_order_relaxed);
    }

private:
    struct subscriber_t {
        int64_t fromRevision = 0;
        peer_event_cb_t cb;
    };

    /** The deletion stream's callback. */
    void
    onPeerDeletes(const std::vector<nixlEtcdEvent> &events);

    nixlEtcdClient &client_;
    const std::string agent_;
    /** namespace + "/": every agent's keys start with it. */
    const std::string agentsPrefix_;

    /** Serialises opening the deletion stream. */
    std::mutex peerWatchOpen_;
    std::unique_ptr<nixlEtcdWatch> peerWatch_;

    /** Guards what follows; held while peer callbacks run. */
    mutable std::mutex peersMutex_;
    /** Deletions after this revision reach onPeerDeletes (0: the stream is not confirmed). */
    int64_t peerWatchFrom_ = 0;
    /** The last revision the stream delivered (or confirmed). */
    int64_t peerWatchAt_ = 0;
    /** agent -> label -> revision of its last deletion seen after historyFloor_, replayed to a
     *  watch registered from an older revision. Bounded: cleared (and the floor raised) when it
     *  would hold more than nixl_etcd_delete_history agents or deleteHistoryMax entries; keys
     *  longer than nixl_etcd_history_key_max are not remembered (delivered live only). */
    std::map<std::string, std::map<std::string, int64_t>> deleted_;
    std::atomic<size_t> deletedEntries_{0};
    int64_t historyFloor_ = 0;
    std::map<std::string, subscriber_t> subscribers_;
    /** Peers read before the stream covered them: a watch of their own. */
    std::map<std::string, std::unique_ptr<nixlEtcdWatch>> ownWatches_;
    std::atomic<uint64_t> ownWatchCount_{0};
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_PEERS_H
