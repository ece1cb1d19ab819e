/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_p2p_frame.cpp
 * @brief libFuzzer target for the P2P metadata framing (src/core/metadata/p2p/p2p_frame.h):
 *        the incremental parser fed in pieces, and the HELLO and STATUS payload decoders.
 *
 * The first input byte picks the piece size (1..256) and the load limit, the rest is the byte
 * stream a listener or client would read. Every frame the parser returns must be within its
 * type's limit and re-encode to exactly the bytes it consumed; a HELLO or STATUS payload that
 * decodes must re-encode to itself. An error is final and comes with a message.
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

    nixlP2PParser parser(load_limit);
    size_t off = 0;
    size_t frame_start = 0;
    while (off < in.size()) {
        size_t used = 0;
        const size_t n = std::min(step, in.size() - off);
        const auto r = parser.feed(in.data() + off, n, used);
        NIXL_FUZZ_CHECK(used <= n);
        off += used;
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
        const std::string &payload = parser.payload();
        NIXL_FUZZ_CHECK(payload.size() <= nixlP2P::payloadLimit(parser.type(), load_limit));
        NIXL_FUZZ_CHECK(nixlP2P::encodeFrame(parser.type(), payload) ==
                        in.substr(frame_start, off - frame_start));
        frame_start = off;

        std::string error;
        if (parser.type() == nixl_p2p_type_t::HELLO) {
            std::string name;
            std::string token;
            if (nixlP2P::decodeHello(payload, name, token, error)) {
                NIXL_FUZZ_CHECK(nixlP2P::encodeHello(name, token) == payload);
                NIXL_FUZZ_CHECK(nixlP2P::tokenEqual(token, token));
                NIXL_FUZZ_CHECK(nixlP2P::tokenEqual(name, token) == (name == token));
            } else {
                NIXL_FUZZ_CHECK(!error.empty());
            }
        } else if (parser.type() == nixl_p2p_type_t::STATUS) {
            nixl_status_t st = NIXL_SUCCESS;
            std::string msg;
            if (nixlP2P::decodeStatus(payload, st, msg, error)) {
                NIXL_FUZZ_CHECK(nixlP2P::encodeStatus(st, msg) == payload);
            } else {
                NIXL_FUZZ_CHECK(!error.empty());
            }
        }
        (void)nixlP2P::printable(payload);
    }
    return 0;
}
