/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_client.h
 * @brief A small etcd v3 client speaking the server's JSON gateway (grpc-gateway) over libcurl:
 *        put, range, delete, lease grant/keepalive/revoke, and watch as a streaming request.
 *
 * Debian has no C++ etcd client; every etcd >= 3.4 serves the gateway under /v3/ on its client
 * URLs, so plain HTTP(S) POSTs of JSON are enough. Keys and values travel base64-encoded and
 * come back as bytes, untouched. See docs/metadata-etcd.md.
 *
 * Endpoints: a request goes to the endpoint that last answered; when it fails (no connection,
 * TLS failure, timeout, a reply that is not the gateway's JSON, or the server saying it is
 * unavailable / has no leader) the next endpoint is tried, and the one that answers is
 * remembered. Every call is bounded by nixlEtcdConfig::requestTimeout in total.
 *
 * Errors: the client logs each failure once (ERROR, naming the operation, key and endpoint or
 * the endpoints tried) and returns a status; callers propagate it.
 *   NIXL_ERR_BACKEND       no endpoint answered, or the server failed the request
 *   NIXL_ERR_NOT_FOUND     (leases) the lease does not exist or has expired
 *   NIXL_ERR_NOT_ALLOWED   authentication failed or permission denied
 *   NIXL_ERR_INVALID_PARAM the server refused the request as invalid (e.g. value too large)
 *
 * Parts, each with its own state (this file keeps the KV/lease API over them): etcd_config.h
 * (nixlEtcdConfig), etcd_transport.h (one POST; TLS, handle pool, shutdown deadline),
 * etcd_auth.h (the token), etcd_failover.h (endpoint choice, retries), etcd_traffic.h
 * (counters), etcd_watch.h (nixlEtcdWatch, which this header brings along).
 *
 * Thread safety: nixlEtcdClient's methods may be called from any number of threads at once.
 * A nixlEtcdWatch runs its own thread; see its comment.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_CLIENT_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_CLIENT_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etcd_auth.h"
#include "etcd_config.h"
#include "etcd_failover.h"
#include "etcd_json.h"
#include "etcd_kv.h"
#include "etcd_traffic.h"
#include "etcd_transport.h"
#include "etcd_watch.h"
#include "nixl_types.h"

/** Most keys getMany reads in one request (etcd refuses transactions of more than
 *  --max-txn-ops operations, 128 by default). */
inline constexpr size_t nixl_etcd_max_batch_keys = 64;

/** The raw client. No I/O in the constructor. */
class nixlEtcdClient {
public:
    /** Throws std::invalid_argument when cfg has no endpoint. */
    explicit nixlEtcdClient(nixlEtcdConfig cfg);
    ~nixlEtcdClient();

    nixlEtcdClient(const nixlEtcdClient &) = delete;
    nixlEtcdClient &
    operator=(const nixlEtcdClient &) = delete;

    /** Writes key = value, attached to lease when non-zero. */
    nixl_status_t
    put(std::string_view key, std::string_view value, int64_t lease = 0);

    /** Reads one key: out is nullopt when absent (SUCCESS). revision = the store's revision. */
    nixl_status_t
    get(std::string_view key, std::optional<nixlEtcdKv> &out, int64_t *revision = nullptr);

    /**
     * Reads several keys in one request (a transaction of ranges, all at one revision), at most
     * nixl_etcd_max_batch_keys of them: out[i] is keys[i]'s value, nullopt when absent.
     * revision = the store's revision they were read at.
     */
    nixl_status_t
    getMany(const std::vector<std::string> &keys,
            std::vector<std::optional<nixlEtcdKv>> &out,
            int64_t *revision = nullptr);

    /** Reads every key starting with prefix, in key order. */
    nixl_status_t
    getPrefix(std::string_view prefix,
              std::vector<nixlEtcdKv> &out,
              int64_t *revision = nullptr);

    /** Deletes one key; deleted = how many existed (0 or 1). */
    nixl_status_t
    deleteKey(std::string_view key, int64_t *deleted = nullptr);

    /** Deletes every key starting with prefix. */
    nixl_status_t
    deletePrefix(std::string_view prefix, int64_t *deleted = nullptr);

    /** A new lease of ttl seconds; granted_ttl = what the server granted. */
    nixl_status_t
    leaseGrant(int64_t ttl, int64_t &id, int64_t *granted_ttl = nullptr);

    /** Renews lease id; ttl = its new TTL. NIXL_ERR_NOT_FOUND when it expired or never was.
     *  timeout (non-zero) bounds the call instead of the request timeout. */
    nixl_status_t
    leaseKeepAlive(int64_t id,
                   int64_t &ttl,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

    /**
     * Ends lease id now, deleting its keys. NIXL_ERR_NOT_FOUND when it does not exist. timeout
     * (non-zero) bounds the call instead of the request timeout, and the request goes on a new
     * connection (shutdown: see docs/metadata-etcd.md, the lease).
     */
    nixl_status_t
    leaseRevoke(int64_t id, std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

    /** The endpoint the next request goes to first. */
    std::string
    currentEndpoint() const;

    const nixlEtcdConfig &
    config() const noexcept {
        return cfg_;
    }

    /** The end of the key range of a prefix (etcd's range_end): prefix with its last byte + 1. */
    static std::string
    prefixEnd(std::string_view prefix);

    /**
     * The agent is being destroyed: every request from now on ends by deadline (its curl
     * timeout is cut to what is left), and none starts after it. Any thread.
     */
    void
    setShutdownDeadline(std::chrono::steady_clock::time_point deadline) noexcept;

    /** True once setShutdownDeadline was called: waits on the server that are not requests
     *  (a watch's confirmation, a fetch awaiting a peer) end at once instead of running into
     *  the deadline; requests keep the deadline. */
    bool
    shuttingDown() const noexcept {
        return transport_.shuttingDown();
    }

    /**
     * wake is called (on the thread of setShutdownDeadline, after shuttingDown() turned true)
     * when the shutdown begins, so a thread waiting on a condition of its own re-checks
     * shuttingDown(): it notifies under the waiter's mutex, which then cannot miss it. wake must
     * not call back into the client. Returns the id for removeShutdownWaker.
     */
    uint64_t
    addShutdownWaker(std::function<void()> wake);
    void
    removeShutdownWaker(uint64_t id) noexcept;

private:
    // The watch streams on its own connections but shares the client's endpoints, token and
    // TLS options.
    friend class nixlEtcdWatch;

    /** cfg, once checked to name an endpoint (before the transport reads its files). */
    static nixlEtcdConfig
    checked(nixlEtcdConfig cfg);

    const nixlEtcdConfig cfg_;
    nixlEtcdTransport transport_;
    nixlEtcdAuth auth_;
    nixlEtcdFailover failover_;
    std::mutex wakersMutex_;
    std::map<uint64_t, std::function<void()>> wakers_;
    uint64_t nextWaker_ = 0;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_CLIENT_H
