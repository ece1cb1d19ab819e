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

/** The format version this code writes and the only one it reads. */
inline constexpr uint32_t nixl_md_format_version = 1;
/** Bytes before the agent name: magic, version, flags, total length. */
inline constexpr size_t nixl_md_header_size = 24;
/** Agent names are 1..this many bytes. */
inline constexpr size_t nixl_md_max_agent_name_len = 1024;
/** Backend names (in connections and sections) are 1..this many bytes. */
inline constexpr size_t nixl_md_max_backend_name_len = 256;

struct nixlMdConn {
    std::string backend; ///< backend type, e.g. "UCX"
    std::string connInfo; ///< the engine's getConnInfo bytes

    friend bool
    operator==(const nixlMdConn &, const nixlMdConn &) = default;
};

struct nixlMdDesc {
    uintptr_t addr;
    size_t len;
    uint64_t devId;
    std::string publicData; ///< the engine's getPublicData bytes

    friend bool
    operator==(const nixlMdDesc &, const nixlMdDesc &) = default;
};

struct nixlMdSection {
    std::string backend;
    nixl_mem_t mem;
    std::vector<nixlMdDesc> descs;

    friend bool
    operator==(const nixlMdSection &, const nixlMdSection &) = default;
};

struct nixlMdBlob {
    std::string agentName;
    std::vector<nixlMdConn> conns;
    std::vector<nixlMdSection> sections;

    friend bool
    operator==(const nixlMdBlob &, const nixlMdBlob &) = default;
};

/**
 * Serialises a blob. It does not validate: a blob that breaks a decode rule (empty agent name,
 * repeated connection backend, mem type out of range, over nixl_md_max_blob_size...) is written
 * as given and refused by nixlMdDecode. Throws std::length_error only when a string or a count
 * does not fit the format's 32-bit length fields, which would otherwise be silently cut.
 */
std::string
nixlMdEncode(const nixlMdBlob &blob);

/** Which of the three forms a decoded blob came in (docs/metadata.md, Interoperability). */
enum class nixl_md_form_t {
    LIBNIXL, ///< libnixl's own blob alone, as nixlMdEncode writes it (older libnixl peers)
    COMBINED, ///< NIXL 1.4's layout with libnixl's own blob in its "libnixl" section
    NIXL, ///< NIXL 1.4's layout alone: a NIXL agent, or one set to NIXL_METADATA_FORMAT=nixl
};

/**
 * Parses a blob of any form. On failure returns NIXL_ERR_MISMATCH, leaves out unspecified, and
 * sets error to one sentence naming the cause (e.g. "bad magic", "format version 7, expected 1",
 * "truncated in section 3 descriptor 12"); it does not log, the caller does with context.
 * Connection, section and descriptor numbers in messages count from 0, in blob order.
 *
 * Besides bounds, it refuses: an empty or over-long agent or backend name, a mem type outside
 * DRAM_SEG..FILE_SEG, a backend repeated in the connection list, a (backend, mem type) pair
 * repeated in the section list, non-zero reserved flags, and any byte after the last section.
 *
 * COMBINED: out is the libnixl blob inside (the NIXL part must parse, and name the same agent,
 * but is otherwise ignored). NIXL: out is the NIXL part, held to the same rules (its conn info
 * and public data are the NIXL forms, for the backends to tell apart). form, when not null,
 * gets which one it was.
 */
nixl_status_t
nixlMdDecode(std::string_view bytes,
             nixlMdBlob &out,
             std::string &error,
             nixl_md_form_t *form = nullptr);

/** The agent name in the header of libnixl's own blob, without decoding the rest; false when
 *  the header is not readable. */
bool
nixlMdPeekOwnAgentName(std::string_view bytes, std::string &name);

#endif // NIXL_SRC_CORE_METADATA_MD_BLOB_H
