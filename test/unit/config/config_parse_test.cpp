/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The value rules shared by core and the plugin SDK (nixl_plugin_config_parse.h).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "nixl_plugin_config_parse.h"

namespace {

using namespace nixlConfigParse;

TEST(configParse, BoolAcceptsNixlWordsInAnyCase) {
    for (const char *w : {"y", "yes", "on", "1", "true", "enable", "Y", "YES", "On", "TRUE",
                          "Enable"}) {
        bool v = false;
        EXPECT_TRUE(parseBool(w, v)) << w;
        EXPECT_TRUE(v) << w;
    }
    for (const char *w : {"n", "no", "off", "0", "false", "disable", "N", "No", "OFF", "False",
                          "DISABLE"}) {
        bool v = true;
        EXPECT_TRUE(parseBool(w, v)) << w;
        EXPECT_FALSE(v) << w;
    }
}

TEST(configParse, BoolRefusesOtherWords) {
    for (const char *w : {"", " ", "2", "yess", "tru", "enabled", "nope", "y es", "-1", "0x1",
                          " yes", "no\t"}) {
        bool v = true;
        EXPECT_FALSE(parseBool(w, v)) << "'" << w << "'";
        EXPECT_TRUE(v) << "output untouched on failure: " << w;
    }
}

TEST(configParse, UnsignedDecimalAndHex) {
    uint64_t v = 0;
    EXPECT_TRUE(parseUnsigned("0", v));
    EXPECT_EQ(v, 0u);
    EXPECT_TRUE(parseUnsigned("33554432", v));
    EXPECT_EQ(v, 33554432u);
    EXPECT_TRUE(parseUnsigned("0x2000000", v));
    EXPECT_EQ(v, 0x2000000u);
    EXPECT_TRUE(parseUnsigned("0XfF", v));
    EXPECT_EQ(v, 255u);
    EXPECT_TRUE(parseUnsigned("18446744073709551615", v));
    EXPECT_EQ(v, UINT64_MAX);
    EXPECT_TRUE(parseUnsigned("0xffffffffffffffff", v));
    EXPECT_EQ(v, UINT64_MAX);
}

TEST(configParse, UnsignedIsStrict) {
    for (const char *w : {"", "-1", "+1", "12a", "1 2", "0x", "0xg", "1e3", "1.0",
                          "18446744073709551616", "0x10000000000000000", "ff", " 12", "12 "}) {
        uint64_t v = 7;
        EXPECT_FALSE(parseUnsigned(w, v)) << "'" << w << "'";
        EXPECT_EQ(v, 7u);
    }
}

TEST(configParse, SignedDecimal) {
    int64_t v = 0;
    EXPECT_TRUE(parseSigned("-5", v));
    EXPECT_EQ(v, -5);
    EXPECT_TRUE(parseSigned("9223372036854775807", v));
    EXPECT_EQ(v, INT64_MAX);
    EXPECT_TRUE(parseSigned("-9223372036854775808", v));
    EXPECT_EQ(v, INT64_MIN);
    for (const char *w : {"", "-", "--1", "9223372036854775808", "-9223372036854775809", "0x10",
                          "1-"}) {
        EXPECT_FALSE(parseSigned(w, v)) << "'" << w << "'";
    }
}

TEST(configParse, PortIsOneRuleOneToFiftyFiveThousand) {
    uint16_t p = 0;
    EXPECT_TRUE(parsePort("1", p));
    EXPECT_EQ(p, 1);
    EXPECT_TRUE(parsePort("9090", p));
    EXPECT_EQ(p, 9090);
    EXPECT_TRUE(parsePort("65535", p));
    EXPECT_EQ(p, 65535);
    for (const char *w : {"0", "65536", "99999", "-1", "80a", "", "0x50", "123456", " 80", "+80"}) {
        EXPECT_FALSE(parsePort(w, p)) << "'" << w << "'";
    }
}

TEST(configParse, MillisecondsArePlainIntegers) {
    uint64_t ms = 0;
    EXPECT_TRUE(parseMilliseconds("100", ms));
    EXPECT_EQ(ms, 100u);
    EXPECT_FALSE(parseMilliseconds("100ms", ms));
    EXPECT_FALSE(parseMilliseconds("1.5", ms));
}

TEST(configParse, TrimBlanksStripsBothEndsOnly) {
    EXPECT_EQ(trimBlanks(" \t rc_x,sm \r\n"), "rc_x,sm");
    EXPECT_EQ(trimBlanks("a b"), "a b");
    EXPECT_EQ(trimBlanks("x"), "x");
    EXPECT_EQ(trimBlanks(" \n\t\r "), "");
    EXPECT_EQ(trimBlanks(""), "");
    // Not a blank here: a vertical tab or a NUL stays, as in the copies this replaced.
    EXPECT_EQ(trimBlanks("\vx\v"), "\vx\v");
}

static_assert([] {
    bool v = false;
    return parseBool("Enable", v) && v;
}());

} // namespace
