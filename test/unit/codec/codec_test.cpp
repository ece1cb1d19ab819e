/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The plugins' byte codec (codec/nixl_byte_codec.h): round trips, byte layout, and refusal of
// truncated, over-long and over-limit input.
#include "codec/nixl_byte_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace {

using nixlCodec::nixlByteReader;
using nixlCodec::nixlByteWriter;

TEST(ByteCodec, RoundTripU16Prefix) {
    std::string buf = "pre";
    nixlByteWriter<uint16_t> w(buf);
    w.put<uint32_t>(0xA1B2C3D4u);
    w.put<uint8_t>(7);
    w.put<int64_t>(-5);
    EXPECT_TRUE(w.bytes("hello"));
    w.raw("xy");
    ASSERT_EQ(buf.size(), 3u + 4 + 1 + 8 + 2 + 5 + 2);

    nixlByteReader<uint16_t> r(std::string_view(buf).substr(3));
    uint32_t a = 0;
    uint8_t b = 0;
    int64_t c = 0;
    std::string_view s, t;
    ASSERT_TRUE(r.get(a));
    ASSERT_TRUE(r.get(b));
    ASSERT_TRUE(r.get(c));
    ASSERT_TRUE(r.bytes(s));
    ASSERT_TRUE(r.raw(t, 2));
    EXPECT_EQ(a, 0xA1B2C3D4u);
    EXPECT_EQ(b, 7);
    EXPECT_EQ(c, -5);
    EXPECT_EQ(s, "hello");
    EXPECT_EQ(t, "xy");
    EXPECT_TRUE(r.atEnd());
    EXPECT_EQ(r.left(), 0u);
}

TEST(ByteCodec, LittleEndianLayoutAndPrefixWidth) {
    nixlByteWriter<uint32_t> w;
    w.put<uint16_t>(0x0102);
    EXPECT_TRUE(w.bytes("ab"));
    EXPECT_EQ(w.str(), std::string("\x02\x01\x02\x00\x00\x00" "ab", 8));

    nixlByteWriter<uint16_t> w16;
    EXPECT_TRUE(w16.bytes("ab"));
    EXPECT_EQ(w16.str(), std::string("\x02\x00" "ab", 4));
}

TEST(ByteCodec, TruncatedInputFails) {
    nixlByteWriter<uint32_t> w;
    w.put<uint64_t>(42);
    EXPECT_TRUE(w.bytes("payload"));
    const std::string full = w.str();
    // Every strict prefix fails somewhere, and no read runs past the end.
    for (size_t n = 0; n < full.size(); ++n) {
        nixlByteReader<uint32_t> r(std::string_view(full).substr(0, n));
        uint64_t v = 0;
        std::string_view s;
        EXPECT_FALSE(r.get(v) && r.bytes(s)) << "prefix of " << n << " bytes";
    }
    nixlByteReader<uint32_t> r(std::string_view(full).substr(0, 3));
    uint64_t v = 0;
    EXPECT_FALSE(r.get(v));
    EXPECT_EQ(r.left(), 3u); // a failed read consumes nothing
    std::string_view s;
    EXPECT_FALSE(r.raw(s, 4));
}

TEST(ByteCodec, LengthBeyondInputFails) {
    // A prefix claiming 1000 bytes when 3 follow.
    nixlByteWriter<uint16_t> w;
    w.put<uint16_t>(1000);
    w.raw("abc");
    nixlByteReader<uint16_t> r(w.str());
    std::string_view s;
    EXPECT_FALSE(r.bytes(s));
    EXPECT_EQ(r.left(), 5u);
}

TEST(ByteCodec, MaxLengthRefused) {
    nixlByteWriter<uint16_t> w;
    EXPECT_TRUE(w.bytes("abcdef"));
    std::string_view s;
    nixlByteReader<uint16_t> over(w.str());
    EXPECT_FALSE(over.bytes(s, 5));
    nixlByteReader<uint16_t> exact(w.str());
    EXPECT_TRUE(exact.bytes(s, 6));
    EXPECT_EQ(s, "abcdef");
}

TEST(ByteCodec, WriterRefusesStringLongerThanPrefix) {
    nixlByteWriter<uint16_t> w;
    const std::string big(70000, 'x');
    EXPECT_FALSE(w.bytes(big));
    EXPECT_TRUE(w.str().empty());
    nixlByteWriter<uint32_t> w32;
    EXPECT_TRUE(w32.bytes(big));
    EXPECT_EQ(w32.str().size(), 4u + big.size());
}

} // namespace
