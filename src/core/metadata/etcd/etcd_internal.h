/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_internal.h
 * @brief Reply readers shared by the etcd client's unary calls and its watch stream, and the
 *        gRPC codes the gateway reports. Pure functions of their arguments; thread-safe. They
 *        do not log.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_INTERNAL_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_INTERNAL_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "etcd_json.h"
#include "etcd_kv.h"

namespace nixl_etcd_detail {

// gRPC status codes the gateway reports in "code".
inline constexpr int64_t grpc_invalid_argument = 3;
inline constexpr int64_t grpc_deadline_exceeded = 4;
inline constexpr int64_t grpc_not_found = 5;
inline constexpr int64_t grpc_permission_denied = 7;
inline constexpr int64_t grpc_resource_exhausted = 8; // larger than --max-request-bytes
inline constexpr int64_t grpc_failed_precondition = 9;
inline constexpr int64_t grpc_unavailable = 14;
inline constexpr int64_t grpc_unauthenticated = 16;

/**
 * true when reply is an error of the gateway (unary: "error"/"code"/"message" with a non-200
 * status; stream: "error" object with "grpc_code"/"message"); code = the gRPC code (-1 when
 * none), message = the server's text.
 */
bool
gatewayError(const nixlJsonValue &reply, long http_status, int64_t &code, std::string &message);

/** One mvccpb.KeyValue: key and value base64-decoded (absent value = empty). */
bool
parseKv(const nixlJsonValue &o, nixlEtcdKv &kv, std::string &err);

/** header.revision of a reply. */
bool
headerRevision(const nixlJsonValue &reply, int64_t &rev);

/**
 * The reply of a transaction of n range requests (getMany): out[i] = the first key-value of
 * response i, nullopt when the range was empty. false with err when the reply does not hold n
 * range responses or a key-value is malformed.
 */
bool
parseTxnRanges(const nixlJsonValue &reply,
               size_t n,
               std::vector<std::optional<nixlEtcdKv>> &out,
               std::string &err);

/**
 * One watch stream message ({"result": {...}}) into its parts. false with err when it is not
 * one. events are in the order sent; a PUT is an event without "type".
 */
struct watchMessage {
    bool created = false;
    bool canceled = false;
    /** Part of a response the server split (create_request.fragment): more of it follows. */
    bool fragment = false;
    int64_t compactRevision = 0;
    int64_t headerRevision = 0;
    std::string cancelReason;
    std::vector<nixlEtcdEvent> events;
};

bool
parseWatchMessage(const nixlJsonValue &reply, watchMessage &msg, std::string &err);

} // namespace nixl_etcd_detail

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_INTERNAL_H
