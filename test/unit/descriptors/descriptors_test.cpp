/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/nixl_log.h"
#include "nixl_descriptors.h"
#include "nixl_types.h"
#include "utils/serdes/serdes.h"

namespace {

constexpr uintptr_t kMax = std::numeric_limits<uintptr_t>::max();

// Number of ERROR lines in captured stderr.
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

// Serialises list, then rebuilds it from a fresh serdes that imported the exported bytes, the
// way a remote agent would.
template<class T>
nixlDescList<T>
roundTrip(const nixlDescList<T> &list) {
    nixlSerDes out;
    EXPECT_EQ(list.serialize(&out), NIXL_SUCCESS);
    nixlSerDes in;
    EXPECT_EQ(in.importStr(out.exportStr()), NIXL_SUCCESS);
    return nixlDescList<T>(&in);
}

// Writes a list header by hand so tests can corrupt any single piece of it.
void
addHeader(nixlSerDes &sd, const std::string &kind, int32_t type, uint64_t count) {
    ASSERT_EQ(sd.addStr("nixlDList", kind), NIXL_SUCCESS);
    ASSERT_EQ(sd.addBuf("t", &type, sizeof(type)), NIXL_SUCCESS);
    ASSERT_EQ(sd.addBuf("n", &count, sizeof(count)), NIXL_SUCCESS);
}

// Deserialises from sd and checks the failure contract: empty list and one ERROR line.
template<class T>
void
expectRejected(nixlSerDes &sd) {
    testing::internal::CaptureStderr();
    nixlDescList<T> list(&sd);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(list.isEmpty());
    EXPECT_EQ(list.descCount(), 0);
    EXPECT_EQ(countErrorLines(err), 1) << err;
}

} // namespace

/* nixlBasicDesc */

TEST(BasicDesc, OrderingIsDevIdThenAddrThenLen) {
    const nixlBasicDesc a(100, 10, 0);
    EXPECT_TRUE(nixlBasicDesc(500, 1, 0) < nixlBasicDesc(1, 1, 1)); // devId wins over addr
    EXPECT_TRUE(nixlBasicDesc(1, 500, 1) < nixlBasicDesc(2, 1, 1)); // addr wins over len
    EXPECT_TRUE(nixlBasicDesc(1, 1, 1) < nixlBasicDesc(1, 2, 1));
    EXPECT_FALSE(nixlBasicDesc(1, 2, 1) < nixlBasicDesc(1, 1, 1));
    EXPECT_FALSE(a < a);
}

TEST(BasicDesc, EqualityComparesAllThreeFields) {
    const nixlBasicDesc a(0x1000, 64, 3);
    EXPECT_TRUE(a == nixlBasicDesc(0x1000, 64, 3));
    EXPECT_FALSE(a != nixlBasicDesc(0x1000, 64, 3));
    EXPECT_TRUE(a != nixlBasicDesc(0x1001, 64, 3));
    EXPECT_TRUE(a != nixlBasicDesc(0x1000, 65, 3));
    EXPECT_TRUE(a != nixlBasicDesc(0x1000, 64, 4));
    EXPECT_FALSE(a == nixlBasicDesc(0x1000, 64, 4));
}

TEST(BasicDesc, CoversInsideExactAndOutside) {
    const nixlBasicDesc d(1000, 100, 1);
    EXPECT_TRUE(d.covers(nixlBasicDesc(1000, 100, 1)));
    EXPECT_TRUE(d.covers(nixlBasicDesc(1010, 20, 1)));
    EXPECT_TRUE(d.covers(nixlBasicDesc(1099, 1, 1)));
    EXPECT_FALSE(d.covers(nixlBasicDesc(999, 10, 1)));   // starts before
    EXPECT_FALSE(d.covers(nixlBasicDesc(1050, 51, 1)));  // ends one byte past
    EXPECT_FALSE(d.covers(nixlBasicDesc(1000, 101, 1))); // longer
    EXPECT_FALSE(d.covers(nixlBasicDesc(1010, 20, 2)));  // other device
}

TEST(BasicDesc, CoversZeroLength) {
    const nixlBasicDesc d(1000, 100, 1);
    EXPECT_TRUE(d.covers(nixlBasicDesc(1000, 0, 1)));
    EXPECT_TRUE(d.covers(nixlBasicDesc(1100, 0, 1))); // empty range at the end is inside
    EXPECT_FALSE(d.covers(nixlBasicDesc(1101, 0, 1)));
    EXPECT_FALSE(d.covers(nixlBasicDesc(999, 0, 1)));
    EXPECT_TRUE(nixlBasicDesc(5, 0, 0).covers(nixlBasicDesc(5, 0, 0)));
    EXPECT_FALSE(nixlBasicDesc(5, 0, 0).covers(nixlBasicDesc(5, 1, 0)));
}

TEST(BasicDesc, CoversNearAddressSpaceEnd) {
    const nixlBasicDesc top(kMax - 15, 16, 0); // last 16 bytes of the address space
    EXPECT_TRUE(top.covers(nixlBasicDesc(kMax, 1, 0)));
    EXPECT_TRUE(top.covers(nixlBasicDesc(kMax - 15, 16, 0)));
    // query.addr + query.len wraps to a small number; a naive sum check would accept it.
    EXPECT_FALSE(top.covers(nixlBasicDesc(kMax - 1, 3, 0)));
    EXPECT_FALSE(top.covers(nixlBasicDesc(kMax, kMax, 0)));
    // A range whose own end wraps must not cover low addresses.
    const nixlBasicDesc wrapping(kMax - 1, 16, 0);
    EXPECT_FALSE(wrapping.covers(nixlBasicDesc(1, 1, 0)));
}

TEST(BasicDesc, TouchingRangesDoNotOverlap) {
    const nixlBasicDesc a(1000, 100, 0);
    const nixlBasicDesc right(1100, 50, 0);
    const nixlBasicDesc left(900, 100, 0);
    EXPECT_FALSE(a.overlaps(right));
    EXPECT_FALSE(right.overlaps(a));
    EXPECT_FALSE(a.overlaps(left));
    EXPECT_FALSE(left.overlaps(a));
}

TEST(BasicDesc, OverlapsSharedBytes) {
    const nixlBasicDesc a(1000, 100, 0);
    EXPECT_TRUE(a.overlaps(nixlBasicDesc(1099, 50, 0)));
    EXPECT_TRUE(nixlBasicDesc(1099, 50, 0).overlaps(a));
    EXPECT_TRUE(a.overlaps(nixlBasicDesc(901, 100, 0)));
    EXPECT_TRUE(a.overlaps(nixlBasicDesc(1040, 1, 0)));   // contained
    EXPECT_TRUE(nixlBasicDesc(1040, 1, 0).overlaps(a));   // containing
    EXPECT_TRUE(a.overlaps(a));
    EXPECT_FALSE(a.overlaps(nixlBasicDesc(1040, 1, 1))); // other device
}

// NIXL 1.4 (src/infra/nixl_descriptors.cpp): two descriptors of one device overlap unless one
// ends at or before the other starts. A zero-length descriptor is then a point: it overlaps a
// range it lies strictly inside, and nothing at the range's start or end, and never another
// zero-length descriptor.
TEST(BasicDesc, ZeroLengthStrictlyInsideOverlaps) {
    const nixlBasicDesc a(1000, 100, 0);
    const nixlBasicDesc inside(1050, 0, 0);
    EXPECT_TRUE(a.overlaps(inside));
    EXPECT_TRUE(inside.overlaps(a));
    EXPECT_TRUE(a.overlaps(nixlBasicDesc(1001, 0, 0)));
    EXPECT_TRUE(a.overlaps(nixlBasicDesc(1099, 0, 0))); // last byte's address
    EXPECT_TRUE(nixlBasicDesc(1099, 0, 0).overlaps(a));
    EXPECT_FALSE(a.overlaps(nixlBasicDesc(1050, 0, 1))); // other device
    EXPECT_FALSE(nixlBasicDesc(1050, 0, 1).overlaps(a));
}

TEST(BasicDesc, ZeroLengthAtStartOrEndDoesNotOverlap) {
    const nixlBasicDesc a(1000, 100, 0);
    const nixlBasicDesc at_start(1000, 0, 0);
    const nixlBasicDesc at_end(1100, 0, 0);
    EXPECT_FALSE(a.overlaps(at_start));
    EXPECT_FALSE(at_start.overlaps(a));
    EXPECT_FALSE(a.overlaps(at_end));
    EXPECT_FALSE(at_end.overlaps(a));
    EXPECT_FALSE(a.overlaps(nixlBasicDesc(999, 0, 0)));
    EXPECT_FALSE(a.overlaps(nixlBasicDesc(1101, 0, 0)));
}

TEST(BasicDesc, TwoZeroLengthDescriptorsNeverOverlap) {
    const nixlBasicDesc z(1050, 0, 0);
    EXPECT_FALSE(z.overlaps(z));
    EXPECT_FALSE(z.overlaps(nixlBasicDesc(1050, 0, 0)));
    EXPECT_FALSE(z.overlaps(nixlBasicDesc(1051, 0, 0)));
    EXPECT_FALSE(nixlBasicDesc(0, 0, 0).overlaps(nixlBasicDesc(0, 0, 0)));
}

TEST(BasicDesc, ZeroLengthNearAddressSpaceEnd) {
    const nixlBasicDesc top(kMax - 9, 10, 0); // its end (addr + len) wraps to 0
    EXPECT_TRUE(top.overlaps(nixlBasicDesc(kMax, 0, 0)));
    EXPECT_TRUE(nixlBasicDesc(kMax, 0, 0).overlaps(top));
    EXPECT_FALSE(top.overlaps(nixlBasicDesc(kMax - 9, 0, 0)));
    EXPECT_FALSE(top.overlaps(nixlBasicDesc(0, 0, 0)));
    EXPECT_FALSE(nixlBasicDesc(0, 0, 0).overlaps(top));
}

TEST(BasicDesc, OverlapsNearAddressSpaceEnd) {
    const nixlBasicDesc top(kMax - 9, 10, 0);
    EXPECT_TRUE(top.overlaps(nixlBasicDesc(kMax, 1, 0)));
    EXPECT_TRUE(nixlBasicDesc(kMax, 1, 0).overlaps(top));
    EXPECT_TRUE(top.overlaps(nixlBasicDesc(kMax - 20, 12, 0)));
    EXPECT_FALSE(top.overlaps(nixlBasicDesc(kMax - 20, 11, 0))); // touches
    // Low ranges stay apart even though top's end (addr + len) wraps to 0.
    EXPECT_FALSE(top.overlaps(nixlBasicDesc(0, 10, 0)));
    EXPECT_FALSE(nixlBasicDesc(0, 10, 0).overlaps(top));
}

TEST(BasicDesc, SerializeIs24RawBytesAndRoundTrips) {
    const nixlBasicDesc d(0x1122334455667788ULL, 0x99, 7);
    const nixl_blob_t blob = d.serialize();
    ASSERT_EQ(blob.size(), 24u);
    uintptr_t addr;
    size_t len;
    uint64_t dev;
    std::memcpy(&addr, blob.data(), 8);
    std::memcpy(&len, blob.data() + 8, 8);
    std::memcpy(&dev, blob.data() + 16, 8);
    EXPECT_EQ(addr, d.addr);
    EXPECT_EQ(len, d.len);
    EXPECT_EQ(dev, d.devId);
    EXPECT_EQ(nixlBasicDesc(blob), d);
}

TEST(BasicDesc, WrongSizeBlobGivesZeros) {
    const nixl_blob_t good = nixlBasicDesc(1, 2, 3).serialize();
    for (const nixl_blob_t &bad : {good.substr(0, 23), good + "x", nixl_blob_t()}) {
        const nixlBasicDesc d(bad);
        EXPECT_EQ(d.addr, 0u) << bad.size();
        EXPECT_EQ(d.len, 0u) << bad.size();
        EXPECT_EQ(d.devId, 0u) << bad.size();
    }
}

TEST(BasicDesc, PrintLogsOneInfoLineWithSuffix) {
    const auto saved = nixl::log::getLevel();
    nixl::log::setLevel(nixl::log::level::INFO);
    testing::internal::CaptureStderr();
    nixlBasicDesc(0x40, 12, 5).print(" my-suffix");
    const std::string err = testing::internal::GetCapturedStderr();
    nixl::log::setLevel(saved);
    EXPECT_EQ(err.rfind("[nixl I", 0), 0u) << err;
    EXPECT_NE(err.find("0x40"), std::string::npos) << err;
    EXPECT_NE(err.find("my-suffix"), std::string::npos) << err;
}

/* nixlBlobDesc and nixlRemoteDesc */

TEST(BlobDesc, SerializeRoundTripKeepsBinaryMeta) {
    const std::string meta("a\0b\xff", 4);
    const nixlBlobDesc d(0xabc, 32, 2, meta);
    const nixl_blob_t blob = d.serialize();
    ASSERT_EQ(blob.size(), 24u + meta.size());
    EXPECT_EQ(blob.substr(0, 24), nixlBasicDesc(0xabc, 32, 2).serialize());
    const nixlBlobDesc back(blob);
    EXPECT_EQ(back, d);
    EXPECT_EQ(back.metaInfo, meta);
}

TEST(BlobDesc, ShortOrExactBlob) {
    const nixlBlobDesc exact(nixlBasicDesc(5, 6, 7).serialize());
    EXPECT_EQ(static_cast<const nixlBasicDesc &>(exact), nixlBasicDesc(5, 6, 7));
    EXPECT_TRUE(exact.metaInfo.empty());

    const nixlBlobDesc shorter(std::string(10, 'x'));
    EXPECT_EQ(static_cast<const nixlBasicDesc &>(shorter), nixlBasicDesc(0, 0, 0));
    EXPECT_TRUE(shorter.metaInfo.empty());
}

TEST(BlobDesc, EqualityIncludesMetaInfo) {
    const nixlBlobDesc a(1, 2, 3, "m");
    EXPECT_TRUE(a == nixlBlobDesc(1, 2, 3, "m"));
    EXPECT_FALSE(a == nixlBlobDesc(1, 2, 3, "n"));
    EXPECT_TRUE(a == nixlBlobDesc(nixlBasicDesc(1, 2, 3), "m"));
}

TEST(RemoteDesc, SerializeRoundTripAndEquality) {
    const nixlRemoteDesc d(0x77, 8, 1, "agent-B");
    const nixlRemoteDesc back(d.serialize());
    EXPECT_EQ(back, d);
    EXPECT_EQ(back.remoteAgent, "agent-B");
    EXPECT_FALSE(d == nixlRemoteDesc(0x77, 8, 1, "agent-C"));
    EXPECT_FALSE(d == nixlRemoteDesc(0x78, 8, 1, "agent-B"));
    EXPECT_TRUE(d == nixlRemoteDesc(nixlBasicDesc(0x77, 8, 1), "agent-B"));
    const nixlRemoteDesc shorter(std::string(3, 'x'));
    EXPECT_EQ(static_cast<const nixlBasicDesc &>(shorter), nixlBasicDesc(0, 0, 0));
    EXPECT_TRUE(shorter.remoteAgent.empty());
}

/* nixlDescList */

TEST(DescList, ConstructionAndAccess) {
    nixl_xfer_dlist_t empty(VRAM_SEG);
    EXPECT_EQ(empty.getType(), VRAM_SEG);
    EXPECT_TRUE(empty.isEmpty());
    EXPECT_EQ(empty.descCount(), 0);

    nixl_xfer_dlist_t sized(DRAM_SEG, 3);
    EXPECT_EQ(sized.descCount(), 3);
    EXPECT_FALSE(sized.isEmpty());

    nixl_xfer_dlist_t negative(DRAM_SEG, -2);
    EXPECT_EQ(negative.descCount(), 0);
}

TEST(DescList, AddEmplaceIndexAndIterate) {
    nixl_reg_dlist_t list(DRAM_SEG);
    list.addDesc(nixlBlobDesc(0x1000, 16, 0, "first"));
    nixlBlobDesc &e = list.emplace(0x2000, 32, 1, "second");
    EXPECT_EQ(e.metaInfo, "second");
    e.metaInfo = "changed"; // emplace hands back the stored element
    ASSERT_EQ(list.descCount(), 2);
    EXPECT_EQ(list[0].addr, 0x1000u);
    EXPECT_EQ(list[1].metaInfo, "changed");
    list[0].len = 17;
    EXPECT_EQ(list[0].len, 17u);

    size_t total = 0;
    for (const auto &d : list) {
        total += d.len;
    }
    EXPECT_EQ(total, 49u);
    const nixl_reg_dlist_t &clist = list;
    EXPECT_EQ(clist.end() - clist.begin(), 2);
}

TEST(DescList, RemDescRemovesAndThrowsOutOfRange) {
    nixl_xfer_dlist_t list(DRAM_SEG);
    for (uintptr_t i = 0; i < 4; ++i) {
        list.addDesc(nixlBasicDesc(i * 100, 10, 0));
    }
    list.remDesc(1);
    ASSERT_EQ(list.descCount(), 3);
    EXPECT_EQ(list[0].addr, 0u);
    EXPECT_EQ(list[1].addr, 200u);
    EXPECT_EQ(list[2].addr, 300u);
    EXPECT_THROW(list.remDesc(3), std::out_of_range);
    EXPECT_THROW(list.remDesc(-1), std::out_of_range);
    EXPECT_EQ(list.descCount(), 3);
    nixl_xfer_dlist_t empty(DRAM_SEG);
    EXPECT_THROW(empty.remDesc(0), std::out_of_range);
}

TEST(DescList, GetIndexMatchesBasicFieldsExactly) {
    nixl_reg_dlist_t list(DRAM_SEG);
    list.addDesc(nixlBlobDesc(0x1000, 16, 0, "a"));
    list.addDesc(nixlBlobDesc(0x2000, 16, 0, "b"));
    list.addDesc(nixlBlobDesc(0x2000, 16, 1, "c"));
    EXPECT_EQ(list.getIndex(nixlBasicDesc(0x2000, 16, 0)), 1);
    EXPECT_EQ(list.getIndex(nixlBasicDesc(0x2000, 16, 1)), 2);
    // Covered but not equal is not a match.
    EXPECT_EQ(list.getIndex(nixlBasicDesc(0x1000, 8, 0)), NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(list.getIndex(nixlBasicDesc(0x3000, 16, 0)), -4);
    EXPECT_EQ(nixl_xfer_dlist_t(DRAM_SEG).getIndex(nixlBasicDesc(0, 0, 0)), -4);
}

TEST(DescList, TrimKeepsTypeAndBasicFields) {
    nixl_reg_dlist_t list(OBJ_SEG);
    list.addDesc(nixlBlobDesc(1, 2, 3, "x"));
    list.addDesc(nixlBlobDesc(4, 5, 6, "y"));
    const nixl_xfer_dlist_t trimmed = list.trim();
    EXPECT_EQ(trimmed.getType(), OBJ_SEG);
    ASSERT_EQ(trimmed.descCount(), 2);
    EXPECT_EQ(trimmed[0], nixlBasicDesc(1, 2, 3));
    EXPECT_EQ(trimmed[1], nixlBasicDesc(4, 5, 6));

    nixl_xfer_dlist_t basic(FILE_SEG);
    basic.addDesc(nixlBasicDesc(9, 9, 9));
    EXPECT_TRUE(basic.trim() == basic);
}

TEST(DescList, EqualityTypeCountAndBasicFieldsOnly) {
    nixl_reg_dlist_t a(DRAM_SEG);
    nixl_reg_dlist_t b(DRAM_SEG);
    a.addDesc(nixlBlobDesc(1, 2, 3, "meta-a"));
    b.addDesc(nixlBlobDesc(1, 2, 3, "meta-b"));
    EXPECT_TRUE(a == b); // metaInfo is not compared for lists

    nixl_reg_dlist_t other_type(VRAM_SEG);
    other_type.addDesc(nixlBlobDesc(1, 2, 3, "meta-a"));
    EXPECT_FALSE(a == other_type);

    b.addDesc(nixlBlobDesc(4, 5, 6, ""));
    EXPECT_FALSE(a == b);
    a.addDesc(nixlBlobDesc(4, 5, 7, ""));
    EXPECT_FALSE(a == b);

    EXPECT_TRUE(nixl_xfer_dlist_t(DRAM_SEG) == nixl_xfer_dlist_t(DRAM_SEG));
    EXPECT_FALSE(nixl_xfer_dlist_t(DRAM_SEG) == nixl_xfer_dlist_t(BLK_SEG));
}

TEST(DescList, ResizeReserveClearCopy) {
    nixl_xfer_dlist_t list(DRAM_SEG);
    list.reserve(10);
    EXPECT_TRUE(list.isEmpty());
    list.resize(2);
    EXPECT_EQ(list.descCount(), 2);
    list[0] = nixlBasicDesc(1, 1, 1);
    list[1] = nixlBasicDesc(2, 2, 2);
    nixl_xfer_dlist_t copy = list;
    list.clear();
    EXPECT_TRUE(list.isEmpty());
    EXPECT_EQ(list.getType(), DRAM_SEG);
    ASSERT_EQ(copy.descCount(), 2);
    EXPECT_EQ(copy[1], nixlBasicDesc(2, 2, 2));
}

TEST(DescList, ToStringAndPrint) {
    nixl_remote_dlist_t list(VRAM_SEG);
    list.addDesc(nixlRemoteDesc(0x10, 4, 1, "peer"));
    list.addDesc(nixlRemoteDesc(0x20, 8, 1, "peer2"));
    const std::string full = list.to_string();
    const std::string compact = list.to_string(true);
    for (const std::string &s : {full, compact}) {
        EXPECT_NE(s.find("VRAM_SEG"), std::string::npos) << s;
        EXPECT_NE(s.find("0x20"), std::string::npos) << s;
        EXPECT_NE(s.find("peer2"), std::string::npos) << s;
    }
    EXPECT_EQ(compact.find('\n'), std::string::npos);
    EXPECT_NE(full.find('\n'), std::string::npos);

    testing::internal::CaptureStdout();
    list.print();
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(out, full + "\n");
}

/* List serialisation */

TEST(DescListSerdes, BasicListRoundTrip) {
    nixl_xfer_dlist_t list(FILE_SEG);
    for (uint64_t i = 0; i < 5; ++i) {
        list.addDesc(nixlBasicDesc(0x1000 * (i + 1), 64 + i, i));
    }
    list.addDesc(nixlBasicDesc(kMax, std::numeric_limits<size_t>::max(), UINT64_MAX));
    const nixl_xfer_dlist_t back = roundTrip(list);
    EXPECT_EQ(back.getType(), FILE_SEG);
    EXPECT_TRUE(back == list);
    EXPECT_EQ(back[5].devId, UINT64_MAX);
}

TEST(DescListSerdes, BasicWireLayout) {
    nixl_xfer_dlist_t list(BLK_SEG);
    list.addDesc(nixlBasicDesc(1, 2, 3));
    list.addDesc(nixlBasicDesc(4, 5, 6));
    nixlSerDes sd;
    ASSERT_EQ(list.serialize(&sd), NIXL_SUCCESS);
    EXPECT_EQ(sd.getStr("nixlDList"), "nixlBDList");
    ASSERT_EQ(sd.getBufLen("t"), 4);
    int32_t type = -1;
    ASSERT_EQ(sd.getBuf("t", &type, 4), NIXL_SUCCESS);
    EXPECT_EQ(type, BLK_SEG);
    ASSERT_EQ(sd.getBufLen("n"), 8);
    uint64_t count = 0;
    ASSERT_EQ(sd.getBuf("n", &count, 8), NIXL_SUCCESS);
    EXPECT_EQ(count, 2u);
    EXPECT_EQ(sd.getStr(""), list[0].serialize() + list[1].serialize());
    EXPECT_EQ(sd.getBufLen(""), -1); // nothing after the list
}

TEST(DescListSerdes, BlobListWireLayoutAndRoundTrip) {
    nixl_reg_dlist_t list(OBJ_SEG);
    list.addDesc(nixlBlobDesc(1, 2, 3, std::string("k\0ey", 4)));
    list.addDesc(nixlBlobDesc(4, 5, 6, ""));
    list.addDesc(nixlBlobDesc(7, 8, 9, std::string(1000, 'z')));

    nixlSerDes sd;
    ASSERT_EQ(list.serialize(&sd), NIXL_SUCCESS);
    EXPECT_EQ(sd.getStr("nixlDList"), "nixlSDList");
    int32_t type = -1;
    ASSERT_EQ(sd.getBuf("t", &type, 4), NIXL_SUCCESS);
    uint64_t count = 0;
    ASSERT_EQ(sd.getBuf("n", &count, 8), NIXL_SUCCESS);
    EXPECT_EQ(count, 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(sd.getStr(""), list[i].serialize()) << i;
    }

    const nixl_reg_dlist_t back = roundTrip(list);
    EXPECT_EQ(back.getType(), OBJ_SEG);
    ASSERT_EQ(back.descCount(), 3);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(back[i], list[i]) << i; // includes metaInfo
    }
}

TEST(DescListSerdes, RemoteListRoundTrip) {
    nixl_remote_dlist_t list(VRAM_SEG);
    list.addDesc(nixlRemoteDesc(0x10, 4, 1, "peer"));
    list.addDesc(nixlRemoteDesc(0x20, 8, 2, nixl_null_agent));
    const nixl_remote_dlist_t back = roundTrip(list);
    ASSERT_EQ(back.descCount(), 2);
    EXPECT_EQ(back[0], list[0]);
    EXPECT_EQ(back[1], list[1]);
}

TEST(DescListSerdes, EmptyListsRoundTrip) {
    const nixl_xfer_dlist_t basic = roundTrip(nixl_xfer_dlist_t(VRAM_SEG));
    EXPECT_TRUE(basic.isEmpty());
    EXPECT_EQ(basic.getType(), VRAM_SEG);
    const nixl_reg_dlist_t blob = roundTrip(nixl_reg_dlist_t(FILE_SEG));
    EXPECT_TRUE(blob.isEmpty());
    EXPECT_EQ(blob.getType(), FILE_SEG);
}

TEST(DescListSerdes, TwoListsInOneStream) {
    nixl_xfer_dlist_t a(DRAM_SEG);
    a.addDesc(nixlBasicDesc(1, 1, 1));
    nixl_reg_dlist_t b(VRAM_SEG);
    b.addDesc(nixlBlobDesc(2, 2, 2, "two"));
    nixlSerDes sd;
    ASSERT_EQ(a.serialize(&sd), NIXL_SUCCESS);
    ASSERT_EQ(b.serialize(&sd), NIXL_SUCCESS);
    ASSERT_EQ(sd.addStr("after", "tail"), NIXL_SUCCESS);
    nixlSerDes in;
    ASSERT_EQ(in.importStr(sd.exportStr()), NIXL_SUCCESS);
    EXPECT_TRUE(nixl_xfer_dlist_t(&in) == a);
    const nixl_reg_dlist_t b2(&in);
    ASSERT_EQ(b2.descCount(), 1);
    EXPECT_EQ(b2[0], b[0]);
    EXPECT_EQ(in.getStr("after"), "tail");
}

TEST(DescListSerdes, NullSerializerIsAnError) {
    EXPECT_EQ(nixl_xfer_dlist_t(DRAM_SEG).serialize(nullptr), NIXL_ERR_INVALID_PARAM);
    testing::internal::CaptureStderr();
    const nixl_xfer_dlist_t list(static_cast<nixlSerDes *>(nullptr));
    EXPECT_EQ(countErrorLines(testing::internal::GetCapturedStderr()), 1);
    EXPECT_TRUE(list.isEmpty());
}

TEST(DescListSerdes, WrongListKindIsRejected) {
    nixl_reg_dlist_t blob(DRAM_SEG);
    blob.addDesc(nixlBlobDesc(1, 2, 3, ""));
    nixlSerDes sd;
    ASSERT_EQ(blob.serialize(&sd), NIXL_SUCCESS);
    expectRejected<nixlBasicDesc>(sd);

    nixl_xfer_dlist_t basic(DRAM_SEG);
    basic.addDesc(nixlBasicDesc(1, 2, 3));
    nixlSerDes sd2;
    ASSERT_EQ(basic.serialize(&sd2), NIXL_SUCCESS);
    expectRejected<nixlBlobDesc>(sd2);
}

TEST(DescListSerdes, MissingOrMistaggedHeaderIsRejected) {
    nixlSerDes empty;
    expectRejected<nixlBasicDesc>(empty);

    nixlSerDes wrong_tag;
    ASSERT_EQ(wrong_tag.addStr("nixlList", "nixlBDList"), NIXL_SUCCESS);
    expectRejected<nixlBasicDesc>(wrong_tag);
}

TEST(DescListSerdes, TypeOutOfRangeIsRejected) {
    for (int32_t bad : {-1, static_cast<int32_t>(FILE_SEG) + 1, INT32_MAX}) {
        nixlSerDes sd;
        addHeader(sd, "nixlBDList", bad, 1);
        ASSERT_EQ(sd.addStr("", nixlBasicDesc(1, 2, 3).serialize()), NIXL_SUCCESS);
        expectRejected<nixlBasicDesc>(sd);
    }
}

TEST(DescListSerdes, WrongSizedTypeOrCountIsRejected) {
    nixlSerDes short_type;
    ASSERT_EQ(short_type.addStr("nixlDList", "nixlBDList"), NIXL_SUCCESS);
    const int16_t t16 = 0;
    ASSERT_EQ(short_type.addBuf("t", &t16, sizeof(t16)), NIXL_SUCCESS);
    expectRejected<nixlBasicDesc>(short_type);

    nixlSerDes short_count;
    ASSERT_EQ(short_count.addStr("nixlDList", "nixlSDList"), NIXL_SUCCESS);
    const int32_t t = 0;
    ASSERT_EQ(short_count.addBuf("t", &t, sizeof(t)), NIXL_SUCCESS);
    const uint32_t n32 = 0;
    ASSERT_EQ(short_count.addBuf("n", &n32, sizeof(n32)), NIXL_SUCCESS);
    expectRejected<nixlBlobDesc>(short_count);
}

TEST(DescListSerdes, BasicCountDisagreeingWithDataIsRejected) {
    const std::string two = nixlBasicDesc(1, 2, 3).serialize() + nixlBasicDesc(4, 5, 6).serialize();
    // Count too big, too small, absurd; data not a multiple of 24; data missing.
    for (uint64_t n : {uint64_t{3}, uint64_t{1}, UINT64_MAX, UINT64_MAX / 24 + 3}) {
        nixlSerDes sd;
        addHeader(sd, "nixlBDList", DRAM_SEG, n);
        ASSERT_EQ(sd.addStr("", two), NIXL_SUCCESS);
        expectRejected<nixlBasicDesc>(sd);
    }
    nixlSerDes odd;
    addHeader(odd, "nixlBDList", DRAM_SEG, 1);
    ASSERT_EQ(odd.addStr("", two.substr(0, 25)), NIXL_SUCCESS);
    expectRejected<nixlBasicDesc>(odd);

    nixlSerDes no_data;
    addHeader(no_data, "nixlBDList", DRAM_SEG, 0);
    expectRejected<nixlBasicDesc>(no_data);
}

TEST(DescListSerdes, BlobCountBeyondElementsIsRejected) {
    for (uint64_t n : {uint64_t{3}, UINT64_MAX}) {
        nixlSerDes sd;
        addHeader(sd, "nixlSDList", VRAM_SEG, n);
        ASSERT_EQ(sd.addStr("", nixlBlobDesc(1, 2, 3, "a").serialize()), NIXL_SUCCESS);
        ASSERT_EQ(sd.addStr("", nixlBlobDesc(4, 5, 6, "b").serialize()), NIXL_SUCCESS);
        expectRejected<nixlBlobDesc>(sd);
    }
}

TEST(DescListSerdes, ShortBlobElementIsRejected) {
    nixlSerDes sd;
    addHeader(sd, "nixlSDList", VRAM_SEG, 2);
    ASSERT_EQ(sd.addStr("", nixlBlobDesc(1, 2, 3, "a").serialize()), NIXL_SUCCESS);
    ASSERT_EQ(sd.addStr("", std::string(23, '\0')), NIXL_SUCCESS);
    expectRejected<nixlBlobDesc>(sd);

    nixlSerDes remote;
    addHeader(remote, "nixlSDList", VRAM_SEG, 1);
    ASSERT_EQ(remote.addStr("", "tiny"), NIXL_SUCCESS);
    expectRejected<nixlRemoteDesc>(remote);
}

TEST(DescListSerdes, EveryTruncationGivesEmptyList) {
    nixl_reg_dlist_t list(DRAM_SEG);
    list.addDesc(nixlBlobDesc(1, 2, 3, "first"));
    list.addDesc(nixlBlobDesc(4, 5, 6, "second"));
    nixlSerDes out;
    ASSERT_EQ(list.serialize(&out), NIXL_SUCCESS);
    const std::string full = out.exportStr();

    int imported = 0;
    for (size_t len = 0; len < full.size(); ++len) {
        nixlSerDes in;
        testing::internal::CaptureStderr();
        const nixl_status_t ret = in.importStr(full.substr(0, len));
        if (ret == NIXL_SUCCESS) {
            // Cut on a field boundary: the stream is valid, the list inside it is not complete.
            ++imported;
            const nixl_reg_dlist_t back(&in);
            EXPECT_TRUE(back.isEmpty()) << len;
        } else {
            EXPECT_EQ(ret, NIXL_ERR_MISMATCH) << len;
        }
        testing::internal::GetCapturedStderr();
    }
    EXPECT_GT(imported, 0); // the boundary cases were exercised too
}

TEST(DescListSerdes, CorruptedBytesNeverCrash) {
    nixl_reg_dlist_t list(DRAM_SEG);
    list.addDesc(nixlBlobDesc(1, 2, 3, "first"));
    list.addDesc(nixlBlobDesc(4, 5, 6, "second"));
    nixl_xfer_dlist_t basic(DRAM_SEG);
    basic.addDesc(nixlBasicDesc(7, 8, 9));
    nixlSerDes out;
    ASSERT_EQ(list.serialize(&out), NIXL_SUCCESS);
    ASSERT_EQ(basic.serialize(&out), NIXL_SUCCESS);
    const std::string full = out.exportStr();

    for (size_t pos = 0; pos < full.size(); ++pos) {
        for (unsigned char flip : {0x01, 0x80, 0xff}) {
            std::string bad = full;
            bad[pos] = static_cast<char>(static_cast<unsigned char>(bad[pos]) ^ flip);
            nixlSerDes in;
            testing::internal::CaptureStderr();
            if (in.importStr(bad) == NIXL_SUCCESS) {
                const nixl_reg_dlist_t l1(&in);
                const nixl_xfer_dlist_t l2(&in);
                EXPECT_LE(l1.descCount(), 2) << pos;
                EXPECT_LE(l2.descCount(), 1) << pos;
            }
            testing::internal::GetCapturedStderr();
        }
    }
}

/* Enum strings and constants */

TEST(EnumStrings, StatusStrForEveryStatus) {
    const std::vector<std::pair<nixl_status_t, std::string>> all = {
        {NIXL_IN_PROG, "NIXL_IN_PROG"},
        {NIXL_SUCCESS, "NIXL_SUCCESS"},
        {NIXL_ERR_NOT_POSTED, "NIXL_ERR_NOT_POSTED"},
        {NIXL_ERR_INVALID_PARAM, "NIXL_ERR_INVALID_PARAM"},
        {NIXL_ERR_BACKEND, "NIXL_ERR_BACKEND"},
        {NIXL_ERR_NOT_FOUND, "NIXL_ERR_NOT_FOUND"},
        {NIXL_ERR_MISMATCH, "NIXL_ERR_MISMATCH"},
        {NIXL_ERR_NOT_ALLOWED, "NIXL_ERR_NOT_ALLOWED"},
        {NIXL_ERR_REPOST_ACTIVE, "NIXL_ERR_REPOST_ACTIVE"},
        {NIXL_ERR_UNKNOWN, "NIXL_ERR_UNKNOWN"},
        {NIXL_ERR_NOT_SUPPORTED, "NIXL_ERR_NOT_SUPPORTED"},
        {NIXL_ERR_REMOTE_DISCONNECT, "NIXL_ERR_REMOTE_DISCONNECT"},
        {NIXL_ERR_CANCELED, "NIXL_ERR_CANCELED"},
        {NIXL_ERR_NO_TELEMETRY, "NIXL_ERR_NO_TELEMETRY"},
    };
    for (const auto &[status, name] : all) {
        EXPECT_EQ(nixlEnumStrings::statusStr(status), name);
    }
}

// Stores an arbitrary integer in an enum object without an out-of-range enum conversion; the
// object is then only passed by reference, as the API takes it.
template<class E>
void
setRaw(E &e, int value) {
    static_assert(sizeof(E) == sizeof(int));
    std::memcpy(&e, &value, sizeof(e));
}

TEST(EnumStrings, BadStatus) {
    EXPECT_EQ(nixlEnumStrings::statusStr(static_cast<nixl_status_t>(2)), "BAD_STATUS");
    EXPECT_EQ(nixlEnumStrings::statusStr(static_cast<nixl_status_t>(-13)), "BAD_STATUS");
    nixl_status_t raw;
    setRaw(raw, 1000);
    EXPECT_EQ(nixlEnumStrings::statusStr(raw), "BAD_STATUS");
}

TEST(EnumStrings, MemTypeStr) {
    EXPECT_EQ(nixlEnumStrings::memTypeStr(DRAM_SEG), "DRAM_SEG");
    EXPECT_EQ(nixlEnumStrings::memTypeStr(VRAM_SEG), "VRAM_SEG");
    EXPECT_EQ(nixlEnumStrings::memTypeStr(BLK_SEG), "BLK_SEG");
    EXPECT_EQ(nixlEnumStrings::memTypeStr(OBJ_SEG), "OBJ_SEG");
    EXPECT_EQ(nixlEnumStrings::memTypeStr(FILE_SEG), "FILE_SEG");
    EXPECT_EQ(nixlEnumStrings::memTypeStr(static_cast<nixl_mem_t>(5)), "BAD_SEG");
    nixl_mem_t raw;
    setRaw(raw, 99);
    EXPECT_EQ(nixlEnumStrings::memTypeStr(raw), "BAD_SEG");
}

TEST(EnumStrings, XferOpStr) {
    EXPECT_EQ(nixlEnumStrings::xferOpStr(NIXL_READ), "READ");
    EXPECT_EQ(nixlEnumStrings::xferOpStr(NIXL_WRITE), "WRITE");
    nixl_xfer_op_t raw;
    setRaw(raw, 2);
    EXPECT_EQ(nixlEnumStrings::xferOpStr(raw), "BAD_OP");
    setRaw(raw, -1);
    EXPECT_EQ(nixlEnumStrings::xferOpStr(raw), "BAD_OP");
}

TEST(EnumStrings, LabelConstants) {
    EXPECT_EQ(default_metadata_label, "metadata");
    EXPECT_EQ(default_partial_metadata_label, "partial_metadata");
    EXPECT_EQ(nixl_null_agent, "NULL_AGENT");
}
