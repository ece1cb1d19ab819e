/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_lf_wire.cpp
 * @brief libFuzzer target for the LIBFABRIC plugin's decoders of what a peer sends it:
 *        connection info, the public data of a registration, and notification fragments
 *        (src/plugins/backend/libfabric/lf_wire.h).
 *
 * The first input byte picks the format: 0 connection info, 1 public data, 2 a fragment. With
 * bit 0x80 set the trailing CRC32C is rewritten to match, so the structural checks behind the
 * checksum are fuzzed too. Checked beyond "no crash, no out-of-bounds read": a refusal says
 * why, what decodes encodes back to the same bytes (the formats are canonical), and a fragment
 * that decodes lies inside its message.
 */
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_common.h"
#include "lf_wire.h"

namespace {

void
reseal(std::string &s) {
    if (s.size() < sizeof(uint32_t)) {
        return;
    }
    const uint32_t crc = nixlLf::crc32c(s.data(), s.size() - sizeof(uint32_t));
    std::memcpy(s.data() + s.size() - sizeof(uint32_t), &crc, sizeof(crc));
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const uint8_t mode = data[0];
    std::string in(reinterpret_cast<const char *>(data) + 1, size - 1);
    std::string why;
    if ((mode & 0x80) != 0) {
        reseal(in);
    }
    switch (mode & 0x7f) {
    case 0: {
        nixlLf::connInfoWire ci;
        if (nixlLf::decodeConnInfo(in, ci, why)) {
            NIXL_FUZZ_CHECK(!ci.rails.empty() && ci.rails.size() <= nixlLf::max_rails);
            NIXL_FUZZ_CHECK(nixlLf::encodeConnInfo(ci) == in);
        } else {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    }
    case 1: {
        nixlLf::publicDataWire pd;
        if (nixlLf::decodePublicData(in, pd, why)) {
            NIXL_FUZZ_CHECK(pd.base + pd.len >= pd.base);
            NIXL_FUZZ_CHECK(nixlLf::encodePublicData(pd) == in);
        } else {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    }
    case 2: {
        nixlLf::notifFragWire f;
        if (nixlLf::decodeNotifFrag(in, f, why)) {
            NIXL_FUZZ_CHECK(f.total <= nixlLf::max_notif_len);
            NIXL_FUZZ_CHECK(f.offset <= f.total && f.payload.size() <= f.total - f.offset);
            std::string back;
            nixlLf::encodeNotifFrag(f, back);
            NIXL_FUZZ_CHECK(back == in);
        } else {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    }
    default:
        break;
    }
    return 0;
}
