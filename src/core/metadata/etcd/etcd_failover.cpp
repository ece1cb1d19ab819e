/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_failover.h"

#include <thread>

#include "common/nixl_log.h"
#include "etcd_auth.h"
#include "etcd_internal.h"
#include "etcd_transport.h"

namespace {

using steady = std::chrono::steady_clock;
using nixl_etcd_detail::grpc_deadline_exceeded;
using nixl_etcd_detail::grpc_invalid_argument;
using nixl_etcd_detail::grpc_not_found;
using nixl_etcd_detail::grpc_permission_denied;
using nixl_etcd_detail::grpc_resource_exhausted;
using nixl_etcd_detail::grpc_unauthenticated;
using nixl_etcd_detail::grpc_unavailable;

nixl_status_t
statusOfCode(int64_t code) {
    switch (code) {
    case grpc_invalid_argument:
    case grpc_resource_exhausted: // request larger than the server's --max-request-bytes
        return NIXL_ERR_INVALID_PARAM;
    case grpc_not_found:
        return NIXL_ERR_NOT_FOUND;
    case grpc_permission_denied:
    case grpc_unauthenticated:
        return NIXL_ERR_NOT_ALLOWED;
    default:
        return NIXL_ERR_BACKEND;
    }
}

} // namespace

void
nixlEtcdFailover::markGood(size_t ep, const std::string &why_moved) {
    const size_t old = preferred_.exchange(ep, std::memory_order_relaxed);
    if (old != ep) {
        NIXL_WARN << "etcd: now using endpoint " << cfg_.endpoints[ep]
                  << (why_moved.empty() ? std::string() : " (" + why_moved + ")");
    }
}

nixl_status_t
nixlEtcdFailover::call(const char *path,
                       const std::string &body,
                       nixlJsonValue &out,
                       const std::string &what,
                       bool quiet_not_found,
                       std::chrono::milliseconds timeout,
                       bool fresh_connection) {
    const auto start = steady::now();
    const std::chrono::milliseconds bound = timeout.count() > 0 ? timeout : cfg_.requestTimeout;
    const auto deadline = start + bound;
    const size_t n = cfg_.endpoints.size();
    bool reauthed = false;
    std::string tried;
    for (;;) {
        // Another round only while some member answered "unavailable" (e.g. electing a
        // leader); when none can be reached at all, one round decides.
        bool retriable = false;
        tried.clear();
        const size_t first = preferred() % n;
        for (size_t i = 0; i < n;) {
            const size_t ep = (first + i) % n;
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
            if (left.count() <= 0) {
                break;
            }
            const std::string &url = cfg_.endpoints[ep];
            if (auth_.needToken()) {
                std::string aerr;
                const nixl_status_t st = auth_.authenticate(ep, left, aerr);
                if (st == NIXL_ERR_NOT_ALLOWED) {
                    return st;
                }
                if (st != NIXL_SUCCESS) {
                    tried += (tried.empty() ? "" : "; ") + url + ": " + aerr;
                    ++i;
                    continue;
                }
            }
            const std::string token = auth_.enabled() ? auth_.token() : std::string();
            nixlEtcdTransport::attempt_t a =
                transport_.post(ep, path, body, left, token, fresh_connection);
            if (!a.transportOk) {
                tried += (tried.empty() ? "" : "; ") + url + ": " + a.error;
                ++i;
                continue;
            }
            std::string perr;
            if (!nixlJsonParse(a.body, out, perr) || out.kind != nixlJsonValue::kind_t::OBJECT) {
                tried += (tried.empty() ? "" : "; ") + url + ": HTTP " +
                         std::to_string(a.httpStatus) + " reply is not the gateway's JSON (" +
                         (perr.empty() ? "not an object" : perr) + ")";
                ++i;
                continue;
            }
            int64_t code = -1;
            std::string message;
            if (nixl_etcd_detail::gatewayError(out, a.httpStatus, code, message)) {
                const bool no_user = code == grpc_invalid_argument &&
                    message.find("user name is empty") != std::string::npos;
                if ((code == grpc_unauthenticated || no_user) && !cfg_.user.empty() && !reauthed) {
                    // The token expired or the member restarted: a new one, same endpoint.
                    NIXL_INFO << "etcd: " << url << " refused our token (" << message
                              << "); authenticating again";
                    auth_.tokenRefused(token);
                    reauthed = true;
                    continue;
                }
                if (code == grpc_unavailable || code == grpc_deadline_exceeded ||
                    (code < 0 && a.httpStatus >= 500)) {
                    retriable = true;
                    tried += (tried.empty() ? "" : "; ") + url + ": " + message;
                    ++i;
                    continue;
                }
                if (code == grpc_not_found && quiet_not_found) {
                    markGood(ep, tried);
                    return NIXL_ERR_NOT_FOUND;
                }
                NIXL_ERROR << "etcd: " << what << " at " << url << ": " << message << " (code "
                           << code << ")";
                // An auth-enabled server refuses a request without a token as "invalid argument".
                if (no_user) {
                    return NIXL_ERR_NOT_ALLOWED;
                }
                return statusOfCode(code);
            }
            markGood(ep, tried);
            return NIXL_SUCCESS;
        }
        const auto left = deadline - steady::now();
        if (!retriable || left <= steady::duration::zero()) {
            break;
        }
        std::this_thread::sleep_for(
            std::min<steady::duration>(left, std::chrono::milliseconds(100)));
    }
    NIXL_ERROR << "etcd: " << what << ": no endpoint could serve it ("
               << (tried.empty() ? std::string("time ran out") : tried)
               << (timeout.count() > 0 ? "; bound " : "; request timeout ") << bound.count()
               << " ms)";
    return NIXL_ERR_BACKEND;
}
