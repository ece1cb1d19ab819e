/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX backend's UCP path (nixlUcxUcpPath, ucx_path.h): ucp_put_nbx/ucp_get_nbx on the
// request's lane and, for a WRITE, ucp_ep_flush_nbx; the notification goes once they completed.
#include "ucx_internal.h"

#include <algorithm>
#include <chrono>
#include <thread>

using nixlUcx::finishReq;
using nixlUcx::goneStatus;
using nixlUcx::opName;
using nixlUcx::track;
// Phase labels are string_views of literals: a ternary of two char pointers would be measured
// with strlen on every traced request.
using namespace std::string_view_literals;

namespace {

/** All UCX operations of req completed (or none was posted); lane worker lock held. */
void
ucxDataDoneLocked(nixlUcxReq &req) {
    const bool lost = !req.conn->usable();
    if (req.ucxError != UCS_OK || lost) {
        nixl_status_t st = lost ? goneStatus(*req.conn) :
                                  nixlUcx::statusFromUcs(req.ucxError, false);
        if (!lost) {
            if (req.failedDesc != SIZE_MAX && req.ucxError == UCS_ERR_NO_ELEM) {
                NIXL_SDK_ERROR_LIMITED("agent " << req.engine->agentName() << ": UCX "
                                        << opName(req.op) << " to " << req.remoteAgent
                                        << ", descriptor " << req.failedDesc
                                        << ": the remote key is gone (metadata unloaded)");
            } else if (req.failedDesc != SIZE_MAX) {
                NIXL_SDK_ERROR_LIMITED("agent " << req.engine->agentName() << ": UCX "
                                        << opName(req.op) << " to " << req.remoteAgent
                                        << ", descriptor " << req.failedDesc << " of "
                                        << req.count << ": "
                                        << ucs_status_string(req.ucxError));
            } else {
                NIXL_SDK_ERROR_LIMITED("agent " << req.engine->agentName() << ": UCX "
                                        << opName(req.op) << " of " << req.count
                                        << " descriptors to " << req.remoteAgent
                                        << " completed with an error: "
                                        << ucs_status_string(req.ucxError));
            }
        }
        finishReq(req, st);
        return;
    }
    if (req.engine->tracing()) {
        req.engine->tracePhase(req.traceCtx, NIXL_BE_PHASE_WIRE_COMPLETED,
                               req.op == NIXL_WRITE ? "ucx.flush"sv : "ucx.get"sv);
    }
    if (req.hasNotif && !req.dropNotif) {
        req.lane->worker->ready.push_back(&req);
        return;
    }
    finishReq(req, NIXL_SUCCESS);
}

void
ucxDataCb(void *request, ucs_status_t status, void *user_data) {
    ucp_request_free(request);
    auto *req = static_cast<nixlUcxReq *>(user_data);
    if (status != UCS_OK && req->ucxError == UCS_OK) {
        req->ucxError = status;
    }
    if (--req->outstanding == 0) {
        ucxDataDoneLocked(*req);
    }
}

/** The parameters of req's UCX operations: completion through ucxDataCb, and with
 *  memory_type the CUDA memory type when the local side is VRAM. */
ucp_request_param_t
ucxOpParams(nixlUcxReq &req, bool memory_type) {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = ucxDataCb;
    p.user_data = &req;
    const bool vram = memory_type && req.local[0].md != nullptr &&
        dynamic_cast<const nixlUcxLocalMD *>(reinterpret_cast<nixlBackendMD *>(req.local[0].md))
                ->mem == VRAM_SEG;
    if (vram) {
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMORY_TYPE;
        p.memory_type = UCS_MEMORY_TYPE_CUDA;
    }
    return p;
}

/**
 * Posts the puts (WRITE) or gets of descriptors [begin, end) of req on lane; the first failure
 * is kept in req (ucxError, failedDesc) and nothing is posted after it. Lane worker lock held.
 */
void
postRangeLocked(nixlUcxReq &req,
                nixlUcxLane &lane,
                const ucp_request_param_t &p,
                size_t begin,
                size_t end) {
    for (size_t i = begin; i < end; ++i) {
        const nixl_be_xfer_desc_t &l = req.local[i];
        const nixl_be_xfer_desc_t &r = req.remote[i];
        if (l.len == 0) {
            continue;
        }
        // prepXfer checked the type; a static cast is enough here.
        auto *rmd = static_cast<nixlUcxRemoteMD *>(reinterpret_cast<nixlBackendMD *>(r.md));
        ucp_rkey_h rkey = rmd->rkeys[lane.index];
        if (rkey == nullptr) {
            req.ucxError = UCS_ERR_NO_ELEM;
            req.failedDesc = i;
            return;
        }
        ucs_status_ptr_t sp = req.op == NIXL_WRITE ?
            ucp_put_nbx(lane.ep, reinterpret_cast<void *>(l.addr), l.len, r.addr, rkey, &p) :
            ucp_get_nbx(lane.ep, reinterpret_cast<void *>(l.addr), l.len, r.addr, rkey, &p);
        if (UCS_PTR_IS_ERR(sp)) {
            req.ucxError = UCS_PTR_STATUS(sp);
            req.failedDesc = i;
            return;
        }
        if (sp != nullptr) {
            ++req.outstanding;
        }
    }
}

/** Remote completion: after the flush every put of req on lane is visible at the target. */
void
flushLocked(nixlUcxReq &req, nixlUcxLane &lane, const ucp_request_param_t &p) {
    ucs_status_ptr_t sp = ucp_ep_flush_nbx(lane.ep, &p);
    if (UCS_PTR_IS_ERR(sp)) {
        req.ucxError = UCS_PTR_STATUS(sp);
    } else if (sp != nullptr) {
        ++req.outstanding;
    }
}

} // namespace

bool
nixlUcxUcpPath::startLocked(nixlUcxReq &req, nixl_status_t &st) const {
    nixlUcxLane &lane = *req.lane;
    if (lane.worker->worker == nullptr || lane.ep == nullptr || !req.conn->usable()) {
        st = goneStatus(*req.conn);
        NIXL_SDK_ERROR_LIMITED("agent " << host_.pathAgent() << ": UCX " << opName(req.op) << " to "
                                        << req.remoteAgent << ": the connection is "
                                        << (st == NIXL_ERR_REMOTE_DISCONNECT ? "lost" : "closed"));
        finishReq(req, st);
        return false;
    }
    // Tracked: a worker torn down under the post finishes the request. The hold of 1 is
    // dropped by the poster once everything is posted, so no callback completes it before.
    track(req);
    req.outstanding = 1;
    if (host_.pathTracing()) {
        host_.pathPhase(req, NIXL_BE_PHASE_WIRE_SUBMITTED,
                   req.op == NIXL_WRITE ? "ucx.put"sv : "ucx.get"sv);
    }
    return true;
}

nixl_status_t
nixlUcxUcpPath::post(nixlUcxReq &req, const nixlUcxPostTrace &) const {
    nixlUcxLane &lane = *req.lane;
    nixlUcxWorker &w = *lane.worker;
    if (req.split) {
        {
            std::lock_guard<std::mutex> g(w.lock);
            // The hold of 1 is dropped by the last batch (finishSplit).
            if (nixl_status_t st; !startLocked(req, st)) {
                return st;
            }
        }
        host_.pathSubmit(req);
        // In progress even if the pool has finished it already, as the direct path's.
        return NIXL_IN_PROG;
    }
    {
        std::lock_guard<std::mutex> g(w.lock);
        if (nixl_status_t st; !startLocked(req, st)) {
            return st;
        }
        const ucp_request_param_t p = ucxOpParams(req, true);
        postRangeLocked(req, lane, p, 0, req.count);
        if (req.ucxError == UCS_OK && req.op == NIXL_WRITE) {
            flushLocked(req, lane, p);
        }
        if (--req.outstanding == 0) {
            ucxDataDoneLocked(req);
        }
        w.progressLocked();
    }
    host_.pathWake();
    return req.status.load(std::memory_order_acquire);
}

void
nixlUcxUcpPath::runBatch(nixlUcxReq &req, size_t begin, size_t end) const {
    nixlUcxLane &lane = *req.lane;
    nixlUcxWorker &w = *lane.worker;
    std::lock_guard<std::mutex> g(w.lock);
    // Finished under the batches (worker torn down), a lost peer, or an earlier batch's error:
    // nothing more is posted; the last batch (finishSplit) reports it.
    if (req.phase == nixlUcxReq::phase_t::DONE || w.worker == nullptr || lane.ep == nullptr ||
        !req.conn->usable() || req.ucxError != UCS_OK) {
        return;
    }
    postRangeLocked(req, lane, ucxOpParams(req, true), begin, end);
    w.progressLocked();
}

void
nixlUcxUcpPath::finishSplit(nixlUcxReq &req) const {
    nixlUcxLane &lane = *req.lane;
    nixlUcxWorker &w = *lane.worker;
    {
        std::lock_guard<std::mutex> g(w.lock);
        if (req.phase == nixlUcxReq::phase_t::DONE) {
            return; // the worker's teardown finished it (destroyLocked)
        }
        if (req.splitCancel.load(std::memory_order_acquire)) {
            req.dropNotif = true; // released: part of the data was never posted
        }
        if (req.ucxError == UCS_OK && req.op == NIXL_WRITE && w.worker != nullptr &&
            lane.ep != nullptr && req.conn->usable()) {
            // After every batch's puts: remote completion of all of them. Released too: a
            // put completes locally before it reached the target (tcp), and the release
            // waits for this flush before the buffers and the worker may go.
            flushLocked(req, lane, ucxOpParams(req, false));
        }
        if (--req.outstanding == 0) {
            ucxDataDoneLocked(req);
        }
        w.progressLocked();
    }
    host_.pathWake();
}

nixl_status_t
nixlUcxUcpPath::releaseRunning(nixlUcxReq &req, nixlUcxWorker &w) const {
    // Posted puts and gets cannot be recalled, and they may still touch the buffers. Wait for
    // them (a lost peer's operations are cancelled when its workers are destroyed).
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.releaseTimeoutMs);
    for (;;) {
        {
            std::lock_guard<std::mutex> g(w.lock);
            req.dropNotif = true;
            w.ready.erase(std::remove(w.ready.begin(), w.ready.end(), &req), w.ready.end());
            if (req.notifSend != nullptr) {
                req.notifSend->req = nullptr;
                req.notifSend = nullptr;
            }
            if (req.outstanding == 0) {
                if (req.tracked) {
                    w.inflight.erase(&req);
                }
                NIXL_SDK_WARN_LIMITED("agent " << host_.pathAgent() << ": UCX released a running "
                                               << opName(req.op) << " to " << req.remoteAgent
                                               << " once its UCX operations finished; no "
                                               << "notification is sent");
                delete &req;
                return NIXL_SUCCESS;
            }
            w.progressLocked();
        }
        host_.pathCheckPeer(*req.conn);
        if (std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        std::this_thread::yield();
    }
    NIXL_SDK_ERROR_LIMITED("agent " << host_.pathAgent() << ": UCX cannot release a running "
                                    << opName(req.op) << " of " << req.count
                                    << " descriptors to " << req.remoteAgent
                                    << ": its UCX operations did not finish within "
                                    << cfg_.releaseTimeoutMs
                                    << " ms (UCX cannot recall them); release it again later");
    return NIXL_ERR_REPOST_ACTIVE;
}
