/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_wire.h
 * @brief The UCX backend's wire formats: connection info and the public data of a
 *        registration (version 2, each sealed by a CRC32C), and the structural checks of the
 *        UCX objects inside them (worker addresses, packed remote keys) that run before UCX
 *        sees a byte of them.
 *
 * Pure functions over bytes: no UCX calls, no engine state, so that the fuzzer
 * (test/fuzz/fuzz_ucx_wire.cpp) can drive them directly. Thread-safe (no shared state).
 *
 * Why: ucp_ep_create and ucp_ep_rkey_unpack take no length and trust their input; a damaged
 * worker address trips an assertion that aborts the process, a damaged remote key makes UCX
 * read past it, attach shared memory by an id taken from it, or crash releasing what it half
 * unpacked. The checksum catches accidental damage; the structural checks keep UCX inside the
 * bytes we hold. Neither stops a peer that crafts consistent input (docs/metadata.md).
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_WIRE_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_WIRE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nixl_backend_plugin.h"

namespace nixlUcx {

/** "NXUC", "NXUR": first four bytes of connection info and of public data. */
inline constexpr uint32_t conn_magic = 0x4355584eu;
inline constexpr uint32_t rkey_magic = 0x5255584eu;
/**
 * Version 2 added the CRC32C trailer (version 1 had none); version 3 the name of the engine's
 * registration table in shared memory at the end of connection info; version 4 the nonce of
 * the engine that made a registration in its public data, which binds each registration to
 * the connection info it must come with (a blob spliced from two engines' is refused).
 */
inline constexpr uint16_t wire_version = 4;
/** At most this many worker addresses in connection info (num_workers is at most 64). */
inline constexpr uint32_t max_conn_workers = 1024;

/** CRC32C (Castagnoli, reflected 0x82F63B78), the checksum of iSCSI and ext4; crc chains. */
uint32_t
crc32c(const void *data, size_t len, uint32_t crc = 0) noexcept;

/** What connection info says (see README.md of this plugin for the byte layout). */
struct connInfoWire {
    uint64_t nonce = 0;
    std::string bootId;
    uint64_t pidNs = 0;
    int32_t pid = 0;
    uint64_t startTime = 0;
    uint64_t regTable = 0;
    uint64_t regSlots = 0;
    std::vector<std::string> addrs; ///< one UCP worker address per home worker
    std::string regTableName; ///< shared-memory name of the registration table, "" if none
};

/** What the public data of one registration says. */
struct publicDataWire {
    uint16_t mem = 0; ///< nixl_mem_t
    uint64_t owner = 0; ///< nonce of the engine that registered it (its connection info's)
    uint64_t base = 0;
    uint64_t len = 0;
    uint32_t slot = 0;
    uint64_t regId = 0;
    std::string rkey; ///< ucp_rkey_pack's bytes
};

std::string
encodeConnInfo(const connInfoWire &in);
std::string
encodePublicData(const publicDataWire &in);

/**
 * Decode and check the framing and, for connection info, each worker address. The remote key
 * inside public data is checked separately (checkPackedRkey), against the engine's own layout.
 * On failure why says, in a phrase that fits after "connection info of X:",
 * what is wrong (truncated, wrong magic, version N, checksum mismatch, a bad worker address...).
 */
bool
decodeConnInfo(std::string_view in, connInfoWire &out, std::string &why);
bool
decodePublicData(std::string_view in, publicDataWire &out, std::string &why);

/**
 * Checks what ucp_ep_create reads first in a packed worker address: the header's version
 * (UCX 1.13 asserts it is 0 or 1 and aborts otherwise) and a minimum length.
 */
bool
checkWorkerAddress(std::string_view addr, std::string &why);

/**
 * @brief The layout of a packed remote key: which memory domains it carries, each with its
 *        packed size. Learned from a key of the engine's own (same UCX, same configuration),
 *        it pins what a peer's key for the same memory type must look like.
 */
struct rkeyLayout {
    uint64_t mdMap = 0;
    uint8_t memType = 0;
    uint8_t sizes[64] = {}; ///< by memory domain index, for the bits of mdMap
    size_t packedLen = 0; ///< md map, memory type and the per-domain keys (no trailing part)
};

/**
 * Walks a packed remote key (UCX 1.13+: u64 md map, u8 memory type, per set bit a u8 size and
 * that many bytes, then optional distance bytes) without reading outside rkey. With local, the
 * memory types must agree and, when both keys carry the same set of domains (peers configured
 * alike), every domain's key must have the size local gives it.
 */
bool
parsePackedRkey(std::string_view rkey, rkeyLayout &out, std::string &why);
bool
checkPackedRkey(std::string_view rkey, const rkeyLayout *local, std::string &why);

/**
 * Notification header (the active message's header; the body is the message).
 * Version 1: u32 magic "NXUN", then the sender's name (the rest of the header).
 * Version 2: u32 magic "NXUT", u8 version (2), u8 flags, u16 sender length, the sender's name,
 * then when flags has notif_flag_trace: u8 length and the request's trace context as the W3C
 * binary record (NIXL_BE_TRACE_CTX_WIRE_SIZE bytes for its version 0). A later version keeps
 * this prefix and may append; a receiver reads the fields it knows and ignores the rest.
 * A sender writes version 2 only when it has a valid trace context to carry, so that with
 * tracing off the message is the version-1 one, byte for byte.
 */
inline constexpr uint32_t notif_magic = 0x4e55584eu; // "NXUN", version 1
inline constexpr uint32_t notif_magic_v2 = 0x5455584eu; // "NXUT", version 2 and later
inline constexpr uint8_t notif_version = 2;
inline constexpr uint8_t notif_flag_trace = 0x01;
/** Fixed part of a version-2 header: magic, version, flags, sender length. */
inline constexpr size_t notif_v2_fixed = 8;

/** Bytes encodeNotifHeader() writes for a sender name of sender_len, with or without trace. */
constexpr size_t
notifHeaderSize(size_t sender_len, bool trace) noexcept {
    return trace ? notif_v2_fixed + sender_len + 1 + NIXL_BE_TRACE_CTX_WIRE_SIZE :
                   sizeof(notif_magic) + sender_len;
}

/** What a notification header says. */
struct notifHeaderWire {
    std::string_view sender; ///< points into the decoded header
    unsigned version = 0; ///< 1 or the sender's version (2 or later)
    bool traceSent = false; ///< the sender said it carries a trace context
    /** The decoded context when traceOk; zeroed (invalid) otherwise. correlation_id 0. */
    nixl_be_trace_ctx_t trace{};
    bool traceOk = false;
    /** Why a context that was sent could not be used (empty when none was sent, or it was). */
    std::string traceWhy;
};

/**
 * Appends a notification header to out: version 2 with trace (NIXL_BE_TRACE_CTX_WIRE_SIZE
 * bytes, from nixl_trace_ctx_encode) when trace is non-null, else version 1.
 */
void
encodeNotifHeader(std::string &out, std::string_view sender, const uint8_t *trace);

/**
 * Decodes a notification header. False (why says what is wrong) when the sender cannot be
 * told: a foreign magic, a version-2 header shorter than its fixed part or than its sender,
 * version 0 or 1 under the version-2 magic. A damaged trace context does not fail the header:
 * traceOk stays false and traceWhy says why, so the message is still delivered.
 */
bool
decodeNotifHeader(std::string_view in, notifHeaderWire &out, std::string &why);

} // namespace nixlUcx

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_WIRE_H
