/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_failover.h
 * @brief One etcd call across the configured endpoints: a request goes to the endpoint that last
 *        answered; when it fails (no connection, TLS failure, timeout, a reply that is not the
 *        gateway's JSON, or the server saying it is unavailable / has no leader) the next one is
 *        tried, and the one that answers is remembered. Re-authenticates once when a member
 *        refuses our token. Every call is bounded by nixlEtcdConfig::requestTimeout in total.
 *
 * Errors: each failure is logged once (ERROR, naming the operation and the endpoint, or the
 * endpoints tried) and returned as a status (see etcd_client.h).
 *
 * Thread safety: every method may be called from any number of threads at once; the preferred
 * endpoint is an atomic.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_FAILOVER_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_FAILOVER_H

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

#include "etcd_config.h"
#include "etcd_json.h"
#include "nixl_types.h"

class nixlEtcdAuth;
class nixlEtcdTransport;

class nixlEtcdFailover {
public:
    /** cfg, transport and auth must outlive this object. */
    nixlEtcdFailover(const nixlEtcdConfig &cfg, nixlEtcdTransport &transport, nixlEtcdAuth &auth)
        : cfg_(cfg),
          transport_(transport),
          auth_(auth) {}

    nixlEtcdFailover(const nixlEtcdFailover &) = delete;
    nixlEtcdFailover &
    operator=(const nixlEtcdFailover &) = delete;

    /**
     * POSTs body to path; out = the parsed reply. what names the operation for the log
     * ("put /nixl/agents//A/metadata"). quiet_not_found: a NOT_FOUND reply is returned without
     * logging (the caller decides whether it is an error). timeout (non-zero) bounds the call
     * instead of the request timeout; fresh_connection: not on a pooled connection.
     */
    nixl_status_t
    call(const char *path,
         const std::string &body,
         nixlJsonValue &out,
         const std::string &what,
         bool quiet_not_found = false,
         std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
         bool fresh_connection = false);

    /** Index of the endpoint the next request goes to first (modulo the endpoint count). */
    size_t
    preferred() const noexcept {
        return preferred_.load(std::memory_order_relaxed);
    }

    /** The endpoint the next request goes to first. */
    const std::string &
    currentEndpoint() const noexcept {
        return cfg_.endpoints[preferred() % cfg_.endpoints.size()];
    }

private:
    /** ep answered: it becomes the first choice (one WARN line when that changes). */
    void
    markGood(size_t ep, const std::string &why_moved);

    const nixlEtcdConfig &cfg_;
    nixlEtcdTransport &transport_;
    nixlEtcdAuth &auth_;
    std::atomic<size_t> preferred_{0};
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_FAILOVER_H
