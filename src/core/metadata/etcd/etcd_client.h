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
 * Thread safety: nixlEtcdClient's methods may be called from any number of threads at once.
 * A nixlEtcdWatch runs its own thread; see its comment.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_CLIENT_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_CLIENT_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "etcd_json.h"
#include "nixl_types.h"

/** Option names (environment first, then the NIXL configuration file). */
inline constexpr char nixl_etcd_endpoints_var[] = "NIXL_ETCD_ENDPOINTS";
inline constexpr char nixl_etcd_namespace_var[] = "NIXL_ETCD_NAMESPACE";
inline constexpr char nixl_etcd_ca_file_var[] = "NIXL_ETCD_CA_FILE";
inline constexpr char nixl_etcd_cert_file_var[] = "NIXL_ETCD_CERT_FILE";
inline constexpr char nixl_etcd_key_file_var[] = "NIXL_ETCD_KEY_FILE";
inline constexpr char nixl_etcd_user_var[] = "NIXL_ETCD_USER";
inline constexpr char nixl_etcd_password_var[] = "NIXL_ETCD_PASSWORD";
inline constexpr char nixl_etcd_lease_ttl_var[] = "NIXL_ETCD_LEASE_TTL";
inline constexpr char nixl_etcd_request_timeout_var[] = "NIXL_ETCD_REQUEST_TIMEOUT_MS";

/** Most keys getMany reads in one request (etcd refuses transactions of more than
 *  --max-txn-ops operations, 128 by default). */
inline constexpr size_t nixl_etcd_max_batch_keys = 64;

/** NIXL's default namespace. */
inline constexpr char nixl_etcd_default_namespace[] = "/nixl/agents/";

/** How to reach etcd. */
struct nixlEtcdConfig {
    /** Base URLs ("http://127.0.0.1:2379"); at least one. */
    std::vector<std::string> endpoints;
    std::string nameSpace = nixl_etcd_default_namespace;
    /** PEM files; empty = not used. caFile replaces the system's CA store. */
    std::string caFile;
    std::string certFile;
    std::string keyFile;
    /** etcd user name and password; empty user = no authentication request. */
    std::string user;
    std::string password;
    /** TTL asked for our lease; the server may grant more. */
    std::chrono::seconds leaseTtl{10};
    /** Bound on one call (all endpoints and retries together). */
    std::chrono::milliseconds requestTimeout{5000};
    /** Bound on establishing one connection (TCP and TLS). */
    std::chrono::milliseconds connectTimeout{2000};
    /** Largest response body accepted (a value is base64 inside it: 4/3 of its size). */
    size_t maxResponseBytes = size_t(64) << 20;
    /**
     * Peer deletions remembered for replay to later watches, over all agents and labels: past
     * it the history is cleared and older readers get watches of their own. A hostile writer
     * under the namespace then cannot grow this process's memory with many labels.
     */
    size_t deleteHistoryMax = 16384;

    /**
     * The process's configuration (environment, then the NIXL configuration file). nullopt when
     * NIXL_ETCD_ENDPOINTS is unset or empty. A value that is not valid logs one ERROR line
     * naming the option and throws std::invalid_argument.
     */
    static std::optional<nixlEtcdConfig>
    fromProcessConfig();

    /**
     * Splits a comma (or semicolon) separated endpoint list. An entry without a scheme gets
     * https:// when tls is true, else http://; a trailing '/' is dropped. false with a reason when
     * an entry is empty or has a scheme other than http/https.
     */
    static bool
    parseEndpoints(std::string_view list,
                   bool tls,
                   std::vector<std::string> &out,
                   std::string &err);
};

/** One key-value as etcd returns it. */
struct nixlEtcdKv {
    std::string key;
    std::string value;
    int64_t createRevision = 0;
    int64_t modRevision = 0;
    int64_t version = 0;
    int64_t lease = 0;
};

enum class nixl_etcd_event_type_t { PUT, DELETE };

struct nixlEtcdEvent {
    nixl_etcd_event_type_t type = nixl_etcd_event_type_t::PUT;
    nixlEtcdKv kv; ///< for DELETE only key and modRevision are set
};

/** What this process sent to etcd: HTTP requests (every attempt of a call, every watch stream)
 *  and their body bytes. Process-wide (benchmarks count per process). Thread-safe. */
struct nixlEtcdTraffic {
    uint64_t requests = 0;
    uint64_t bytesSent = 0;
};

nixlEtcdTraffic
nixlEtcdProcessTraffic() noexcept;

class nixlEtcdWatch;

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
        return shutdownBy_.load(std::memory_order_acquire) != 0;
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
    friend class nixlEtcdWatch;
    struct handlePool;
    struct attempt_t;

    /**
     * POSTs body to path with failover; out = the parsed reply. what names the operation for the
     * log ("put /nixl/agents//A/metadata"). quiet_not_found: a NOT_FOUND reply is returned
     * without logging (the caller decides whether it is an error).
     */
    nixl_status_t
    call(const char *path,
         const std::string &body,
         nixlJsonValue &out,
         const std::string &what,
         bool quiet_not_found = false,
         std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
         bool fresh_connection = false);

    /** One POST to endpoint ep; the raw outcome. fresh: not on a pooled connection. */
    attempt_t
    post(size_t ep,
         const char *path,
         const std::string &body,
         std::chrono::milliseconds timeout,
         bool with_token,
         bool fresh = false);

    /** Sets the options every request shares (TLS, timeouts, no proxy) on an easy handle. */
    void
    setCommonOptions(void *curl, const std::string &url) const;

    /** Asks ep for a token with our user/password. Empty error = success (or auth disabled). */
    nixl_status_t
    authenticate(size_t ep, std::chrono::milliseconds timeout, std::string &error);

    std::string
    token() const;

    /** A user is configured, the cluster has authentication on (as far as we know), no token. */
    bool
    needToken() const;

    void
    dropToken(const std::string &bad);

    /** ep answered: it becomes the first choice (one WARN line when that changes). */
    void
    markGood(size_t ep, const std::string &why_moved);

    size_t
    preferred() const noexcept {
        return preferred_.load(std::memory_order_relaxed);
    }

    nixlEtcdConfig cfg_;
    /** The PEM files' bytes, read once at construction and handed to curl as blobs, so curl
     *  never opens a path (a FIFO or /proc/kmsg would block its TLS set-up forever). */
    std::string caPem_;
    std::string certPem_;
    std::string keyPem_;
    std::atomic<size_t> preferred_{0};
    mutable std::mutex tokenMutex_;
    std::string token_;
    /** The cluster said authentication is not enabled: no token is asked for. */
    std::atomic<bool> authOff_{false};
    /** steady_clock ticks of the shutdown deadline; 0 while the agent lives. */
    std::atomic<std::chrono::steady_clock::rep> shutdownBy_{0};
    std::mutex wakersMutex_;
    std::map<uint64_t, std::function<void()>> wakers_;
    uint64_t nextWaker_ = 0;
    std::unique_ptr<handlePool> pool_;
};

/**
 * A watch of [key, rangeEnd) from startRevision (0 = from now), on its own thread, as one
 * streaming POST /v3/watch. When the stream breaks (member killed, connection lost) it
 * reconnects, trying the endpoints in turn with a growing pause (100 ms to 2 s), and resumes
 * after the last revision it delivered, so no event is lost or repeated (unless etcd compacted
 * them meanwhile: then one WARN line and it resumes at the oldest revision still kept).
 *
 * The callback runs on the watch thread, one call per batch of events in revision order; it
 * must not destroy the watch. Destruction (or stop()) ends the stream promptly and joins the
 * thread. Other methods may be called from any thread.
 */
class nixlEtcdWatch {
public:
    using events_cb_t = std::function<void(const std::vector<nixlEtcdEvent> &)>;

    /** Which events the server sends (etcd's watch filters). */
    enum class filter_t { ALL, DELETES_ONLY, PUTS_ONLY };

    /** client must outlive the watch. rangeEnd empty = the single key. */
    nixlEtcdWatch(nixlEtcdClient &client,
                  std::string key,
                  std::string rangeEnd,
                  int64_t startRevision,
                  events_cb_t cb,
                  filter_t filter = filter_t::ALL);
    ~nixlEtcdWatch();

    nixlEtcdWatch(const nixlEtcdWatch &) = delete;
    nixlEtcdWatch &
    operator=(const nixlEtcdWatch &) = delete;

    /** Waits until the server has confirmed the watch at least once; false on timeout, stop or
     *  the client's shutdown (nixlEtcdClient::shuttingDown). */
    bool
    waitCreated(std::chrono::milliseconds timeout);

    /** The revision of the server's first confirmation (events after it are delivered); 0
     *  before it. */
    int64_t
    createdRevision() const;

    /** Ends the stream and joins the thread (idempotent). Not from the callback. */
    void
    stop();

private:
    void
    run();
    /**
     * One stream to endpoint ep; returns when it ends or on stop, why = how it ended. true if
     * the server confirmed it.
     */
    bool
    streamOnce(size_t ep, std::string &why);
    /** Handles one newline-delimited message; false ends the stream (endReason_ says why). */
    bool
    onMessage(std::string_view line);
    static size_t
    onData(char *ptr, size_t size, size_t nmemb, void *self);

    nixlEtcdClient &client_;
    std::string key_;
    std::string rangeEnd_;
    int64_t nextRevision_;
    events_cb_t cb_;
    filter_t filter_;

    mutable std::mutex mutex_;
    std::condition_variable cv_;
    bool stopping_ = false;
    bool created_ = false;
    int64_t createdRevision_ = 0;
    void *multi_ = nullptr; ///< CURLM of the current stream, for curl_multi_wakeup (under mutex_)
    uint64_t wakeId_ = 0; ///< client shutdown waker: ends waitCreated when the agent goes

    // State of the current stream, used by the watch thread only.
    std::string buffer_; ///< bytes not yet split into messages
    bool createdThisStream_ = false;
    std::string endReason_;
    std::string tokenUsed_;
    std::string currentUrl_;
    bool failing_ = false; ///< the last stream ended and no new one was confirmed yet
    std::thread thread_;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_CLIENT_H
