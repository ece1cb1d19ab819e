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

/** The label of the full metadata (NIXL's default_metadata_label). */
inline constexpr char nixl_etcd_metadata_label[] = "metadata";

/** Bound on the lease revoke of the destructor: a clean exit must not wait for the request
 *  timeout (the lease expires by itself after its TTL anyway). */
inline constexpr std::chrono::milliseconds nixl_etcd_revoke_timeout{2000};

/** namespace + "/" + agent + "/": the prefix of every key of agent. */
std::string
nixlEtcdAgentPrefix(std::string_view name_space, std::string_view agent);

class nixlEtcdMetadata {
public:
    /** A deletion under a watched peer's prefix: label = key after the prefix ("" = prefix
     *  key); type is always DELETE. */
    using peer_event_cb_t = std::function<
        void(const std::string &agent, nixl_etcd_event_type_t type, const std::string &label)>;

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
    ~nixlEtcdMetadata();

    nixlEtcdMetadata(const nixlEtcdMetadata &) = delete;
    nixlEtcdMetadata &
    operator=(const nixlEtcdMetadata &) = delete;

    /** Grants the lease, writes our prefix key, starts the keepalive thread. Once. */
    nixl_status_t
    start();

    /** Writes our metadata under label (nixl_etcd_metadata_label for the full one). */
    nixl_status_t
    publish(std::string_view label, std::string_view blob);

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
    watchAgent(const std::string &agent, int64_t fromRevision, peer_event_cb_t cb);

    /** Ends the watch of agent (no-op when none). */
    void
    unwatchAgent(const std::string &agent);

    /** Deletes every key under our prefix and forgets what we published. */
    nixl_status_t
    removeLocal();

    /** The current lease (0 before start()). */
    int64_t
    leaseId() const;

    /** Keepalives that succeeded so far (tests). */
    uint64_t
    keepalives() const;

    /** Leases granted again after one was lost (tests). */
    uint64_t
    leaseRegrants() const;

    /** Peers watched on a stream of their own because the shared one did not cover the
     *  revision they were read at (tests). */
    uint64_t
    ownWatches() const;
    /** Deletions remembered for replay now (tests: the history stays bounded). */
    size_t
    deleteHistorySize() const;

    nixlEtcdClient &
    client() noexcept {
        return client_;
    }

    const std::string &
    prefix() const noexcept {
        return prefix_;
    }

private:
    struct subscriber_t {
        int64_t fromRevision = 0;
        peer_event_cb_t cb;
    };

    void
    keepaliveLoop();
    /** The lease is gone: a new one and every key again. Called with mutex_ held. */
    void
    regrantLocked();
    /** Opens the namespace's deletion stream (once) and waits for the server to confirm it. */
    nixl_status_t
    ensurePeerWatch();
    /** The deletion stream's callback. */
    void
    onPeerDeletes(const std::vector<nixlEtcdEvent> &events);

    const std::string agent_;
    nixlEtcdClient client_;
    const std::string prefix_;
    /** namespace + "/": every agent's keys start with it. */
    const std::string agentsPrefix_;

    mutable std::mutex mutex_;
    std::condition_variable cv_;
    bool started_ = false;
    bool stopping_ = false;
    int64_t lease_ = 0;
    int64_t grantedTtl_ = 0;
    uint64_t keepalives_ = 0;
    uint64_t regrants_ = 0;
    /** label -> blob: what we published, written again on a new lease. */
    std::map<std::string, std::string, std::less<>> published_;
    std::thread keepalive_;

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
    size_t deletedEntries_ = 0;
    int64_t historyFloor_ = 0;
    std::map<std::string, subscriber_t> subscribers_;
    /** Peers read before the stream covered them: a watch of their own. */
    std::map<std::string, std::unique_ptr<nixlEtcdWatch>> ownWatches_;
    uint64_t ownWatchCount_ = 0;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_METADATA_H
