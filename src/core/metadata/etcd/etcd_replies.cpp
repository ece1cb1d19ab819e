/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Readers of the gateway's replies (etcd_internal.h). No I/O, no logging: the fuzzer links this
// file and etcd_json.cpp alone.
#include "etcd_internal.h"

namespace nixl_etcd_detail {

bool
gatewayError(const nixlJsonValue &reply, long http_status, int64_t &code, std::string &message) {
    const nixlJsonValue *err = reply.find("error");
    // Unary calls: {"error": "...", "code": N, "message": "..."} with a non-200 status. Streams
    // (watch, keepalive) carry {"error": {"grpc_code": N, "message": "..."}} in a 200 reply.
    if (err != nullptr && err->kind == nixlJsonValue::kind_t::OBJECT) {
        if (!nixlJsonInt(err->find("grpc_code"), code, -1)) {
            code = -1;
        }
        if (!nixlJsonString(err->find("message"), message)) {
            message = "(no message)";
        }
        return true;
    }
    if (http_status == 200 && reply.find("code") == nullptr) {
        return false;
    }
    if (!nixlJsonInt(reply.find("code"), code, -1)) {
        code = -1;
    }
    if (!nixlJsonString(reply.find("message"), message) || message.empty()) {
        if (!nixlJsonString(err, message) || message.empty()) {
            message = "HTTP status " + std::to_string(http_status);
        }
    }
    return true;
}


bool
parseKv(const nixlJsonValue &o, nixlEtcdKv &kv, std::string &err) {
    if (o.kind != nixlJsonValue::kind_t::OBJECT) {
        err = "a key-value is not an object";
        return false;
    }
    std::string b64;
    if (!nixlJsonString(o.find("key"), b64) || !nixlBase64Decode(b64, kv.key)) {
        err = "key is not base64";
        return false;
    }
    if (!nixlJsonString(o.find("value"), b64) || !nixlBase64Decode(b64, kv.value)) {
        err = "value of key '" + kv.key + "' is not base64";
        return false;
    }
    if (!nixlJsonInt(o.find("create_revision"), kv.createRevision) ||
        !nixlJsonInt(o.find("mod_revision"), kv.modRevision) ||
        !nixlJsonInt(o.find("version"), kv.version) || !nixlJsonInt(o.find("lease"), kv.lease)) {
        err = "a revision, version or lease of key '" + kv.key + "' is not an integer";
        return false;
    }
    return true;
}

bool
headerRevision(const nixlJsonValue &reply, int64_t &rev) {
    const nixlJsonValue *h = reply.find("header");
    return h != nullptr && nixlJsonInt(h->find("revision"), rev);
}


bool
parseTxnRanges(const nixlJsonValue &reply,
               size_t n,
               std::vector<std::optional<nixlEtcdKv>> &out,
               std::string &err) {
    out.assign(n, std::nullopt);
    const nixlJsonValue *responses = reply.find("responses");
    if (responses == nullptr || responses->kind != nixlJsonValue::kind_t::ARRAY ||
        responses->items.size() != n) {
        err = "reply without " + std::to_string(n) + " responses";
        return false;
    }
    for (size_t i = 0; i < n; ++i) {
        const nixlJsonValue *range = responses->items[i].find("response_range");
        const nixlJsonValue *kvs = range != nullptr ? range->find("kvs") : nullptr;
        if (range == nullptr || range->kind != nixlJsonValue::kind_t::OBJECT ||
            (kvs != nullptr && kvs->kind != nixlJsonValue::kind_t::ARRAY)) {
            err = "response " + std::to_string(i) + " is not a range response";
            return false;
        }
        if (kvs == nullptr || kvs->items.empty()) {
            continue;
        }
        nixlEtcdKv kv;
        if (!parseKv(kvs->items.front(), kv, err)) {
            return false;
        }
        out[i] = std::move(kv);
    }
    return true;
}

bool
parseWatchMessage(const nixlJsonValue &reply, watchMessage &msg, std::string &err) {
    const nixlJsonValue *result = reply.find("result");
    if (result == nullptr || result->kind != nixlJsonValue::kind_t::OBJECT) {
        err = "message without a 'result' object";
        return false;
    }
    if (!nixlJsonBool(result->find("created"), msg.created) ||
        !nixlJsonBool(result->find("canceled"), msg.canceled) ||
        !nixlJsonBool(result->find("fragment"), msg.fragment) ||
        !nixlJsonInt(result->find("compact_revision"), msg.compactRevision) ||
        !nixlJsonString(result->find("cancel_reason"), msg.cancelReason)) {
        err = "a created/canceled/fragment/compact_revision/cancel_reason field of the wrong type";
        return false;
    }
    if (!headerRevision(*result, msg.headerRevision)) {
        err = "message without a header revision";
        return false;
    }
    const nixlJsonValue *events = result->find("events");
    if (events == nullptr) {
        return true;
    }
    if (events->kind != nixlJsonValue::kind_t::ARRAY) {
        err = "'events' is not an array";
        return false;
    }
    for (const nixlJsonValue &e : events->items) {
        nixlEtcdEvent ev;
        std::string type;
        if (e.kind != nixlJsonValue::kind_t::OBJECT || !nixlJsonString(e.find("type"), type)) {
            err = "an event is not an object with a string type";
            return false;
        }
        if (type.empty() || type == "PUT") {
            ev.type = nixl_etcd_event_type_t::PUT;
        } else if (type == "DELETE") {
            ev.type = nixl_etcd_event_type_t::DELETE;
        } else {
            err = "unknown event type '" + type + "'";
            return false;
        }
        const nixlJsonValue *kv = e.find("kv");
        if (kv == nullptr || !parseKv(*kv, ev.kv, err)) {
            if (kv == nullptr) {
                err = "an event without 'kv'";
            }
            return false;
        }
        msg.events.push_back(std::move(ev));
    }
    return true;
}

} // namespace nixl_etcd_detail
