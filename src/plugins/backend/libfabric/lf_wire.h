/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_wire.h
 * @brief The libfabric backend's wire formats: connection info, the public data of a
 *        registration (both versioned and sealed by a CRC32C) and the notification fragment.
 *
 * Pure functions over bytes: no libfabric calls and no engine state, so that the fuzzer
 * (test/fuzz/fuzz_lf_wire.cpp) and the unit tests drive them directly. Thread-safe.
 *
 * Every decoder checks each length against the bytes it holds and the limits below before it
 * reads, and says in `why` (a phrase that fits after "connection info of X:") what is wrong.
 * Byte layouts: README.md of this plugin.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_WIRE_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_WIRE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/nixl_crc32c.h"

namespace nixlLf {

/** "NXLC", "NXLM", "NXLN": first four bytes of connection info, public data, a fragment. */
inline constexpr uint32_t conn_magic = 0x434c584eu;
inline constexpr uint32_t md_magic = 0x4d4c584eu;
inline constexpr uint32_t notif_magic = 0x4e4c584eu;
/** Connection info and public data: version 2 adds the registration table (shm fast RMA);
 *  version 1 (no table) is still read, and such a peer keeps the delivery-complete path.
 *  Version 3 adds to public data the nonce of the engine that registered it, checked against
 *  the connection info it is loaded with; a version-3 peer's registrations must carry it. */
inline constexpr uint16_t wire_version = 3;
inline constexpr uint16_t wire_version_min = 1;
/** Notification fragments (unchanged since version 1). */
inline constexpr uint8_t notif_version = 1;

/** Limits a decoder enforces (a peer's bytes never make us allocate more). */
inline constexpr size_t max_rails = 8;
inline constexpr size_t max_prov_name = 64;
inline constexpr size_t max_ep_addr = 1024;
inline constexpr size_t max_host_id = 128;
inline constexpr size_t max_agent_name = 4096;
inline constexpr size_t max_table_name = 64;
/** Largest notification (message bytes) we send or reassemble. */
inline constexpr uint32_t max_notif_len = 64u << 20;

/** The seal of connection info and public data: the one CRC32C of the plugins. */
using nixlCodec::crc32c;

/** One opened provider ("rail") of an engine: its name and its endpoint address. */
struct railWire {
    std::string prov; ///< fabric_attr->prov_name, e.g. "shm" or "tcp;ofi_rxm"
    std::string addr; ///< fi_getname's bytes
};

struct connInfoWire {
    uint16_t version = wire_version; ///< encoded / as decoded (1: none of the fields below rails)
    uint64_t nonce = 0; ///< random per engine: tells notification senders apart
    std::string hostId; ///< /proc/sys/kernel/random/boot_id: same value = same host
    int32_t pid = 0;
    std::vector<railWire> rails;
    // Version 2: the engine's registration table (src/utils/regtable), for shm fast RMA.
    uint64_t startTime = 0; ///< process start time (field 22 of /proc/<pid>/stat)
    std::string regTable; ///< shared-memory name of the table; empty: none (safe path only)
    uint64_t regSlots = 0;
    uint64_t probeAddr = 0; ///< address of 8 bytes holding nonce: a CMA probe reads them
};

/** A registration as one rail of its owner sees it. */
struct mdRailWire {
    std::string prov;
    uint64_t key = 0;
    uint8_t virtAddr = 0; ///< 1: remote address is the virtual address; 0: offset from base
};

struct publicDataWire {
    uint16_t version = wire_version; ///< encoded / as decoded (1: no slot)
    uint16_t mem = 0; ///< nixl_mem_t
    uint64_t base = 0;
    uint64_t len = 0;
    std::vector<mdRailWire> rails;
    // Version 2: where the registration lives in its owner's table (0: in none).
    uint64_t slot = 0;
    uint64_t regId = 0; ///< the slot's value while the registration lives (never reused)
    // Version 3: the registering engine's nonce (connInfoWire::nonce).
    uint64_t owner = 0;
};

std::string
encodeConnInfo(const connInfoWire &in);
std::string
encodePublicData(const publicDataWire &in);
bool
decodeConnInfo(std::string_view in, connInfoWire &out, std::string &why);
bool
decodePublicData(std::string_view in, publicDataWire &out, std::string &why);

/**
 * A notification travels as one or more FI_MSG fragments of at most a receive buffer each.
 * Every fragment names its sender (nonce) and message (seq); the first (offset 0) also carries
 * the sender's agent name and, when traced, the 26-byte trace context. Fragments of one message
 * arrive in order (FI_ORDER_SAS), so the receiver appends.
 */
struct notifFragWire {
    uint64_t nonce = 0;
    uint32_t seq = 0;
    uint32_t total = 0; ///< message length
    uint32_t offset = 0; ///< of this fragment's payload in the message
    std::string_view sender; ///< first fragment only
    bool traced = false;
    uint8_t trace[26] = {}; ///< NIXL_BE_TRACE_CTX_WIRE_SIZE bytes, when traced
    std::string_view payload;
};

/** Header bytes of a fragment before its payload. */
size_t
notifHeaderSize(const notifFragWire &in) noexcept;
/** Appends the fragment (header, then in.payload) to out. */
void
encodeNotifFrag(const notifFragWire &in, std::string &out);
/** Views into `in`; valid while `in` is. */
bool
decodeNotifFrag(std::string_view in, notifFragWire &out, std::string &why);

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_WIRE_H
