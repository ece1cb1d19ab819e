/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_client.h"

#include <stdexcept>

#include "common/nixl_log.h"
#include "etcd_internal.h"

nixlEtcdConfig
nixlEtcdClient::checked(nixlEtcdConfig cfg) {
    if (cfg.endpoints.empty()) {
        throw std::invalid_argument("etcd client: no endpoint configured");
    }
    return cfg;
}

nixlEtcdClient::nixlEtcdClient(nixlEtcdConfig cfg)
    : cfg_(checked(std::move(cfg))),
      transport_(cfg_),
      auth_(cfg_, transport_),
      failover_(cfg_, transport_, auth_) {}

nixlEtcdClient::~nixlEtcdClient() = default;

void
nixlEtcdClient::setShutdownDeadline(std::chrono::steady_clock::time_point deadline) noexcept {
    transport_.setShutdownDeadline(deadline);
    std::lock_guard lock(wakersMutex_);
    for (auto &[id, wake] : wakers_) {
        wake();
    }
}

uint64_t
nixlEtcdClient::addShutdownWaker(std::function<void()> wake) {
    std::lock_guard lock(wakersMutex_);
    const uint64_t id = ++nextWaker_;
    wakers_.emplace(id, std::move(wake));
    return id;
}

void
nixlEtcdClient::removeShutdownWaker(uint64_t id) noexcept {
    std::lock_guard lock(wakersMutex_);
    wakers_.erase(id);
}

std::string
nixlEtcdClient::currentEndpoint() const {
    return failover_.currentEndpoint();
}

std::string
nixlEtcdClient::prefixEnd(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        if (static_cast<unsigned char>(end.back()) < 0xff) {
            end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0'); // every key (etcd's convention for "to the end")
}

// --- operations ------------------------------------------------------------------------------

using nixl_etcd_detail::headerRevision;
using nixl_etcd_detail::parseKv;

nixl_status_t
nixlEtcdClient::put(std::string_view key, std::string_view value, int64_t lease) {
    std::string body = "{\"key\":\"" + nixlBase64Encode(key) + "\",\"value\":\"" +
        nixlBase64Encode(value) + "\"";
    if (lease != 0) {
        body += ",\"lease\":\"" + std::to_string(lease) + "\"";
    }
    body += "}";
    nixlJsonValue reply;
    return failover_.call("/v3/kv/put", body, reply, "put " + std::string(key));
}

namespace {

nixl_status_t
readKvs(const nixlJsonValue &reply,
        std::vector<nixlEtcdKv> &out,
        int64_t *revision,
        const std::string &what,
        const std::string &endpoint) {
    out.clear();
    int64_t rev = 0;
    if (!headerRevision(reply, rev)) {
        NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": reply without a revision";
        return NIXL_ERR_BACKEND;
    }
    if (revision != nullptr) {
        *revision = rev;
    }
    const nixlJsonValue *kvs = reply.find("kvs");
    if (kvs == nullptr) {
        return NIXL_SUCCESS;
    }
    if (kvs->kind != nixlJsonValue::kind_t::ARRAY) {
        NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": 'kvs' is not an array";
        return NIXL_ERR_BACKEND;
    }
    for (const nixlJsonValue &item : kvs->items) {
        nixlEtcdKv kv;
        std::string err;
        if (!parseKv(item, kv, err)) {
            NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": " << err;
            return NIXL_ERR_BACKEND;
        }
        out.push_back(std::move(kv));
    }
    return NIXL_SUCCESS;
}

} // namespace

nixl_status_t
nixlEtcdClient::get(std::string_view key, std::optional<nixlEtcdKv> &out, int64_t *revision) {
    out.reset();
    const std::string body = "{\"key\":\"" + nixlBase64Encode(key) + "\"}";
    const std::string what = "get " + std::string(key);
    nixlJsonValue reply;
    nixl_status_t st = failover_.call("/v3/kv/range", body, reply, what);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    std::vector<nixlEtcdKv> kvs;
    st = readKvs(reply, kvs, revision, what, currentEndpoint());
    if (st == NIXL_SUCCESS && !kvs.empty()) {
        out = std::move(kvs.front());
    }
    return st;
}

nixl_status_t
nixlEtcdClient::getMany(const std::vector<std::string> &keys,
                        std::vector<std::optional<nixlEtcdKv>> &out,
                        int64_t *revision) {
    out.assign(keys.size(), std::nullopt);
    if (keys.empty() || keys.size() > nixl_etcd_max_batch_keys) {
        NIXL_ERROR << "etcd: get of " << keys.size() << " keys in one request (1 to "
                   << nixl_etcd_max_batch_keys << ")";
        return NIXL_ERR_INVALID_PARAM;
    }
    // A transaction without conditions runs its "success" operations at one revision.
    std::string body = "{\"success\":[";
    for (size_t i = 0; i < keys.size(); ++i) {
        body += (i == 0 ? "" : ",");
        body += "{\"request_range\":{\"key\":\"" + nixlBase64Encode(keys[i]) + "\"}}";
    }
    body += "]}";
    const std::string what = "get " + keys.front() +
        (keys.size() > 1 ? " and " + std::to_string(keys.size() - 1) + " more keys" : "");
    nixlJsonValue reply;
    nixl_status_t st = failover_.call("/v3/kv/txn", body, reply, what);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    const std::string endpoint = currentEndpoint();
    int64_t rev = 0;
    if (!headerRevision(reply, rev)) {
        NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": reply without a revision";
        return NIXL_ERR_BACKEND;
    }
    std::string err;
    if (!nixl_etcd_detail::parseTxnRanges(reply, keys.size(), out, err)) {
        NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": " << err;
        out.assign(keys.size(), std::nullopt);
        return NIXL_ERR_BACKEND;
    }
    for (size_t i = 0; i < keys.size(); ++i) {
        if (out[i] && out[i]->key != keys[i]) {
            NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": response " << i
                       << " names another key";
            out.assign(keys.size(), std::nullopt);
            return NIXL_ERR_BACKEND;
        }
    }
    if (revision != nullptr) {
        *revision = rev;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlEtcdClient::getPrefix(std::string_view prefix,
                          std::vector<nixlEtcdKv> &out,
                          int64_t *revision) {
    const std::string body = "{\"key\":\"" + nixlBase64Encode(prefix) + "\",\"range_end\":\"" +
        nixlBase64Encode(prefixEnd(prefix)) + "\"}";
    const std::string what = "get prefix " + std::string(prefix);
    nixlJsonValue reply;
    const nixl_status_t st = failover_.call("/v3/kv/range", body, reply, what);
    if (st != NIXL_SUCCESS) {
        out.clear();
        return st;
    }
    return readKvs(reply, out, revision, what, currentEndpoint());
}

namespace {

nixl_status_t
readDeleted(const nixlJsonValue &reply, int64_t *deleted, const std::string &what) {
    int64_t n = 0;
    if (!nixlJsonInt(reply.find("deleted"), n)) {
        NIXL_ERROR << "etcd: " << what << ": 'deleted' is not an integer";
        return NIXL_ERR_BACKEND;
    }
    if (deleted != nullptr) {
        *deleted = n;
    }
    return NIXL_SUCCESS;
}

} // namespace

nixl_status_t
nixlEtcdClient::deleteKey(std::string_view key, int64_t *deleted) {
    const std::string body = "{\"key\":\"" + nixlBase64Encode(key) + "\"}";
    const std::string what = "delete " + std::string(key);
    nixlJsonValue reply;
    const nixl_status_t st = failover_.call("/v3/kv/deleterange", body, reply, what);
    return st != NIXL_SUCCESS ? st : readDeleted(reply, deleted, what);
}

nixl_status_t
nixlEtcdClient::deletePrefix(std::string_view prefix, int64_t *deleted) {
    const std::string body = "{\"key\":\"" + nixlBase64Encode(prefix) + "\",\"range_end\":\"" +
        nixlBase64Encode(prefixEnd(prefix)) + "\"}";
    const std::string what = "delete prefix " + std::string(prefix);
    nixlJsonValue reply;
    const nixl_status_t st = failover_.call("/v3/kv/deleterange", body, reply, what);
    return st != NIXL_SUCCESS ? st : readDeleted(reply, deleted, what);
}

nixl_status_t
nixlEtcdClient::leaseGrant(int64_t ttl, int64_t &id, int64_t *granted_ttl) {
    const std::string body = "{\"TTL\":\"" + std::to_string(ttl) + "\"}";
    const std::string what = "lease grant (TTL " + std::to_string(ttl) + " s)";
    nixlJsonValue reply;
    const nixl_status_t st = failover_.call("/v3/lease/grant", body, reply, what);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    int64_t got_ttl = 0;
    if (!nixlJsonInt(reply.find("ID"), id) || id == 0 || !nixlJsonInt(reply.find("TTL"), got_ttl)) {
        NIXL_ERROR << "etcd: " << what << ": reply without a lease ID and TTL";
        return NIXL_ERR_BACKEND;
    }
    if (granted_ttl != nullptr) {
        *granted_ttl = got_ttl;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlEtcdClient::leaseKeepAlive(int64_t id, int64_t &ttl, std::chrono::milliseconds timeout) {
    const std::string body = "{\"ID\":\"" + std::to_string(id) + "\"}";
    const std::string what = "lease keepalive " + std::to_string(id);
    nixlJsonValue reply;
    nixl_status_t st = failover_.call("/v3/lease/keepalive", body, reply, what, true, timeout);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    // A stream reply: {"result": {...}}.
    const nixlJsonValue *result = reply.find("result");
    if (result == nullptr || !nixlJsonInt(result->find("TTL"), ttl)) {
        NIXL_ERROR << "etcd: " << what << ": reply without a result TTL";
        return NIXL_ERR_BACKEND;
    }
    // The server answers an unknown or expired lease with TTL 0 (absent) rather than an error.
    return ttl > 0 ? NIXL_SUCCESS : NIXL_ERR_NOT_FOUND;
}

nixl_status_t
nixlEtcdClient::leaseRevoke(int64_t id, std::chrono::milliseconds timeout) {
    const std::string body = "{\"ID\":\"" + std::to_string(id) + "\"}";
    nixlJsonValue reply;
    return failover_.call("/v3/lease/revoke",
                          body,
                          reply,
                          "lease revoke " + std::to_string(id),
                          true,
                          timeout,
                          timeout.count() > 0);
}
