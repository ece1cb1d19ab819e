/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_ucx_wire.cpp
 * @brief libFuzzer target for the UCX plugin's handling of the bytes a peer sends it:
 *        connection info, the public data of a registration, and the UCX worker address and
 *        packed remote key inside them (src/plugins/backend/ucx/ucx_wire.h).
 *
 * The first input byte picks what the rest is: 0 connection info, 1 public data, 2 a worker
 * address, 3 a packed remote key, 4 a notification header (with its trace context); NIXL
 * 1.4's forms (ucx_nixl_peer.h): 5 connection info (a raw worker address), 6 public data (a
 * raw packed key), 7 a notification body (active message 0's serdes stream). With bit 0x80
 * set, the target rewrites the trailing CRC32C
 * of a connection info or public data before decoding, so the structural checks behind the
 * checksum are fuzzed too, not only the checksum.
 *
 * Checked beyond "no crash, no out-of-bounds read": a refusal says why; what decodes encodes
 * back to the same bytes (the format is canonical); a key that parses has its per-domain keys
 * inside the input and passes the check against its own layout.
 *
 * These are pure functions: nothing here calls UCX. What UCX does with bytes that pass (a
 * hostile but consistent peer) is outside what a checksum can stop; docs/metadata.md says what
 * such a peer can still do.
 */
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "nixl_trace_context.h"
#include "ucx_nixl_peer.h"
#include "ucx_wire.h"

namespace {

void
reseal(std::string &s) {
    if (s.size() < sizeof(uint32_t)) {
        return;
    }
    const uint32_t crc = nixlUcx::crc32c(s.data(), s.size() - sizeof(uint32_t));
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
    switch (mode & 0x7f) {
    case 0: {
        if ((mode & 0x80) != 0) {
            reseal(in);
        }
        nixlUcx::connInfoWire ci;
        if (nixlUcx::decodeConnInfo(in, ci, why)) {
            NIXL_FUZZ_CHECK(!ci.addrs.empty());
            NIXL_FUZZ_CHECK(nixlUcx::encodeConnInfo(ci) == in);
        } else {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    }
    case 1: {
        if ((mode & 0x80) != 0) {
            reseal(in);
        }
        nixlUcx::publicDataWire pd;
        if (nixlUcx::decodePublicData(in, pd, why)) {
            NIXL_FUZZ_CHECK(nixlUcx::encodePublicData(pd) == in);
            // What the engine does next with the key.
            nixlUcx::rkeyLayout l;
            std::string sub;
            if (nixlUcx::parsePackedRkey(pd.rkey, l, sub)) {
                NIXL_FUZZ_CHECK(nixlUcx::checkPackedRkey(pd.rkey, &l, sub));
            }
        } else {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    }
    case 2:
        if (!nixlUcx::checkWorkerAddress(in, why)) {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    case 3: {
        nixlUcx::rkeyLayout l;
        if (nixlUcx::parsePackedRkey(in, l, why)) {
            NIXL_FUZZ_CHECK(l.packedLen >= sizeof(uint64_t) + 1 && l.packedLen <= in.size());
            NIXL_FUZZ_CHECK(nixlUcx::checkPackedRkey(in, &l, why));
        } else {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    }
    case 4: {
        nixlUcx::notifHeaderWire h;
        if (nixlUcx::decodeNotifHeader(in, h, why)) {
            // The sender lies inside the header; a context is used only when it decoded.
            NIXL_FUZZ_CHECK(h.sender.data() >= in.data() &&
                            h.sender.data() + h.sender.size() <= in.data() + in.size());
            NIXL_FUZZ_CHECK(h.traceOk == (h.traceSent && h.traceWhy.empty()));
            NIXL_FUZZ_CHECK(h.traceOk == (nixl_trace_ctx_is_valid(&h.trace) != 0));
            if (h.version == 1) {
                std::string again;
                nixlUcx::encodeNotifHeader(again, h.sender, nullptr);
                NIXL_FUZZ_CHECK(again == in);
            }
        } else {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    }
    case 5: {
        // Our magic first is ours; anything else must pass as a worker address or say why.
        std::string addr;
        if (!nixlUcx::isOwnConnInfo(in)) {
            if (nixlUcx::decodeNixlConnInfo(in, addr, why)) {
                NIXL_FUZZ_CHECK(addr == in);
            } else {
                NIXL_FUZZ_CHECK(!why.empty());
            }
        }
        break;
    }
    case 6: {
        // Structurally, then against its own layout, as the engine checks a NIXL peer's key.
        if (nixlUcx::checkNixlPublicData(in, nullptr, why)) {
            nixlUcx::rkeyLayout l;
            std::string sub;
            NIXL_FUZZ_CHECK(nixlUcx::parsePackedRkey(in, l, sub));
            NIXL_FUZZ_CHECK(nixlUcx::checkNixlPublicData(in, &l, sub));
        } else {
            NIXL_FUZZ_CHECK(!why.empty());
        }
        break;
    }
    case 7: {
        std::string_view sender;
        std::string_view msg;
        if (nixlUcx::decodeNixlNotif(in, sender, msg, why)) {
            // Both inside the body; the pair written again is a prefix of the body (the reader
            // skips the delimiters unchecked and ignores what follows "msg").
            NIXL_FUZZ_CHECK(!sender.empty() && sender.size() <= nixlUcx::nixl_notif_max_name);
            NIXL_FUZZ_CHECK(sender.data() >= in.data() &&
                            sender.data() + sender.size() <= in.data() + in.size());
            NIXL_FUZZ_CHECK(msg.data() >= in.data() &&
                            msg.data() + msg.size() <= in.data() + in.size());
            const std::string again = nixlUcx::encodeNixlNotif(sender, msg);
            NIXL_FUZZ_CHECK(again.size() <= in.size());
            std::string_view s2;
            std::string_view m2;
            std::string sub;
            NIXL_FUZZ_CHECK(nixlUcx::decodeNixlNotif(again, s2, m2, sub) && s2 == sender &&
                            m2 == msg);
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
