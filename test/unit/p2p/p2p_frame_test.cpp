/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The P2P framing (metadata/p2p/p2p_frame.h) and the log limiter, without sockets.

#include <gtest/gtest.h>

#include <string>

#include "metadata/p2p/p2p_exchange.h"
#include "metadata/p2p/p2p_frame.h"

namespace {

using result_t = nixlP2PParser::result_t;

/** Feeds all of bytes in pieces of step; the last result and total bytes used. */
result_t
feedAll(nixlP2PParser &p, const std::string &bytes, size_t step, size_t &used_total) {
    used_total = 0;
    result_t r = result_t::NEED_MORE;
    while (used_total < bytes.size()) {
        size_t used = 0;
        const size_t n = std::min(step, bytes.size() - used_total);
        r = p.feed(bytes.data() + used_total, n, used);
        used_total += used;
        if (r != result_t::NEED_MORE) {
            return r;
        }
    }
    return r;
}

TEST(p2pFrame, HeaderLayoutIsTheDocumentedOne) {
    const std::string f = nixlP2P::encodeFrame(nixl_p2p_type_t::FETCH, "B");
    const std::string want("NXLP2P\r\n\x01\x00\x03\x00\x01\x00\x00\x00"
                           "B",
                           17);
    EXPECT_EQ(f, want);
}

TEST(p2pFrame, ParsesFramesFedInAnyPieces) {
    const std::string payload(70000, 'x');
    const std::string two = nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD, payload) +
        nixlP2P::encodeFrame(nixl_p2p_type_t::STATUS, nixlP2P::encodeStatus(NIXL_SUCCESS, "ok"));
    for (size_t step : {size_t(1), size_t(7), size_t(16), size_t(4096), two.size()}) {
        nixlP2PParser p(nixlP2P::default_load_limit);
        size_t used = 0;
        ASSERT_EQ(feedAll(p, two, step, used), result_t::FRAME) << step;
        EXPECT_EQ(p.type(), nixl_p2p_type_t::LOAD);
        EXPECT_EQ(p.payload(), payload);
        EXPECT_EQ(p.partial(), 0u);
        size_t used2 = 0;
        ASSERT_EQ(feedAll(p, two.substr(used), step, used2), result_t::FRAME);
        EXPECT_EQ(p.type(), nixl_p2p_type_t::STATUS);
        EXPECT_EQ(used + used2, two.size());
        nixl_status_t st = NIXL_ERR_UNKNOWN;
        std::string msg;
        std::string err;
        ASSERT_TRUE(nixlP2P::decodeStatus(p.payload(), st, msg, err)) << err;
        EXPECT_EQ(st, NIXL_SUCCESS);
        EXPECT_EQ(msg, "ok");
    }
}

TEST(p2pFrame, EmptyPayloadIsAFrame) {
    nixlP2PParser p(nixlP2P::default_load_limit);
    size_t used = 0;
    EXPECT_EQ(feedAll(p, nixlP2P::encodeFrame(nixl_p2p_type_t::FETCH, ""), 3, used),
              result_t::FRAME);
    EXPECT_TRUE(p.payload().empty());
}

struct badCase {
    std::string bytes;
    std::string needle;
};

TEST(p2pFrame, RefusesBadHeaders) {
    std::string good = nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD, "abc");
    std::string version = good;
    version[8] = 2;
    std::string type = good;
    type[10] = 9;
    std::string type0 = good;
    type0[10] = 0;
    std::string flags = good;
    flags[11] = 4;
    std::string big = good;
    big[12] = big[13] = big[14] = big[15] = '\xff';
    std::string hello_big = nixlP2P::encodeFrame(nixl_p2p_type_t::HELLO, "");
    hello_big[12] = '\x00';
    hello_big[13] = '\x10'; // 4096 > 2 + 1024 + 2 + 256
    const badCase cases[] = {
        {"GET / HTTP/1.1\r\n", "bad magic"},
        {"NXLP", ""}, // a prefix of the magic: needs more, not an error
        {version, "protocol version 2, this agent speaks 1"},
        {type, "unknown frame type 9"},
        {type0, "unknown frame type 0"},
        {flags, "flags 0x04"},
        {big, "LOAD frame of 4294967295 bytes, over the limit of 4096 (NIXL_P2P_MAX_FRAME)"},
        {hello_big, "HELLO frame of 4096 bytes, over the limit of 1284"},
    };
    for (const auto &c : cases) {
        nixlP2PParser p(4096);
        size_t used = 0;
        const result_t r = feedAll(p, c.bytes, c.bytes.size(), used);
        if (c.needle.empty()) {
            EXPECT_EQ(r, result_t::NEED_MORE);
            continue;
        }
        ASSERT_EQ(r, result_t::ERROR) << c.needle;
        EXPECT_NE(p.error().find(c.needle), std::string::npos) << p.error();
        // Refused at the header: no payload byte was stored.
        EXPECT_TRUE(p.payload().empty());
        // An error is final.
        EXPECT_EQ(p.feed(good.data(), good.size(), used), result_t::ERROR);
    }
}

TEST(p2pFrame, BadMagicIsSeenAtTheFirstWrongByte) {
    nixlP2PParser p(4096);
    size_t used = 0;
    EXPECT_EQ(p.feed("G", 1, used), result_t::ERROR);
    EXPECT_NE(p.error().find("bad magic"), std::string::npos);
}

TEST(p2pFrame, PartialAndExpectedDescribeAnUnfinishedFrame) {
    const std::string f = nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD, std::string(100, 'y'));
    nixlP2PParser p(4096);
    size_t used = 0;
    EXPECT_EQ(p.feed(f.data(), 10, used), result_t::NEED_MORE);
    EXPECT_EQ(p.partial(), 10u);
    EXPECT_EQ(p.expected(), 0u);
    EXPECT_EQ(p.feed(f.data() + 10, 40, used), result_t::NEED_MORE);
    EXPECT_EQ(p.partial(), 50u);
    EXPECT_EQ(p.expected(), 116u);
}

TEST(p2pFrame, HelloRoundTripAndRefusals) {
    std::string name;
    std::string token;
    std::string err;
    const std::string h = nixlP2P::encodeHello("agentB", std::string("t\0k", 3));
    ASSERT_TRUE(nixlP2P::decodeHello(h, name, token, err)) << err;
    EXPECT_EQ(name, "agentB");
    EXPECT_EQ(token, std::string("t\0k", 3));

    EXPECT_FALSE(nixlP2P::decodeHello("", name, token, err));
    EXPECT_FALSE(nixlP2P::decodeHello(std::string("\0\0\0\0", 4), name, token, err));
    EXPECT_NE(err.find("name length 0"), std::string::npos) << err;
    EXPECT_FALSE(nixlP2P::decodeHello(h + "x", name, token, err));
    EXPECT_NE(err.find("its fields make"), std::string::npos) << err;
    EXPECT_FALSE(nixlP2P::decodeHello(h.substr(0, 5), name, token, err));
    std::string long_token = nixlP2P::encodeHello("a", "");
    long_token[3] = '\x01';
    long_token[4] = '\x01'; // token length 257
    EXPECT_FALSE(nixlP2P::decodeHello(long_token, name, token, err));
    EXPECT_NE(err.find("token length 257"), std::string::npos) << err;
}

TEST(p2pFrame, StatusRoundTripAndRefusals) {
    nixl_status_t st = NIXL_SUCCESS;
    std::string msg;
    std::string err;
    ASSERT_TRUE(nixlP2P::decodeStatus(nixlP2P::encodeStatus(NIXL_ERR_NO_TELEMETRY, "m"), st, msg,
                                      err));
    EXPECT_EQ(st, NIXL_ERR_NO_TELEMETRY);
    EXPECT_FALSE(nixlP2P::decodeStatus("abc", st, msg, err));
    EXPECT_FALSE(nixlP2P::decodeStatus(std::string("\x02\x00\x00\x00", 4), st, msg, err));
    EXPECT_NE(err.find("not a nixl_status_t"), std::string::npos) << err;
    EXPECT_FALSE(
        nixlP2P::decodeStatus(std::string("\x00\x00\x00\x00", 4) + std::string(1025, 'm'), st,
                              msg, err));
    // Long messages are cut when encoded, so what is sent always decodes.
    EXPECT_TRUE(nixlP2P::decodeStatus(nixlP2P::encodeStatus(NIXL_SUCCESS, std::string(5000, 'm')),
                                      st, msg, err));
    EXPECT_EQ(msg.size(), nixlP2P::max_message);
}

TEST(p2pFrame, TokenCompare) {
    EXPECT_TRUE(nixlP2P::tokenEqual("secret", "secret"));
    EXPECT_FALSE(nixlP2P::tokenEqual("secret", "secreT"));
    EXPECT_FALSE(nixlP2P::tokenEqual("secret", "secret2"));
    EXPECT_FALSE(nixlP2P::tokenEqual("secret", "secre"));
    EXPECT_FALSE(nixlP2P::tokenEqual("secret", ""));
    EXPECT_TRUE(nixlP2P::tokenEqual("", ""));
}

TEST(p2pFrame, PrintableCutsWithoutEscaping) {
    EXPECT_EQ(nixlP2P::printable(std::string("a\nb\\\0", 5)), std::string("a\nb\\\0", 5));
    // Not escaped here: the logger escapes each line once (issue 29).
    EXPECT_EQ(nixlP2P::printable(std::string(100, 'x')), std::string(64, 'x') + "... (100 bytes)");
}

TEST(p2pLogLimiter, BurstThenOnePerIntervalWithTheSuppressedCount) {
    using namespace std::chrono;
    nixlP2PLogLimiter lim(3, milliseconds(100));
    const auto t0 = steady_clock::time_point{} + hours(1);
    uint64_t s = 99;
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(lim.allow(t0, s));
        EXPECT_EQ(s, 0u);
    }
    EXPECT_FALSE(lim.allow(t0, s));
    EXPECT_FALSE(lim.allow(t0 + milliseconds(50), s));
    ASSERT_TRUE(lim.allow(t0 + milliseconds(100), s));
    EXPECT_EQ(s, 2u);
    EXPECT_FALSE(lim.allow(t0 + milliseconds(150), s));
    // A long quiet spell refills the whole burst, no more.
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(lim.allow(t0 + seconds(10), s));
    }
    EXPECT_FALSE(lim.allow(t0 + seconds(10), s));
}

} // namespace
