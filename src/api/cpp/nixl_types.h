/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_types.h
 * @brief Basic types of the NIXL 1.4-compatible API: memory kinds, operations, status codes,
 *        aliases for parameter maps and blobs, optional per-call arguments.
 *
 * Every enumerator keeps the numeric value NIXL 1.4 gives it, so values stored or sent by a
 * NIXL program mean the same here.
 */
#ifndef _NIXL_TYPES_H
#define _NIXL_TYPES_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

class nixlSerDes;
class nixlDlistH;
class nixlBackendH;
class nixlXferReqH;
class nixlAgentData;

/** @brief Kind of memory a descriptor points at. FILE_SEG must stay last (used as array bound). */
enum nixl_mem_t { DRAM_SEG, VRAM_SEG, BLK_SEG, OBJ_SEG, FILE_SEG };

/** @brief Direction of a one-sided transfer, seen from the initiator. */
enum nixl_xfer_op_t { NIXL_READ, NIXL_WRITE };

/**
 * @brief Result of every agent call. Zero is success, one is "still running", negatives are
 *        errors. Values are fixed by NIXL 1.4 and never renumbered.
 */
enum nixl_status_t {
    NIXL_IN_PROG = 1,
    NIXL_SUCCESS = 0,
    NIXL_ERR_NOT_POSTED = -1,
    NIXL_ERR_INVALID_PARAM = -2,
    NIXL_ERR_BACKEND = -3,
    NIXL_ERR_NOT_FOUND = -4,
    NIXL_ERR_MISMATCH = -5,
    NIXL_ERR_NOT_ALLOWED = -6,
    NIXL_ERR_REPOST_ACTIVE = -7,
    NIXL_ERR_UNKNOWN = -8,
    NIXL_ERR_NOT_SUPPORTED = -9,
    NIXL_ERR_REMOTE_DISCONNECT = -10,
    NIXL_ERR_CANCELED = -11,
    NIXL_ERR_NO_TELEMETRY = -12
};

/**
 * @brief How an agent protects its state against concurrent callers.
 *
 * NONE: the caller serialises all calls. STRICT: every call takes one exclusive lock.
 * RW: transfer-path calls (prepXferDlist, makeXferReq, createXferReq, post, status, release,
 * genNotif, getNotifs) share a reader lock; calls that change agent state take the writer lock.
 */
enum class nixl_thread_sync_t {
    NIXL_THREAD_SYNC_NONE,
    NIXL_THREAD_SYNC_STRICT,
    NIXL_THREAD_SYNC_RW,
    NIXL_THREAD_SYNC_DEFAULT = NIXL_THREAD_SYNC_NONE,
};

/** @brief How estimateXferCost arrived at its estimate. */
enum class nixl_cost_t {
    ANALYTICAL_BACKEND = 0,
};

/** @brief Printable names of the enums above; unknown values give "BAD_SEG"/"BAD_OP"/"BAD_STATUS". */
namespace nixlEnumStrings {
std::string
memTypeStr(const nixl_mem_t &mem);
std::string
xferOpStr(const nixl_xfer_op_t &op);
std::string
statusStr(const nixl_status_t &status);
} // namespace nixlEnumStrings

using nixl_backend_t = std::string;
using nixl_telemetry_plugin_t = std::string;
using nixl_blob_t = std::string;
using nixl_mem_list_t = std::vector<nixl_mem_t>;
using nixl_b_params_t = std::unordered_map<std::string, std::string>;
using nixl_notifs_t = std::unordered_map<std::string, std::vector<nixl_blob_t>>;
using nixl_query_resp_t = std::optional<nixl_b_params_t>;
using nixlMemViewH = void *;
using chrono_point_t = std::chrono::steady_clock::time_point;
using chrono_period_us_t = std::chrono::microseconds;

/** @brief Default TCP port of the peer-to-peer metadata listener. */
inline constexpr uint16_t default_comm_port = 8888;

/** @brief Label under which sendLocalMD publishes the full metadata ("metadata"). */
extern const std::string default_metadata_label;
/** @brief Default label for partial metadata in a central store ("partial_metadata"). */
extern const std::string default_partial_metadata_label;
/** @brief Placeholder agent name in memory views ("NULL_AGENT"). */
extern const std::string nixl_null_agent;

/** @brief Agent name meaning "the local side" in prepXferDlist. */
#define NIXL_INIT_AGENT ""

/**
 * @brief Optional arguments accepted by most agent calls. Fields a call does not use are
 *        ignored.
 */
struct nixlAgentOptionalArgs {
    /** Backends to consider, in order of preference; empty means all. */
    std::vector<nixlBackendH *> backends;
    /** Notification to send with a transfer; engaged means "notify", even with an empty blob. */
    std::optional<nixl_blob_t> notif;
    /** Legacy notification message, used when notif is not engaged and hasNotif is true. */
    nixl_blob_t notifMsg;
    /** Legacy notification flag. */
    bool hasNotif = false;
    /** makeXferReq: keep every descriptor separate instead of merging contiguous runs. */
    bool skipDescMerge = false;
    /** getLocalPartialMD/sendLocalPartialMD: also carry connection info. */
    bool includeConnInfo = false;
    /** Peer-to-peer metadata exchange: peer IP address. */
    std::string ipAddr;
    /** Peer-to-peer metadata exchange: peer port. */
    int port = default_comm_port;
    /** Central metadata store: label of a partial metadata entry. */
    std::string metadataLabel;
    /** Opaque backend-specific parameter (createXferReq and prepMemView forward it). */
    nixl_blob_t customParam;
    /**
     * libnixl extension (not in NIXL 1.4): the W3C `traceparent` of the application's request
     * this transfer serves ("00-<32 hex>-<16 hex>-<2 hex>"); empty means none. Honoured by
     * makeXferReq and createXferReq when the agent traces: the transfer request's trace context
     * takes its trace id, and its span is a child of the given parent id. An invalid value is
     * ignored with one warning (the request gets a trace id of its own). See docs/tracing.md.
     */
    std::string traceParent;
};
using nixl_opt_args_t = nixlAgentOptionalArgs;

/** @brief Per-request timings and sizes returned by getXferTelemetry. */
struct nixlXferTelemetry {
    chrono_point_t startTime;
    chrono_period_us_t postDuration;
    chrono_period_us_t xferDuration;
    size_t totalBytes;
    size_t descCount;
};
using nixl_xfer_telem_t = nixlXferTelemetry;

#endif // _NIXL_TYPES_H
