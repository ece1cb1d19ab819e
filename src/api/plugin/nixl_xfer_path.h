/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * File: nixl_xfer_path.h
 *
 * The data paths a backend moves a request's bytes on, and the reasons it fell back from the
 * path it would have preferred (issue 34, beyond NIXL 1.4). Both are closed enums, so the
 * telemetry labels built on them are bounded: a backend reports one through
 * nixl_be_ops_t::get_xfer_path once per prepared request, core puts the path into the
 * reserved word of the transfer's bytes and request events, and the exporters count bytes and
 * transfers by {backend, path} and fallbacks by {backend, reason}.
 *
 * Growth rule: new values are appended before the *_COUNT enumerator; existing values never
 * change (they cross the exporter ABI and the BUFFER ring). A value a reader does not know is
 * counted as NIXL_XFER_PATH_UNKNOWN / NIXL_PATH_FALLBACK_OTHER. The prometheus_mp store packs
 * both into 33 spare words per row (its mp_store_layout.h static_asserts the fit): growing past
 * that needs a new store schema version there.
 *
 * Header-only (static inline functions): includable from C99 and C++; no state.
 */
#ifndef NIXL_XFER_PATH_H
#define NIXL_XFER_PATH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A backend's data path. 0: the backend does not say (no per-path series). */
typedef enum nixl_xfer_path {
    NIXL_XFER_PATH_UNKNOWN = 0,
    NIXL_XFER_PATH_UCX_DIRECT_MEMCPY = 1, /* UCX: memcpy between agents of one process */
    NIXL_XFER_PATH_UCX_DIRECT_CMA = 2, /* UCX: process_vm_readv/writev to a same-host peer */
    NIXL_XFER_PATH_UCX_UCP = 3, /* UCX: ucp_put_nbx/ucp_get_nbx */
    NIXL_XFER_PATH_LIBFABRIC_SHM = 4, /* LIBFABRIC: the shm provider rail */
    NIXL_XFER_PATH_LIBFABRIC_TCP = 5, /* LIBFABRIC: the tcp provider rail */
    NIXL_XFER_PATH_POSIX_URING = 6, /* POSIX: io_uring */
    NIXL_XFER_PATH_POSIX_AIO = 7, /* POSIX: Linux native aio (io_submit) */
    NIXL_XFER_PATH_POSIX_POSIX_AIO = 8, /* POSIX: POSIX aio (aio_read/aio_write) */
    NIXL_XFER_PATH_COUNT = 9
} nixl_xfer_path_t;

/* Why a backend moves a request on a fallback path. 0: it does not (or does not say). */
typedef enum nixl_path_fallback {
    NIXL_PATH_FALLBACK_NONE = 0,
    NIXL_PATH_FALLBACK_PEER_OTHER_HOST = 1, /* peer on another host or pid namespace */
    NIXL_PATH_FALLBACK_DISABLED_BY_CONFIG = 2, /* e.g. ucx_direct_cma=no */
    /* the transport or engine is not usable here: UCX_TLS without cma, a peer without shm,
     * io_uring refused by seccomp */
    NIXL_PATH_FALLBACK_TRANSPORT_UNAVAILABLE = 3,
    NIXL_PATH_FALLBACK_CMA_DENIED = 4, /* process_vm_readv not permitted, or its probe failed */
    NIXL_PATH_FALLBACK_PROBE_MISMATCH = 5, /* the cma probe read another process */
    NIXL_PATH_FALLBACK_NIXL_PEER = 6, /* a NIXL 1.4 peer: no identity data */
    NIXL_PATH_FALLBACK_MEM_TYPE_UNSUPPORTED = 7, /* e.g. VRAM on a DRAM-only path */
    NIXL_PATH_FALLBACK_OTHER = 8, /* a reason this reader does not know */
    NIXL_PATH_FALLBACK_COUNT = 9
} nixl_path_fallback_t;

/* The backend label of a path ("UCX", ...); "" for UNKNOWN and values outside the enum. */
static inline const char *
nixl_xfer_path_backend(uint32_t path) {
    switch (path) {
    case NIXL_XFER_PATH_UCX_DIRECT_MEMCPY:
    case NIXL_XFER_PATH_UCX_DIRECT_CMA:
    case NIXL_XFER_PATH_UCX_UCP:
        return "UCX";
    case NIXL_XFER_PATH_LIBFABRIC_SHM:
    case NIXL_XFER_PATH_LIBFABRIC_TCP:
        return "LIBFABRIC";
    case NIXL_XFER_PATH_POSIX_URING:
    case NIXL_XFER_PATH_POSIX_AIO:
    case NIXL_XFER_PATH_POSIX_POSIX_AIO:
        return "POSIX";
    default:
        return "";
    }
}

/* The path label ("direct_memcpy", "ucp", ...); "" for UNKNOWN and values outside the enum. */
static inline const char *
nixl_xfer_path_name(uint32_t path) {
    switch (path) {
    case NIXL_XFER_PATH_UCX_DIRECT_MEMCPY:
        return "direct_memcpy";
    case NIXL_XFER_PATH_UCX_DIRECT_CMA:
        return "direct_cma";
    case NIXL_XFER_PATH_UCX_UCP:
        return "ucp";
    case NIXL_XFER_PATH_LIBFABRIC_SHM:
        return "shm";
    case NIXL_XFER_PATH_LIBFABRIC_TCP:
        return "tcp";
    case NIXL_XFER_PATH_POSIX_URING:
        return "uring";
    case NIXL_XFER_PATH_POSIX_AIO:
        return "aio";
    case NIXL_XFER_PATH_POSIX_POSIX_AIO:
        return "posix_aio";
    default:
        return "";
    }
}

/* The reason label ("peer_other_host", ...); values outside the enum are "other". */
static inline const char *
nixl_path_fallback_name(uint32_t reason) {
    switch (reason) {
    case NIXL_PATH_FALLBACK_NONE:
        return "none";
    case NIXL_PATH_FALLBACK_PEER_OTHER_HOST:
        return "peer_other_host";
    case NIXL_PATH_FALLBACK_DISABLED_BY_CONFIG:
        return "disabled_by_config";
    case NIXL_PATH_FALLBACK_TRANSPORT_UNAVAILABLE:
        return "transport_unavailable";
    case NIXL_PATH_FALLBACK_CMA_DENIED:
        return "cma_denied";
    case NIXL_PATH_FALLBACK_PROBE_MISMATCH:
        return "probe_mismatch";
    case NIXL_PATH_FALLBACK_NIXL_PEER:
        return "nixl_peer";
    case NIXL_PATH_FALLBACK_MEM_TYPE_UNSUPPORTED:
        return "mem_type_unsupported";
    default:
        return "other";
    }
}

/*
 * What a backend reports for a prepared request (nixl_be_ops_t::get_xfer_path): its path, and
 * when that path is a fallback its reason, flagged first_for_conn on the first request of the
 * connection (or connection and memory kind) that fell back, so that core counts a fallback
 * once per connection, not per request.
 */
typedef struct nixl_xfer_path_info {
    uint32_t path; /* nixl_xfer_path_t */
    uint32_t fallback; /* nixl_path_fallback_t */
    uint32_t first_for_conn; /* non-zero: count this fallback */
    uint32_t reserved; /* zero */
} nixl_xfer_path_info_t;

/*
 * How the path reaches exporters (nixl_telemetry_exporter_plugin.h): in the reserved word of
 * the AGENT_TX_BYTES, AGENT_RX_BYTES, AGENT_TX_REQUESTS_NUM and AGENT_RX_REQUESTS_NUM events,
 * bits 0..7 the path (0: unknown). A fallback is one AGENT_{TX,RX}_REQUESTS_NUM event of value 0
 * (so every sum over those events stays what it was) with bits 8..15 the reason, non-zero, and
 * bits 0..7 the path fallen back to. Other event types keep the word zero. An exporter that
 * predates this ignores the word and counts the same totals as before.
 */
#define NIXL_TELEMETRY_PATH_MASK 0xffu
#define NIXL_TELEMETRY_FALLBACK_SHIFT 8u
#define NIXL_TELEMETRY_PATH_OF(reserved) ((uint32_t)(reserved) & NIXL_TELEMETRY_PATH_MASK)
#define NIXL_TELEMETRY_FALLBACK_OF(reserved) \
    (((uint32_t)(reserved) >> NIXL_TELEMETRY_FALLBACK_SHIFT) & 0xffu)

#ifdef __cplusplus
}
#endif

#endif /* NIXL_XFER_PATH_H */
