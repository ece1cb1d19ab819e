/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The metadata blob in NIXL 1.4's layout. The golden bytes are the worked example of
// ../shared/reference/nixl-wire.md section 2.9, typed in from the specification (not captured
// from NIXL), and parsed both ways: our writer must produce them, our reader must take them.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>

#include "core/metadata/md_blob_nixl.h"

namespace {

// Hex digits of a dump's byte columns; anything else is skipped.
std::string
fromHex(std::string_view hex) {
    std::string out;
    int hi = -1;
    for (char c : hex) {
        if (!std::isxdigit(static_cast<unsigned char>(c))) {
            continue;
        }
        const int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' :
                                                                    std::tolower(c) - 'a' + 10;
        if (hi < 0) {
            hi = v;
        } else {
            out.push_back(static_cast<char>(hi * 16 + v));
            hi = -1;
        }
    }
    return out;
}

// Spec 2.9: agent A, one UCX conn entry "aa bb cc dd", one DRAM section with one registration
// (0x7f0000001000, 4096, dev 0) whose stand-in rkey is 01 02 03.
const std::string golden = fromHex(
    "6e 69 78 6c 53 65 72 44 65 73 7c 41 67 65 6e 74"
    "01 00 00 00 00 00 00 00 41 7c 43 6f 6e 6e 73 08"
    "00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 7c"
    "74 03 00 00 00 00 00 00 00 55 43 58 7c 63 04 00"
    "00 00 00 00 00 00 aa bb cc dd 7c 0a 00 00 00 00"
    "00 00 00 4d 65 6d 53 65 63 74 69 6f 6e 7c 6e 69"
    "78 6c 53 65 63 45 6c 6d 73 08 00 00 00 00 00 00"
    "00 01 00 00 00 00 00 00 00 7c 62 6b 6e 64 03 00"
    "00 00 00 00 00 00 55 43 58 7c 6e 69 78 6c 44 4c"
    "69 73 74 0a 00 00 00 00 00 00 00 6e 69 78 6c 53"
    "44 4c 69 73 74 7c 74 04 00 00 00 00 00 00 00 00"
    "00 00 00 7c 6e 08 00 00 00 00 00 00 00 01 00 00"
    "00 00 00 00 00 7c 1b 00 00 00 00 00 00 00 00 10"
    "00 00 00 7f 00 00 00 10 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 00 01 02 03 7c");

// Offset of the section count's VALUE in the golden blob (the 0x01 at 0x71).
constexpr size_t golden_sec_count_at = 0x71;

nixlMdBlob
goldenBlob() {
    nixlMdBlob b;
    b.agentName = "A";
    b.conns = {{"UCX", fromHex("aa bb cc dd")}};
    b.sections = {{"UCX", DRAM_SEG, {{0x7f0000001000, 4096, 0, fromHex("01 02 03")}}}};
    return b;
}

// libnixl's own blob of the same agent, as getLocalMD would carry inside.
nixlMdBlob
ownBlob() {
    nixlMdBlob b = goldenBlob();
    b.conns = {{"UCX", "our own UCX conn info"}, {"TEST", "t"}};
    b.sections[0].descs[0].publicData = "our own rkey record";
    return b;
}

std::string
decodeError(std::string_view bytes) {
    nixlMdBlob out;
    std::string err;
    EXPECT_EQ(nixlMdDecode(bytes, out, err), NIXL_ERR_MISMATCH);
    EXPECT_FALSE(err.empty());
    return err;
}

bool
hasPart(const std::string &s, std::string_view part) {
    return s.find(part) != std::string::npos;
}

TEST(mdBlobNixl, GoldenSizeMatchesTheSpecification) {
    ASSERT_EQ(golden.size(), 0xeau);
}

TEST(mdBlobNixl, WriterProducesTheGoldenBytes) {
    EXPECT_EQ(nixlMdEncodeNixl(goldenBlob(), nullptr), golden);
}

TEST(mdBlobNixl, ReaderTakesTheGoldenBytes) {
    nixlMdBlob out;
    std::string_view ext = "unset";
    std::string err;
    ASSERT_EQ(nixlMdDecodeNixl(golden, out, ext, err), NIXL_SUCCESS) << err;
    EXPECT_EQ(out, goldenBlob());
    EXPECT_TRUE(ext.empty());

    nixl_md_form_t form = nixl_md_form_t::LIBNIXL;
    nixlMdBlob any;
    ASSERT_EQ(nixlMdDecode(golden, any, err, &form), NIXL_SUCCESS) << err;
    EXPECT_EQ(form, nixl_md_form_t::NIXL);
    EXPECT_EQ(any, goldenBlob());

    std::string name;
    ASSERT_TRUE(nixlMdPeekAgentName(golden, name));
    EXPECT_EQ(name, "A");
}

TEST(mdBlobNixl, CombinedIsTheNixlBlobPlusOneSection) {
    const std::string own = nixlMdEncode(ownBlob());
    const std::string combined = nixlMdEncodeNixl(goldenBlob(), &own);

    // What NIXL 1.4 reads: the golden bytes, with one more section counted...
    ASSERT_GT(combined.size(), golden.size());
    EXPECT_EQ(combined.substr(0, golden_sec_count_at), golden.substr(0, golden_sec_count_at));
    EXPECT_EQ(static_cast<uint8_t>(combined[golden_sec_count_at]), 2u);
    EXPECT_EQ(combined.substr(golden_sec_count_at + 1, golden.size() - golden_sec_count_at - 1),
              golden.substr(golden_sec_count_at + 1));
    // ...which is a well-formed DRAM section of backend "libnixl" holding one descriptor
    // whose bytes after the 24-byte basic descriptor are our blob (spec 2.3, 2.4).
    const std::string tail = combined.substr(golden.size());
    std::string expect_tail = fromHex("62 6b 6e 64 07 00 00 00 00 00 00 00") + "libnixl|";
    expect_tail += fromHex("6e 69 78 6c 44 4c 69 73 74 0a 00 00 00 00 00 00 00") + "nixlSDList|";
    expect_tail += fromHex("74 04 00 00 00 00 00 00 00 00 00 00 00 7c");
    expect_tail += fromHex("6e 08 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 7c");
    std::string elem(8, '\0');
    std::string len_le;
    for (int i = 0; i < 8; ++i) {
        len_le.push_back(static_cast<char>(((own.size()) >> (8 * i)) & 0xff));
    }
    elem += len_le + std::string(8, '\0') + own;
    std::string elem_len;
    for (int i = 0; i < 8; ++i) {
        elem_len.push_back(static_cast<char>((elem.size() >> (8 * i)) & 0xff));
    }
    expect_tail += elem_len + elem + "|";
    EXPECT_EQ(tail, expect_tail);

    // Our reader takes our blob from it and checks that both parts name the same agent.
    nixlMdBlob nixl_part;
    std::string_view ext;
    std::string err;
    ASSERT_EQ(nixlMdDecodeNixl(combined, nixl_part, ext, err), NIXL_SUCCESS) << err;
    EXPECT_EQ(nixl_part, goldenBlob());
    EXPECT_EQ(ext, own);
    nixl_md_form_t form = nixl_md_form_t::NIXL;
    nixlMdBlob out;
    ASSERT_EQ(nixlMdDecode(combined, out, err, &form), NIXL_SUCCESS) << err;
    EXPECT_EQ(form, nixl_md_form_t::COMBINED);
    EXPECT_EQ(out, ownBlob());
    std::string name;
    ASSERT_TRUE(nixlMdPeekAgentName(combined, name));
    EXPECT_EQ(name, "A");
}

// A combined blob whose libnixl section no longer reads as one (its backend name changed) is
// refused, not read as a NIXL agent's blob: that would load the unchecked NIXL part instead of
// our checked blob.
TEST(mdBlobNixl, DamagedLibnixlSectionIsNotReadAsANixlBlob) {
    const std::string own = nixlMdEncode(ownBlob());
    std::string combined = nixlMdEncodeNixl(goldenBlob(), &own);
    const size_t at = combined.find("libnixl|");
    ASSERT_NE(at, std::string::npos);
    combined[at] = 'L'; // a section of backend "Libnixl": valid layout, unknown backend
    nixlMdBlob nixl_part;
    std::string_view ext;
    std::string err;
    ASSERT_EQ(nixlMdDecodeNixl(combined, nixl_part, ext, err), NIXL_SUCCESS) << err;
    EXPECT_TRUE(ext.empty());
    nixlMdBlob out;
    EXPECT_EQ(nixlMdDecode(combined, out, err), NIXL_ERR_MISMATCH);
    EXPECT_NE(err.find("damaged"), std::string::npos) << err;
}

TEST(mdBlobNixl, OwnBlobAloneStillReads) {
    const std::string own = nixlMdEncode(ownBlob());
    nixl_md_form_t form = nixl_md_form_t::NIXL;
    nixlMdBlob out;
    std::string err;
    ASSERT_EQ(nixlMdDecode(own, out, err, &form), NIXL_SUCCESS) << err;
    EXPECT_EQ(form, nixl_md_form_t::LIBNIXL);
    EXPECT_EQ(out, ownBlob());
    std::string name;
    ASSERT_TRUE(nixlMdPeekAgentName(own, name));
    EXPECT_EQ(name, "A");
}

TEST(mdBlobNixl, ConnectionOnlyAndEmpty) {
    // NIXL's connection-only partial blob: no sections (spec 2.6).
    nixlMdBlob b = goldenBlob();
    b.sections.clear();
    nixlMdBlob out;
    std::string err;
    ASSERT_EQ(nixlMdDecode(nixlMdEncodeNixl(b, nullptr), out, err), NIXL_SUCCESS) << err;
    EXPECT_EQ(out, b);
    // A descriptor-only partial blob: no conn entries.
    b = goldenBlob();
    b.conns.clear();
    ASSERT_EQ(nixlMdDecode(nixlMdEncodeNixl(b, nullptr), out, err), NIXL_SUCCESS) << err;
    EXPECT_EQ(out, b);
}

TEST(mdBlobNixl, EveryTruncationIsRefused) {
    const std::string own = nixlMdEncode(ownBlob());
    for (const std::string &full : {golden, nixlMdEncodeNixl(goldenBlob(), &own)}) {
        for (size_t len = 0; len < full.size(); ++len) {
            nixlMdBlob out;
            std::string err;
            EXPECT_EQ(nixlMdDecode(full.substr(0, len), out, err), NIXL_ERR_MISMATCH) << len;
            EXPECT_FALSE(err.empty());
        }
    }
}

TEST(mdBlobNixl, TrailingBytesAreRefused) {
    // NIXL ignores them, but never writes them: here they can only be damage.
    EXPECT_TRUE(hasPart(decodeError(golden + "x"), "1 bytes after the last section"));
    EXPECT_TRUE(hasPart(decodeError(golden + golden), "after the last section"));
}

TEST(mdBlobNixl, MalformedFieldsAreRefused) {
    nixlMdBlob b = goldenBlob();
    b.sections[0].mem = static_cast<nixl_mem_t>(5);
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(b, nullptr)), "mem type 5"));

    b = goldenBlob();
    b.conns[0].connInfo.clear(); // NIXL refuses an empty c (spec 2.7 step 5)
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(b, nullptr)), "connection info"));

    b = goldenBlob();
    b.sections[0].descs.clear(); // NIXL: ERR_NOT_FOUND (step 9a)
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(b, nullptr)), "section"));

    // A transfer list where a section list belongs.
    std::string bd = golden;
    const size_t kind = bd.find("nixlSDList");
    ASSERT_NE(kind, std::string::npos);
    bd[kind + 4] = 'B';
    EXPECT_TRUE(hasPart(decodeError(bd), "nixlSDList"));

    // An element shorter than the 24-byte basic descriptor.
    b = goldenBlob();
    std::string shortElem = golden;
    const size_t elem_len_at = golden.size() - 1 - 27 - 8;
    ASSERT_EQ(static_cast<uint8_t>(shortElem[elem_len_at]), 0x1bu);
    shortElem[elem_len_at] = 0x10;
    shortElem.resize(elem_len_at + 8 + 0x10 + 1);
    shortElem.back() = '|';
    shortElem += std::string(16, '|'); // so the section count still fits and the element is read
    EXPECT_TRUE(hasPart(decodeError(shortElem), "descriptor 0"));

    // Repeated backends: the rules of our own format hold for the NIXL part too.
    b = goldenBlob();
    b.conns.push_back(b.conns[0]);
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(b, nullptr)), "repeats backend UCX"));

    // Wrong magic, empty name.
    EXPECT_TRUE(
        hasPart(decodeError(std::string("nixlSerDes|Agent") + std::string(40, 'x')), "nixlSerDes"));
    b = goldenBlob();
    b.agentName.clear();
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(b, nullptr)), "agent name"));
}

TEST(mdBlobNixl, HostileCountsAreRefusedBeforeLooping) {
    for (size_t at : {size_t(0x27), golden_sec_count_at, size_t(0xbd)}) {
        std::string bad = golden;
        for (int i = 0; i < 8; ++i) {
            bad[at + i] = '\xff';
        }
        EXPECT_TRUE(hasPart(decodeError(bad), "does not fit")) << at;
    }
}

TEST(mdBlobNixl, LibnixlSectionRules) {
    const std::string own = nixlMdEncode(ownBlob());

    // Both parts must name the same agent.
    nixlMdBlob renamed = goldenBlob();
    renamed.agentName = "Z";
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(renamed, &own)), "names agent Z"));

    // Our blob inside is checked as ours.
    std::string bad_own = own;
    bad_own[0] = 'X';
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(goldenBlob(), &bad_own)), "libnixl section"));

    // It must be the last section and hold exactly one descriptor.
    nixlMdBlob b = goldenBlob();
    b.sections.insert(b.sections.begin(),
                      nixlMdSection{std::string(nixl_md_ext_backend), DRAM_SEG, {{0, 1, 0, own}}});
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(b, nullptr)), "must be the last"));
    b = goldenBlob();
    b.sections.push_back(nixlMdSection{
        std::string(nixl_md_ext_backend), DRAM_SEG, {{0, 1, 0, own}, {8, 1, 0, own}}});
    EXPECT_TRUE(hasPart(decodeError(nixlMdEncodeNixl(b, nullptr)), "hold one descriptor"));
}

TEST(mdBlobNixl, PeekRefusesWhatItCannotRead) {
    std::string name;
    EXPECT_FALSE(nixlMdPeekAgentName("", name));
    EXPECT_FALSE(nixlMdPeekAgentName("nixlSerDes|", name));
    EXPECT_FALSE(nixlMdPeekAgentName(golden.substr(0, 20), name));
    EXPECT_FALSE(nixlMdPeekAgentName("NIXLMD\r\n", name));
}

} // namespace
