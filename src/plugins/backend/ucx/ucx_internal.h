/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_internal.h
 * @brief What the UCX backend's source files share and the engine's class does not declare:
 *        wire constants, small request helpers and the callbacks installed from another file.
 *        Internal to libplugin_UCX.so.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_INTERNAL_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_INTERNAL_H

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nixl_plugin_names.h"
#include "ucx_backend.h"
#include "ucx_nixl_peer.h"
#include "ucx_wire.h"

namespace nixlUcx {

// Connection info, public data and the notification header: see ucx_wire.h.
inline constexpr unsigned notif_am_id = 1;
/** Bytes a queued or in-flight notification is charged beyond its sender name and data. */
inline constexpr size_t notif_entry_overhead = 256;

/** Registration table slots (8 bytes each, touched lazily): more than any agent registers. */
inline constexpr size_t reg_table_slots = size_t(1) << 20;
/** process_vm_readv/writev take at most this many iovecs per side (UIO_MAXIOV). */
inline constexpr size_t iov_batch = 1024;
/** A post copies this much inline before handing the rest to checkXfer or the thread. */
inline constexpr size_t inline_bytes = 64 * 1024;
/**
 * A traced direct post of at most this many bytes records its phases in one batch when it
 * completes inline (one call into core, one clock read: the copy takes well under a few
 * microseconds, so the phases share the time of the post's end at microsecond resolution).
 */
inline constexpr size_t trace_batch_bytes = 16 * 1024;
/** Bytes one checkXfer or one post copies at most on the direct path. */
inline constexpr size_t step_budget = 4 * 1024 * 1024;
/** Bytes the progress thread copies per request and round, so requests share it fairly. */
inline constexpr size_t thread_budget = 1024 * 1024;

inline int64_t
nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/** num_threads above this is refused (a pool thread per core is the useful range). */
inline constexpr uint64_t max_pool_threads = 64;
/** split_batch_size above this is refused (as LIBFABRIC's). */
inline constexpr uint64_t max_split_batch = uint64_t(1) << 20;

/** A small per-thread number, so that threads spread over the workers without asking. */
inline size_t
threadSlot() {
    static std::atomic<size_t> next{0};
    thread_local size_t slot = next.fetch_add(1, std::memory_order_relaxed);
    return slot;
}

/** A memory kind's name for log lines, from the shared table (plugins do not link libnixl). */
inline const char *
memName(nixl_mem_t m) {
    return nixl_be_mem_name(static_cast<uint32_t>(m));
}

/** The operation UCX performs: anything but WRITE is done as a READ, and is named so. */
inline const char *
opName(nixl_xfer_op_t op) {
    return nixl_be_op_name(op == NIXL_WRITE ? NIXL_BE_OP_WRITE : NIXL_BE_OP_READ);
}

/**
 * Completes req. A tracked request (UCX operations or a notification in flight) is only
 * finished with its lane worker's lock held, which is also what guards the tracking set.
 */
inline void
finishReq(nixlUcxReq &req, nixl_status_t st) {
    if (req.tracked) {
        req.lane->worker->inflight.erase(&req);
        req.tracked = false;
    }
    req.phase = nixlUcxReq::phase_t::DONE;
    req.status.store(st, std::memory_order_release);
}

inline void
track(nixlUcxReq &req) {
    if (!req.tracked) {
        req.lane->worker->inflight.insert(&req);
        req.tracked = true;
    }
}

/**
 * The label of the direct path's wire phases: memcpy within one process, else
 * process_vm_writev/readv. A string_view chosen at run time keeps its length; a ternary of two
 * literals made a const char * whose length was measured (strlen) twice per traced request.
 */
inline std::string_view
wireLabel(const nixlUcxReq &req) noexcept {
    using namespace std::string_view_literals;
    const bool inProcess = req.conn->sameProcess && req.conn->peerTable != nullptr;
    return inProcess ? "ucx.memcpy"sv : "ucx.cma"sv;
}

/** What a request to a connection that is no longer usable reports. */
inline nixl_status_t
goneStatus(const nixlUcxConn &conn) {
    return conn.state.load(std::memory_order_acquire) == nixlUcxConn::LOST ?
        NIXL_ERR_REMOTE_DISCONNECT :
        NIXL_ERR_NOT_FOUND; // disconnected: the agent invalidated the peer's metadata
}

inline bool
rangeCovers(uintptr_t base, size_t len, uintptr_t addr, size_t n) {
    return addr >= base && n <= len && addr - base <= len - n;
}

/**
 * Splits "a=1,b=2" into pairs. An item without '=' continues the previous value, so that
 * "TLS=sysv,posix,self,RNDV_THRESH=8k" is TLS=sysv,posix,self and RNDV_THRESH=8k; false when
 * the first item has no '='.
 */
bool
splitPairs(std::string_view s, std::vector<std::pair<std::string, std::string>> &out);

/** A genNotif send is over (completed, failed or dropped): its bytes leave the peer's budget
 *  (notif_send_max_bytes). Worker lock held. */
void
unchargeSend(nixlUcxAmSend &s) noexcept;

/** Installs the notification handler (active message notif_am_id) on home worker w. */
ucs_status_t
receiveNotifs(nixlUcxWorker &w);

} // namespace nixlUcx

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_INTERNAL_H
