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

/**
 * @brief Appends fixed-size native-endian fields and length-prefixed byte strings. Connection
 *        info and public data only travel between engines of this plugin on one cluster, so
 *        native byte order is enough (the core metadata blob makes the same choice).
 */
class nixlUcxWriter {
public:
    template<typename T>
    void
    put(T v) {
        static_assert(std::is_trivially_copyable_v<T>);
        buf_.append(reinterpret_cast<const char *>(&v), sizeof(v));
    }

    void
    putBytes(const void *data, size_t len) {
        put<uint32_t>(static_cast<uint32_t>(len));
        buf_.append(static_cast<const char *>(data), len);
    }

    void
    putBytes(std::string_view s) {
        putBytes(s.data(), s.size());
    }

    std::string &
    str() noexcept {
        return buf_;
    }

private:
    std::string buf_;
};

/** @brief Reads what nixlUcxWriter wrote; every get fails once the input is exhausted. */
class nixlUcxReader {
public:
    explicit nixlUcxReader(std::string_view in) noexcept : in_(in) {}

    template<typename T>
    bool
    get(T &v) noexcept {
        static_assert(std::is_trivially_copyable_v<T>);
        if (in_.size() - pos_ < sizeof(T)) {
            return false;
        }
        std::memcpy(&v, in_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return true;
    }

    bool
    getBytes(std::string_view &out) noexcept {
        uint32_t len = 0;
        if (!get(len) || in_.size() - pos_ < len) {
            return false;
        }
        out = in_.substr(pos_, len);
        pos_ += len;
        return true;
    }

    bool
    atEnd() const noexcept {
        return pos_ == in_.size();
    }

private:
    std::string_view in_;
    size_t pos_ = 0;
};

} // namespace nixlUcx

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_UTILS_H
