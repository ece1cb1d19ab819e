/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_nixlcomm_frame.cpp
 * @brief libFuzzer target for the P2P parser as the listener runs it (src/core/metadata/p2p/
 *        p2p_frame.h, allow_comm): streams that are NIXL 1.4's NIXLCOMM frames, ours, or
 *        neither, told apart by their first bytes.
 *
 * The first input byte picks the piece size (1..256) and the load limit, the rest is the byte
 * stream a listener reads. Every frame the parser returns must be within its type's limit and
 * re-encode, in the stream's dialect, to exactly the bytes it consumed; the dialect never
 * changes once known; an error is final and comes with a message.
 */
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/metadata/p2p/p2p_frame.h"
#include "fuzz_common.h"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const size_t step = static_cast<size_t>(data[0] & 0x7f) * 2 + 1;
    const uint32_t load_limit = (data[0] & 0x80) != 0 ? nixlP2P::min_load_limit :
                                                        nixlP2P::default_load_limit;
    const std::string_view in(reinterpret_cast<const char *>(data) + 1, size - 1);

    nixlP2PParser parser(load_limit, true);
    nixl_p2p_dialect_t dialect = nixl_p2p_dialect_t::UNKNOWN;
    size_t off = 0;
    size_t frame_start = 0;
    while (off < in.size()) {
        size_t used = 0;
        const size_t n = std::min(step, in.size() - off);
        const auto r = parser.feed(in.data() + off, n, used);
        NIXL_FUZZ_CHECK(used <= n);
        off += used;
        if (dialect != nixl_p2p_dialect_t::UNKNOWN) {
            NIXL_FUZZ_CHECK(parser.dialect() == dialect);
        }
        dialect = parser.dialect();
        if (r == nixlP2PParser::result_t::ERROR) {
            NIXL_FUZZ_CHECK(!parser.error().empty());
            size_t again = 0;
            NIXL_FUZZ_CHECK(parser.feed(in.data(), in.size(), again) ==
                            nixlP2PParser::result_t::ERROR);
            NIXL_FUZZ_CHECK(again == 0);
            break;
        }
        NIXL_FUZZ_CHECK(used == n || r == nixlP2PParser::result_t::FRAME);
        if (r != nixlP2PParser::result_t::FRAME) {
            continue;
        }
        NIXL_FUZZ_CHECK(dialect != nixl_p2p_dialect_t::UNKNOWN);
        const std::string &payload = parser.payload();
        NIXL_FUZZ_CHECK(payload.size() <= nixlP2P::payloadLimit(parser.type(), load_limit));
        const std::string again = dialect == nixl_p2p_dialect_t::NIXLCOMM ?
            nixlP2P::encodeComm(parser.type(), payload) :
            nixlP2P::encodeFrame(parser.type(), payload);
        NIXL_FUZZ_CHECK(again == in.substr(frame_start, off - frame_start));
        if (dialect == nixl_p2p_dialect_t::NIXLCOMM) {
            NIXL_FUZZ_CHECK(parser.type() == nixl_p2p_type_t::LOAD ||
                            parser.type() == nixl_p2p_type_t::FETCH ||
                            parser.type() == nixl_p2p_type_t::INVALIDATE);
        }
        frame_start = off;
        (void)nixlP2P::printable(payload);
    }
    return 0;
}
