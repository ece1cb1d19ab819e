/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixl_trace_context.h: the 26-byte W3C binary record and the traceparent text form, their
// round trips, and every kind of malformed input each decoder must refuse.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nixl_trace_context.h"

extern "C" int
trace_context_c_round_trip(void);

namespace {

const char *const kSample = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

nixl_be_trace_ctx_t
sampleCtx() {
    nixl_be_trace_ctx_t c{};
    const uint8_t tid[16] = {0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd,
                             0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c};
    const uint8_t sid[8] = {0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31};
    memcpy(c.trace_id, tid, 16);
    memcpy(c.span_id, sid, 8);
    c.flags = 1;
    return c;
}

bool
isZero(const nixl_be_trace_ctx_t &c) {
    nixl_be_trace_ctx_t z{};
    return memcmp(&c, &z, sizeof(c)) == 0;
}

nixl_trace_ctx_result_t
parse(const std::string &s, nixl_be_trace_ctx_t &out) {
    return nixl_trace_ctx_parse_traceparent(s.data(), s.size(), &out);
}

TEST(traceContextTest, CCompiledHeaderRoundTrips) {
    EXPECT_EQ(0, trace_context_c_round_trip());
}

TEST(traceContextTest, BinaryLayoutIsTheW3CRecord) {
    nixl_be_trace_ctx_t c = sampleCtx();
    c.correlation_id = 42; // core-local: never on the wire
    uint8_t wire[NIXL_BE_TRACE_CTX_WIRE_SIZE];
    ASSERT_EQ(NIXL_TRACE_CTX_OK, nixl_trace_ctx_encode(&c, wire));
    EXPECT_EQ(0, wire[0]);
    EXPECT_EQ(0, memcmp(wire + 1, c.trace_id, 16));
    EXPECT_EQ(0, memcmp(wire + 17, c.span_id, 8));
    EXPECT_EQ(1, wire[25]);

    nixl_be_trace_ctx_t back;
    memset(&back, 0x5a, sizeof(back));
    ASSERT_EQ(NIXL_TRACE_CTX_OK, nixl_trace_ctx_decode(wire, sizeof(wire), &back));
    EXPECT_EQ(0, memcmp(back.trace_id, c.trace_id, 16));
    EXPECT_EQ(0, memcmp(back.span_id, c.span_id, 8));
    EXPECT_EQ(1, back.flags);
    EXPECT_EQ(0u, back.correlation_id);
    for (uint8_t r : back.reserved) {
        EXPECT_EQ(0, r);
    }
}

TEST(traceContextTest, BinaryRefusesMalformedRecords) {
    nixl_be_trace_ctx_t c = sampleCtx();
    uint8_t wire[40] = {};
    ASSERT_EQ(NIXL_TRACE_CTX_OK, nixl_trace_ctx_encode(&c, wire));
    nixl_be_trace_ctx_t out;

    // Every truncation.
    for (size_t len = 0; len < NIXL_BE_TRACE_CTX_WIRE_SIZE; ++len) {
        memset(&out, 0x5a, sizeof(out));
        EXPECT_EQ(NIXL_TRACE_CTX_ERR_LENGTH, nixl_trace_ctx_decode(wire, len, &out)) << len;
        EXPECT_TRUE(isZero(out)) << len;
    }
    // Version 0 with trailing bytes.
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_LENGTH, nixl_trace_ctx_decode(wire, 27, &out));
    // Version 0xff is invalid at any length.
    wire[0] = 0xff;
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_VERSION, nixl_trace_ctx_decode(wire, 26, &out));
    EXPECT_TRUE(isZero(out));
    // A higher version may be longer: its version-0 fields are read, the rest ignored.
    wire[0] = 1;
    EXPECT_EQ(NIXL_TRACE_CTX_OK, nixl_trace_ctx_decode(wire, 40, &out));
    EXPECT_EQ(0, memcmp(out.trace_id, c.trace_id, 16));
    EXPECT_EQ(NIXL_TRACE_CTX_OK, nixl_trace_ctx_decode(wire, 26, &out));
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_LENGTH, nixl_trace_ctx_decode(wire, 25, &out));
    wire[0] = 0;
    // All-zero trace id, then all-zero parent id.
    uint8_t zt[26];
    memcpy(zt, wire, 26);
    memset(zt + 1, 0, 16);
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_ZERO_ID, nixl_trace_ctx_decode(zt, 26, &out));
    memcpy(zt, wire, 26);
    memset(zt + 17, 0, 8);
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_ZERO_ID, nixl_trace_ctx_decode(zt, 26, &out));
    EXPECT_TRUE(isZero(out));
    // Null pointers.
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_NULL, nixl_trace_ctx_decode(nullptr, 26, &out));
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_NULL, nixl_trace_ctx_decode(wire, 26, nullptr));
}

TEST(traceContextTest, EncodersRefuseAnUntracedContext) {
    nixl_be_trace_ctx_t zero{};
    uint8_t wire[NIXL_BE_TRACE_CTX_WIRE_SIZE] = {7};
    char text[NIXL_TRACEPARENT_LEN + 1] = "x";
    EXPECT_FALSE(nixl_trace_ctx_is_valid(&zero));
    EXPECT_FALSE(nixl_trace_ctx_is_valid(nullptr));
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_ZERO_ID, nixl_trace_ctx_encode(&zero, wire));
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_ZERO_ID, nixl_trace_ctx_format_traceparent(&zero, text));
    EXPECT_EQ(7, wire[0]);
    EXPECT_EQ('x', text[0]);
    nixl_be_trace_ctx_t half = sampleCtx();
    memset(half.span_id, 0, 8);
    EXPECT_FALSE(nixl_trace_ctx_is_valid(&half));
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_ZERO_ID, nixl_trace_ctx_encode(&half, wire));
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_NULL, nixl_trace_ctx_encode(nullptr, wire));
}

TEST(traceContextTest, TraceparentRoundTripsTheW3CExample) {
    nixl_be_trace_ctx_t c = sampleCtx();
    char text[NIXL_TRACEPARENT_LEN + 1];
    ASSERT_EQ(NIXL_TRACE_CTX_OK, nixl_trace_ctx_format_traceparent(&c, text));
    EXPECT_STREQ(kSample, text);
    nixl_be_trace_ctx_t back;
    ASSERT_EQ(NIXL_TRACE_CTX_OK, parse(kSample, back));
    EXPECT_EQ(0, memcmp(&back, &c, sizeof(c)));
    // Flags other than sampled pass through.
    std::string s = kSample;
    s.replace(53, 2, "fe");
    ASSERT_EQ(NIXL_TRACE_CTX_OK, parse(s, back));
    EXPECT_EQ(0xfe, back.flags);
}

TEST(traceContextTest, TraceparentRefusesMalformedText) {
    const std::string good = kSample;
    struct bad_t {
        std::string text;
        nixl_trace_ctx_result_t want;
    };
    std::vector<bad_t> bad = {
        {"", NIXL_TRACE_CTX_ERR_LENGTH},
        {"0", NIXL_TRACE_CTX_ERR_LENGTH},
        {good.substr(0, 54), NIXL_TRACE_CTX_ERR_LENGTH},
        {good + "-", NIXL_TRACE_CTX_ERR_LENGTH}, // version 00 is exactly 55
        {good + "x", NIXL_TRACE_CTX_ERR_LENGTH},
        {"ff" + good.substr(2), NIXL_TRACE_CTX_ERR_VERSION},
        {"0g" + good.substr(2), NIXL_TRACE_CTX_ERR_VERSION},
        {"0A" + good.substr(2), NIXL_TRACE_CTX_ERR_VERSION},
        {"01" + good.substr(2) + "x", NIXL_TRACE_CTX_ERR_FORMAT}, // longer needs '-' next
        {"00_" + good.substr(3), NIXL_TRACE_CTX_ERR_FORMAT},
        {good.substr(0, 35) + "_" + good.substr(36), NIXL_TRACE_CTX_ERR_FORMAT},
        {good.substr(0, 52) + "_" + good.substr(53), NIXL_TRACE_CTX_ERR_FORMAT},
        {"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", NIXL_TRACE_CTX_ERR_FORMAT},
        {"00-0af7651916cd43dd8448eb211c80319c-B7AD6B7169203331-01", NIXL_TRACE_CTX_ERR_FORMAT},
        {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0F", NIXL_TRACE_CTX_ERR_FORMAT},
        {"00-0af7651916cd43dd8448eb211c80319z-b7ad6b7169203331-01", NIXL_TRACE_CTX_ERR_FORMAT},
        {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333 -01", NIXL_TRACE_CTX_ERR_FORMAT},
        {"00-00000000000000000000000000000000-b7ad6b7169203331-01", NIXL_TRACE_CTX_ERR_ZERO_ID},
        {"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", NIXL_TRACE_CTX_ERR_ZERO_ID},
    };
    for (const bad_t &b : bad) {
        nixl_be_trace_ctx_t out;
        memset(&out, 0x5a, sizeof(out));
        EXPECT_EQ(b.want, parse(b.text, out)) << '"' << b.text << '"';
        EXPECT_TRUE(isZero(out)) << '"' << b.text << '"';
    }
    nixl_be_trace_ctx_t out;
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_NULL, nixl_trace_ctx_parse_traceparent(nullptr, 55, &out));
    EXPECT_EQ(NIXL_TRACE_CTX_ERR_NULL, nixl_trace_ctx_parse_traceparent(kSample, 55, nullptr));
}

TEST(traceContextTest, TraceparentOfAHigherVersionIsReadByItsVersionZeroFields) {
    nixl_be_trace_ctx_t out;
    const std::string v1 = "01" + std::string(kSample).substr(2);
    EXPECT_EQ(NIXL_TRACE_CTX_OK, parse(v1, out));
    EXPECT_EQ(NIXL_TRACE_CTX_OK, parse(v1 + "-what-comes-later", out));
    EXPECT_EQ(1, out.flags);
    nixl_be_trace_ctx_t want = sampleCtx();
    EXPECT_EQ(0, memcmp(out.trace_id, want.trace_id, 16));
}

TEST(traceContextTest, ResultNamesAreDistinct) {
    EXPECT_STREQ("ok", nixl_trace_ctx_result_str(NIXL_TRACE_CTX_OK));
    EXPECT_STREQ("all-zero id", nixl_trace_ctx_result_str(NIXL_TRACE_CTX_ERR_ZERO_ID));
    EXPECT_STREQ("unknown", nixl_trace_ctx_result_str(static_cast<nixl_trace_ctx_result_t>(99)));
}

} // namespace
