/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file md_blob_nixl.h
 * @brief The agent metadata blob in NIXL 1.4's layout (../shared/reference/nixl-wire.md
 *        sections 2.1-2.7): the serdes container holding the agent name, conn entries and
 *        sections of registrations, so that a NIXL 1.4 agent reads what libnixl writes and the
 *        other way round.
 *
 * libnixl's own blob (md_blob.h) rides inside as one extra section whose backend name is
 * "libnixl" (nixl_md_ext_backend), always the last one. A NIXL 1.4 reader parses a section of
 * a backend it does not have and ignores it (spec 2.7 step 9b, section 5), so it sees a plain
 * NIXL blob. A section, not trailing bytes: the section count covers it, so a truncated
 * combined blob never reads as a complete NIXL blob (which would silently drop our checks).
 * Not a conn entry: a blob whose only conn entry NIXL cannot load fails there (step 6).
 *
 * Decoding checks every length against the bytes left and caps every count by what those
 * bytes can hold; it never reads out of bounds. Free functions, no shared state: thread-safe.
 */
#ifndef NIXL_SRC_CORE_METADATA_MD_BLOB_NIXL_H
#define NIXL_SRC_CORE_METADATA_MD_BLOB_NIXL_H

#include <string>
#include <string_view>

#include "md_blob.h"

/** Backend name of the section carrying libnixl's own blob (no NIXL backend has it). */
inline constexpr std::string_view nixl_md_ext_backend{"libnixl"};

/**
 * Writes nixl_part in NIXL 1.4's layout: conn entries and sections in the given order, each
 * descriptor as its 24-byte basic descriptor followed by its public data. With libnixl_blob
 * (not null) the "libnixl" section carrying it comes last. Does not validate.
 */
std::string
nixlMdEncodeNixl(const nixlMdBlob &nixl_part, const std::string *libnixl_blob);

/**
 * Parses NIXL 1.4's layout. out gets the NIXL part (without the "libnixl" section); ext views
 * the libnixl blob inside bytes when the last section is the "libnixl" one, else is empty.
 * Stricter than NIXL where NIXL writes nothing else: empty conn values, an empty or non-SDList
 * descriptor list, a mem type outside 0..4, a "libnixl" section that is not the last or holds
 * other than one descriptor, and bytes after the last section are refused. Repeated backends
 * are not checked here (nixlMdDecode does). NIXL_ERR_MISMATCH and one sentence in error on
 * failure; does not log.
 */
nixl_status_t
nixlMdDecodeNixl(std::string_view bytes,
                 nixlMdBlob &out,
                 std::string_view &ext,
                 std::string &error);

/**
 * The agent name a blob of any form carries, read without decoding the rest; false when it is
 * not readable there (loading then reports why).
 */
bool
nixlMdPeekAgentName(std::string_view bytes, std::string &name);

#endif // NIXL_SRC_CORE_METADATA_MD_BLOB_NIXL_H
