/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file md_blob.h
 * @brief The agent metadata blob exchanged between agents (getLocalMD / loadRemoteMD): our own
 *        binary format with a magic, a format version and bounds-checked reads.
 *
 * A blob carries the agent's name, the connection info of each remote-capable backend, and
 * sections of registered descriptors with each backend's public data. Partial blobs have the
 * same shape (fewer sections, maybe no connection info). Layout and version history are in
 * docs/metadata.md.
 *
 * Decoding never reads out of bounds and never allocates more than a small multiple of the blob
 * size: every count is checked against the bytes left before anything is reserved.
 *
 * Free functions, no shared state: thread-safe.
 */
#ifndef NIXL_SRC_CORE_METADATA_MD_BLOB_H
#define NIXL_SRC_CORE_METADATA_MD_BLOB_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nixl_types.h"

/** Blobs larger than this are refused (NIXL_ERR_MISMATCH) before any parsing. */
inline constexpr size_t nixl_md_max_blob_size = size_t(1) << 30;

struct nixlMdConn {
    std::string backend; ///< backend type, e.g. "UCX"
    std::string connInfo; ///< the engine's getConnInfo bytes
};

struct nixlMdDesc {
    uintptr_t addr;
    size_t len;
    uint64_t devId;
    std::string publicData; ///< the engine's getPublicData bytes
};

struct nixlMdSection {
    std::string backend;
    nixl_mem_t mem;
    std::vector<nixlMdDesc> descs;
};

struct nixlMdBlob {
    std::string agentName;
    std::vector<nixlMdConn> conns;
    std::vector<nixlMdSection> sections;
};

/** Serialises a blob. */
std::string
nixlMdEncode(const nixlMdBlob &blob);

/**
 * Parses a blob. On failure returns NIXL_ERR_MISMATCH, leaves out unspecified, and sets
 * error to one sentence naming the cause (e.g. "bad magic", "format version 7, expected 1",
 * "truncated in section 3 descriptor 12"); it does not log, the caller does with context.
 */
nixl_status_t
nixlMdDecode(std::string_view bytes, nixlMdBlob &out, std::string &error);

#endif // NIXL_SRC_CORE_METADATA_MD_BLOB_H
