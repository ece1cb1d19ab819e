/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Transfers and notifications of the LIBFABRIC engine.

#include "lf_backend.h"

#include <cerrno>
#include <csignal>
#include <algorithm>
#include <cstring>
#include <thread>

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

namespace nixlLf {

namespace {

    bool
    inside(uintptr_t addr, size_t len, uintptr_t base, size_t blen) {
        return addr >= base && addr - base <= blen && len <= blen - (addr - base);
    }

} // namespace

nixl_status_t
lfEngine::prepXfer(const nixl_xfer_op_t &op,
                   const nixl_meta_dlist_t &local,
                   const nixl_meta_dlist_t &remote,
                   const std::string &remote_agent,
                   nixlBackendReqH *&handle,
                   const nixl_opt_b_args_t *opt_args) const {
    const std::string who = "agent " + localAgent + ": LIBFABRIC transfer to " + remote_agent;
    if (op != NIXL_READ && op != NIXL_WRITE) {
        NIXL_SDK_ERROR_LIMITED(who << ": unknown operation " << int(op));
        return NIXL_ERR_INVALID_PARAM;
    }
    if (local.size() != remote.size() || local.getType() != DRAM_SEG ||
        remote.getType() != DRAM_SEG) {
        NIXL_SDK_ERROR_LIMITED(who << ": lists must be DRAM and of equal length (" << local.size()
                           << " local, " << remote.size() << " remote)");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (opt_args != nullptr && opt_args->hasNotif && opt_args->notifMsg.size() > max_notif_len) {
        NIXL_SDK_ERROR_LIMITED(who << ": notification of " << opt_args->notifMsg.size()
                           << " bytes (at most " << max_notif_len << ")");
        return NIXL_ERR_INVALID_PARAM;
    }
    auto req = std::make_unique<lfReq>();
    req->op = op;
    req->remote = remote_agent;
    const bool loopback = remote_agent == localAgent;
    if (!loopback) {
        req->peer = peers_.find(remote_agent);
        if (req->peer == nullptr) {
            NIXL_SDK_ERROR_LIMITED(who << ": no connection info loaded for it");
            return NIXL_ERR_NOT_FOUND;
        }
        req->rail = rails_[req->peer->rail].get();
    }
    const size_t n = local.size();
    if (!loopback) {
        req->ctxs.resize(n);
        req->iov.resize(n);
        req->desc.resize(n);
        req->rma.resize(n);
        req->riov.resize(n);
        req->gen.resize(n);
    }
    for (size_t i = 0; i < n; ++i) {
        const nixl_be_xfer_desc_t &l = local.data()[i];
        const nixl_be_xfer_desc_t &r = remote.data()[i];
        const auto *lmd = reinterpret_cast<const lfLocalMD *>(l.md);
        const auto *rmd = reinterpret_cast<const lfRemoteMD *>(r.md);
        if (lmd == nullptr || rmd == nullptr || l.len != r.len ||
            !inside(l.addr, l.len, lmd->base, lmd->len) ||
            !inside(r.addr, r.len, rmd->base, rmd->len)) {
            NIXL_SDK_ERROR_LIMITED(who << ": descriptor " << i << " (local [0x" << std::hex << l.addr
                               << ", +" << std::dec << l.len << "), remote [0x" << std::hex
                               << r.addr << ", +" << std::dec << r.len
                               << ")) has unequal lengths or lies outside its registration");
            return NIXL_ERR_INVALID_PARAM;
        }
        if (loopback != (rmd->local != nullptr)) {
            NIXL_SDK_ERROR_LIMITED(who << ": descriptor " << i << " has metadata of another agent");
            return NIXL_ERR_INVALID_PARAM;
        }
        if (loopback) {
            continue;
        }
        const size_t ri = req->peer->rail;
        if (rmd->hasRail[ri] == 0) {
            NIXL_SDK_ERROR_LIMITED(who << ": descriptor " << i << ": the registration has no key for "
                               << rails_[ri]->prov);
            return NIXL_ERR_INVALID_PARAM;
        }
        req->ctxs[i].kind = opCtx::RMA;
        req->ctxs[i].req = req.get();
        req->iov[i] = {reinterpret_cast<void *>(l.addr), l.len};
        req->desc[i] = lmd->descs[ri];
        req->rma[i].addr = rmd->virtAddr[ri] != 0 ? r.addr : r.addr - rmd->base;
        req->rma[i].len = r.len;
        req->rma[i].key = rmd->keys[ri];
        req->riov[i] = {reinterpret_cast<void *>(r.addr), r.len};
        req->gen[i] = {rmd->slot, rmd->regId};
    }
    {
        std::lock_guard<std::mutex> g(reqsMu_);
        reqs_.insert(req.get());
    }
    handle = req.release();
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::postLoopback(lfReq &req,
                       const nixl_meta_dlist_t &local,
                       const nixl_meta_dlist_t &remote,
                       const nixl_opt_b_args_t *opt) const {
    recordPhase(req.trace, NIXL_BE_PHASE_WIRE_SUBMITTED, "libfabric.memcpy", nowUs());
    for (size_t i = 0; i < local.size(); ++i) {
        auto *l = reinterpret_cast<void *>(local.data()[i].addr);
        auto *r = reinterpret_cast<void *>(remote.data()[i].addr);
        if (req.op == NIXL_WRITE) {
            std::memmove(r, l, local.data()[i].len);
        } else {
            std::memmove(l, r, local.data()[i].len);
        }
    }
    const uint64_t done = nowUs();
    recordPhase(req.trace, NIXL_BE_PHASE_WIRE_COMPLETED, "libfabric.memcpy", done);
    if (opt != nullptr && opt->hasNotif) {
        inbox_.pushLocal(localAgent, opt->notifMsg);
        recordPhase(req.trace, NIXL_BE_PHASE_NOTIF_SENT, "libfabric.notif", done);
        recordPhase(req.trace, NIXL_BE_PHASE_NOTIF_RECEIVED, "libfabric.notif", done);
        recordPhase(req.trace, NIXL_BE_PHASE_REMOTE_OBSERVED, "libfabric.notif", done);
    }
    req.status.store(NIXL_SUCCESS);
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::postXfer(const nixl_xfer_op_t &op,
                   const nixl_meta_dlist_t &local,
                   const nixl_meta_dlist_t &remote,
                   const std::string &remote_agent,
                   nixlBackendReqH *&handle,
                   const nixl_opt_b_args_t *opt_args) const {
    (void)op;
    (void)remote_agent;
    auto *req = static_cast<lfReq *>(handle);
    const nixl_be_trace_ctx_t *trace = opt_args != nullptr ? opt_args->traceCtx : nullptr;
    recordPhase(trace, NIXL_BE_PHASE_SUBMIT, "libfabric.post", nowUs());
    if (req->peer == nullptr) {
        req->trace = trace;
        return postLoopback(*req, local, remote, opt_args);
    }
    if (opt_args != nullptr && opt_args->hasNotif && opt_args->notifMsg.size() > max_notif_len) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC transfer to " << req->remote
                                << ": notification of " << opt_args->notifMsg.size()
                                << " bytes (at most " << max_notif_len << ")");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (req->peer->dead.load()) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC transfer to " << req->remote
                                << ": the peer is disconnected");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    const std::string *notif =
        opt_args != nullptr && opt_args->hasNotif ? &opt_args->notifMsg : nullptr;
    // More than a turn with num_threads: the pool posts it, turn by turn; the caller returns
    // at once.
    const bool pooled = cfg_.numThreads != 0 && req->ctxs.size() > cfg_.splitBatch;
    const nixl_status_t st = req->rail->post(*req, trace, notif, pooled);
    if (pooled) {
        pool_->post(req);
        return NIXL_IN_PROG;
    }
    wakeProgressIfIdle(); // after the rail unlocked: what it posted is visible to the thread
    return st;
}

nixl_status_t
lfEngine::checkXfer(nixlBackendReqH *handle) const {
    auto *req = static_cast<lfReq *>(handle);
    auto st = static_cast<nixl_status_t>(req->status.load(std::memory_order_acquire));
    if (st != NIXL_IN_PROG) {
        return st;
    }
    lfRail &r = *req->rail;
    // A request the pool is posting: its turns progress the rail (reading completions
    // between turns); the caller would only contend for the rail's mutex and a core.
    const bool pooled = cfg_.numThreads != 0 && req->poolActive.load(std::memory_order_acquire);
    if (!progThread_ && !pooled) {
        r.progress();
    }
    st = static_cast<nixl_status_t>(req->status.load(std::memory_order_acquire));
    if (st == NIXL_IN_PROG && peers_.gone(*req->peer, localAgent)) {
        r.abandon(*req, NIXL_ERR_REMOTE_DISCONNECT);
        st = NIXL_ERR_REMOTE_DISCONNECT;
    } else if (st == NIXL_IN_PROG && cfg_.stallTimeout.count() > 0 &&
               nowMs() - req->lastProgressMs.load(std::memory_order_relaxed) >
                   cfg_.stallTimeout.count()) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC transfer to " << req->remote
                                << ": no completion for " << cfg_.stallTimeout.count()
                                << " ms (stall_timeout_ms); failed");
        r.abandon(*req, NIXL_ERR_BACKEND);
        st = NIXL_ERR_BACKEND;
    }
    if (pooled && st == NIXL_IN_PROG) {
        std::this_thread::yield(); // a caller polling in a loop hands the pool its core
    }
    return st;
}

nixl_status_t
lfEngine::releaseReqH(nixlBackendReqH *handle) const {
    auto *req = static_cast<lfReq *>(handle);
    if (cfg_.numThreads != 0 && req->rail != nullptr) {
        pool_->forget(req); // no pool thread touches it after this
    }
    if (req->rail != nullptr && !req->rail->release(*req)) {
        return NIXL_SUCCESS; // the last completion frees it
    }
    std::lock_guard<std::mutex> g(reqsMu_);
    reqs_.erase(req);
    delete req;
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::getNotifs(notif_list_t &notif_list) {
    if (!progThread_) {
        progressAll();
    }
    inbox_.take(notif_list);
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::genNotif(const std::string &remote_agent, const std::string &msg) const {
    if (msg.size() > max_notif_len) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC notification to " << remote_agent
                                << " of " << msg.size() << " bytes (at most " << max_notif_len
                                << ")");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (remote_agent == localAgent) {
        inbox_.pushLocal(localAgent, msg);
        return NIXL_SUCCESS;
    }
    auto peer = peers_.find(remote_agent);
    if (peer == nullptr) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC notification to " << remote_agent
                                << ": no connection info loaded for it");
        return NIXL_ERR_NOT_FOUND;
    }
    const nixl_status_t st = rails_[peer->rail]->sendMessage(*peer, msg, cfg_.notifSendMax);
    if (st == NIXL_ERR_REPOST_ACTIVE) {
        NIXL_SDK_WARN_LIMITED("agent " << localAgent << ": LIBFABRIC genNotif to " << remote_agent
                                       << " refused for now: "
                                       << peer->notifSendHeld->load(std::memory_order_relaxed)
                                       << " bytes of notifications to it are not sent yet "
                                          "(notif_send_max_bytes="
                                       << cfg_.notifSendMax << "); retry later");
        return st;
    }
    wakeProgressIfIdle();
    return st;
}

nixl_status_t
lfEngine::getXferPath(const nixlBackendReqH *handle, nixl_xfer_path_info_t &out) const {
    const auto *req = dynamic_cast<const lfReq *>(handle);
    if (req == nullptr || req->peer == nullptr) {
        return NIXL_ERR_NOT_SUPPORTED; // loopback copies in place: no rail
    }
    const lfPeer &peer = *req->peer;
    out.path = peer.path;
    if (peer.fallback != NIXL_PATH_FALLBACK_NONE) {
        out.fallback = peer.fallback;
        out.first_for_conn = peer.fallbackReported.exchange(true) ? 0 : 1;
    }
    return NIXL_SUCCESS;
}

} // namespace nixlLf
