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
 * writes every key again (one WARN line). The destructor revokes the lease: a clean exit
 * removes our keys at once.
 *
 * Values are bytes: what fetch returns is exactly what the peer published (the blob layer
 * validates it).
 *
 * Thread safety: all methods may be called from any thread. Peer callbacks run on the watch
 * threads and must not call unwatchAgent for their own agent or destroy this object.
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

#include "etcd_client.h"

/** The label of the full metadata (NIXL's default_metadata_label). */
inline constexpr char nixl_etcd_metadata_label[] = "metadata";

/** namespace + "/" + agent + "/": the prefix of every key of agent. */
std::string
nixlEtcdAgentPrefix(std::string_view name_space, std::string_view agent);

class nixlEtcdMetadata {
public:
    /** A change under a watched peer's prefix: label = key after the prefix ("" = prefix key). */
    using peer_event_cb_t = std::function<
        void(const std::string &agent, nixl_etcd_event_type_t type, const std::string &label)>;

    /** No I/O. Throws std::invalid_argument for an empty agent name, one containing '/', or no
     *  endpoint. */
    nixlEtcdMetadata(std::string agent, nixlEtcdConfig cfg);
    /** Stops the watches and the keepalive thread, revokes the lease (best effort). */
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
     * Watches agent's prefix from after fromRevision (0 = now) and calls cb for every change.
     * Replaces an existing watch of that agent. Returns once the server confirmed the watch
     * (NIXL_ERR_BACKEND if it did not within the request timeout; the watch keeps retrying).
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

    nixlEtcdClient &
    client() noexcept {
        return client_;
    }

    const std::string &
    prefix() const noexcept {
        return prefix_;
    }

private:
    void
    keepaliveLoop();
    /** The lease is gone: a new one and every key again. Called with mutex_ held. */
    void
    regrantLocked();

    const std::string agent_;
    nixlEtcdClient client_;
    const std::string prefix_;

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

    std::mutex watchMutex_;
    std::map<std::string, std::unique_ptr<nixlEtcdWatch>> watches_;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_METADATA_H
