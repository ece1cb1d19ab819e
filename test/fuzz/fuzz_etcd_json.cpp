/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// libFuzzer target: what the etcd client reads from a server (src/core/metadata/etcd): the strict
// JSON reader, the readers of unary replies, key-values and watch messages, and base64. The
// input is split on '\n' as the watch stream is; each line goes through every reader.
// Checks: a refusal says why; a string re-quoted parses to the same text; base64 that decodes
// re-encodes to the same text (one accepted encoding), and any bytes survive encode+decode.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "etcd_internal.h"
#include "etcd_json.h"

namespace {

void
check(bool cond) {
    if (!cond) {
        std::abort();
    }
}

void
checkStrings(const nixlJsonValue &v) {
    switch (v.kind) {
    case nixlJsonValue::kind_t::STRING: {
        nixlJsonValue back;
        std::string err;
        check(nixlJsonParse(nixlJsonQuote(v.text), back, err));
        check(back.kind == nixlJsonValue::kind_t::STRING && back.text == v.text);
        break;
    }
    case nixlJsonValue::kind_t::ARRAY:
        for (const auto &i : v.items) {
            checkStrings(i);
        }
        break;
    case nixlJsonValue::kind_t::OBJECT:
        for (const auto &m : v.members) {
            checkStrings(m.value);
        }
        break;
    default:
        break;
    }
}

void
oneLine(std::string_view line) {
    nixlJsonValue v;
    std::string err;
    if (!nixlJsonParse(line, v, err)) {
        check(!err.empty());
        return;
    }
    checkStrings(v);
    int64_t code = 0;
    std::string message;
    (void)nixl_etcd_detail::gatewayError(v, 200, code, message);
    (void)nixl_etcd_detail::gatewayError(v, 404, code, message);
    int64_t rev = 0;
    (void)nixl_etcd_detail::headerRevision(v, rev);
    nixl_etcd_detail::watchMessage msg;
    if (!nixl_etcd_detail::parseWatchMessage(v, msg, err)) {
        check(!err.empty());
    }
    for (size_t n : {size_t(1), size_t(3)}) {
        std::vector<std::optional<nixlEtcdKv>> ranges;
        if (!nixl_etcd_detail::parseTxnRanges(v, n, ranges, err)) {
            check(!err.empty());
        } else {
            check(ranges.size() == n);
        }
    }
    if (const nixlJsonValue *kvs = v.find("kvs"); kvs != nullptr) {
        for (const auto &item : kvs->items) {
            nixlEtcdKv kv;
            if (!nixl_etcd_detail::parseKv(item, kv, err)) {
                check(!err.empty());
            }
        }
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view in(reinterpret_cast<const char *>(data), size);
    size_t start = 0;
    while (start <= in.size()) {
        size_t nl = in.find('\n', start);
        if (nl == std::string_view::npos) {
            nl = in.size();
        }
        oneLine(in.substr(start, nl - start));
        start = nl + 1;
    }
    std::string out;
    if (nixlBase64Decode(in, out)) {
        check(nixlBase64Encode(out) == in);
    }
    check(nixlBase64Decode(nixlBase64Encode(in), out) && out == in);
    return 0;
}
