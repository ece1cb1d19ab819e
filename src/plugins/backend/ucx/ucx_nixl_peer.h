/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_nixl_peer.h
 * @brief The forms NIXL 1.4's UCX backend puts on the wire (../shared/reference/nixl-wire.md,
 *        sections 3.2, 3.3 and 3.5): connection info that is worker 0's raw UCP address,
 *        public data that is the raw packed remote key, and notifications that are active
 *        message 0 with no header and a serdes body ("name" = sender, "msg" = message).
 *
 * A peer whose connection info came in this form is a "NIXL peer": it has no identity data
 * (no direct path, no liveness through /proc), its public data must be raw keys, and it is
 * sent notifications in NIXL's form. Our own forms start with our magic and end with a CRC32C
 * (ucx_wire.h); a UCP worker address cannot start with that magic (its first byte's low
 * nibble is the address version, 0 or 1, and "N" has 0xe), so the first four bytes tell them
 * apart.
 *
 * NIXL's forms carry no checksum: every length is checked against the bytes held, and the
 * address and key are walked (checkWorkerAddress, checkPackedRkey) before UCX sees them.
 *
 * Pure functions over bytes, no UCX calls, so that test/fuzz/fuzz_ucx_wire.cpp drives them.
 * Thread-safe (no shared state).
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_NIXL_PEER_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_NIXL_PEER_H

#include <cstddef>
#include <string>
#include <string_view>

#include "ucx_wire.h"

namespace nixlUcx {

/** Active message id of NIXL 1.4's notifications (its first am_cb_op_t enumerator). */
inline constexpr unsigned nixl_notif_am_id = 0;
/**
 * Zero bytes kept after a NIXL peer's worker address: ucp_ep_create takes no length, and an
 * address cut short (checkWorkerAddress sees only its header) would make UCX read past the
 * bytes received; the zeros keep such reads inside our copy and end UCX's walk (a zero count).
 */
inline constexpr size_t nixl_addr_pad = 256;
/** Longest sender name a NIXL-form notification may carry (agent names are short). */
inline constexpr size_t nixl_notif_max_name = 64 * 1024;

/** Whether in is connection info in our form (starts with our magic), not NIXL's. */
bool
isOwnConnInfo(std::string_view in) noexcept;

/**
 * NIXL-form connection info: one raw UCP worker address. Checks it as checkWorkerAddress does
 * and copies it to addr. False, why says what is wrong (fits after "connection info of X:").
 */
bool
decodeNixlConnInfo(std::string_view in, std::string &addr, std::string &why);

/**
 * NIXL-form public data: one raw packed key, walked by checkPackedRkey (against local when
 * given: the engine's own layout for that memory type). False, why says what is wrong.
 */
bool
checkNixlPublicData(std::string_view in, const rkeyLayout *local, std::string &why);

/** The body of a NIXL notification: serdes magic, "name" sender, "msg" message. */
std::string
encodeNixlNotif(std::string_view sender, std::string_view msg);

/**
 * Reads a NIXL notification body. False, why says what is wrong: no serdes magic, no "name"
 * field (or an empty or oversized one), no "msg" field. sender and msg view body. Bytes after
 * "msg" are ignored, as NIXL ignores them.
 */
bool
decodeNixlNotif(std::string_view body,
                std::string_view &sender,
                std::string_view &msg,
                std::string &why);

} // namespace nixlUcx

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_NIXL_PEER_H
