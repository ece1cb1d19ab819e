/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_config.h
 * @brief How to reach etcd: nixlEtcdConfig and its reading from the process's configuration
 *        (environment, then the NIXL configuration file; see docs/metadata-etcd.md).
 *
 * Thread safety: nixlEtcdConfig is a plain value; its static functions keep no state of their
 * own (nixlConfig, which fromProcessConfig reads, is thread-safe).
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_CONFIG_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_CONFIG_H

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_CONFIG_H
