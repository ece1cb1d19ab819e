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
 * The first input byte picks the format: 0 connection info, 1 public data, 2 a fragment, 3 a
 * sequence of fragment headers fed to the notification reassembler (lf_notif.h) with small
 * limits, which must never hold more than its limits, whatever the sequence. With
 * bit 0x80 set the trailing CRC32C is rewritten to match, so the structural checks behind the
 * checksum are fuzzed too. Checked beyond "no crash, no out-of-bounds read": a refusal says
 * why, what decodes encodes back to the same bytes (the formats are canonical), and a fragment
 * that decodes lies inside its message.
 */
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <algorithm>
#include <vector>

#include "fuzz_common.h"
#include "lf_notif.h"
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
    case 3: {
        // Each 17-byte record: nonce (1 byte, few senders), seq (2), total (4), offset (4),
        // payload length (2), clock step (4). Payload bytes are zeros; the headers are
        // what a malicious peer controls.
        constexpr size_t peer_max = 1 << 16, total_max = 1 << 18;
        nixlLf::notifReassembler r(peer_max, total_max);
        std::vector<nixlLf::notifReassembler::message> out;
        static const std::string zeros(1 << 16, '\0');
        int64_t now = 0;
        for (size_t off = 0; off + 17 <= in.size(); off += 17) {
            const auto *b = reinterpret_cast<const uint8_t *>(in.data() + off);
            auto rd = [&](size_t at, size_t n) {
                uint64_t v = 0;
                for (size_t k = 0; k < n; ++k) {
                    v |= uint64_t(b[at + k]) << (8 * k);
                }
                return v;
            };
            nixlLf::notifFragWire f;
            f.nonce = rd(0, 1);
            f.seq = static_cast<uint32_t>(rd(1, 2));
            f.total = static_cast<uint32_t>(rd(3, 4)) % (nixlLf::max_notif_len + 1);
            f.offset = f.total == 0 ? 0 : static_cast<uint32_t>(rd(7, 4)) % f.total;
            const size_t plen = std::min<size_t>(rd(11, 2), f.total - f.offset);
            f.payload = std::string_view(zeros.data(), std::min(plen, zeros.size()));
            f.sender = f.offset == 0 ? std::string_view("peer") : std::string_view();
            now += static_cast<int64_t>(rd(13, 4) % 2000);
            auto res = r.feed(f, now, out);
            NIXL_FUZZ_CHECK(r.heldBytes() <= total_max);
            NIXL_FUZZ_CHECK(r.heldBytes(f.nonce) <= peer_max);
            NIXL_FUZZ_CHECK(!res.log || !res.why.empty());
        }
        for (const auto &m : out) {
            NIXL_FUZZ_CHECK(m.data.size() <= nixlLf::max_notif_len);
        }
        break;
    }
    default:
        break;
    }
    return 0;
}
