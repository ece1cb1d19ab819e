/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* nixl_trace_context.h compiled as C: a round trip through both forms, called from the C++
 * test so a C-only breakage of the header fails the build or the test. */
#include "nixl_trace_context.h"

int
trace_context_c_round_trip(void) {
    nixl_be_trace_ctx_t ctx;
    nixl_be_trace_ctx_t back;
    uint8_t wire[NIXL_BE_TRACE_CTX_WIRE_SIZE];
    char text[NIXL_TRACEPARENT_LEN + 1];
    size_t i;
    memset(&ctx, 0, sizeof(ctx));
    for (i = 0; i < 16; ++i) {
        ctx.trace_id[i] = (uint8_t)(i + 1);
    }
    for (i = 0; i < 8; ++i) {
        ctx.span_id[i] = (uint8_t)(0xa0 + i);
    }
    ctx.flags = 1;
    if (nixl_trace_ctx_encode(&ctx, wire) != NIXL_TRACE_CTX_OK ||
        nixl_trace_ctx_decode(wire, sizeof(wire), &back) != NIXL_TRACE_CTX_OK ||
        memcmp(&ctx, &back, sizeof(ctx)) != 0) {
        return 1;
    }
    if (nixl_trace_ctx_format_traceparent(&ctx, text) != NIXL_TRACE_CTX_OK ||
        nixl_trace_ctx_parse_traceparent(text, NIXL_TRACEPARENT_LEN, &back) != NIXL_TRACE_CTX_OK ||
        memcmp(&ctx, &back, sizeof(ctx)) != 0) {
        return 2;
    }
    return 0;
}
