/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The P2P metadata protocol's frames (p2p_frame.h). Integers are little-endian, written and
// read byte by byte, so no read is misaligned and the host's byte order does not matter.

#include "metadata/p2p/p2p_frame.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "codec/nixl_le.h"
#include "common/nixl_text.h"

namespace {

bool
knownType(uint8_t t) noexcept {
    return t >= static_cast<uint8_t>(nixl_p2p_type_t::HELLO) &&
        t <= static_cast<uint8_t>(nixl_p2p_type_t::STATUS);
}

} // namespace

namespace nixlP2P {

std::string
typeName(uint8_t type) {
    switch (type) {
    case 1:
        return "HELLO";
    case 2:
        return "LOAD";
    case 3:
        return "FETCH";
    case 4:
        return "INVALIDATE";
    case 5:
        return "STATUS";
    default:
        return "type " + std::to_string(type);
    }
}

uint32_t
payloadLimit(nixl_p2p_type_t type, uint32_t load_limit) noexcept {
    switch (type) {
    case nixl_p2p_type_t::HELLO:
        return 2 + max_name + 2 + max_token;
    case nixl_p2p_type_t::LOAD:
        return load_limit;
    case nixl_p2p_type_t::FETCH:
    case nixl_p2p_type_t::INVALIDATE:
        return max_name;
    case nixl_p2p_type_t::STATUS:
        return 4 + max_message;
    }
    return 0;
}

std::string
encodeFrame(nixl_p2p_type_t type, std::string_view payload) {
    if (payload.size() > UINT32_MAX) {
        throw std::length_error("P2P frame payload does not fit 32 bits");
    }
    std::string out;
    out.reserve(header_size + payload.size());
    out.append(magic, sizeof(magic));
    nixlLe::put<uint16_t>(out, protocol_version);
    out.push_back(static_cast<char>(type));
    out.push_back('\0');
    nixlLe::put<uint32_t>(out, static_cast<uint32_t>(payload.size()));
    out.append(payload);
    return out;
}

std::string_view
commCommand(nixl_p2p_type_t type) noexcept {
    switch (type) {
    case nixl_p2p_type_t::FETCH:
        return "SEND";
    case nixl_p2p_type_t::INVALIDATE:
        return "INVL";
    default:
        return "LOAD";
    }
}

std::string
encodeComm(nixl_p2p_type_t type, std::string_view arg) {
    std::string out;
    out.reserve(comm_header_size + arg.size());
    nixlLe::put<uint64_t>(out, sizeof(comm_marker) + 4 + arg.size());
    out.append(comm_marker, sizeof(comm_marker));
    out.append(commCommand(type));
    out.append(arg);
    return out;
}

std::string
encodeHello(std::string_view name, std::string_view token) {
    std::string out;
    nixlLe::put<uint16_t>(out, static_cast<uint16_t>(std::min(name.size(), max_name)));
    out.append(name.substr(0, max_name));
    nixlLe::put<uint16_t>(out, static_cast<uint16_t>(std::min(token.size(), max_token)));
    out.append(token.substr(0, max_token));
    return out;
}

bool
decodeHello(std::string_view p, std::string &name, std::string &token, std::string &error) {
    if (p.size() < 2) {
        error = "HELLO of " + std::to_string(p.size()) + " bytes is too short for a name length";
        return false;
    }
    const size_t nlen = nixlLe::get<uint16_t>(p.data());
    if (nlen == 0 || nlen > max_name) {
        error = "HELLO agent name length " + std::to_string(nlen) + ", expected 1.." +
            std::to_string(max_name);
        return false;
    }
    if (p.size() < 2 + nlen + 2) {
        error = "HELLO truncated: name of " + std::to_string(nlen) + " bytes and token length " +
            "need " + std::to_string(4 + nlen) + " bytes, got " + std::to_string(p.size());
        return false;
    }
    const size_t tlen = nixlLe::get<uint16_t>(p.data() + 2 + nlen);
    if (tlen > max_token) {
        error = "HELLO token length " + std::to_string(tlen) + ", limit " +
            std::to_string(max_token);
        return false;
    }
    if (p.size() != 4 + nlen + tlen) {
        error = "HELLO is " + std::to_string(p.size()) + " bytes, its fields make " +
            std::to_string(4 + nlen + tlen);
        return false;
    }
    name.assign(p.substr(2, nlen));
    token.assign(p.substr(4 + nlen, tlen));
    return true;
}

std::string
encodeStatus(nixl_status_t status, std::string_view message) {
    std::string out;
    nixlLe::put<uint32_t>(out, static_cast<uint32_t>(static_cast<int32_t>(status)));
    out.append(message.substr(0, max_message));
    return out;
}

bool
decodeStatus(std::string_view p, nixl_status_t &status, std::string &message, std::string &error) {
    if (p.size() < 4) {
        error = "STATUS of " + std::to_string(p.size()) + " bytes is too short for a status";
        return false;
    }
    if (p.size() > 4 + max_message) {
        error = "STATUS message of " + std::to_string(p.size() - 4) + " bytes, limit " +
            std::to_string(max_message);
        return false;
    }
    const int32_t v = static_cast<int32_t>(nixlLe::get<uint32_t>(p.data()));
    if (v < static_cast<int32_t>(NIXL_ERR_NO_TELEMETRY) || v > static_cast<int32_t>(NIXL_IN_PROG)) {
        error = "STATUS value " + std::to_string(v) + " is not a nixl_status_t";
        return false;
    }
    status = static_cast<nixl_status_t>(v);
    message.assign(p.substr(4));
    return true;
}

bool
tokenEqual(std::string_view expected, std::string_view presented) noexcept {
    // Every byte of the expected token is compared whatever the presented one holds, so the
    // time says nothing about how many leading bytes matched.
    unsigned diff = expected.size() == presented.size() ? 0u : 1u;
    for (size_t i = 0; i < expected.size(); ++i) {
        const unsigned char p =
            i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0u;
        diff |= static_cast<unsigned char>(expected[i]) ^ p;
    }
    return diff == 0;
}

std::string
printable(std::string_view text) {
    // Cut only (escaping here too wrote a peer's ESC as "\\x1b" in the log). Header-only:
    // the fuzzers build this file alone.
    return nixlText::cut(text, 64);
}

} // namespace nixlP2P

bool
nixlP2PParser::checkHeader() {
    using namespace nixlP2P;
    if (std::memcmp(header_, magic, sizeof(magic)) != 0) {
        error_ = "bad magic: not a libnixl P2P metadata frame (first bytes \"" +
            printable(std::string_view(header_, 8)) + "\")";
        return false;
    }
    const uint16_t version = nixlLe::get<uint16_t>(header_ + 8);
    if (version != protocol_version) {
        error_ = "protocol version " + std::to_string(version) + ", this agent speaks " +
            std::to_string(protocol_version);
        return false;
    }
    const uint8_t t = static_cast<uint8_t>(header_[10]);
    if (!knownType(t)) {
        error_ = "unknown frame " + typeName(t);
        return false;
    }
    const uint8_t flags = static_cast<uint8_t>(header_[11]);
    if (flags != 0) {
        error_ = "flags 0x" + std::string(1, "0123456789abcdef"[flags >> 4]) +
            std::string(1, "0123456789abcdef"[flags & 15]) + " set, version 1 defines none";
        return false;
    }
    type_ = static_cast<nixl_p2p_type_t>(t);
    length_ = nixlLe::get<uint32_t>(header_ + 12);
    const uint32_t limit = payloadLimit(type_, loadLimit_);
    if (length_ > limit) {
        error_ = typeName(t) + " frame of " + std::to_string(length_) +
            " bytes, over the limit of " + std::to_string(limit) +
            (type_ == nixl_p2p_type_t::LOAD ? " (NIXL_P2P_MAX_FRAME)" : "");
        return false;
    }
    return true;
}

bool
nixlP2PParser::checkCommHead() {
    using namespace nixlP2P;
    const size_t len_end = std::min<size_t>(haveHeader_, 8);
    // Lengths are bounded far below 2^32: a nonzero high byte is not a NIXLCOMM length.
    for (size_t i = 4; i < len_end; ++i) {
        if (header_[i] != 0) {
            error_ = "NIXLCOMM frame length over 4 GiB";
            return false;
        }
    }
    if (haveHeader_ < 8) {
        return true;
    }
    commLength_ = true; // 8 bytes with zero high bytes: a NIXLCOMM length, maybe out of range
    const uint64_t body = nixlLe::get<uint64_t>(header_);
    const uint64_t max_body = 13 + uint64_t{std::max<uint32_t>(loadLimit_, max_name)};
    if (body < 13 || body > max_body) {
        error_ = "NIXLCOMM frame of " + std::to_string(body) + " bytes, " +
            (body < 13 ? std::string("shorter than \"NIXLCOMM:\" and a command (13)") :
                         "over the limit of 13 + " + std::to_string(max_body - 13) +
                             " (NIXL_P2P_MAX_FRAME)");
        return false;
    }
    const size_t marker_end = std::min(haveHeader_, size_t{8} + sizeof(comm_marker));
    if (std::memcmp(header_ + 8, comm_marker, marker_end - 8) != 0) {
        error_ = "NIXLCOMM frame body does not start with \"NIXLCOMM:\" (\"" +
            printable(std::string_view(header_ + 8, marker_end - 8)) + "\")";
        return false;
    }
    if (haveHeader_ < comm_header_size) {
        return true;
    }
    const std::string_view cmd(header_ + 8 + sizeof(comm_marker), 4);
    if (cmd == "LOAD") {
        type_ = nixl_p2p_type_t::LOAD;
    } else if (cmd == "SEND") {
        type_ = nixl_p2p_type_t::FETCH;
    } else if (cmd == "INVL") {
        type_ = nixl_p2p_type_t::INVALIDATE;
    } else {
        error_ = "unknown NIXLCOMM command \"" + printable(cmd) + "\"";
        return false;
    }
    length_ = static_cast<uint32_t>(body - 13);
    const uint32_t limit = payloadLimit(type_, loadLimit_);
    if (length_ > limit) {
        error_ = "NIXLCOMM " + std::string(cmd) + " argument of " + std::to_string(length_) +
            " bytes, over the limit of " + std::to_string(limit) +
            (type_ == nixl_p2p_type_t::LOAD ? " (NIXL_P2P_MAX_FRAME)" : "");
        return false;
    }
    return true;
}

bool
nixlP2PParser::checkHead() {
    using namespace nixlP2P;
    const size_t n_magic = std::min(haveHeader_, sizeof(magic));
    const auto bad = [&] {
        return "bad magic: not a libnixl P2P metadata frame (first bytes \"" +
            printable(std::string_view(header_, haveHeader_ < header_size ? haveHeader_ : n_magic)) +
            "\")";
    };
    // NIXLCOMM is guessed from the first bytes (possibly of an earlier feed); a head that is no
    // NIXLCOMM frame either is reported as bad magic however the bytes were split.
    const auto comm_head = [&] {
        if (checkCommHead()) {
            return true;
        }
        if (!commLength_) {
            error_ = bad() + " nor a NIXL 1.4 NIXLCOMM frame (" + error_ + ")";
        }
        return false;
    };
    if (dialect_ == nixl_p2p_dialect_t::NIXLCOMM) {
        return comm_head();
    }
    // A wrong magic is reported as soon as its bytes are in, not after 16 bytes: a line of
    // text sent to the port is refused without waiting for more.
    if (std::memcmp(header_, magic, n_magic) == 0) {
        if (n_magic == sizeof(magic)) {
            dialect_ = nixl_p2p_dialect_t::LIBNIXL;
        }
        return haveHeader_ < header_size || checkHeader();
    }
    if (dialect_ == nixl_p2p_dialect_t::LIBNIXL || !allowComm_) {
        error_ = bad();
        return false;
    }
    // Our magic has nonzero bytes 4..7, a NIXLCOMM length zeros: no stream is both.
    dialect_ = nixl_p2p_dialect_t::NIXLCOMM;
    return comm_head();
}

nixlP2PParser::result_t
nixlP2PParser::feed(const char *data, size_t len, size_t &used) {
    used = 0;
    if (failed_) {
        return result_t::ERROR;
    }
    if (done_) {
        done_ = false;
        haveHeader_ = 0;
        length_ = 0;
        payload_.clear();
    }
    while (haveHeader_ < headNeed()) {
        if (used == len) {
            return result_t::NEED_MORE;
        }
        const size_t n = std::min(len - used, headNeed() - haveHeader_);
        std::memcpy(header_ + haveHeader_, data + used, n);
        haveHeader_ += n;
        used += n;
        if (!checkHead()) {
            failed_ = true;
            return result_t::ERROR;
        }
    }
    const size_t want = length_ - payload_.size();
    const size_t n = std::min(len - used, want);
    payload_.append(data + used, n);
    used += n;
    if (payload_.size() == length_) {
        done_ = true;
        return result_t::FRAME;
    }
    return result_t::NEED_MORE;
}
