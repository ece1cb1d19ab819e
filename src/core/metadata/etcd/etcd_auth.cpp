/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_auth.h"

#include "common/nixl_log.h"
#include "etcd_internal.h"
#include "etcd_json.h"
#include "etcd_transport.h"

using nixl_etcd_detail::grpc_deadline_exceeded;
using nixl_etcd_detail::grpc_failed_precondition;
using nixl_etcd_detail::grpc_unavailable;

std::string
nixlEtcdAuth::token() const {
    std::lock_guard lock(tokenMutex_);
    return token_;
}

bool
nixlEtcdAuth::needToken() const {
    return !cfg_.user.empty() && !authOff_.load(std::memory_order_relaxed) && token().empty();
}

void
nixlEtcdAuth::dropToken(const std::string &bad) {
    std::lock_guard lock(tokenMutex_);
    if (token_ == bad) {
        token_.clear();
    }
}

void
nixlEtcdAuth::tokenRefused(const std::string &bad) {
    dropToken(bad);
    authOff_.store(false, std::memory_order_relaxed);
}

nixl_status_t
nixlEtcdAuth::authenticate(size_t ep, std::chrono::milliseconds timeout, std::string &error) {
    const std::string body = "{\"name\":" + nixlJsonQuote(cfg_.user) +
        ",\"password\":" + nixlJsonQuote(cfg_.password) + "}";
    nixlEtcdTransport::attempt_t a =
        transport_.post(ep, "/v3/auth/authenticate", body, timeout, std::string());
    if (!a.transportOk) {
        error = a.error;
        return NIXL_ERR_BACKEND;
    }
    nixlJsonValue reply;
    std::string perr;
    if (!nixlJsonParse(a.body, reply, perr) || reply.kind != nixlJsonValue::kind_t::OBJECT) {
        error = "authentication reply is not the gateway's JSON (" + perr + ")";
        return NIXL_ERR_BACKEND;
    }
    int64_t code = -1;
    std::string message;
    if (nixl_etcd_detail::gatewayError(reply, a.httpStatus, code, message)) {
        if (code == grpc_failed_precondition) {
            // "authentication is not enabled": requests go without a token (until a member asks
            // for one).
            NIXL_DEBUG << "etcd: " << cfg_.endpoints[ep] << ": " << message << "; no token used";
            authOff_.store(true, std::memory_order_relaxed);
            return NIXL_SUCCESS;
        }
        if (code == grpc_unavailable || code == grpc_deadline_exceeded || code < 0) {
            error = message;
            return NIXL_ERR_BACKEND;
        }
        NIXL_ERROR << "etcd: authentication of user '" << cfg_.user << "' at " << cfg_.endpoints[ep]
                   << " failed: " << message;
        return NIXL_ERR_NOT_ALLOWED;
    }
    std::string tok;
    if (!nixlJsonString(reply.find("token"), tok) || tok.empty()) {
        error = "authentication reply without a token";
        return NIXL_ERR_BACKEND;
    }
    std::lock_guard lock(tokenMutex_);
    token_ = std::move(tok);
    return NIXL_SUCCESS;
}
