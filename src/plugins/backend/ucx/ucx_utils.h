/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_utils.h
 * @brief Helpers of the UCX backend that do not need an engine: process identity and liveness
 *        (from src/utils/regtable/proc_identity.h), the byte codec of connection info and public data, parameter parsing and
 *        UCX status mapping.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_UTILS_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_UTILS_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ucp/api/ucp.h>

#include "codec/nixl_byte_codec.h"
#include "nixl_types.h"
#include "proc_identity.h"

namespace nixlUcx {

// Process identity and liveness live in src/utils/regtable (shared with LIBFABRIC).
using nixlReg::probeProcess;
using nixlReg::proc_state_t;
using nixlReg::processExited;
using nixlReg::procIdentity;
using nixlReg::readSelfIdentity;

/**
 * True when a UCX_TLS value leaves the cma transport enabled ("all", "sm", "shm", "cma", or a
 * "^..." exclusion list that does not name one of them).
 */
bool
tlsAllowsCma(std::string_view tls);

/** True when a UCX_TLS value leaves a shared-memory transport (sysv, posix, cma) enabled. */
bool
tlsAllowsShm(std::string_view tls);

/** True when a UCX_TLS value leaves a FIFO-based shared-memory transport (sysv, posix, xpmem). */
bool
tlsAllowsMm(std::string_view tls);

/** Parses NIXL's boolean words (y/yes/on/1/true/enable, n/no/off/0/false/disable, any case). */
bool
parseBool(std::string_view s, bool &out);

/** Parses a decimal unsigned integer that fits in 64 bits; false on anything else. */
bool
parseUnsigned(std::string_view s, uint64_t &out);

/** Trims ASCII blanks at both ends. */
std::string_view
trim(std::string_view s);

/**
 * Status a failed UCX operation becomes. Losing the peer (reset, timeout, unreachable, or a
 * cancellation while the connection was being torn down for that reason) is
 * NIXL_ERR_REMOTE_DISCONNECT; everything else NIXL_ERR_BACKEND.
 */
nixl_status_t
statusFromUcs(ucs_status_t st, bool peer_lost);

/** The transports of an endpoint's lanes, e.g. "sysv/memory(am) cma/memory(rma_bw)". */
std::string
epTransports(ucp_ep_h ep);

/**
 * The value of UCX_<key> in a UCP configuration; false when this UCX has no such UCP-level
 * key (transport-level keys are not listed there).
 */
bool
configValue(const ucp_config_t *config, const std::string &key, std::string &value);

/**
 * True when the user set a shared-memory transport key ("MM_FIFO_SIZE" and the like) for any
 * of them: UCX_MM_<rest>, UCX_SYSV_<rest>, UCX_POSIX_<rest> or UCX_XPMEM_<rest> in the
 * environment, or the same without UCX_ (or with it) among the engine_config pairs.
 */
bool
mmKeySetByUser(std::string_view mm_key,
               const std::vector<std::pair<std::string, std::string>> &engine_config);

/** The plugin's wire writer and reader (connection info, public data): the plugins' shared
 *  byte codec with u32 length prefixes. */
using nixlUcxWriter = nixlCodec::nixlByteWriter<uint32_t>;
using nixlUcxReader = nixlCodec::nixlByteReader<uint32_t>;

} // namespace nixlUcx

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_UTILS_H
