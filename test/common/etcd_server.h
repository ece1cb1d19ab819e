/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_server.h
 * @brief Test helper: real etcd servers (Debian's /usr/bin/etcd) on 127.0.0.1, one member or a
 *        cluster, plain or TLS, in a temporary directory that is removed afterwards; and test
 *        certificates made with the openssl command-line tool.
 *
 * Ports are picked free by the kernel; if one is taken between the pick and etcd's bind, the
 * start is retried with new ports. Readiness is awaited by polling GET /health (true once the
 * member has a leader), never by a fixed sleep; the start deadline is generous (busy 2-core
 * machines). Members die with the test process (PR_SET_PDEATHSIG).
 *
 * Links libcurl. Not thread-safe: one thread drives a cluster.
 */
#ifndef NIXL_TEST_COMMON_ETCD_SERVER_H
#define NIXL_TEST_COMMON_ETCD_SERVER_H

#include <chrono>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace nixl_test {

/** PEM files in one directory. */
struct etcdTlsFiles {
    std::string caFile; ///< the CA's certificate
    std::string serverCert; ///< for IP 127.0.0.1, signed by the CA
    std::string serverKey;
    std::string clientCert; ///< CN=nixl-client, signed by the CA
    std::string clientKey;
    std::string otherCaFile; ///< a second, unrelated CA (a client trusting it must fail)
};

/** Makes the files in dir with openssl; false with err (and openssl's output) on failure. */
bool
makeEtcdTestCertificates(const std::string &dir, etcdTlsFiles &out, std::string &err);

/** A TCP port on 127.0.0.1 that was free a moment ago. */
uint16_t
pickFreePort();

class etcdCluster {
public:
    struct options {
        size_t members = 1;
        /** Client URLs over https with these files (peer URLs stay http on loopback). */
        const etcdTlsFiles *tls = nullptr;
        /** With tls: clients must present a certificate signed by the CA. */
        bool clientCertAuth = false;
        std::chrono::seconds startTimeout{90};
        /** More etcd flags (e.g. "--max-request-bytes=65536"). */
        std::vector<std::string> extraArgs{};
    };

    /** Starts every member and waits until all are healthy; throws std::runtime_error with the
     *  members' log tails when they are not. */
    explicit etcdCluster(options opts);
    /** SIGKILLs what still runs and removes the directory. */
    ~etcdCluster();

    etcdCluster(const etcdCluster &) = delete;
    etcdCluster &
    operator=(const etcdCluster &) = delete;

    /** Client URL of member i ("http://127.0.0.1:port"). */
    const std::string &
    clientUrl(size_t i) const {
        return members_.at(i).clientUrl;
    }

    /** All client URLs joined with ','. */
    std::string
    endpoints() const;

    size_t
    size() const noexcept {
        return members_.size();
    }

    /** SIGKILLs member i and reaps it. */
    void
    kill(size_t i);

    /** Freezes (SIGSTOP) or thaws (SIGCONT) member i: it keeps accepting connections (the
     *  kernel's backlog) but answers nothing while frozen. */
    void
    freeze(size_t i, bool frozen);

    /** Starts member i again on its data directory and ports; waits until healthy (throws). */
    void
    restart(size_t i);

    /** True when GET /health of member i says true within timeout. */
    bool
    waitHealthy(size_t i, std::chrono::milliseconds timeout) const;

    /**
     * Turns on etcd authentication through the gateway: user root (password rootPassword) with
     * role root, then auth/enable. Throws std::runtime_error on failure.
     */
    void
    enableAuth(const std::string &rootPassword) const;

    /** The temporary directory (data, logs). */
    const std::string &
    dir() const noexcept {
        return dir_;
    }

private:
    struct member {
        std::string name;
        std::string clientUrl;
        std::string peerUrl;
        std::string dataDir;
        std::string logFile;
        pid_t pid = -1;
    };

    void
    spawn(member &m, bool fresh);
    std::string
    logTails() const;
    /** POSTs body to path on member i; the reply body (throws on transport failure). */
    std::string
    post(size_t i, const std::string &path, const std::string &body) const;

    options opts_;
    std::string dir_;
    std::string token_; ///< Authorization for post(); empty
    std::string initialCluster_; ///< "--initial-cluster value|token"
    std::vector<member> members_;
};

} // namespace nixl_test

#endif // NIXL_TEST_COMMON_ETCD_SERVER_H
