/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_transport.h
 * @brief One HTTP(S) POST of JSON to one etcd endpoint over libcurl, and what every request
 *        shares: the TLS material (read once), timeouts, no proxy, the pooled handles and the
 *        agent's shutdown deadline that cuts them all. No failover, no retries, no logging:
 *        nixlEtcdFailover (etcd_failover.h) decides what an outcome means.
 *
 * Thread safety: post, setCommonOptions and the shutdown calls may be called from any number of
 * threads at once; the PEM bytes are written once in the constructor and only read after.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_TRANSPORT_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_TRANSPORT_H

#include <atomic>
#include <chrono>
#include <string>

#include "etcd_config.h"
#include "etcd_handle_pool.h"

class nixlEtcdTransport {
public:
    /** The raw outcome of one POST. */
    struct attempt_t {
        bool transportOk = false;
        std::string error; ///< why the transport failed
        long httpStatus = 0;
        std::string body;
    };

    /**
     * cfg must outlive the transport. Reads cfg's PEM files (throws std::invalid_argument naming
     * the option and path when one is not a readable regular file of at most 1 MiB) and
     * initialises libcurl once per process.
     */
    explicit nixlEtcdTransport(const nixlEtcdConfig &cfg);

    nixlEtcdTransport(const nixlEtcdTransport &) = delete;
    nixlEtcdTransport &
    operator=(const nixlEtcdTransport &) = delete;

    /**
     * One POST of body to endpoint ep's path, bounded by timeout (and the shutdown deadline).
     * token (non-empty) goes as the Authorization header. fresh: on a new connection, not a
     * pooled one.
     */
    attempt_t
    post(size_t ep,
         const char *path,
         const std::string &body,
         std::chrono::milliseconds timeout,
         const std::string &token,
         bool fresh = false);

    /** Sets the options every request shares (TLS, timeouts, no proxy) on an easy handle. */
    void
    setCommonOptions(void *curl, const std::string &url) const;

    /** From now on every request ends by deadline, and none starts after it. */
    void
    setShutdownDeadline(std::chrono::steady_clock::time_point deadline) noexcept;

    bool
    shuttingDown() const noexcept {
        return shutdownBy_.load(std::memory_order_acquire) != 0;
    }

private:
    const nixlEtcdConfig &cfg_;
    /** The PEM files' bytes, read once at construction and handed to curl as blobs, so curl
     *  never opens a path (a FIFO or /proc/kmsg would block its TLS set-up forever). */
    std::string caPem_;
    std::string certPem_;
    std::string keyPem_;
    /** steady_clock ticks of the shutdown deadline; 0 while the agent lives. */
    std::atomic<std::chrono::steady_clock::rep> shutdownBy_{0};
    nixlEtcdHandlePool pool_;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_TRANSPORT_H
