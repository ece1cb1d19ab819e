/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// libFuzzer target: the SDK's trace-context decoders (nixl_trace_context.h). The first byte
// picks the form (even: 26-byte binary record, odd: traceparent text); the rest is the input.
// Checks: a refusal leaves a zero context; what decodes is valid and re-encodes to the same
// fields (the same bytes / text for version 0).

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "nixl_trace_context.h"

namespace {

void
check(bool cond) {
    if (!cond) {
        std::abort();
    }
}

bool
isZero(const nixl_be_trace_ctx_t &c) {
    const nixl_be_trace_ctx_t z{};
    return std::memcmp(&c, &z, sizeof(c)) == 0;
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const bool text = (data[0] & 1) != 0;
    const uint8_t *in = data + 1;
    const size_t len = size - 1;
    nixl_be_trace_ctx_t ctx;
    if (!text) {
        if (nixl_trace_ctx_decode(in, len, &ctx) != NIXL_TRACE_CTX_OK) {
            check(isZero(ctx));
            return 0;
        }
        check(nixl_trace_ctx_is_valid(&ctx) && ctx.correlation_id == 0);
        uint8_t out[NIXL_BE_TRACE_CTX_WIRE_SIZE];
        check(nixl_trace_ctx_encode(&ctx, out) == NIXL_TRACE_CTX_OK);
        check(out[0] == 0 && std::memcmp(out + 1, in + 1, NIXL_BE_TRACE_CTX_WIRE_SIZE - 1) == 0);
        check(in[0] != 0 || len == NIXL_BE_TRACE_CTX_WIRE_SIZE);
        return 0;
    }
    const char *s = reinterpret_cast<const char *>(in);
    if (nixl_trace_ctx_parse_traceparent(s, len, &ctx) != NIXL_TRACE_CTX_OK) {
        check(isZero(ctx));
        return 0;
    }
    check(nixl_trace_ctx_is_valid(&ctx));
    char out[NIXL_TRACEPARENT_LEN + 1];
    check(nixl_trace_ctx_format_traceparent(&ctx, out) == NIXL_TRACE_CTX_OK);
    // Everything after the version is the same text; version 00 is exactly that text.
    check(std::memcmp(out + 2, s + 2, NIXL_TRACEPARENT_LEN - 2) == 0);
    check(std::memcmp(s, "00", 2) != 0 || len == NIXL_TRACEPARENT_LEN);
    return 0;
}
