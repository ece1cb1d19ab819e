/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// NIXL 1.4's serdes container (codec/nixl_serdes_wire.h): the bytes of the specification's
// example, round trips, and refusal of what would read past the input.
#include "codec/nixl_serdes_wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace std::string_view_literals;

// ../shared/reference/nixl-wire.md, section 1.4: the UCX notification from agent "target"
// with message "hi", 44 bytes.
const std::string_view kNotifTargetHi =
    "nixlSerDes|"
    "name\x06\x00\x00\x00\x00\x00\x00\x00target|"
    "msg\x02\x00\x00\x00\x00\x00\x00\x00hi|"sv;

TEST(SerdesWire, WriterProducesTheSpecificationsExample) {
    nixlSerdesWire::writer w;
    w.str("name", "target");
    w.str("msg", "hi");
    ASSERT_EQ(kNotifTargetHi.size(), 44u);
    EXPECT_EQ(w.bytes(), kNotifTargetHi);
}

TEST(SerdesWire, ReaderReadsTheSpecificationsExample) {
    nixlSerdesWire::reader r(kNotifTargetHi);
    ASSERT_TRUE(r.ok());
    std::string_view name;
    std::string_view msg;
    EXPECT_FALSE(r.str("msg", msg)) << "the fields are read in order";
    ASSERT_TRUE(r.str("name", name));
    ASSERT_TRUE(r.str("msg", msg));
    EXPECT_EQ(name, "target");
    EXPECT_EQ(msg, "hi");
    EXPECT_EQ(r.left(), 0u);
}

TEST(SerdesWire, IntegersEmptyTagsAndBinaryValues) {
    nixlSerdesWire::writer w;
    w.integer<uint64_t>("Conns", 2);
    w.integer<uint32_t>("t", 4);
    w.str("", "MemSection");
    const std::string binary("a|b\0c", 5);
    w.str("c", binary);
    // Conns: tag, LEN 8, the LE64 2, '|'.
    EXPECT_EQ(w.bytes().substr(11, 5 + 8 + 8 + 1),
              "Conns\x08\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00|"sv);
    nixlSerdesWire::reader r(w.bytes());
    uint64_t conns = 0;
    uint32_t mem = 0;
    uint64_t wrong_width = 0;
    std::string_view section;
    std::string_view c;
    ASSERT_TRUE(r.integer("Conns", conns));
    EXPECT_FALSE(r.integer("t", wrong_width)) << "LEN must be the integer's size";
    ASSERT_TRUE(r.integer("t", mem));
    ASSERT_TRUE(r.next(""));
    ASSERT_TRUE(r.str("", section));
    ASSERT_TRUE(r.str("c", c));
    EXPECT_EQ(conns, 2u);
    EXPECT_EQ(mem, 4u);
    EXPECT_EQ(section, "MemSection");
    EXPECT_EQ(c, binary);
}

TEST(SerdesWire, NoMagicNoReads) {
    nixlSerdesWire::reader r("nixlSerDes"sv); // one byte short
    EXPECT_FALSE(r.ok());
    std::string_view v;
    EXPECT_FALSE(r.str("", v));
    EXPECT_FALSE(nixlSerdesWire::hasMagic("lnxSD1"));
}

TEST(SerdesWire, EveryTruncationIsRefusedWithoutMovingTheCursor) {
    for (size_t n = 11; n < kNotifTargetHi.size(); ++n) {
        nixlSerdesWire::reader r(kNotifTargetHi.substr(0, n));
        std::string_view name;
        std::string_view msg;
        const bool got_name = r.str("name", name);
        EXPECT_EQ(got_name, n >= 11 + 4 + 8 + 6 + 1) << n;
        const size_t at = r.offset();
        EXPECT_FALSE(r.str("msg", msg)) << n;
        EXPECT_EQ(r.offset(), at) << n;
    }
}

TEST(SerdesWire, HugeLengthAndMaximumAreRefused) {
    std::string s(nixlSerdesWire::magic);
    s += "c";
    s += "\xff\xff\xff\xff\xff\xff\xff\xff"sv; // LEN 2^64 - 1
    s += "x|";
    nixlSerdesWire::reader r(s);
    std::string_view v;
    EXPECT_FALSE(r.str("c", v));

    nixlSerdesWire::writer w;
    w.str("c", std::string(100, 'z'));
    nixlSerdesWire::reader r2(w.bytes());
    EXPECT_FALSE(r2.str("c", v, 99));
    EXPECT_TRUE(r2.str("c", v, 100));
    EXPECT_EQ(v.size(), 100u);
}

TEST(SerdesWire, TheDelimiterIsNotCheckedAndTrailingBytesAreLeft) {
    std::string s(kNotifTargetHi);
    s[11 + 4 + 8 + 6] = '#'; // NIXL skips the delimiter unchecked
    s += "trailing";
    nixlSerdesWire::reader r(s);
    std::string_view name;
    std::string_view msg;
    ASSERT_TRUE(r.str("name", name));
    ASSERT_TRUE(r.str("msg", msg));
    EXPECT_EQ(r.left(), 8u);
}

} // namespace
