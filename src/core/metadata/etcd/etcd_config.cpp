/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_config.h"

#include "common/nixl_text.h"
#include "config/config.h"

bool
nixlEtcdConfig::parseEndpoints(std::string_view list,
                               bool tls,
                               std::vector<std::string> &out,
                               std::string &err) {
    out.clear();
    for (std::string_view item : nixlText::splitList(list, ",;")) {
        std::string_view scheme = tls ? "https" : "http";
        const size_t sep = item.find("://");
        if (sep != std::string_view::npos) {
            scheme = item.substr(0, sep);
            item.remove_prefix(sep + 3);
            if (scheme != "http" && scheme != "https") {
                err = "scheme '" + std::string(scheme) + "' (http or https only)";
                return false;
            }
        }
        while (!item.empty() && item.back() == '/') {
            item.remove_suffix(1);
        }
        if (item.empty()) {
            err = "an entry without a host";
            return false;
        }
        out.push_back(std::string(scheme) + "://" + std::string(item));
    }
    return !out.empty();
}

std::optional<nixlEtcdConfig>
nixlEtcdConfig::fromProcessConfig() {
    const auto endpoints = nixlConfig::getString(nixl_etcd_endpoints_var);
    if (!endpoints || endpoints->empty()) {
        return std::nullopt;
    }
    nixlEtcdConfig cfg;
    if (auto v = nixlConfig::getString(nixl_etcd_namespace_var)) {
        cfg.nameSpace = *v;
    }
    cfg.caFile = nixlConfig::getString(nixl_etcd_ca_file_var).value_or("");
    cfg.certFile = nixlConfig::getString(nixl_etcd_cert_file_var).value_or("");
    cfg.keyFile = nixlConfig::getString(nixl_etcd_key_file_var).value_or("");
    cfg.user = nixlConfig::getString(nixl_etcd_user_var).value_or("");
    cfg.password = nixlConfig::getString(nixl_etcd_password_var).value_or("");
    if (!cfg.keyFile.empty() && cfg.certFile.empty()) {
        nixlConfig::reject("etcd: ",
                           nixl_etcd_key_file_var,
                           *nixlConfig::lookup(nixl_etcd_key_file_var),
                           "usable without NIXL_ETCD_CERT_FILE");
    }
    if (!cfg.password.empty() && cfg.user.empty()) {
        nixlConfig::reject(
            "etcd: ",
            nixl_etcd_password_var,
            nixlConfigValue{"(hidden)", nixlConfig::lookup(nixl_etcd_password_var)->origin},
            "usable without NIXL_ETCD_USER");
    }
    std::string err;
    if (!parseEndpoints(
            *endpoints, !cfg.caFile.empty() || !cfg.certFile.empty(), cfg.endpoints, err)) {
        nixlConfig::reject("etcd: ",
                           nixl_etcd_endpoints_var,
                           *nixlConfig::lookup(nixl_etcd_endpoints_var),
                           "a comma-separated list of [http[s]://]host:port (" + err + ")");
    }
    if (auto ttl = nixlConfig::getUnsigned(nixl_etcd_lease_ttl_var, "etcd: ", 1, 86400)) {
        cfg.leaseTtl = std::chrono::seconds(*ttl);
    }
    if (auto t =
            nixlConfig::getMilliseconds(nixl_etcd_request_timeout_var, "etcd: ", 100, 3600000)) {
        cfg.requestTimeout = *t;
    }
    return cfg;
}
