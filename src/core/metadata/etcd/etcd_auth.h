/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_auth.h
 * @brief The etcd client's authentication: the token asked for with the configured user and
 *        password (POST /v3/auth/authenticate), whether the cluster wants one at all, and
 *        forgetting a token a member refused. Unary calls (etcd_failover.h) and watch streams
 *        (etcd_watch.h) take their Authorization header from here.
 *
 * Thread safety: every method may be called from any number of threads at once; the token is
 * guarded by a mutex, "authentication is off" is an atomic.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_AUTH_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_AUTH_H

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include "etcd_config.h"
#include "nixl_types.h"

class nixlEtcdTransport;

class nixlEtcdAuth {
public:
    /** cfg and transport must outlive this object. */
    nixlEtcdAuth(const nixlEtcdConfig &cfg, nixlEtcdTransport &transport)
        : cfg_(cfg),
          transport_(transport) {}

    nixlEtcdAuth(const nixlEtcdAuth &) = delete;
    nixlEtcdAuth &
    operator=(const nixlEtcdAuth &) = delete;

    /** A user is configured: requests carry a token when we have one. */
    bool
    enabled() const noexcept {
        return !cfg_.user.empty();
    }

    /** The current token; empty when none (or no user). */
    std::string
    token() const;

    /** A user is configured, the cluster has authentication on (as far as we know), no token. */
    bool
    needToken() const;

    /** A member refused bad (expired, or the member restarted): forget it if it is still ours. */
    void
    dropToken(const std::string &bad);

    /** A member asked for a token: forget bad and ask for a new one even if another member
     *  earlier said authentication was off. */
    void
    tokenRefused(const std::string &bad);

    /**
     * Asks endpoint ep for a token with our user/password. SUCCESS also when the cluster has
     * authentication off (then no token is asked for until a member wants one). NOT_ALLOWED (one
     * ERROR line) when the server refused the user; BACKEND with error set when ep could not
     * answer (the caller tries another endpoint).
     */
    nixl_status_t
    authenticate(size_t ep, std::chrono::milliseconds timeout, std::string &error);

private:
    const nixlEtcdConfig &cfg_;
    nixlEtcdTransport &transport_;
    mutable std::mutex tokenMutex_;
    std::string token_;
    /** The cluster said authentication is not enabled: no token is asked for. */
    std::atomic<bool> authOff_{false};
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_AUTH_H
