/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <sys/mman.h>

#include "core/metadata/md_blob.h"

// Largest single allocation seen while tracking is on. Replacing the global operator new lets the
// hostile-count tests prove that decoding reserves nothing big, rather than merely not crashing.
namespace {
std::atomic<bool> track_allocs{false};
std::atomic<size_t> largest_alloc{0};
} // namespace

// GCC cannot see that these malloc/free pairs belong together once the operators are inlined
// into callers, and warns about the pairing the standard explicitly allows for replacements.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
void *
trackedAlloc(size_t size) noexcept {
    if (track_allocs.load(std::memory_order_relaxed)) {
        size_t prev = largest_alloc.load(std::memory_order_relaxed);
        while (size > prev && !largest_alloc.compare_exchange_weak(prev, size)) {
        }
    }
    return std::malloc(size == 0 ? 1 : size);
}
} // namespace

void *
operator new(size_t size) {
    void *p = trackedAlloc(size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

void *
operator new(size_t size, const std::nothrow_t &) noexcept {
    return trackedAlloc(size);
}

void
operator delete(void *p, const std::nothrow_t &) noexcept {
    std::free(p);
}

void
operator delete(void *p) noexcept {
    std::free(p);
}

void
operator delete(void *p, size_t) noexcept {
    std::free(p);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {

// Writes blobs field by field from the documented layout (docs/metadata.md), independently of
// nixlMdEncode, so the tests pin the format rather than the encoder's idea of it.
class rawBlob {
public:
    rawBlob &
    u32(uint32_t v) {
        for (int i = 0; i < 4; ++i) {
            body_.push_back(static_cast<char>(v >> (8 * i)));
        }
        return *this;
    }

    rawBlob &
    u64(uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            body_.push_back(static_cast<char>(v >> (8 * i)));
        }
        return *this;
    }

    rawBlob &
    str(const std::string &s) {
        u32(static_cast<uint32_t>(s.size()));
        body_ += s;
        return *this;
    }

    rawBlob &
    bytes(const std::string &s) {
        body_ += s;
        return *this;
    }

    /** Header with the true total length, then the body. */
    std::string
    finish() const {
        rawBlob h;
        h.body_ = std::string("NIXLMD\r\n", 8);
        h.u32(1).u32(0).u64(nixl_md_header_size + body_.size());
        return h.body_ + body_;
    }

private:
    std::string body_;
};

void
patchU32(std::string &blob, size_t offset, uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        blob[offset + i] = static_cast<char>(v >> (8 * i));
    }
}

void
patchU64(std::string &blob, size_t offset, uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        blob[offset + i] = static_cast<char>(v >> (8 * i));
    }
}

constexpr size_t offset_version = 8;
constexpr size_t offset_flags = 12;
constexpr size_t offset_length = 16;

nixlMdBlob
sampleBlob() {
    nixlMdBlob b;
    b.agentName = "agent-A";
    b.conns = {{"UCX", std::string("ucx\0conn", 8)}, {"TEST", "test-conn"}, {"EMPTY", ""}};
    for (int s = 0; s < 3; ++s) {
        nixlMdSection sec;
        sec.backend = s == 1 ? "TEST" : "UCX";
        sec.mem = s == 2 ? VRAM_SEG : DRAM_SEG;
        for (int d = 0; d < 10; ++d) {
            sec.descs.push_back({uintptr_t(0x1000 * (d + 1)),
                                 size_t(64 * d),
                                 uint64_t(s),
                                 "pub" + std::to_string(s) + "." + std::to_string(d)});
        }
        b.sections.push_back(sec);
    }
    return b;
}

nixl_status_t
decode(const std::string &bytes, std::string &err) {
    nixlMdBlob out;
    err.clear();
    return nixlMdDecode(bytes, out, err);
}

// Decodes bytes expecting failure and returns the error text.
std::string
decodeError(const std::string &bytes) {
    std::string err;
    EXPECT_EQ(decode(bytes, err), NIXL_ERR_MISMATCH);
    EXPECT_FALSE(err.empty());
    return err;
}

void
expectRoundTrip(const nixlMdBlob &in) {
    const std::string bytes = nixlMdEncode(in);
    nixlMdBlob out;
    std::string err;
    ASSERT_EQ(nixlMdDecode(bytes, out, err), NIXL_SUCCESS) << err;
    EXPECT_EQ(out, in);
    EXPECT_EQ(nixlMdEncode(out), bytes);
}

::testing::AssertionResult
hasPart(const std::string &text, const std::string &part) {
    if (text.find(part) != std::string::npos) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part
                                         << "\"";
}

TEST(mdBlob, RoundTripNameOnly) {
    nixlMdBlob b;
    b.agentName = "a";
    expectRoundTrip(b);
    // header, name length + name, connection count, section count
    EXPECT_EQ(nixlMdEncode(b).size(), nixl_md_header_size + 4 + 1 + 4 + 4);
}

TEST(mdBlob, RoundTripEmptySections) {
    nixlMdBlob b;
    b.agentName = "agent";
    b.conns = {{"UCX", "x"}};
    for (int m = DRAM_SEG; m <= FILE_SEG; ++m) {
        b.sections.push_back({"UCX", static_cast<nixl_mem_t>(m), {}});
    }
    expectRoundTrip(b);
}

TEST(mdBlob, RoundTripBinaryData) {
    std::string all_bytes;
    for (int c = 0; c < 256; ++c) {
        all_bytes.push_back(static_cast<char>(c));
    }
    nixlMdBlob b;
    b.agentName = std::string("with\0nul", 8);
    b.conns = {{std::string("B\0", 2), all_bytes}, {"C", std::string(3, '\0')}};
    b.sections = {{std::string("B\0", 2),
                   FILE_SEG,
                   {{UINTPTR_MAX, SIZE_MAX, UINT64_MAX, all_bytes},
                    {0, 0, 0, ""},
                    {1, 2, 3, std::string(1000, '\0')}}}};
    expectRoundTrip(b);
}

TEST(mdBlob, RoundTripManyDescs) {
    nixlMdBlob b = sampleBlob();
    nixlMdSection big{"UCX", BLK_SEG, {}};
    for (size_t i = 0; i < 100000; ++i) {
        big.descs.push_back({i * 4096, 4096, i % 8, i % 3 == 0 ? "" : std::to_string(i)});
    }
    b.sections.push_back(std::move(big));
    expectRoundTrip(b);
}

TEST(mdBlob, RoundTripNameLimits) {
    nixlMdBlob b;
    b.agentName = std::string(nixl_md_max_agent_name_len, 'n');
    b.conns = {{std::string(nixl_md_max_backend_name_len, 'c'), "i"}};
    b.sections = {{std::string(nixl_md_max_backend_name_len, 's'), OBJ_SEG, {{1, 2, 3, "p"}}}};
    expectRoundTrip(b);
}

// The byte layout is part of the wire contract: pin offsets and byte order.
TEST(mdBlob, LayoutMatchesDocumentation) {
    nixlMdBlob b;
    b.agentName = "AB";
    b.conns = {{"T", "ci"}};
    b.sections = {{"T", VRAM_SEG, {{0x0102030405060708ull, 0x10, 0x7, "p"}}}};
    const std::string bytes = nixlMdEncode(b);
    const std::string expected = rawBlob()
                                     .str("AB")
                                     .u32(1)
                                     .str("T")
                                     .str("ci")
                                     .u32(1)
                                     .str("T")
                                     .u32(VRAM_SEG)
                                     .u32(1)
                                     .u64(0x0102030405060708ull)
                                     .u64(0x10)
                                     .u64(0x7)
                                     .str("p")
                                     .finish();
    EXPECT_EQ(bytes, expected);
    EXPECT_EQ(bytes.substr(0, 8), std::string("NIXLMD\r\n", 8));
    EXPECT_EQ(bytes.substr(offset_version, 4), std::string("\x01\x00\x00\x00", 4));
    EXPECT_EQ(bytes.substr(offset_flags, 4), std::string(4, '\0'));
    EXPECT_EQ(static_cast<unsigned char>(bytes[offset_length]), bytes.size());
    // The descriptor address follows name, conns, section header: little-endian.
    const size_t addr_off = 24 + (4 + 2) + 4 + (4 + 1) + (4 + 2) + 4 + (4 + 1) + 4 + 4;
    EXPECT_EQ(bytes.substr(addr_off, 8), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
}

// The example in docs/metadata.md, byte for byte.
TEST(mdBlob, DocumentedExample) {
    const unsigned char doc[] = {
        0x4e, 0x49, 0x58, 0x4c, 0x4d, 0x44, 0x0d, 0x0a, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x5f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x41, 0x01,
        0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x54, 0x45, 0x53, 0x54, 0x01, 0x00, 0x00, 0x00,
        0x63, 0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x54, 0x45, 0x53, 0x54, 0x00, 0x00,
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x70};
    const std::string bytes(reinterpret_cast<const char *>(doc), sizeof(doc));
    ASSERT_EQ(bytes.size(), 95u);
    nixlMdBlob expected;
    expected.agentName = "A";
    expected.conns = {{"TEST", "c"}};
    expected.sections = {{"TEST", DRAM_SEG, {{0x1000, 0x40, 0, "p"}}}};
    EXPECT_EQ(nixlMdEncode(expected), bytes);
    nixlMdBlob out;
    std::string err;
    ASSERT_EQ(nixlMdDecode(bytes, out, err), NIXL_SUCCESS) << err;
    EXPECT_EQ(out, expected);
}

TEST(mdBlob, EveryTruncationFails) {
    const std::string bytes = nixlMdEncode(sampleBlob());
    for (size_t k = 0; k < bytes.size(); ++k) {
        std::string err;
        ASSERT_EQ(decode(bytes.substr(0, k), err), NIXL_ERR_MISMATCH) << "prefix " << k;
        ASSERT_FALSE(err.empty()) << "prefix " << k;
    }
}

// With the length field made consistent, every cut must be caught by the field that is cut,
// not just by the header length check.
TEST(mdBlob, EveryTruncationWithFixedLengthFails) {
    const std::string bytes = nixlMdEncode(sampleBlob());
    for (size_t k = nixl_md_header_size; k < bytes.size(); ++k) {
        std::string cut = bytes.substr(0, k);
        patchU64(cut, offset_length, k);
        std::string err;
        ASSERT_EQ(decode(cut, err), NIXL_ERR_MISMATCH) << "prefix " << k;
        // Either the cut field itself or a count that no longer fits what is left.
        ASSERT_TRUE(hasPart(err, "truncated in ") || hasPart(err, " needs at least "))
            << err << " at prefix " << k;
    }
}

TEST(mdBlob, TruncationNamesTheSpot) {
    // Long public data, so that the cut blob still has room for the descriptor count's minimum
    // size and the cut is found by the descriptor read itself.
    nixlMdBlob b = sampleBlob();
    for (nixlMdDesc &d : b.sections[2].descs) {
        d.publicData = std::string(100, 'p');
    }
    const std::string bytes = nixlMdEncode(b);
    // Cut in the middle of section 2 descriptor 7's fixed fields.
    nixlMdBlob upto = b;
    upto.sections[2].descs.resize(7);
    const size_t cut_at = nixlMdEncode(upto).size() + 10;
    std::string cut = bytes.substr(0, cut_at);
    patchU64(cut, offset_length, cut.size());
    EXPECT_TRUE(hasPart(decodeError(cut), "truncated in section 2 descriptor 7:"));

    // Cut inside its public data.
    cut = bytes.substr(0, nixlMdEncode(upto).size() + 24 + 4 + 1);
    patchU64(cut, offset_length, cut.size());
    EXPECT_TRUE(hasPart(decodeError(cut), "truncated in section 2 descriptor 7 public data"));

    // Cut inside the agent name.
    cut = bytes.substr(0, nixl_md_header_size + 4 + 3);
    patchU64(cut, offset_length, cut.size());
    EXPECT_TRUE(hasPart(decodeError(cut), "truncated in agent name"));

    EXPECT_EQ(decodeError(bytes.substr(0, 10)), "truncated header: 10 bytes, need 24");
    EXPECT_EQ(decodeError(bytes.substr(0, 100)),
              "truncated: header says " + std::to_string(bytes.size()) + " bytes, got 100");
}

TEST(mdBlob, EveryHeaderBitFlipFails) {
    const std::string bytes = nixlMdEncode(sampleBlob());
    for (size_t off = 0; off < nixl_md_header_size; ++off) {
        for (int bit = 0; bit < 8; ++bit) {
            std::string bad = bytes;
            bad[off] = static_cast<char>(bad[off] ^ (1 << bit));
            const std::string err = decodeError(bad);
            if (off < offset_version) {
                EXPECT_TRUE(hasPart(err, "bad magic")) << off << "/" << bit;
            } else if (off < offset_flags) {
                EXPECT_TRUE(hasPart(err, "format version ")) << off << "/" << bit;
            } else if (off < offset_length) {
                EXPECT_TRUE(hasPart(err, "flags 0x")) << off << "/" << bit;
            } else {
                EXPECT_TRUE(err.find("truncated: header says") == 0 ||
                            err.find("trailing bytes after the") != std::string::npos)
                    << err << " at " << off << "/" << bit;
            }
        }
    }
}

TEST(mdBlob, BadVersionAndFlagsText) {
    std::string bytes = nixlMdEncode(sampleBlob());
    patchU32(bytes, offset_version, 9);
    EXPECT_EQ(decodeError(bytes), "format version 9, expected 1");
    patchU32(bytes, offset_version, 0);
    EXPECT_EQ(decodeError(bytes), "format version 0, expected 1");

    bytes = nixlMdEncode(sampleBlob());
    patchU32(bytes, offset_flags, 4);
    EXPECT_EQ(decodeError(bytes), "flags 0x00000004, expected 0 (version 1 defines no flags)");
}

TEST(mdBlob, BadMagicText) {
    std::string bytes = nixlMdEncode(sampleBlob());
    bytes[6] = '\n'; // a CR LF -> LF style rewrite
    EXPECT_EQ(decodeError(bytes), "bad magic");
    EXPECT_EQ(decodeError(std::string("XY")), "bad magic");
    EXPECT_EQ(decodeError(std::string()), "empty blob");
    // A blob from a NIXL 1.4 agent is named as such.
    EXPECT_TRUE(
        hasPart(decodeError(std::string("nixlSerDes|Agent") + std::string(40, 'x')), "nixlSerDes"));
}

class mdBlobHostile : public ::testing::Test {
protected:
    void
    expectFastFailure(const std::string &bytes, const std::string &expected_part) {
        ASSERT_LE(bytes.size(), 100u);
        nixlMdBlob out;
        std::string err;
        largest_alloc = 0;
        track_allocs = true;
        const nixl_status_t st = nixlMdDecode(bytes, out, err);
        track_allocs = false;
        EXPECT_EQ(st, NIXL_ERR_MISMATCH);
        EXPECT_TRUE(hasPart(err, expected_part));
        // Nothing anywhere near count * element size: the count is refused before reserving.
        EXPECT_LT(largest_alloc.load(), 4096u);
    }
};

TEST_F(mdBlobHostile, HugeDescriptorCount) {
    std::string bytes = rawBlob()
                            .str("agent")
                            .u32(0)
                            .u32(1)
                            .str("UCX")
                            .u32(DRAM_SEG)
                            .u32(0xffffffffu)
                            .bytes(std::string(40, 'z'))
                            .finish();
    expectFastFailure(bytes,
                      "section 0 descriptor count 4294967295 needs at least 120259084260 "
                      "bytes, 40 left");
    // A count small enough that reserving it would succeed (tens of MB) must be refused too.
    patchU32(bytes, nixl_md_header_size + 9 + 4 + 4 + 7 + 4, 1000000);
    expectFastFailure(bytes, "section 0 descriptor count 1000000 needs at least 28000000 bytes");
}

TEST_F(mdBlobHostile, HugeConnectionCount) {
    const std::string bytes =
        rawBlob().str("agent").u32(0xffffffffu).bytes(std::string(50, 'z')).finish();
    expectFastFailure(bytes, "connection count 4294967295 needs at least");
}

TEST_F(mdBlobHostile, HugeSectionCount) {
    const std::string bytes =
        rawBlob().str("agent").u32(0).u32(0xfffffff0u).bytes(std::string(50, 'z')).finish();
    expectFastFailure(bytes, "section count 4294967280 needs at least");
}

TEST_F(mdBlobHostile, HugeStringLengths) {
    expectFastFailure(rawBlob().u32(0xffffffffu).bytes("abc").finish(),
                      "agent name length 4294967295, limit 1024");
    expectFastFailure(rawBlob().str("a").u32(1).str("UCX").u32(0xfffffff0u).finish(),
                      "truncated in connection 0 (UCX) connection info: length 4294967280");
    expectFastFailure(rawBlob()
                          .str("a")
                          .u32(0)
                          .u32(1)
                          .str("UCX")
                          .u32(DRAM_SEG)
                          .u32(1)
                          .u64(1)
                          .u64(2)
                          .u64(3)
                          .u32(0x7fffffffu)
                          .finish(),
                      "truncated in section 0 descriptor 0 public data: length 2147483647");
}

// A count that exactly fits the minimum element size passes the count check and is then caught
// by the element reads, so the bound is tight and not off by one.
TEST(mdBlob, CountBoundIsExact) {
    const std::string ok = rawBlob()
                               .str("a")
                               .u32(0)
                               .u32(1)
                               .str("U")
                               .u32(DRAM_SEG)
                               .u32(2)
                               .u64(1)
                               .u64(2)
                               .u64(3)
                               .u32(0)
                               .u64(4)
                               .u64(5)
                               .u64(6)
                               .u32(0)
                               .finish();
    std::string err;
    ASSERT_EQ(decode(ok, err), NIXL_SUCCESS) << err;
    std::string bad = ok;
    patchU32(bad, nixl_md_header_size + 5 + 4 + 4 + 5 + 4, 3);
    EXPECT_TRUE(hasPart(decodeError(bad), "section 0 descriptor count 3 needs at least 84"));
}

TEST(mdBlob, OversizeRejectedBeforeParsing) {
    // A read-only, never-touched mapping: the size check must come before any read.
    const size_t size = nixl_md_max_blob_size + 1;
    void *p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    nixlMdBlob out;
    std::string err;
    EXPECT_EQ(nixlMdDecode(std::string_view(static_cast<const char *>(p), size), out, err),
              NIXL_ERR_MISMATCH);
    EXPECT_EQ(err, "blob is 1073741825 bytes, over the limit of 1073741824");
    // Exactly the limit is not oversize: it fails on its (zero) content instead.
    EXPECT_EQ(nixlMdDecode(std::string_view(static_cast<const char *>(p), size - 1), out, err),
              NIXL_ERR_MISMATCH);
    EXPECT_EQ(err, "bad magic");
    munmap(p, size);
}

TEST(mdBlob, TrailingGarbageRejected) {
    const std::string bytes = nixlMdEncode(sampleBlob());
    EXPECT_EQ(decodeError(bytes + "xyz"),
              "3 trailing bytes after the " + std::to_string(bytes.size()) +
                  " bytes the header declares");
    std::string fixed = bytes + "xyz";
    patchU64(fixed, offset_length, fixed.size());
    EXPECT_EQ(decodeError(fixed),
              "3 trailing bytes after the last section, at offset " +
                  std::to_string(bytes.size()));
    // Even one zero byte counts.
    fixed = bytes + std::string(1, '\0');
    patchU64(fixed, offset_length, fixed.size());
    EXPECT_TRUE(hasPart(decodeError(fixed), "1 trailing bytes after the last section"));
}

TEST(mdBlob, BadMemTypeRejected) {
    for (uint32_t mem : {5u, 6u, 0x80000000u, 0xffffffffu}) {
        const std::string bytes =
            rawBlob().str("a").u32(0).u32(1).str("UCX").u32(mem).u32(0).finish();
        EXPECT_EQ(decodeError(bytes),
                  "section 0 (UCX) mem type " + std::to_string(mem) +
                      ", expected 0..4 (DRAM_SEG..FILE_SEG)");
    }
    const std::string ok =
        rawBlob().str("a").u32(0).u32(1).str("UCX").u32(FILE_SEG).u32(0).finish();
    std::string err;
    EXPECT_EQ(decode(ok, err), NIXL_SUCCESS) << err;
}

TEST(mdBlob, NameLengthLimits) {
    EXPECT_EQ(decodeError(rawBlob().str("").u32(0).u32(0).finish()), "agent name length 0");
    EXPECT_EQ(decodeError(rawBlob().str(std::string(1025, 'a')).u32(0).u32(0).finish()),
              "agent name length 1025, limit 1024");
    EXPECT_EQ(decodeError(rawBlob().str("a").u32(1).str("").str("").u32(0).finish()),
              "connection 0 backend name length 0");
    EXPECT_EQ(decodeError(
                  rawBlob().str("a").u32(1).str(std::string(257, 'b')).str("").u32(0).finish()),
              "connection 0 backend name length 257, limit 256");
    EXPECT_EQ(
        decodeError(rawBlob().str("a").u32(0).u32(1).str("").u32(0).u32(0).u32(0).finish()),
        "section 0 backend name length 0");
    EXPECT_EQ(decodeError(rawBlob()
                              .str("a")
                              .u32(0)
                              .u32(1)
                              .str(std::string(257, 's'))
                              .u32(0)
                              .u32(0)
                              .finish()),
              "section 0 backend name length 257, limit 256");
}

TEST(mdBlob, DuplicateConnectionRejected) {
    nixlMdBlob b = sampleBlob();
    b.conns.push_back({"TEST", "other"});
    EXPECT_EQ(decodeError(nixlMdEncode(b)), "connection 3 repeats backend TEST of connection 1");
    // The first repeat in blob order is the one reported.
    b.conns.insert(b.conns.begin() + 1, {"UCX", "again"});
    EXPECT_EQ(decodeError(nixlMdEncode(b)), "connection 1 repeats backend UCX of connection 0");
}

TEST(mdBlob, DuplicateSectionRejected) {
    nixlMdBlob b = sampleBlob();
    b.sections.push_back({"UCX", VRAM_SEG, {}});
    EXPECT_EQ(decodeError(nixlMdEncode(b)),
              "section 3 repeats backend UCX mem type VRAM_SEG of section 2");
    // Same backend with another mem type is a different section.
    b.sections.back().mem = BLK_SEG;
    expectRoundTrip(b);
}

TEST(mdBlob, HostileNamesAreEscapedInErrors) {
    const std::string bytes =
        rawBlob().str("a").u32(0).u32(1).str(std::string("U\n\x01", 3)).u32(9).u32(0).finish();
    EXPECT_TRUE(hasPart(decodeError(bytes), std::string("section 0 (U\n\x01) mem type 9")));
}

TEST(mdBlob, DecodeResetsOutput) {
    nixlMdBlob out = sampleBlob();
    nixlMdBlob small;
    small.agentName = "b";
    std::string err;
    ASSERT_EQ(nixlMdDecode(nixlMdEncode(small), out, err), NIXL_SUCCESS) << err;
    EXPECT_EQ(out, small);
}

} // namespace
