/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file p2p_frame.h
 * @brief The framing of libnixl's peer-to-peer metadata protocol: frame header, payload codecs
 *        and an incremental parser, which also reads NIXL 1.4's "NIXLCOMM:" frames (told apart
 *        by their first bytes). Pure functions and a parser object; no sockets, no logging,
 *        so the fuzzer drives exactly what the listener runs. The layouts are specified in
 *        docs/metadata.md ("P2P framing", "NIXLCOMM: NIXL 1.4 peers").
 *
 * Thread safety: the functions are reentrant; a nixlP2PParser belongs to one thread.
 */
#ifndef NIXL_SRC_CORE_METADATA_P2P_P2P_FRAME_H
#define NIXL_SRC_CORE_METADATA_P2P_P2P_FRAME_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nixl_types.h"

/** Frame types. Values are wire values. */
enum class nixl_p2p_type_t : uint8_t {
    HELLO = 1, ///< first frame of a connection: the client's agent name and token
    LOAD = 2, ///< a metadata blob: a push (request) or the answer to FETCH
    FETCH = 3, ///< request: send me your full metadata (payload: the name expected, may be empty)
    INVALIDATE = 4, ///< request: forget the agent named in the payload (the sender)
    STATUS = 5, ///< answer: a nixl_status_t and a short message
};

/** Which protocol a byte stream speaks; known once its first frame's first 8 bytes are in. */
enum class nixl_p2p_dialect_t : uint8_t {
    UNKNOWN,
    LIBNIXL, ///< libnixl's frames (magic, version, type, length)
    NIXLCOMM, ///< NIXL 1.4's: LE64 length, "NIXLCOMM:", a 4-byte command, its argument
};

namespace nixlP2P {

/** "NXLP2P" CR LF: the CR LF catches channels that rewrite line endings. */
inline constexpr char magic[8] = {'N', 'X', 'L', 'P', '2', 'P', '\r', '\n'};
/** Version of everything after the magic. */
inline constexpr uint16_t protocol_version = 1;
/** magic, u16 version, u8 type, u8 flags, u32 payload length (little-endian). */
inline constexpr size_t header_size = 16;
inline constexpr size_t max_name = 1024; ///< agent names (as in the metadata blob)
inline constexpr size_t max_token = 256;
inline constexpr size_t max_message = 1024; ///< STATUS message text
/** NIXL_P2P_MAX_FRAME bounds: LOAD payloads; the default equals the blob's own limit. */
inline constexpr uint32_t min_load_limit = 4096;
inline constexpr uint32_t default_load_limit = 1u << 30;

/** NIXL 1.4's marker at the start of every NIXLCOMM frame body (nixl-wire.md section 4.2). */
inline constexpr char comm_marker[9] = {'N', 'I', 'X', 'L', 'C', 'O', 'M', 'M', ':'};
/** NIXLCOMM: LE64 body length, the marker, the command. */
inline constexpr size_t comm_header_size = 8 + sizeof(comm_marker) + 4;

/** NIXLCOMM command of a frame type: "LOAD", "SEND" (FETCH), "INVL" (INVALIDATE); the caller
 *  passes one of those three. */
std::string_view
commCommand(nixl_p2p_type_t type) noexcept;

/** One NIXLCOMM frame: LE64 length of what follows, "NIXLCOMM:", the command of type, arg. */
std::string
encodeComm(nixl_p2p_type_t type, std::string_view arg);

/** Name of a frame type for messages ("LOAD"), "type N" for unknown values. */
std::string
typeName(uint8_t type);

/** The largest payload a frame of type may carry; load_limit applies to LOAD. */
uint32_t
payloadLimit(nixl_p2p_type_t type, uint32_t load_limit) noexcept;

/** Header plus payload. The caller keeps payloads within payloadLimit. */
std::string
encodeFrame(nixl_p2p_type_t type, std::string_view payload);

/** HELLO payload: u16 name length, name, u16 token length, token. */
std::string
encodeHello(std::string_view name, std::string_view token);

/** false with error set when the payload is not a valid HELLO (name 1..1024, token 0..256,
 *  nothing after). */
bool
decodeHello(std::string_view payload, std::string &name, std::string &token, std::string &error);

/** STATUS payload: i32 status, message (cut to max_message bytes). */
std::string
encodeStatus(nixl_status_t status, std::string_view message);

/** false with error set when the payload is not a valid STATUS (status in nixl_status_t's
 *  range, message within max_message). */
bool
decodeStatus(std::string_view payload,
             nixl_status_t &status,
             std::string &message,
             std::string &error);

/** Compares a presented token with the expected one in time that depends only on the
 *  expected token's length. */
bool
tokenEqual(std::string_view expected, std::string_view presented) noexcept;

/** text cut after 64 bytes ("... (N bytes)"), not escaped: for names from peers in log
 * lines, which the logger escapes once. */
std::string
printable(std::string_view text);

} // namespace nixlP2P

/**
 * Reads frames from a byte stream fed in pieces of any size. The header is checked as soon as
 * its 16 bytes are in (magic, version, type, flags, length against the type's limit), before
 * any payload byte is stored; the payload buffer grows with the bytes received, never by what a
 * header claims.
 *
 * With allow_comm, a stream whose first bytes are not libnixl's magic is read as NIXL 1.4's
 * NIXLCOMM frames: the 8-byte length must be 13..13 + the command's limit (its high bytes are
 * checked as they arrive, so text is refused within 5 bytes), the body must start with
 * "NIXLCOMM:" and a known command (LOAD, SEND = FETCH, INVL = INVALIDATE); type() and payload()
 * then hold the command and its argument. Every frame of a stream has the first one's dialect.
 */
class nixlP2PParser {
public:
    enum class result_t { NEED_MORE, FRAME, ERROR };

    explicit nixlP2PParser(uint32_t load_limit, bool allow_comm = false) noexcept
        : loadLimit_(load_limit),
          allowComm_(allow_comm) {}

    /**
     * Consumes bytes of data (used tells how many) up to the end of one frame. FRAME: type()
     * and payload() hold it until the next feed, which starts the next frame. ERROR: error()
     * says why, and the parser stays in error.
     */
    result_t
    feed(const char *data, size_t len, size_t &used);

    nixl_p2p_type_t
    type() const noexcept {
        return type_;
    }

    const std::string &
    payload() const noexcept {
        return payload_;
    }

    std::string &
    payload() noexcept {
        return payload_;
    }

    const std::string &
    error() const noexcept {
        return error_;
    }

    /** Bytes of the current, unfinished frame received so far (0 between frames). */
    size_t
    partial() const noexcept {
        return done_ ? 0 : haveHeader_ + payload_.size();
    }

    /** Size the current frame will have, or 0 while its header is incomplete. */
    size_t
    expected() const noexcept {
        return haveHeader_ == headerSize() ? headerSize() + length_ : 0;
    }

    /** The stream's protocol: UNKNOWN until the first 8 bytes of its first frame are in and
     *  valid (a stream that is neither stays UNKNOWN). */
    nixl_p2p_dialect_t
    dialect() const noexcept {
        return dialect_ == nixl_p2p_dialect_t::NIXLCOMM && !commLength_ ? nixl_p2p_dialect_t::UNKNOWN :
                                                                          dialect_;
    }

    /** Bytes of a header in this stream's dialect (16 until it is known to be NIXLCOMM). */
    size_t
    headerSize() const noexcept {
        return dialect_ == nixl_p2p_dialect_t::NIXLCOMM ? nixlP2P::comm_header_size :
                                                          nixlP2P::header_size;
    }

private:
    bool
    checkHeader();
    /** Checks the header bytes in so far; sets the dialect when the first 8 are in. */
    bool
    checkHead();
    bool
    checkCommHead();
    /** Header bytes to gather before the next check. */
    size_t
    headNeed() const noexcept {
        return dialect_ == nixl_p2p_dialect_t::UNKNOWN ? sizeof(nixlP2P::magic) : headerSize();
    }

    uint32_t loadLimit_;
    bool allowComm_;
    nixl_p2p_dialect_t dialect_ = nixl_p2p_dialect_t::UNKNOWN; ///< NIXLCOMM: maybe, until commLength_
    bool commLength_ = false; ///< a NIXLCOMM length was accepted: the stream is NIXLCOMM
    char header_[nixlP2P::comm_header_size]{};
    size_t haveHeader_ = 0;
    uint32_t length_ = 0;
    nixl_p2p_type_t type_ = nixl_p2p_type_t::HELLO;
    std::string payload_;
    bool done_ = false;
    bool failed_ = false;
    std::string error_;
};

#endif // NIXL_SRC_CORE_METADATA_P2P_P2P_FRAME_H
