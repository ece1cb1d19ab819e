/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: preparing, posting, checking and releasing transfers; each request's data
// path (ucx_path.h: ucx_direct.cpp, ucx_ucp.cpp) does the path's part.
#include "ucx_internal.h"

#include <algorithm>
#include <map>
#include <thread>
#include <unordered_set>

using nixlUcx::threadSlot;
using nixlUcx::memName;
using nixlUcx::opName;
using nixlUcx::goneStatus;
using nixlUcx::rangeCovers;
using nixlUcx::splitPairs;

namespace {

/**
 * The estimate's error margin, as a multiple of it. UCX's model knows the transports' nominal
 * latency and bandwidth, not caches, load or a target that must progress software RMA:
 * measured medians were 0.5x to 17x the estimate (docs/backends/ucx.md has the table).
 */
constexpr int64_t cost_margin_factor = 16;

} // namespace

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
    req->dataPath = req->path == nixlUcxReq::path_t::DIRECT ?
        static_cast<const nixlUcxDataPath *>(direct_.get()) :
        ucp_.get();
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
        if (req->split) {
            req->splitCancel.store(false, std::memory_order_relaxed);
            req->splitErr.store(NIXL_SUCCESS, std::memory_order_relaxed);
            req->splitBytes.store(0, std::memory_order_relaxed);
            req->splitLeft.store((req->count + cfg_.splitBatch - 1) / cfg_.splitBatch,
                                 std::memory_order_relaxed);
        }
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
        attrs[0].key = "ucx.path";
        attrs[0].type = NIXL_TRACE_ATTR_STRING;
        attrs[0].value.str = req->dataPath->traceName();
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

    nixlUcxPostTrace trace;
    if (batched) {
        trace.batch = &batch;
        trace.ctx = batchTrace;
    }
    return req->dataPath->post(*req, trace);
}

nixl_status_t
nixlUcxEngine::checkXfer(nixlBackendReqH *handle) const {
    auto *req = static_cast<nixlUcxReq *>(handle);
    nixl_status_t st = req->status.load(std::memory_order_acquire);
    if (st != NIXL_IN_PROG) {
        return st;
    }
    req->dataPath->check(*req);
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
    req->dataPath->detach(*req);
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
    return req->dataPath->releaseRunning(*req, w);
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

nixl_status_t
nixlUcxEngine::getXferPath(const nixlBackendReqH *handle, nixl_xfer_path_info_t &out) const {
    const auto *req = dynamic_cast<const nixlUcxReq *>(handle);
    if (req == nullptr || req->conn == nullptr) {
        return NIXL_ERR_INVALID_PARAM;
    }
    const nixlUcxConn &conn = *req->conn;
    if (req->path == nixlUcxReq::path_t::DIRECT) {
        // The copy is a memcpy exactly when the direct path finds the mapped table in-process.
        out.path = conn.sameProcess && conn.peerTable ? NIXL_XFER_PATH_UCX_DIRECT_MEMCPY :
                                                        NIXL_XFER_PATH_UCX_DIRECT_CMA;
        return NIXL_SUCCESS;
    }
    out.path = NIXL_XFER_PATH_UCX_UCP;
    if (conn.direct) {
        out.fallback = NIXL_PATH_FALLBACK_MEM_TYPE_UNSUPPORTED;
        out.first_for_conn = conn.memFallbackReported.exchange(true) ? 0 : 1;
    } else if (conn.fallback != NIXL_PATH_FALLBACK_NONE) {
        out.fallback = conn.fallback;
        out.first_for_conn = conn.fallbackReported.exchange(true) ? 0 : 1;
    }
    return NIXL_SUCCESS;
}
