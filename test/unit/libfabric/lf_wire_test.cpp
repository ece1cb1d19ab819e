/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The plugin's wire formats, without loading the plugin: round trips, and every truncation,
// bit flip and over-long field refused with a reason.

#include <gtest/gtest.h>

#include "lf_wire.h"

using namespace nixlLf;

namespace {

connInfoWire
sampleConn() {
    connInfoWire c;
    c.nonce = 0x1122334455667788ULL;
    c.hostId = "boot/ipc:[1]/pid:[2]";
    c.pid = 4242;
    c.rails = {{"shm", std::string("fi_shm://4242:0\0", 16)}, {"tcp;ofi_rxm", std::string("\x02\x00" "abc", 5)}};
    c.startTime = 123456;
    c.regTable = "/nixl-lf-0123456789abcdef0123456789abcdef";
    c.regSlots = 1 << 20;
    c.probeAddr = 0x7ffd00001000ULL;
    return c;
}

publicDataWire
samplePd() {
    publicDataWire p;
    p.mem = 0;
    p.base = 0x7f0000001000ULL;
    p.len = 1 << 20;
    p.rails = {{"shm", 17, 1}, {"tcp;ofi_rxm", 18, 0}};
    p.slot = 5;
    p.regId = 99;
    p.owner = 0x0123456789abcdefULL;
    return p;
}

} // namespace

TEST(lfWire, ConnInfoRoundTrip) {
    const auto in = sampleConn();
    connInfoWire out;
    std::string why;
    ASSERT_TRUE(decodeConnInfo(encodeConnInfo(in), out, why)) << why;
    EXPECT_EQ(out.nonce, in.nonce);
    EXPECT_EQ(out.hostId, in.hostId);
    EXPECT_EQ(out.pid, in.pid);
    ASSERT_EQ(out.rails.size(), 2u);
    EXPECT_EQ(out.rails[0].addr, in.rails[0].addr);
    EXPECT_EQ(out.rails[1].prov, "tcp;ofi_rxm");
}

TEST(lfWire, PublicDataRoundTrip) {
    const auto in = samplePd();
    publicDataWire out;
    std::string why;
    ASSERT_TRUE(decodePublicData(encodePublicData(in), out, why)) << why;
    EXPECT_EQ(out.base, in.base);
    EXPECT_EQ(out.len, in.len);
    EXPECT_EQ(out.owner, in.owner);
    ASSERT_EQ(out.rails.size(), 2u);
    EXPECT_EQ(out.rails[0].key, 17u);
    EXPECT_EQ(out.rails[0].virtAddr, 1);
    EXPECT_EQ(out.rails[1].virtAddr, 0);
}

TEST(lfWire, EveryTruncationAndBitFlipRefused) {
    for (const std::string &blob : {encodeConnInfo(sampleConn()), encodePublicData(samplePd())}) {
        const bool conn = blob == encodeConnInfo(sampleConn());
        auto decode = [&](const std::string &b, std::string &why) {
            connInfoWire c;
            publicDataWire p;
            return conn ? decodeConnInfo(b, c, why) : decodePublicData(b, p, why);
        };
        for (size_t n = 0; n < blob.size(); ++n) {
            std::string why;
            EXPECT_FALSE(decode(blob.substr(0, n), why)) << n;
            EXPECT_FALSE(why.empty());
        }
        for (size_t i = 0; i < blob.size(); ++i) {
            for (int bit = 0; bit < 8; ++bit) {
                std::string b = blob;
                b[i] = static_cast<char>(b[i] ^ (1 << bit));
                std::string why;
                EXPECT_FALSE(decode(b, why)) << "byte " << i << " bit " << bit;
            }
        }
        std::string why;
        EXPECT_FALSE(decode(blob + "x", why));
    }
}

TEST(lfWire, VersionAndMagicNamed) {
    std::string b = encodeConnInfo(sampleConn());
    b[4] = 9; // version
    connInfoWire c;
    std::string why;
    EXPECT_FALSE(decodeConnInfo(b, c, why));
    EXPECT_NE(why.find("version 9"), std::string::npos) << why;
    publicDataWire p;
    EXPECT_FALSE(decodePublicData(encodeConnInfo(sampleConn()), p, why));
    EXPECT_NE(why.find("magic"), std::string::npos) << why;
}

TEST(lfWire, TooManyRailsRefused) {
    auto c = sampleConn();
    c.rails.assign(max_rails + 1, {"tcp", "a"});
    connInfoWire out;
    std::string why;
    EXPECT_FALSE(decodeConnInfo(encodeConnInfo(c), out, why));
    EXPECT_NE(why.find("providers"), std::string::npos) << why;
}

TEST(lfWire, WrappingRangeRefused) {
    auto p = samplePd();
    p.base = ~0ULL - 10;
    p.len = 100;
    publicDataWire out;
    std::string why;
    EXPECT_FALSE(decodePublicData(encodePublicData(p), out, why));
}

TEST(lfWire, NotifFragments) {
    notifFragWire f;
    f.nonce = 5;
    f.seq = 9;
    f.total = 10;
    f.sender = "agentA";
    f.traced = true;
    for (int i = 0; i < 26; ++i) {
        f.trace[i] = static_cast<uint8_t>(i + 1);
    }
    f.payload = "hello";
    std::string b;
    encodeNotifFrag(f, b);
    EXPECT_EQ(b.size(), notifHeaderSize(f) + 5);
    notifFragWire g;
    std::string why;
    ASSERT_TRUE(decodeNotifFrag(b, g, why)) << why;
    EXPECT_EQ(g.sender, "agentA");
    EXPECT_TRUE(g.traced);
    EXPECT_EQ(g.trace[25], 26);
    EXPECT_EQ(g.payload, "hello");

    notifFragWire h = f;
    h.offset = 5;
    h.payload = "world";
    std::string b2;
    encodeNotifFrag(h, b2);
    ASSERT_TRUE(decodeNotifFrag(b2, g, why)) << why;
    EXPECT_TRUE(g.sender.empty());
    EXPECT_FALSE(g.traced);
    EXPECT_EQ(g.offset, 5u);

    for (size_t n = 0; n < notifHeaderSize(f); ++n) {
        EXPECT_FALSE(decodeNotifFrag(b.substr(0, n), g, why)) << n;
    }
    h.payload = "world!"; // longer than the message
    std::string b3;
    encodeNotifFrag(h, b3);
    EXPECT_FALSE(decodeNotifFrag(b3, g, why));
    f.total = max_notif_len + 1;
    std::string b4;
    encodeNotifFrag(f, b4);
    EXPECT_FALSE(decodeNotifFrag(b4, g, why));
}

// Version 2 carries the registration table (connection info) and the slot (public data);
// version 1, what engines before shm fast RMA send, still decodes, without them, so such a peer
// is reached with delivery-complete RMA.
TEST(lfWire, RegistrationTableFieldsAndVersionOne) {
    std::string why;
    connInfoWire c;
    ASSERT_TRUE(decodeConnInfo(encodeConnInfo(sampleConn()), c, why)) << why;
    EXPECT_EQ(c.version, 3);
    EXPECT_EQ(c.startTime, 123456u);
    EXPECT_EQ(c.regTable, sampleConn().regTable);
    EXPECT_EQ(c.regSlots, 1u << 20);
    EXPECT_EQ(c.probeAddr, 0x7ffd00001000ULL);
    publicDataWire p;
    ASSERT_TRUE(decodePublicData(encodePublicData(samplePd()), p, why)) << why;
    EXPECT_EQ(p.version, 3);
    EXPECT_EQ(p.slot, 5u);
    EXPECT_EQ(p.regId, 99u);

    connInfoWire old = sampleConn();
    old.version = 1;
    ASSERT_TRUE(decodeConnInfo(encodeConnInfo(old), c, why)) << why;
    EXPECT_EQ(c.version, 1);
    EXPECT_TRUE(c.regTable.empty());
    EXPECT_EQ(c.regSlots, 0u);
    ASSERT_EQ(c.rails.size(), 2u);
    publicDataWire oldPd = samplePd();
    oldPd.version = 1;
    ASSERT_TRUE(decodePublicData(encodePublicData(oldPd), p, why)) << why;
    EXPECT_EQ(p.version, 1);
    EXPECT_EQ(p.slot, 0u);
    EXPECT_EQ(p.owner, 0u);
    // Version 2 public data (no owner nonce) still decodes; the engine decides whether the
    // connection it is loaded with allows that (lfEngine::loadRemoteMD).
    oldPd.version = 2;
    ASSERT_TRUE(decodePublicData(encodePublicData(oldPd), p, why)) << why;
    EXPECT_EQ(p.version, 2);
    EXPECT_EQ(p.slot, 5u);
    EXPECT_EQ(p.owner, 0u);

    // A table without slots (or slots without a table), and a slot without an id, are refused.
    connInfoWire bad = sampleConn();
    bad.regSlots = 0;
    EXPECT_FALSE(decodeConnInfo(encodeConnInfo(bad), c, why));
    EXPECT_NE(why.find("registration table"), std::string::npos) << why;
    publicDataWire badPd = samplePd();
    badPd.regId = 0;
    EXPECT_FALSE(decodePublicData(encodePublicData(badPd), p, why));
    EXPECT_NE(why.find("without an id"), std::string::npos) << why;
}
