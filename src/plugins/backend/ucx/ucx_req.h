/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_req.h
 * @brief A prepared UCX transfer (nixlUcxReq) and an active message in flight (nixlUcxAmSend).
 *
 * Thread safety: a request is posted, checked and released by one caller at a time (core's
 * contract); each member says what guards it besides: stepLock (the direct copy cursor), the
 * lane's worker lock (UCX operations and the notification), the posting pool's lock
 * (splitJobs) or an atomic. An nixlUcxAmSend belongs to its worker's lock until UCX completes it.
 *
 * nixlUcxActiveList, the direct requests the progress thread advances, may be used from any
 * thread: the list and each request's `listed` are guarded by its own lock, under which only
 * the requests' stepLocks are taken (try_lock, by sweep()).
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REQ_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REQ_H

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ucp/api/ucp.h>

#include "nixl_backend_sdk.h"
#include "reg_table.h"
#include "ucx_conn.h"

class nixlUcxEngine;
class nixlUcxDataPath;

/** @brief An active message in flight; owns its bytes until UCX completes it. */
struct nixlUcxAmSend {
    std::string header;
    std::string body;
    nixlUcxReq *req = nullptr; ///< the transfer it completes, nullptr for genNotif
    std::string remote; ///< for log lines
    const nixlUcxEngine *engine = nullptr;
    nixlUcxWorker *worker = nullptr;
    /** genNotif only: the peer's bytes in flight this send is charged to (notif_send_max_bytes);
     *  shared so that it outlives a connection closed under it. */
    std::shared_ptr<std::atomic<size_t>> budget;
    size_t charged = 0;
};

/** @brief A prepared transfer. */
class nixlUcxReq : public nixlBackendReqH {
public:
    enum class path_t { DIRECT, UCX };
    enum class phase_t { IDLE, DATA, NOTIF, DONE };

    ~nixlUcxReq() override {
        if (heldMark.m != nullptr) {
            nixlReg::nixlRegTable::leave(heldMark);
        }
    }

    const nixlUcxEngine *engine = nullptr;
    nixl_xfer_op_t op = NIXL_WRITE;
    std::shared_ptr<nixlUcxConn> conn;
    nixlUcxLane *lane = nullptr;
    path_t path = path_t::UCX;
    /** The strategy that moves the bytes (ucx_path.h), picked with path at prepXfer. */
    const nixlUcxDataPath *dataPath = nullptr;
    /** Core's arrays; the same for every post and check of this request. */
    const nixl_be_xfer_desc_t *local = nullptr;
    const nixl_be_xfer_desc_t *remote = nullptr;
    size_t count = 0;
    size_t totalBytes = 0;
    /** Distinct remote registrations, checked for staleness before a direct post. */
    std::vector<const nixlUcxRemoteMD *> remoteMds;
    std::string remoteAgent;

    /** Notification of the current post. */
    bool hasNotif = false;
    std::string notif;
    /** Core's trace context of the request (opt args at prep and post); may be null. */
    const nixl_be_trace_ctx_t *traceCtx = nullptr;
    /** This post recorded WIRE_SUBMITTED (direct path: once, before the first copy). */
    bool wireTraced = false;
    /**
     * Where the phases of the current post go while postXfer copies it inline (a small
     * traced direct post): the posting thread's batch, set and cleared under stepLock by
     * that thread, so only it appends; null otherwise (phases are recorded directly).
     */
    nixlTracePhaseBatch *phaseBatch = nullptr;

    std::atomic<nixl_status_t> status{NIXL_ERR_NOT_POSTED};
    /** Written under stepLock or the lane worker lock, read under either: atomic. */
    std::atomic<phase_t> phase{phase_t::IDLE};

    /** Direct path: the copy cursor. */
    std::mutex stepLock;
    size_t curDesc = 0;
    size_t curOff = 0;
    size_t copied = 0;
    bool cancelled = false;
    /**
     * Fault injection only (ucx_fault_direct_hold_bytes): a held copy stays inside its mark
     * in the peer's table, so that the target's deregisterMem sees it in flight; left when
     * the request goes (conn, declared above, keeps the mapping alive until then).
     */
    nixlReg::nixlRegTable::mark_t heldMark;
    bool listed = false; ///< in the engine's nixlUcxActiveList (guarded by its lock)

    /** UCX path (and the notification of both paths): guarded by lane->worker->lock. */
    size_t outstanding = 0;
    ucs_status_t ucxError = UCS_OK;
    size_t failedDesc = SIZE_MAX;
    bool dropNotif = false;
    bool tracked = false; ///< in lane->worker->inflight
    nixlUcxAmSend *notifSend = nullptr;

    /**
     * num_threads > 0 and more than split_batch_size descriptors: this post's descriptors go
     * to the engine's pool in batches (ucx_pool.cpp). Written by the posting thread only.
     */
    bool split = false;
    /** Batches of the post not finished yet; the one that takes it to 0 completes the post. */
    std::atomic<size_t> splitLeft{0};
    /** Batches queued or running (the posting pool's lock); release and repost wait for 0. */
    size_t splitJobs = 0;
    /** Released (or the engine closes): batches not started move no data. */
    std::atomic<bool> splitCancel{false};
    /** Direct path: the first batch error (the batch that sets it logs the one line). */
    std::atomic<nixl_status_t> splitErr{NIXL_SUCCESS};
    /** Direct path: bytes the batches copied. */
    std::atomic<size_t> splitBytes{0};
};

/** @brief Direct requests with bytes left that the progress thread copies, round-robin. */
class nixlUcxActiveList {
public:
    /** Lists req unless it is listed already. */
    void
    add(nixlUcxReq *req) {
        std::lock_guard<std::mutex> g(lock_);
        if (!req->listed) {
            req->listed = true;
            reqs_.push_back(req);
        }
    }

    /** Unlists req (release): afterwards no sweep touches it. */
    void
    remove(nixlUcxReq *req) {
        std::lock_guard<std::mutex> g(lock_);
        if (req->listed) {
            reqs_.erase(std::remove(reqs_.begin(), reqs_.end(), req), reqs_.end());
            req->listed = false;
        }
    }

    bool
    empty() const {
        std::lock_guard<std::mutex> g(lock_);
        return reqs_.empty();
    }

    /** Calls step on each request, in order; those for which it returns true are unlisted. */
    template<class Step>
    void
    sweep(Step &&step) {
        std::lock_guard<std::mutex> g(lock_);
        for (auto it = reqs_.begin(); it != reqs_.end();) {
            if (step(**it)) {
                (*it)->listed = false;
                it = reqs_.erase(it);
            } else {
                ++it;
            }
        }
    }

private:
    mutable std::mutex lock_;
    std::vector<nixlUcxReq *> reqs_;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REQ_H
