/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include <cstdint>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "utils/serdes/serdes.h"

namespace {

int
countErrorLines(const std::string &err) {
    std::istringstream in(err);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        if (line.rfind("[nixl E", 0) == 0) {
            ++n;
        }
    }
    return n;
}

// Imports s into a fresh serdes; returns the status and the number of ERROR lines logged.
nixl_status_t
importCounting(nixlSerDes &sd, const std::string &s, int &errors) {
    testing::internal::CaptureStderr();
    const nixl_status_t ret = sd.importStr(s);
    errors = countErrorLines(testing::internal::GetCapturedStderr());
    return ret;
}

} // namespace

TEST(SerDes, StringsRoundTripInOrder) {
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("name", "agent-A"), NIXL_SUCCESS);
    ASSERT_EQ(sd.addStr("conn", "127.0.0.1:8888"), NIXL_SUCCESS);
    EXPECT_EQ(sd.getStr("name"), "agent-A");
    EXPECT_EQ(sd.getStr("conn"), "127.0.0.1:8888");
    EXPECT_EQ(sd.getStr("conn"), ""); // consumed
}

TEST(SerDes, TagMismatchDoesNotAdvance) {
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("a", "first"), NIXL_SUCCESS);
    ASSERT_EQ(sd.addStr("b", "second"), NIXL_SUCCESS);
    EXPECT_EQ(sd.getStr("b"), "");
    EXPECT_EQ(sd.getBufLen("b"), -1);
    char buf[6];
    EXPECT_EQ(sd.getBuf("b", buf, 6), NIXL_ERR_MISMATCH);
    // A tag that is a prefix of the real one is not a match either.
    EXPECT_EQ(sd.getStr(""), "");
    EXPECT_EQ(sd.getStr("aa"), "");
    EXPECT_EQ(sd.getStr("a"), "first");
    EXPECT_EQ(sd.getStr("b"), "second");
}

TEST(SerDes, GetBufLenPeeksWithoutConsuming) {
    nixlSerDes sd;
    const uint64_t v = 0x0102030405060708ULL;
    ASSERT_EQ(sd.addBuf("v", &v, sizeof(v)), NIXL_SUCCESS);
    EXPECT_EQ(sd.getBufLen("v"), 8);
    EXPECT_EQ(sd.getBufLen("v"), 8);
    uint64_t out = 0;
    ASSERT_EQ(sd.getBuf("v", &out, sizeof(out)), NIXL_SUCCESS);
    EXPECT_EQ(out, v);
    EXPECT_EQ(sd.getBufLen("v"), -1); // end of stream
}

TEST(SerDes, GetBufRequiresExactLength) {
    nixlSerDes sd;
    const uint32_t v = 0xdeadbeef;
    ASSERT_EQ(sd.addBuf("v", &v, sizeof(v)), NIXL_SUCCESS);
    uint64_t big = 0;
    EXPECT_EQ(sd.getBuf("v", &big, 8), NIXL_ERR_MISMATCH);
    uint16_t small = 0;
    EXPECT_EQ(sd.getBuf("v", &small, 2), NIXL_ERR_MISMATCH);
    EXPECT_EQ(small, 0u); // nothing copied on failure
    EXPECT_EQ(sd.getBuf("v", &small, -1), NIXL_ERR_INVALID_PARAM);
    uint32_t out = 0;
    ASSERT_EQ(sd.getBuf("v", &out, 4), NIXL_SUCCESS); // failures above did not advance
    EXPECT_EQ(out, v);
}

TEST(SerDes, NegativeOrNullAddIsInvalidAndLeavesStreamAlone) {
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("x", "y"), NIXL_SUCCESS);
    const std::string before = sd.exportStr();
    const char c = 'c';
    EXPECT_EQ(sd.addBuf("bad", &c, -1), NIXL_ERR_INVALID_PARAM);
    EXPECT_EQ(sd.addBuf("bad", nullptr, 4), NIXL_ERR_INVALID_PARAM);
    EXPECT_EQ(sd.exportStr(), before);
    EXPECT_EQ(sd.addBuf("ok", nullptr, 0), NIXL_SUCCESS); // an empty buffer needs no pointer
    EXPECT_EQ(sd.getStr("x"), "y");
    EXPECT_EQ(sd.getBufLen("ok"), 0);
}

TEST(SerDes, EmptyStringsAndEmptyTags) {
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("", ""), NIXL_SUCCESS);
    ASSERT_EQ(sd.addStr("e", ""), NIXL_SUCCESS);
    ASSERT_EQ(sd.addStr("", "value"), NIXL_SUCCESS);
    nixlSerDes in;
    ASSERT_EQ(in.importStr(sd.exportStr()), NIXL_SUCCESS);
    EXPECT_EQ(in.getBufLen(""), 0);
    EXPECT_EQ(in.getStr(""), ""); // consumes the empty field
    EXPECT_EQ(in.getBufLen("e"), 0);
    EXPECT_EQ(in.getBuf("e", nullptr, 0), NIXL_SUCCESS);
    EXPECT_EQ(in.getStr(""), "value");
}

TEST(SerDes, BinaryDataWithNuls) {
    const std::string data("\0\x01\xff\0tail\0", 9);
    const std::string tag("t\0g", 3);
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr(tag, data), NIXL_SUCCESS);
    ASSERT_EQ(sd.addBuf("raw", data.data(), static_cast<ssize_t>(data.size())), NIXL_SUCCESS);
    nixlSerDes in;
    ASSERT_EQ(in.importStr(sd.exportStr()), NIXL_SUCCESS);
    EXPECT_EQ(in.getStr("t"), ""); // the NUL is part of the tag
    const std::string got = in.getStr(tag);
    EXPECT_EQ(got.size(), 9u);
    EXPECT_EQ(got, data);
    std::vector<char> buf(data.size());
    ASSERT_EQ(in.getBuf("raw", buf.data(), static_cast<ssize_t>(buf.size())), NIXL_SUCCESS);
    EXPECT_EQ(std::string(buf.begin(), buf.end()), data);
}

TEST(SerDes, ManyFields) {
    constexpr int kFields = 20000;
    nixlSerDes sd;
    for (int i = 0; i < kFields; ++i) {
        if (i % 2 == 0) {
            ASSERT_EQ(sd.addStr("s" + std::to_string(i), std::string(i % 50, 'a' + i % 26)),
                      NIXL_SUCCESS);
        } else {
            ASSERT_EQ(sd.addBuf("b", &i, sizeof(i)), NIXL_SUCCESS);
        }
    }
    nixlSerDes in;
    ASSERT_EQ(in.importStr(sd.exportStr()), NIXL_SUCCESS);
    for (int i = 0; i < kFields; ++i) {
        if (i % 2 == 0) {
            ASSERT_EQ(in.getStr("s" + std::to_string(i)), std::string(i % 50, 'a' + i % 26)) << i;
        } else {
            int v = -1;
            ASSERT_EQ(in.getBuf("b", &v, sizeof(v)), NIXL_SUCCESS) << i;
            ASSERT_EQ(v, i);
        }
    }
    EXPECT_EQ(in.getBufLen(""), -1);
}

TEST(SerDes, LargeField) {
    const std::string big(3 << 20, 'q');
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("big", big), NIXL_SUCCESS);
    nixlSerDes in;
    ASSERT_EQ(in.importStr(sd.exportStr()), NIXL_SUCCESS);
    EXPECT_EQ(in.getBufLen("big"), static_cast<ssize_t>(big.size()));
    EXPECT_EQ(in.getStr("big"), big);
}

TEST(SerDes, EmptyStreamExportsAndImports) {
    nixlSerDes sd;
    const std::string empty = sd.exportStr();
    EXPECT_FALSE(empty.empty()); // the magic is always there
    nixlSerDes in;
    EXPECT_EQ(in.importStr(empty), NIXL_SUCCESS);
    EXPECT_EQ(in.getBufLen(""), -1);
    EXPECT_EQ(in.getStr(""), "");
}

TEST(SerDes, ImportResetsReadPositionAndReplacesStream) {
    nixlSerDes src;
    ASSERT_EQ(src.addStr("k", "v"), NIXL_SUCCESS);
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("old", "stuff"), NIXL_SUCCESS);
    EXPECT_EQ(sd.getStr("old"), "stuff");
    ASSERT_EQ(sd.importStr(src.exportStr()), NIXL_SUCCESS);
    EXPECT_EQ(sd.getStr("old"), "");
    EXPECT_EQ(sd.getStr("k"), "v");
    // Writes after an import append to the imported stream.
    ASSERT_EQ(sd.addStr("k2", "v2"), NIXL_SUCCESS);
    EXPECT_EQ(sd.getStr("k2"), "v2");
}

TEST(SerDes, GarbageImportIsMismatchWithOneErrorLine) {
    const std::vector<std::string> garbage = {
        "",
        "x",
        "nixlSerDes|junk",
        std::string(64, '\0'),
        std::string(64, '\xff'),
    };
    for (const auto &g : garbage) {
        nixlSerDes sd;
        int errors = 0;
        EXPECT_EQ(importCounting(sd, g, errors), NIXL_ERR_MISMATCH) << g.size();
        EXPECT_EQ(errors, 1);
    }
}

TEST(SerDes, FailedImportKeepsPreviousStream) {
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("keep", "me"), NIXL_SUCCESS);
    int errors = 0;
    EXPECT_EQ(importCounting(sd, "garbage", errors), NIXL_ERR_MISMATCH);
    EXPECT_EQ(sd.getStr("keep"), "me");
}

TEST(SerDes, TruncationFailsExceptOnFieldBoundaries) {
    nixlSerDes sd;
    std::set<size_t> boundaries = {sd.exportStr().size()};
    ASSERT_EQ(sd.addStr("alpha", "one"), NIXL_SUCCESS);
    boundaries.insert(sd.exportStr().size());
    const uint64_t v = 42;
    ASSERT_EQ(sd.addBuf("", &v, sizeof(v)), NIXL_SUCCESS);
    boundaries.insert(sd.exportStr().size());
    ASSERT_EQ(sd.addStr("gamma", std::string(100, 'g')), NIXL_SUCCESS);
    const std::string full = sd.exportStr();

    for (size_t len = 0; len <= full.size(); ++len) {
        nixlSerDes in;
        int errors = 0;
        const nixl_status_t ret = importCounting(in, full.substr(0, len), errors);
        if (boundaries.count(len) != 0 || len == full.size()) {
            EXPECT_EQ(ret, NIXL_SUCCESS) << len;
            EXPECT_EQ(errors, 0) << len;
        } else {
            EXPECT_EQ(ret, NIXL_ERR_MISMATCH) << len;
            EXPECT_EQ(errors, 1) << len;
        }
    }
}

TEST(SerDes, TrailingBytesAreRejected) {
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("a", "b"), NIXL_SUCCESS);
    nixlSerDes in;
    int errors = 0;
    EXPECT_EQ(importCounting(in, sd.exportStr() + "\x01", errors), NIXL_ERR_MISMATCH);
}

TEST(SerDes, HugeDeclaredLengthsAreRejected) {
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("tag", "data"), NIXL_SUCCESS);
    const std::string good = sd.exportStr();
    const size_t magic = nixlSerDes().exportStr().size();
    // Layout after the magic: 4-byte tag length, "tag", 8-byte data length, "data".
    std::string big_tag = good;
    std::memset(&big_tag[magic], 0xff, 4);
    std::string big_data = good;
    std::memset(&big_data[magic + 4 + 3], 0xff, 8);
    std::string off_by_one = good;
    off_by_one[magic + 4 + 3] = 5; // one byte more than present
    for (const auto &bad : {big_tag, big_data, off_by_one}) {
        nixlSerDes in;
        int errors = 0;
        EXPECT_EQ(importCounting(in, bad, errors), NIXL_ERR_MISMATCH);
        EXPECT_EQ(errors, 1);
    }
}

TEST(SerDes, BitFlipsNeverReadOutOfBounds) {
    nixlSerDes sd;
    ASSERT_EQ(sd.addStr("a", "xyz"), NIXL_SUCCESS);
    ASSERT_EQ(sd.addStr("", std::string(30, 'w')), NIXL_SUCCESS);
    const uint64_t v = 7;
    ASSERT_EQ(sd.addBuf("n", &v, sizeof(v)), NIXL_SUCCESS);
    const std::string full = sd.exportStr();
    for (size_t pos = 0; pos < full.size(); ++pos) {
        std::string bad = full;
        bad[pos] = static_cast<char>(bad[pos] ^ 0x40);
        nixlSerDes in;
        int errors = 0;
        if (importCounting(in, bad, errors) == NIXL_SUCCESS) {
            EXPECT_EQ(errors, 0);
            // Whatever parsed must be readable field by field up to the end.
            size_t total = 0;
            for (const std::string tag : {"a", "", "n", "\x21", "`"}) {
                const ssize_t len = in.getBufLen(tag);
                if (len >= 0) {
                    total += in.getStr(tag).size();
                }
            }
            EXPECT_LE(total, full.size()) << pos;
        } else {
            EXPECT_EQ(errors, 1) << pos;
        }
    }
}

TEST(SerDes, BytesStringHelpers) {
    const unsigned char raw[5] = {0x00, 0x10, 0xff, 0x00, 0x7f};
    const std::string s = nixlSerDes::_bytesToString(raw, sizeof(raw));
    ASSERT_EQ(s.size(), 5u);
    EXPECT_EQ(std::memcmp(s.data(), raw, 5), 0);
    EXPECT_EQ(nixlSerDes::_bytesToString(raw, 0), "");
    EXPECT_EQ(nixlSerDes::_bytesToString(raw, -3), "");

    unsigned char out[5] = {};
    nixlSerDes::_stringToBytes(out, s, sizeof(out));
    EXPECT_EQ(std::memcmp(out, raw, 5), 0);

    unsigned char partial[4] = {9, 9, 9, 9};
    nixlSerDes::_stringToBytes(partial, s, 2);
    EXPECT_EQ(partial[0], 0x00);
    EXPECT_EQ(partial[1], 0x10);
    EXPECT_EQ(partial[2], 9); // untouched past size

    // A size larger than the string copies only the string.
    unsigned char wide[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    nixlSerDes::_stringToBytes(wide, "ab", sizeof(wide));
    EXPECT_EQ(wide[0], 'a');
    EXPECT_EQ(wide[1], 'b');
    EXPECT_EQ(wide[2], 1);
}
