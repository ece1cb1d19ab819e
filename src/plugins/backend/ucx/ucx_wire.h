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

namespace nixlUcx {

/** "NXUC", "NXUR": first four bytes of connection info and of public data. */
inline constexpr uint32_t conn_magic = 0x4355584eu;
inline constexpr uint32_t rkey_magic = 0x5255584eu;
/**
 * Version 2 added the CRC32C trailer (version 1 had none); version 3 the name of the engine's
 * registration table in shared memory at the end of connection info.
 */
inline constexpr uint16_t wire_version = 3;
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

} // namespace nixlUcx

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_WIRE_H
