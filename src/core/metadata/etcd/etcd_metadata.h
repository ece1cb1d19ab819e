/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_metadata.h
 * @brief The metadata operations an agent needs from etcd, with NIXL 1.4's key layout, on top
 *        of nixlEtcdClient: publish under a lease kept alive by a thread, fetch (get, else watch
 *        until a timeout), watch a peer's prefix, delete our prefix.
 *
 * Key layout (NIXL's): key = namespace + "/" + agent + "/" + label. The full metadata has the
 * label "metadata", a partial one the caller's label; the empty-label key (the agent's prefix
 * itself) is written at start() so peers see the agent before it publishes. With the default
 * namespace "/nixl/agents/" a key reads "/nixl/agents//A/metadata", as in NIXL.
 *
 * Beyond NIXL: every key we write hangs on one lease (TTL nixlEtcdConfig::leaseTtl) renewed by a
 * keepalive thread every third of the granted TTL. A process that dies without cleaning up
 * loses its keys when the lease expires, and peers watching it see DELETE events. If the lease
 * is lost anyway (etcd unreachable for longer than the TTL), the thread grants a new one and
 * writes every key again (one WARN line). The destructor revokes the lease (bounded by
 * nixl_etcd_revoke_timeout): a clean exit removes our keys at once.
 *
 * Requests per process do not grow with the number of peers beyond the reads themselves: peers
 * are watched through ONE stream over the whole namespace that carries deletions only (opened
 * by the first fetch or watch), fetches of several agents are read in one request, and a fetch
 * that waits for agents not published yet waits on one stream for all of them.
 *
 * Values are bytes: what fetch returns is exactly what the peer published (the blob layer
 * validates it).
 *
 * Parts: etcd_lease.h (our keys, the lease and its keepalive thread), etcd_peers.h (the
 * deletion streams behind watchAgent); this class adds the reads (fetch, fetchMany).
 *
 * Thread safety: all methods may be called from any thread. Peer callbacks run on the watch
 * thread, under the lock that unwatchAgent takes: they must not call watchAgent or unwatchAgent
 * or destroy this object; no callback for an agent runs after unwatchAgent of it returned.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_METADATA_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_METADATA_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "etcd_client.h"
#include "etcd_lease.h"
#include "etcd_peers.h"

/** The label of the full metadata (NIXL's default_metadata_label). */
inline constexpr char nixl_etcd_metadata_label[] = "metadata";

class nixlEtcdMetadata {
public:
    /** A deletion under a watched peer's prefix: label = key after the prefix ("" = prefix
     *  key); type is always DELETE. */
    using peer_event_cb_t = nixlEtcdPeerWatch::peer_event_cb_t;

    /** The outcome of one agent's fetch. */
    struct fetch_result_t {
        std::string agent;
        nixl_status_t status = NIXL_ERR_UNKNOWN;
        std::string blob;
        int64_t revision = 0; ///< the revision the value was read at (for watchAgent)
    };
    using fetch_cb_t = std::function<void(fetch_result_t &)>;

    /** No I/O. Throws std::invalid_argument for an empty agent name, one containing '/', or no
     *  endpoint. */
    nixlEtcdMetadata(std::string agent, nixlEtcdConfig cfg);
    /** Stops the watches and the keepalive thread, revokes the lease (best effort, bounded by
     *  nixl_etcd_revoke_timeout). */
    ~nixlEtcdMetadata() = default;

    nixlEtcdMetadata(const nixlEtcdMetadata &) = delete;
    nixlEtcdMetadata &
    operator=(const nixlEtcdMetadata &) = delete;

    /** Grants the lease, writes our prefix key, starts the keepalive thread. Once. */
    nixl_status_t
    start() {
        return lease_.start();
    }

    /** Writes our metadata under label (nixl_etcd_metadata_label for the full one). */
    nixl_status_t
    publish(std::string_view label, std::string_view blob) {
        return lease_.publish(label, blob);
    }

    /**
     * Reads agent's label; if absent, watches for it until timeout. revision (optional) = the
     * revision the value was read at, to start watchAgent from. NIXL_ERR_NOT_FOUND on timeout
     * (one ERROR line), other statuses as the client's.
     */
    nixl_status_t
    fetch(const std::string &agent,
          std::string_view label,
          std::chrono::milliseconds timeout,
          std::string &blob,
          int64_t *revision = nullptr);

    /**
     * fetch of several agents at once: one read request per nixl_etcd_max_batch_keys agents,
     * and one watch for all those not published yet. cb gets each agent's result on the calling
     * thread as soon as it is known (found ones first); returns when every agent got one.
     * Once the client's shutdown began (nixlEtcdClient::setShutdownDeadline) it waits for
     * nothing: agents not delivered yet get NIXL_ERR_CANCELED (one INFO line for all).
     */
    void
    fetchMany(const std::vector<std::string> &agents,
              std::string_view label,
              std::chrono::milliseconds timeout,
              const fetch_cb_t &cb);

    /**
     * Calls cb for every deletion under agent's prefix after fromRevision (0 = from now): on the
     * shared namespace stream when it covers fromRevision (no request), else on a watch of its
     * own. Replaces an existing watch of that agent. NIXL_ERR_BACKEND when the server did not
     * confirm the stream within the request timeout (it keeps retrying); NIXL_ERR_CANCELED
     * once the client's shutdown began (no wait).
     */
    nixl_status_t
    watchAgent(const std::string &agent, int64_t fromRevision, peer_event_cb_t cb) {
        return peers_.watchAgent(agent, fromRevision, std::move(cb));
    }

    /** Ends the watch of agent (no-op when none). */
    void
    unwatchAgent(const std::string &agent) {
        peers_.unwatchAgent(agent);
    }

    /** Deletes every key under our prefix and forgets what we published. */
    nixl_status_t
    removeLocal() {
        return lease_.removeLocal();
    }

    /** The current lease (0 before start()). */
    int64_t
    leaseId() const {
        return lease_.leaseId();
    }

    /** Keepalives that succeeded so far (tests). */
    uint64_t
    keepalives() const noexcept {
        return lease_.keepalives();
    }

    /** Leases granted again after one was lost (tests). */
    uint64_t
    leaseRegrants() const noexcept {
        return lease_.leaseRegrants();
    }

    /** Peers watched on a stream of their own because the shared one did not cover the
     *  revision they were read at (tests). */
    uint64_t
    ownWatches() const noexcept {
        return peers_.ownWatches();
    }
    /** Deletions remembered for replay now (tests: the history stays bounded). */
    size_t
    deleteHistorySize() const noexcept {
        return peers_.deleteHistorySize();
    }

    nixlEtcdClient &
    client() noexcept {
        return client_;
    }

    const std::string &
    prefix() const noexcept {
        return prefix_;
    }

private:
    const std::string agent_;
    nixlEtcdClient client_;
    const std::string prefix_;
    // Destroyed in reverse: the peer streams first (their threads call into peers_), then the
    // keepalive thread and the lease revoke, then the client they all use.
    nixlEtcdLease lease_;
    nixlEtcdPeerWatch peers_;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_METADATA_H
