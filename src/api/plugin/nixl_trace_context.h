/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * nixl_trace_context.h: header-only helpers (C99 and C++) for a request's trace context
 * (nixl_be_trace_ctx_t, nixl_backend_plugin.h) in its two W3C forms, so a carrier encodes a
 * context only when it sends one and a target checks what it receives:
 *
 *   binary   NIXL_BE_TRACE_CTX_WIRE_SIZE (26) bytes, the W3C trace-context binary record:
 *              byte 0       version (0)
 *              bytes 1-16   trace id
 *              bytes 17-24  parent id (the sender's span_id)
 *              byte 25      trace flags (bit 0: sampled)
 *   text     the W3C `traceparent` header: "00-<32 hex trace id>-<16 hex parent id>-<2 hex
 *            flags>", 55 characters, lower-case hex only.
 *
 * Versions. Version 0 is exactly 26 bytes / 55 characters. Version 0xff is invalid. A higher
 * version (1..0xfe) may be longer: its first fields are read as version 0's and the rest is
 * ignored (for text, the character after the flags must then be '-'), as W3C asks of a
 * version-0 parser. Encoding always writes version 0.
 *
 * Validity: a context whose trace id or span (parent) id is all zero is invalid; decoding
 * refuses one, and the encoders refuse to write one (an untraced request sends nothing).
 *
 * All functions are pure (no allocation, no global state) and safe from any thread.
 */
#ifndef NIXL_API_PLUGIN_NIXL_TRACE_CONTEXT_H
#define NIXL_API_PLUGIN_NIXL_TRACE_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nixl_backend_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Characters of a version-0 traceparent, without a terminating NUL. */
#define NIXL_TRACEPARENT_LEN 55u

/* What the decoders and encoders answer. */
typedef enum nixl_trace_ctx_result {
    NIXL_TRACE_CTX_OK = 0,
    NIXL_TRACE_CTX_ERR_NULL = 1, /* a required pointer is NULL */
    NIXL_TRACE_CTX_ERR_LENGTH = 2, /* too short, or version 0 with extra bytes */
    NIXL_TRACE_CTX_ERR_VERSION = 3, /* version 0xff, or a version that is not two hex digits */
    NIXL_TRACE_CTX_ERR_FORMAT = 4, /* a missing '-' or a character that is not lower-case hex */
    NIXL_TRACE_CTX_ERR_ZERO_ID = 5 /* all-zero trace id or parent/span id */
} nixl_trace_ctx_result_t;

/* A short lower-case description of a result ("ok", "bad length", ...), for log lines. */
static inline const char *
nixl_trace_ctx_result_str(nixl_trace_ctx_result_t r) {
    switch (r) {
    case NIXL_TRACE_CTX_OK:
        return "ok";
    case NIXL_TRACE_CTX_ERR_NULL:
        return "null argument";
    case NIXL_TRACE_CTX_ERR_LENGTH:
        return "bad length";
    case NIXL_TRACE_CTX_ERR_VERSION:
        return "bad version";
    case NIXL_TRACE_CTX_ERR_FORMAT:
        return "bad format";
    case NIXL_TRACE_CTX_ERR_ZERO_ID:
        return "all-zero id";
    }
    return "unknown";
}

static inline int
nixl_trace_ctx_all_zero_(const uint8_t *p, size_t n) {
    size_t i;
    uint8_t acc = 0;
    for (i = 0; i < n; ++i) {
        acc |= p[i];
    }
    return acc == 0;
}

/* Non-zero when ctx is a traced context: neither its trace id nor its span id is all zero. */
static inline int
nixl_trace_ctx_is_valid(const nixl_be_trace_ctx_t *ctx) {
    return ctx != NULL && !nixl_trace_ctx_all_zero_(ctx->trace_id, sizeof(ctx->trace_id)) &&
        !nixl_trace_ctx_all_zero_(ctx->span_id, sizeof(ctx->span_id));
}

/* Writes ctx's 26-byte binary record (version 0) to out. ERR_ZERO_ID for an invalid ctx. */
static inline nixl_trace_ctx_result_t
nixl_trace_ctx_encode(const nixl_be_trace_ctx_t *ctx, uint8_t out[NIXL_BE_TRACE_CTX_WIRE_SIZE]) {
    if (ctx == NULL || out == NULL) {
        return NIXL_TRACE_CTX_ERR_NULL;
    }
    if (!nixl_trace_ctx_is_valid(ctx)) {
        return NIXL_TRACE_CTX_ERR_ZERO_ID;
    }
    out[0] = 0;
    memcpy(out + 1, ctx->trace_id, 16);
    memcpy(out + 17, ctx->span_id, 8);
    out[25] = ctx->flags;
    return NIXL_TRACE_CTX_OK;
}

/*
 * Reads a binary record of len bytes into *out (a remote context: correlation_id 0, reserved
 * zero). On any error *out is zeroed, so a caller that ignores the result records nothing.
 */
static inline nixl_trace_ctx_result_t
nixl_trace_ctx_decode(const uint8_t *buf, size_t len, nixl_be_trace_ctx_t *out) {
    if (out == NULL) {
        return NIXL_TRACE_CTX_ERR_NULL;
    }
    memset(out, 0, sizeof(*out));
    if (buf == NULL) {
        return NIXL_TRACE_CTX_ERR_NULL;
    }
    if (len < NIXL_BE_TRACE_CTX_WIRE_SIZE) {
        return NIXL_TRACE_CTX_ERR_LENGTH;
    }
    if (buf[0] == 0xff) {
        return NIXL_TRACE_CTX_ERR_VERSION;
    }
    if (buf[0] == 0 && len != NIXL_BE_TRACE_CTX_WIRE_SIZE) {
        return NIXL_TRACE_CTX_ERR_LENGTH;
    }
    if (nixl_trace_ctx_all_zero_(buf + 1, 16) || nixl_trace_ctx_all_zero_(buf + 17, 8)) {
        return NIXL_TRACE_CTX_ERR_ZERO_ID;
    }
    memcpy(out->trace_id, buf + 1, 16);
    memcpy(out->span_id, buf + 17, 8);
    out->flags = buf[25];
    return NIXL_TRACE_CTX_OK;
}

static inline void
nixl_trace_ctx_hex_(const uint8_t *p, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; ++i) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 0xf];
    }
}

/* Value of a lower-case hex digit, or -1 (upper case is refused, as W3C requires). */
static inline int
nixl_trace_ctx_unhex_(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

static inline int
nixl_trace_ctx_parse_hex_(const char *s, size_t n_bytes, uint8_t *out) {
    size_t i;
    for (i = 0; i < n_bytes; ++i) {
        const int hi = nixl_trace_ctx_unhex_(s[2 * i]);
        const int lo = nixl_trace_ctx_unhex_(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return 0;
        }
        out[i] = (uint8_t)((hi << 4) | lo);
    }
    return 1;
}

/* Writes n bytes as 2n lower-case hex characters (no NUL) to out; for ids in attributes. */
static inline void
nixl_trace_ctx_to_hex(const uint8_t *bytes, size_t n, char *out) {
    nixl_trace_ctx_hex_(bytes, n, out);
}

/*
 * Writes ctx as a version-0 traceparent: NIXL_TRACEPARENT_LEN characters and a NUL, so out
 * holds at least NIXL_TRACEPARENT_LEN + 1. ERR_ZERO_ID for an invalid ctx (out untouched).
 */
static inline nixl_trace_ctx_result_t
nixl_trace_ctx_format_traceparent(const nixl_be_trace_ctx_t *ctx,
                                  char out[NIXL_TRACEPARENT_LEN + 1]) {
    if (ctx == NULL || out == NULL) {
        return NIXL_TRACE_CTX_ERR_NULL;
    }
    if (!nixl_trace_ctx_is_valid(ctx)) {
        return NIXL_TRACE_CTX_ERR_ZERO_ID;
    }
    out[0] = '0';
    out[1] = '0';
    out[2] = '-';
    nixl_trace_ctx_hex_(ctx->trace_id, 16, out + 3);
    out[35] = '-';
    nixl_trace_ctx_hex_(ctx->span_id, 8, out + 36);
    out[52] = '-';
    nixl_trace_ctx_hex_(&ctx->flags, 1, out + 53);
    out[55] = '\0';
    return NIXL_TRACE_CTX_OK;
}

/*
 * Parses a traceparent of len characters (no NUL needed) into *out: trace id, parent id (into
 * span_id) and flags; correlation_id 0. On any error *out is zeroed.
 */
static inline nixl_trace_ctx_result_t
nixl_trace_ctx_parse_traceparent(const char *s, size_t len, nixl_be_trace_ctx_t *out) {
    uint8_t version;
    if (out == NULL) {
        return NIXL_TRACE_CTX_ERR_NULL;
    }
    memset(out, 0, sizeof(*out));
    if (s == NULL) {
        return NIXL_TRACE_CTX_ERR_NULL;
    }
    if (len < 2 || !nixl_trace_ctx_parse_hex_(s, 1, &version)) {
        return len < 2 ? NIXL_TRACE_CTX_ERR_LENGTH : NIXL_TRACE_CTX_ERR_VERSION;
    }
    if (version == 0xff) {
        return NIXL_TRACE_CTX_ERR_VERSION;
    }
    if (len < NIXL_TRACEPARENT_LEN) {
        return NIXL_TRACE_CTX_ERR_LENGTH;
    }
    if (len > NIXL_TRACEPARENT_LEN) {
        if (version == 0) {
            return NIXL_TRACE_CTX_ERR_LENGTH;
        }
        if (s[NIXL_TRACEPARENT_LEN] != '-') {
            return NIXL_TRACE_CTX_ERR_FORMAT;
        }
    }
    if (s[2] != '-' || s[35] != '-' || s[52] != '-') {
        return NIXL_TRACE_CTX_ERR_FORMAT;
    }
    if (!nixl_trace_ctx_parse_hex_(s + 3, 16, out->trace_id) ||
        !nixl_trace_ctx_parse_hex_(s + 36, 8, out->span_id) ||
        !nixl_trace_ctx_parse_hex_(s + 53, 1, &out->flags)) {
        memset(out, 0, sizeof(*out));
        return NIXL_TRACE_CTX_ERR_FORMAT;
    }
    if (!nixl_trace_ctx_is_valid(out)) {
        memset(out, 0, sizeof(*out));
        return NIXL_TRACE_CTX_ERR_ZERO_ID;
    }
    return NIXL_TRACE_CTX_OK;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NIXL_API_PLUGIN_NIXL_TRACE_CONTEXT_H */
