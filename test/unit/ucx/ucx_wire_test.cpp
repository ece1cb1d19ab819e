/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX plugin's wire formats (src/plugins/backend/ucx/ucx_wire.h) without an engine: the
// checksum, round trips, and which damage each check refuses.

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "nixl_trace_context.h"
#include "ucx_wire.h"

using namespace nixlUcx;

namespace {

/** A packed key as UCX 1.13 lays it out: md map, memory type, per domain size + bytes. */
std::string
packedKey(uint64_t md_map, uint8_t mem_type, const std::string &keys) {
    std::string k(reinterpret_cast<const char *>(&md_map), sizeof(md_map));
    k.push_back(static_cast<char>(mem_type));
    return k + keys;
}

connInfoWire
sampleConn() {
    connInfoWire ci;
    ci.nonce = 77;
    ci.bootId = "boot";
    ci.pidNs = 9;
    ci.pid = 1234;
    ci.startTime = 55;
    ci.regTable = 0x1000;
    ci.regSlots = 16;
    ci.addrs = {std::string("\x01\x00uvwxyz", 8), std::string("\x00\x05" "abc", 5)};
    ci.regTableName = "/nixl-ucx-0123456789abcdef0123456789abcdef";
    return ci;
}

publicDataWire
samplePd() {
    publicDataWire pd;
    pd.mem = 0;
    pd.owner = 0x1122334455667788ull;
    pd.base = 0x2000;
    pd.len = 4096;
    pd.slot = 3;
    pd.regId = 8;
    // Two domains: index 1 with a 2-byte key, index 4 with an empty one.
    pd.rkey = packedKey(0x12, 0, std::string("\x02xy\x00", 4));
    return pd;
}

TEST(ucxWire, Crc32cKnownAnswer) {
    // The standard check value of CRC-32C.
    EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
    EXPECT_EQ(crc32c("", 0), 0u);
    // Chaining equals one pass.
    EXPECT_EQ(crc32c("6789", 4, crc32c("12345", 5)), 0xe3069283u);
}

TEST(ucxWire, RoundTrips) {
    const connInfoWire ci = sampleConn();
    connInfoWire ci2;
    std::string why;
    ASSERT_TRUE(decodeConnInfo(encodeConnInfo(ci), ci2, why)) << why;
    EXPECT_EQ(ci2.nonce, ci.nonce);
    EXPECT_EQ(ci2.bootId, ci.bootId);
    EXPECT_EQ(ci2.pid, ci.pid);
    EXPECT_EQ(ci2.addrs, ci.addrs);
    EXPECT_EQ(ci2.regTableName, ci.regTableName);
    EXPECT_EQ(encodeConnInfo(ci2), encodeConnInfo(ci));

    const publicDataWire pd = samplePd();
    publicDataWire pd2;
    ASSERT_TRUE(decodePublicData(encodePublicData(pd), pd2, why)) << why;
    EXPECT_EQ(pd2.owner, pd.owner);
    EXPECT_EQ(pd2.base, pd.base);
    EXPECT_EQ(pd2.len, pd.len);
    EXPECT_EQ(pd2.rkey, pd.rkey);
}

TEST(ucxWire, EveryChangedByteIsRefused) {
    const std::string conn = encodeConnInfo(sampleConn());
    const std::string pub = encodePublicData(samplePd());
    for (const std::string *field : {&conn, &pub}) {
        for (size_t i = 0; i < field->size(); ++i) {
            for (uint8_t flip : {0x01, 0x80, 0xff}) {
                std::string bad = *field;
                bad[i] = static_cast<char>(bad[i] ^ flip);
                std::string why;
                connInfoWire ci;
                publicDataWire pd;
                const bool ok = field == &conn ? decodeConnInfo(bad, ci, why) :
                                                 decodePublicData(bad, pd, why);
                EXPECT_FALSE(ok) << "byte " << i << " ^ " << int(flip);
                EXPECT_FALSE(why.empty());
            }
        }
        // Cut short at every length.
        for (size_t n = 0; n < field->size(); ++n) {
            std::string why;
            connInfoWire ci;
            publicDataWire pd;
            EXPECT_FALSE(field == &conn ? decodeConnInfo(field->substr(0, n), ci, why) :
                                          decodePublicData(field->substr(0, n), pd, why));
        }
    }
}

TEST(ucxWire, NamesTheCause) {
    std::string why;
    connInfoWire ci;
    std::string conn = encodeConnInfo(sampleConn());
    conn[20] ^= 1;
    EXPECT_FALSE(decodeConnInfo(conn, ci, why));
    EXPECT_NE(why.find("checksum mismatch"), std::string::npos) << why;

    // A version-1 peer (no checksum) is told apart from damage.
    std::string v1 = encodeConnInfo(sampleConn());
    v1[4] = 1;
    EXPECT_FALSE(decodeConnInfo(v1, ci, why));
    EXPECT_NE(why.find("format version 1, expected 4"), std::string::npos) << why;
    // Version 3 (public data without the owner's nonce) names both versions too.
    std::string v3 = encodePublicData(samplePd());
    v3[4] = 3;
    publicDataWire pd3;
    EXPECT_FALSE(decodePublicData(v3, pd3, why));
    EXPECT_NE(why.find("format version 3, expected 4"), std::string::npos) << why;

    // A worker address whose version UCX would assert on, under a valid checksum.
    connInfoWire bad = sampleConn();
    bad.addrs[1][0] = 0x09;
    EXPECT_FALSE(decodeConnInfo(encodeConnInfo(bad), ci, why));
    EXPECT_NE(why.find("worker address 1: address version 9"), std::string::npos) << why;
}

TEST(ucxWire, WorkerAddress) {
    std::string why;
    EXPECT_TRUE(checkWorkerAddress(std::string("\x00\x01\x02", 3), why));
    EXPECT_TRUE(checkWorkerAddress(std::string("\xf1\x01\x02", 3), why)); // v2, flags above
    EXPECT_FALSE(checkWorkerAddress(std::string("\x02\x01\x02", 3), why));
    EXPECT_FALSE(checkWorkerAddress(std::string("\x01\x01", 2), why));
    EXPECT_FALSE(checkWorkerAddress("", why));
}

TEST(ucxWire, PackedRkeyWalk) {
    std::string why;
    rkeyLayout l;
    const std::string good = packedKey(0x12, 0, std::string("\x02xy\x00", 4));
    ASSERT_TRUE(parsePackedRkey(good, l, why)) << why;
    EXPECT_EQ(l.mdMap, 0x12u);
    EXPECT_EQ(l.sizes[1], 2);
    EXPECT_EQ(l.sizes[4], 0);
    EXPECT_EQ(l.packedLen, good.size());
    EXPECT_TRUE(checkPackedRkey(good, &l, why)) << why;
    // Distance bytes after the domain keys are allowed.
    EXPECT_TRUE(checkPackedRkey(good + std::string("\x01\x02\x03\x04", 4), &l, why));

    // A domain key longer than what is left.
    EXPECT_FALSE(checkPackedRkey(packedKey(0x12, 0, std::string("\x09xy\x00", 4)), &l, why));
    // A domain bit without its size byte.
    EXPECT_FALSE(checkPackedRkey(packedKey(0x13, 0, std::string("\x02xy\x00", 4)), &l, why));
    // Same domain, another size than this UCX packs.
    EXPECT_FALSE(checkPackedRkey(packedKey(0x12, 0, std::string("\x01x\x01y", 4)), &l, why));
    EXPECT_NE(why.find("memory domain 1"), std::string::npos) << why;
    // Another set of domains (a peer with other transports): walked, sizes not compared.
    EXPECT_TRUE(checkPackedRkey(packedKey(0x06, 0, std::string("\x01x\x01y", 4)), &l, why));
    // Another memory type.
    EXPECT_FALSE(checkPackedRkey(packedKey(0x12, 1, std::string("\x02xy\x00", 4)), &l, why));
    // Too short for the fixed part.
    EXPECT_FALSE(checkPackedRkey(std::string(8, '\0'), nullptr, why));
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Notification header: version 1 (no context) and version 2 (with the 26-byte trace context).

namespace {

const uint8_t *
sampleTrace() {
    static uint8_t t[NIXL_BE_TRACE_CTX_WIRE_SIZE];
    t[0] = 0;
    for (size_t i = 1; i < NIXL_BE_TRACE_CTX_WIRE_SIZE; ++i) {
        t[i] = static_cast<uint8_t>(i * 7 + 1);
    }
    t[25] = 0x01;
    return t;
}

} // namespace

TEST(ucxWire, NotifHeaderVersion1RoundTrip) {
    std::string h;
    encodeNotifHeader(h, "agentA", nullptr);
    // Without a context the header is version 1, byte for byte: magic then the name.
    ASSERT_EQ(h.size(), 4u + 6u);
    EXPECT_EQ(h.substr(0, 4), "NXUN");
    notifHeaderWire out;
    std::string why;
    ASSERT_TRUE(decodeNotifHeader(h, out, why)) << why;
    EXPECT_EQ(out.version, 1u);
    EXPECT_EQ(out.sender, "agentA");
    EXPECT_FALSE(out.traceSent);
    EXPECT_FALSE(out.traceOk);
    EXPECT_TRUE(out.traceWhy.empty());
}

TEST(ucxWire, NotifHeaderVersion2CarriesTheContext) {
    std::string h;
    encodeNotifHeader(h, "agentA", sampleTrace());
    EXPECT_EQ(h.size(), notif_v2_fixed + 6u + 1u + NIXL_BE_TRACE_CTX_WIRE_SIZE);
    EXPECT_EQ(h.substr(0, 4), "NXUT");
    notifHeaderWire out;
    std::string why;
    ASSERT_TRUE(decodeNotifHeader(h, out, why)) << why;
    EXPECT_EQ(out.version, 2u);
    EXPECT_EQ(out.sender, "agentA");
    EXPECT_TRUE(out.traceSent);
    ASSERT_TRUE(out.traceOk) << out.traceWhy;
    EXPECT_EQ(0, std::memcmp(out.trace.trace_id, sampleTrace() + 1, 16));
    EXPECT_EQ(0, std::memcmp(out.trace.span_id, sampleTrace() + 17, 8));
    EXPECT_EQ(out.trace.flags, 0x01);
    EXPECT_EQ(out.trace.correlation_id, 0u);
}

// The cost estimate counts the header through notifHeaderSize: it must be what is sent.
TEST(ucxWire, NotifHeaderSizeIsWhatEncodeWrites) {
    for (const std::string &sender : {std::string(), std::string("A"), std::string("agentA"),
                                     std::string(300, 'n')}) {
        for (const bool trace : {false, true}) {
            std::string h = "x"; // appended to, not replaced
            encodeNotifHeader(h, sender, trace ? sampleTrace() : nullptr);
            EXPECT_EQ(h.size() - 1, notifHeaderSize(sender.size(), trace))
                << sender.size() << (trace ? " with trace" : " without");
        }
    }
    EXPECT_EQ(notifHeaderSize(6, true) - notifHeaderSize(6, false), 31u);
}

TEST(ucxWire, NotifHeaderLaterVersionIsReadAsVersion2) {
    std::string h;
    encodeNotifHeader(h, "A", sampleTrace());
    h[4] = 3; // a later version keeps the prefix and may append
    h += "future";
    notifHeaderWire out;
    std::string why;
    ASSERT_TRUE(decodeNotifHeader(h, out, why)) << why;
    EXPECT_EQ(out.version, 3u);
    EXPECT_EQ(out.sender, "A");
    EXPECT_TRUE(out.traceOk) << out.traceWhy;
}

TEST(ucxWire, NotifHeaderEveryTruncationOfTheContextKeepsTheSender) {
    std::string full;
    encodeNotifHeader(full, "agentA", sampleTrace());
    const size_t ctx_at = notif_v2_fixed + 6; // the context's length byte
    for (size_t n = ctx_at; n < full.size(); ++n) {
        notifHeaderWire out;
        std::string why;
        ASSERT_TRUE(decodeNotifHeader(std::string_view(full).substr(0, n), out, why))
            << n << ": " << why;
        EXPECT_EQ(out.sender, "agentA") << n;
        EXPECT_TRUE(out.traceSent) << n;
        EXPECT_FALSE(out.traceOk) << n;
        EXPECT_FALSE(out.traceWhy.empty()) << n;
        EXPECT_FALSE(nixl_trace_ctx_is_valid(&out.trace)) << n;
    }
}

TEST(ucxWire, NotifHeaderMalformedContexts) {
    struct damage {
        const char *what;
        size_t at;
        uint8_t value;
        const char *reason;
    };
    const size_t rec = notif_v2_fixed + 1 + 1; // sender "A", then the length byte
    for (const damage &d : {damage{"version 0xff", rec, 0xff, "bad version"},
                            damage{"zero trace id", 0, 0, "all-zero id"},
                            damage{"length 25", rec - 1, 25, "bad length"},
                            damage{"length 0", rec - 1, 0, "bad length"}}) {
        std::string h;
        encodeNotifHeader(h, "A", sampleTrace());
        if (d.at == 0) {
            std::memset(h.data() + rec + 1, 0, 16);
        } else {
            h[d.at] = static_cast<char>(d.value);
        }
        if (std::string(d.what) == "length 25") {
            h.pop_back(); // a record of 25 bytes, announced as 25: the SDK refuses it
        }
        notifHeaderWire out;
        std::string why;
        ASSERT_TRUE(decodeNotifHeader(h, out, why)) << d.what << ": " << why;
        EXPECT_EQ(out.sender, "A") << d.what;
        EXPECT_FALSE(out.traceOk) << d.what;
        EXPECT_NE(out.traceWhy.find(d.reason), std::string::npos)
            << d.what << ": " << out.traceWhy;
    }
    // Announced (flag set) but nothing follows the name.
    std::string h;
    encodeNotifHeader(h, "A", sampleTrace());
    h.resize(notif_v2_fixed + 1);
    notifHeaderWire out;
    std::string why;
    ASSERT_TRUE(decodeNotifHeader(h, out, why)) << why;
    EXPECT_EQ(out.traceWhy, "trace context announced but missing");
}

TEST(ucxWire, NotifHeaderRefusedWhenTheSenderCannotBeTold) {
    std::string h;
    encodeNotifHeader(h, "agentA", sampleTrace());
    notifHeaderWire out;
    std::string why;
    EXPECT_FALSE(decodeNotifHeader("NXU", out, why));
    EXPECT_NE(why.find("too short"), std::string::npos) << why;
    EXPECT_FALSE(decodeNotifHeader(std::string_view(h).substr(0, 7), out, why));
    EXPECT_NE(why.find("fixed part"), std::string::npos) << why;
    EXPECT_FALSE(decodeNotifHeader(std::string_view(h).substr(0, notif_v2_fixed + 3), out, why));
    EXPECT_NE(why.find("runs past"), std::string::npos) << why;
    std::string old = h;
    old[4] = 1;
    EXPECT_FALSE(decodeNotifHeader(old, out, why));
    EXPECT_NE(why.find("version 1"), std::string::npos) << why;
    EXPECT_FALSE(decodeNotifHeader(std::string("ABCDxyz"), out, why));
    EXPECT_NE(why.find("foreign"), std::string::npos) << why;
}
