/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: preparing, posting, checking and releasing transfers (UCX path).
#include "ucx_internal.h"

#include <algorithm>
#include <map>
#include <thread>
#include <unordered_set>

using nixlUcx::inline_bytes;
using nixlUcx::step_budget;
using nixlUcx::threadSlot;
using nixlUcx::memName;
using nixlUcx::opName;
using nixlUcx::finishReq;
using nixlUcx::track;
using nixlUcx::goneStatus;
using nixlUcx::rangeCovers;
using nixlUcx::splitPairs;
// Phase labels are string_views of literals: a ternary of two char pointers would be measured
// with strlen on every traced request.
using namespace std::string_view_literals;

namespace {

/**
 * The estimate's error margin, as a multiple of it. UCX's model knows the transports' nominal
 * latency and bandwidth, not caches, load or a target that must progress software RMA:
 * measured medians were 0.5x to 17x the estimate (docs/backends/ucx.md has the table).
 */
constexpr int64_t cost_margin_factor = 16;

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
nixlUcxEngine::startUcxPostLocked(nixlUcxReq &req, nixl_status_t &st) const {
    nixlUcxLane &lane = *req.lane;
    if (lane.worker->worker == nullptr || lane.ep == nullptr || !req.conn->usable()) {
        st = goneStatus(*req.conn);
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                        << req.remoteAgent << ": the connection is "
                                        << (st == NIXL_ERR_REMOTE_DISCONNECT ? "lost" : "closed"));
        finishReq(req, st);
        return false;
    }
    // Tracked: a worker torn down under the post finishes the request. The hold of 1 is
    // dropped by the poster once everything is posted, so no callback completes it before.
    track(req);
    req.outstanding = 1;
    if (tracing()) {
        tracePhase(req.traceCtx, NIXL_BE_PHASE_WIRE_SUBMITTED,
                   req.op == NIXL_WRITE ? "ucx.put"sv : "ucx.get"sv);
    }
    return true;
}

nixl_status_t
nixlUcxEngine::prepXfer(const nixl_xfer_op_t &operation,
                        const nixl_meta_dlist_t &local,
                        const nixl_meta_dlist_t &remote,
                        const std::string &remote_agent,
                        nixlBackendReqH *&handle,
                        const nixl_opt_b_args_t *opt_args) const {
    auto supported = [&](nixl_mem_t m) { return m == DRAM_SEG || (m == VRAM_SEG && vram_); };
    if (!supported(local.getType()) || !supported(remote.getType())) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX cannot move "
                                << memName(local.getType()) << " to/from "
                                << memName(remote.getType()) << " of "
                                << remote_agent);
        return NIXL_ERR_NOT_SUPPORTED;
    }
    if (local.size() != remote.size() || local.size() == 0) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX prepXfer to " << remote_agent << ": "
                                << local.size() << " local and " << remote.size()
                                << " remote descriptors");
        return NIXL_ERR_INVALID_PARAM;
    }
    std::shared_ptr<nixlUcxConn> conn = findConn(remote_agent);
    if (!conn) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX prepXfer: no connection to "
                                << remote_agent);
        return NIXL_ERR_NOT_FOUND;
    }
    // First use of a same-host peer: its private workers and endpoints are made now.
    if (nixl_status_t st = ensureLanes(*conn); st != NIXL_SUCCESS) {
        return st;
    }
    auto req = std::make_unique<nixlUcxReq>();
    req->engine = this;
    req->op = operation;
    req->conn = conn;
    req->local = local.data();
    req->remote = remote.data();
    req->count = local.size();
    req->remoteAgent = remote_agent;
    std::unordered_set<const nixlUcxRemoteMD *> seen;
    for (size_t i = 0; i < req->count; ++i) {
        const nixl_be_xfer_desc_t &l = req->local[i];
        const nixl_be_xfer_desc_t &r = req->remote[i];
        auto *lmd = dynamic_cast<const nixlUcxLocalMD *>(reinterpret_cast<nixlBackendMD *>(l.md));
        auto *rmd =
            dynamic_cast<const nixlUcxRemoteMD *>(reinterpret_cast<nixlBackendMD *>(r.md));
        if (lmd == nullptr || rmd == nullptr) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX prepXfer to " << remote_agent
                                    << ": descriptor " << i << " has no UCX "
                                    << (lmd == nullptr ? "local" : "remote") << " registration");
            return NIXL_ERR_INVALID_PARAM;
        }
        if (rmd->conn != conn) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX prepXfer to " << remote_agent
                                    << ": remote descriptor " << i << " belongs to agent "
                                    << rmd->conn->name);
            return NIXL_ERR_INVALID_PARAM;
        }
        if (l.len != r.len || !rangeCovers(lmd->base, lmd->len, l.addr, l.len) ||
            !rangeCovers(rmd->base, rmd->len, r.addr, r.len)) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX prepXfer to " << remote_agent
                                    << ": descriptor " << i << " (" << l.len << " bytes at 0x"
                                    << std::hex << l.addr << " -> " << r.len << " bytes at 0x"
                                    << r.addr << std::dec
                                    << ") differs in length or leaves its registration");
            return NIXL_ERR_INVALID_PARAM;
        }
        req->totalBytes += l.len;
        if (rmd->slot != 0 && seen.insert(rmd).second) {
            req->remoteMds.push_back(rmd);
        }
    }
    req->path = conn->direct && local.getType() == DRAM_SEG && remote.getType() == DRAM_SEG ?
        nixlUcxReq::path_t::DIRECT :
        nixlUcxReq::path_t::UCX;
    size_t lane = threadSlot();
    if (opt_args != nullptr && !opt_args->customParam.empty()) {
        std::vector<std::pair<std::string, std::string>> kv;
        if (splitPairs(opt_args->customParam, kv)) {
            for (const auto &[k, v] : kv) {
                uint64_t id = 0;
                if (k != "worker_id") {
                    continue;
                }
                if (!nixlUcx::parseUnsigned(v, id) || id >= conn->lanes.size()) {
                    NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX prepXfer to "
                                            << remote_agent << ": worker_id=" << nixlSdk::cutValue(v)
                                            << " is not below num_workers ("
                                            << conn->lanes.size() << ")");
                    return NIXL_ERR_INVALID_PARAM;
                }
                lane = id;
            }
        }
    }
    req->lane = conn->lanes[lane % conn->lanes.size()].get();
    if (opt_args != nullptr) {
        req->hasNotif = opt_args->hasNotif;
        req->notif = opt_args->notifMsg;
        req->traceCtx = opt_args->traceCtx;
    }
    handle = req.release();
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::postUcx(nixlUcxReq &req) const {
    nixlUcxLane &lane = *req.lane;
    nixlUcxWorker &w = *lane.worker;
    {
        std::lock_guard<std::mutex> g(w.lock);
        if (nixl_status_t st; !startUcxPostLocked(req, st)) {
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
    wakeProgress();
    return req.status.load(std::memory_order_acquire);
}

void
nixlUcxEngine::postUcxBatch(nixlUcxReq &req, size_t begin, size_t end) const {
    nixlUcxLane &lane = *req.lane;
    nixlUcxWorker &w = *lane.worker;
    std::lock_guard<std::mutex> g(w.lock);
    // Finished under the batches (worker torn down), a lost peer, or an earlier batch's error:
    // nothing more is posted; the last batch (finishUcxSplit) reports it.
    if (req.phase == nixlUcxReq::phase_t::DONE || w.worker == nullptr || lane.ep == nullptr ||
        !req.conn->usable() || req.ucxError != UCS_OK) {
        return;
    }
    postRangeLocked(req, lane, ucxOpParams(req, true), begin, end);
    w.progressLocked();
}

void
nixlUcxEngine::finishUcxSplit(nixlUcxReq &req) const {
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
    wakeProgress();
}

nixl_status_t
nixlUcxEngine::postXfer(const nixl_xfer_op_t &operation,
                        const nixl_meta_dlist_t &local,
                        const nixl_meta_dlist_t &remote,
                        const std::string &remote_agent,
                        nixlBackendReqH *&handle,
                        const nixl_opt_b_args_t *opt_args) const {
    (void)operation;
    (void)local;
    (void)remote;
    auto *req = static_cast<nixlUcxReq *>(handle);
    if (req == nullptr) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX postXfer to " << remote_agent
                                << ": no prepared request");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (req->status.load(std::memory_order_acquire) == NIXL_IN_PROG) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX postXfer to " << remote_agent
                                << ": the request is still running");
        return NIXL_ERR_REPOST_ACTIVE;
    }
    if (req->split) {
        // Finished while batches were still on their way out (a failure under them).
        pool_->await(*req);
    }
    if (opt_args != nullptr) {
        req->hasNotif = opt_args->hasNotif;
        req->notif = opt_args->notifMsg;
        req->traceCtx = opt_args->traceCtx;
    }
    if (!req->conn->usable()) {
        const bool lost = req->conn->state.load() == nixlUcxConn::LOST;
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX postXfer: " << remote_agent
                                << (lost ? " was lost" : " was disconnected"));
        return lost ? NIXL_ERR_REMOTE_DISCONNECT : NIXL_ERR_NOT_FOUND;
    }
    // prepXfer made the lanes unless that failed then; one atomic load otherwise.
    if (nixl_status_t st = ensureLanes(*req->conn); st != NIXL_SUCCESS) {
        return st;
    }
    {
        // The progress thread may still hold the request in its active list from the last
        // post and look at it under stepLock.
        std::lock_guard<std::mutex> g(req->stepLock);
        req->phase = nixlUcxReq::phase_t::DATA;
        req->curDesc = 0;
        req->curOff = 0;
        req->copied = 0;
        req->cancelled = false;
        req->outstanding = 0;
        req->ucxError = UCS_OK;
        req->failedDesc = SIZE_MAX;
        req->dropNotif = false;
        req->notifSend = nullptr;
        req->wireTraced = false;
        // num_threads > 0: a long list goes to the pool in batches of split_batch_size (set
        // before the status, which publishes the post to other threads).
        req->split = cfg_.numThreads != 0 && req->count > cfg_.splitBatch;
        req->status.store(NIXL_IN_PROG, std::memory_order_release);
    }
    // A small traced direct post completes inline: its phases go in one batch, recorded once
    // the copy is done (one call into core and one clock read instead of one per phase).
    // Everything the batch borrows lives on this stack, and so does a copy of the context:
    // once the request's status is out, another thread may release it.
    const bool traced = tracing();
    const bool batched = traced && req->path == nixlUcxReq::path_t::DIRECT &&
                         req->totalBytes <= nixlUcx::trace_batch_bytes && !req->split;
    nixlTracePhaseBatch batch;
    nixl_be_trace_ctx_t batchCtx;
    const nixl_be_trace_ctx_t *batchTrace = nullptr; // &batchCtx, or null: no context
    nixl_trace_attr_t attrs[3];
    if (traced) {
        std::memset(attrs, 0, sizeof(attrs));
        const bool direct = req->path == nixlUcxReq::path_t::DIRECT;
        attrs[0].key = "ucx.path";
        attrs[0].type = NIXL_TRACE_ATTR_STRING;
        attrs[0].value.str = direct ? nixl_plugin_str_t{"direct", 6} : nixl_plugin_str_t{"ucx", 3};
        attrs[1].key = "ucx.descs";
        attrs[1].type = NIXL_TRACE_ATTR_INT64;
        attrs[1].value.i64 = static_cast<int64_t>(req->count);
        attrs[2].key = "ucx.bytes";
        attrs[2].type = NIXL_TRACE_ATTR_INT64;
        attrs[2].value.i64 = static_cast<int64_t>(req->totalBytes);
        if (batched) {
            if (req->traceCtx != nullptr) {
                batchCtx = *req->traceCtx;
                batchTrace = &batchCtx;
            }
            batch.add(NIXL_BE_PHASE_SUBMIT, "ucx.post", attrs);
        } else {
            recordPhase(req->traceCtx, NIXL_BE_PHASE_SUBMIT, "ucx.post", nixlTraceNow, attrs);
        }
    }

    if (req->path == nixlUcxReq::path_t::UCX) {
        return req->split ? postSplit(*req) : postUcx(*req);
    }
    {
        std::lock_guard<std::mutex> g(req->stepLock);
        if (!staleCheck(*req)) {
            if (batched) {
                recordPhases(batchTrace, batch);
            }
            return req->status.load(std::memory_order_acquire);
        }
        if (req->split) {
            return postSplit(*req);
        }
        // Small transfers complete inside the post, and larger ones copy a first slice now,
        // with or without a progress thread (handing the slice to the thread would cost a
        // wake-up and a core switch: docs/backends/ucx.md); checkXfer or the thread do the rest.
        req->phaseBatch = batched ? &batch : nullptr;
        stepDirectLocked(*req, req->totalBytes <= inline_bytes ? inline_bytes : step_budget);
        req->phaseBatch = nullptr;
    }
    if (batched) {
        recordPhases(batchTrace, batch);
    }
    if (req->status.load(std::memory_order_acquire) != NIXL_IN_PROG) {
        directHousekeeping();
        return req->status.load(std::memory_order_acquire); // nothing left for the thread
    }
    if (cfg_.progressThread) {
        active_->add(req);
    }
    wakeProgress();
    return req->status.load(std::memory_order_acquire);
}

nixl_status_t
nixlUcxEngine::checkXfer(nixlBackendReqH *handle) const {
    auto *req = static_cast<nixlUcxReq *>(handle);
    nixl_status_t st = req->status.load(std::memory_order_acquire);
    if (st != NIXL_IN_PROG) {
        return st;
    }
    if (req->path == nixlUcxReq::path_t::DIRECT && !req->split) {
        std::unique_lock<std::mutex> g(req->stepLock, std::defer_lock);
        if (cfg_.progressThread ? g.try_lock() : (g.lock(), true)) {
            stepDirectLocked(*req, step_budget);
        }
    }
    if (req->status.load(std::memory_order_acquire) == NIXL_IN_PROG) {
        // All workers, not only the request's: UCX's wireup replies to peers that connect to
        // this engine wait on the home workers, and a peer leaving while one waits there can
        // trip an assertion inside UCX 1.13's tcp transport.
        progressAll(cfg_.progressThread);
        checkPeers();
        if (!req->conn->usable()) {
            reapLost(*req->conn);
        }
        if (req->split) {
            // The pool threads do the work: a caller polling in a loop hands them its core
            // (on a machine with as many busy threads as cores, spinning would halve them).
            std::this_thread::yield();
        }
    }
    return req->status.load(std::memory_order_acquire);
}

nixl_status_t
nixlUcxEngine::releaseReqH(nixlBackendReqH *handle) const {
    auto *req = static_cast<nixlUcxReq *>(handle);
    if (req == nullptr) {
        return NIXL_SUCCESS;
    }
    if (req->split) {
        // Batches not started move nothing; the running ones are waited for (a batch is at
        // most split_batch_size descriptors posted or copied).
        const bool running = req->status.load(std::memory_order_acquire) == NIXL_IN_PROG;
        req->splitCancel.store(true, std::memory_order_release);
        pool_->await(*req);
        if (running && req->status.load(std::memory_order_acquire) != NIXL_IN_PROG) {
            // Below it goes without a word, though part of it may never have been posted.
            NIXL_SDK_WARN_LIMITED("agent " << localAgent << ": UCX released a running "
                                   << opName(req->op) << " of " << req->count
                                   << " descriptors to " << req->remoteAgent
                                   << " while its batches were posted; batches not started "
                                   << "were skipped, no notification is sent");
        }
    }
    active_->remove(req);
    // req owns the last references to its connection and worker when the peer was
    // disconnected meanwhile; keep them until the locks below are released.
    const std::shared_ptr<nixlUcxConn> keep_conn = req->conn;
    const std::shared_ptr<nixlUcxWorker> keep_worker = req->lane->worker;
    nixlUcxWorker &w = *keep_worker;
    if (req->status.load(std::memory_order_acquire) != NIXL_IN_PROG) {
        // A callback may still be on its way out of the worker; its lock orders the delete.
        std::lock_guard<std::mutex> g(w.lock);
        delete req;
        return NIXL_SUCCESS;
    }
    if (req->path == nixlUcxReq::path_t::DIRECT) {
        {
            std::lock_guard<std::mutex> s(req->stepLock);
            req->cancelled = true;
            std::lock_guard<std::mutex> g(w.lock);
            w.ready.erase(std::remove(w.ready.begin(), w.ready.end(), req), w.ready.end());
            if (req->notifSend != nullptr) {
                req->notifSend->req = nullptr; // the message still goes; nobody waits for it
            }
            if (req->tracked) {
                w.inflight.erase(req);
                req->tracked = false;
            }
        }
        NIXL_SDK_WARN_LIMITED("agent " << localAgent << ": UCX released a running " << opName(req->op)
                               << " to " << req->remoteAgent << " after " << req->copied
                               << " of " << req->totalBytes
                               << " bytes; the rest is not copied"
                               << (req->phase == nixlUcxReq::phase_t::NOTIF ?
                                       " (its notification was already on its way)" :
                                       "; no notification is sent"));
        delete req;
        return NIXL_SUCCESS;
    }
    // UCX path: posted puts and gets cannot be recalled, and they may still touch the buffers.
    // Wait for them (a lost peer's operations are cancelled when its workers are destroyed).
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.releaseTimeoutMs);
    for (;;) {
        {
            std::lock_guard<std::mutex> g(w.lock);
            req->dropNotif = true;
            w.ready.erase(std::remove(w.ready.begin(), w.ready.end(), req), w.ready.end());
            if (req->notifSend != nullptr) {
                req->notifSend->req = nullptr;
                req->notifSend = nullptr;
            }
            if (req->outstanding == 0) {
                if (req->tracked) {
                    w.inflight.erase(req);
                }
                NIXL_SDK_WARN_LIMITED("agent " << localAgent << ": UCX released a running "
                                       << opName(req->op) << " to " << req->remoteAgent
                                       << " once its UCX operations finished; no notification "
                                       << "is sent");
                delete req;
                return NIXL_SUCCESS;
            }
            w.progressLocked();
        }
        checkPeers();
        if (!keep_conn->usable()) {
            reapLost(*keep_conn);
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        std::this_thread::yield();
    }
    NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX cannot release a running "
                            << opName(req->op) << " of " << req->count << " descriptors to "
                            << req->remoteAgent << ": its UCX operations did not finish within "
                            << cfg_.releaseTimeoutMs
                            << " ms (UCX cannot recall them); release it again later");
    return NIXL_ERR_REPOST_ACTIVE;
}

nixl_status_t
nixlUcxEngine::estimateXferCost(const nixl_xfer_op_t &operation,
                                const nixl_meta_dlist_t &local,
                                const nixl_meta_dlist_t &remote,
                                const std::string &remote_agent,
                                nixlBackendReqH *const &handle,
                                std::chrono::microseconds &duration,
                                std::chrono::microseconds &err_margin,
                                nixl_cost_t &method) const {
    (void)local;
    (void)remote;
    const auto *req = static_cast<const nixlUcxReq *>(handle);
    if (req == nullptr) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX estimateXferCost to " << remote_agent
                                << ": no prepared request");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (!req->conn->usable()) {
        const nixl_status_t st = goneStatus(*req->conn);
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX estimateXferCost: " << remote_agent
                                << (st == NIXL_ERR_REMOTE_DISCONNECT ? " was lost" :
                                                                       " was disconnected"));
        return st;
    }
    nixlUcxWorker &w = *req->lane->worker;
    double seconds = 0;
    ucs_status_t st = UCS_OK;
    {
        std::lock_guard<std::mutex> g(w.lock);
        if (w.worker == nullptr || req->lane->ep == nullptr) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX estimateXferCost: the connection to "
                                    << remote_agent << " is closed");
            return goneStatus(*req->conn);
        }
        // KV-cache lists repeat a few block sizes: ask UCX once per distinct length.
        std::map<size_t, double> memo;
        auto eval = [&](size_t len) {
            auto it = memo.find(len);
            if (it != memo.end()) {
                return it->second;
            }
            ucp_ep_evaluate_perf_param_t p{};
            p.field_mask = UCP_EP_PERF_PARAM_FIELD_MESSAGE_SIZE;
            p.message_size = len;
            ucp_ep_evaluate_perf_attr_t a{};
            a.field_mask = UCP_EP_PERF_ATTR_FIELD_ESTIMATED_TIME;
            if (st == UCS_OK) {
                st = ucp_ep_evaluate_perf(req->lane->ep, &p, &a);
            }
            const double t = st == UCS_OK ? a.estimated_time : 0;
            memo.emplace(len, t);
            return t;
        };
        for (size_t i = 0; i < req->count; ++i) {
            seconds += eval(req->local[i].len);
        }
        if (operation == NIXL_WRITE) {
            seconds += eval(0); // the flush: remote completion costs a round trip's latency
        }
        if (req->hasNotif) {
            // The message as sendAm() builds it: its header (version 2 with the trace context
            // when it carries one, else version 1) and the body.
            seconds += eval(nixlUcx::notifHeaderSize(localAgent.size(), carriesTrace(req)) +
                            req->notif.size());
        }
    }
    if (st != UCS_OK) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX estimateXferCost to " << remote_agent
                                << ": ucp_ep_evaluate_perf: " << ucs_status_string(st));
        return NIXL_ERR_BACKEND;
    }
    const double us = std::max(1.0, seconds * 1e6);
    duration = std::chrono::microseconds(static_cast<int64_t>(us + 0.5));
    err_margin = duration * cost_margin_factor;
    method = nixl_cost_t::ANALYTICAL_BACKEND;
    return NIXL_SUCCESS;
}
