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
    lfRail &r = *req->rail;
    std::unique_lock<std::mutex> lk(r.mu);
    // Under the rail's lock: completions of an earlier post that failed early (a dead peer)
    // may still be read by another thread.
    req->trace = trace;
    req->hasNotif = opt_args != nullptr && opt_args->hasNotif;
    if (req->hasNotif) {
        req->notif = opt_args->notifMsg;
    }
    req->firstErr = NIXL_SUCCESS;
    req->dataDone = false;
    req->status.store(NIXL_IN_PROG, std::memory_order_relaxed);
    // One count for the posting itself, so completions read while we post (FI_EAGAIN) cannot
    // finish the request before its last operation is posted.
    req->pending = 1;
    req->lastProgressMs.store(nowMs(), std::memory_order_relaxed);
    req->posting = true;
    req->nextPost = 0;
    if (cfg_.numThreads != 0 && req->ctxs.size() > cfg_.splitBatch) {
        // The pool posts it, turn by turn; the caller returns at once.
        lk.unlock();
        pool_->post(req);
        return NIXL_IN_PROG;
    }
    postMoreLocked(r, req);
    progressLocked(r);
    const auto st = static_cast<nixl_status_t>(req->status.load(std::memory_order_acquire));
    lk.unlock();
    wakeProgressIfIdle(); // after the unlock: what it posted is visible to the thread's check
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
        std::lock_guard<std::mutex> g(r.mu);
        progressLocked(r);
    }
    st = static_cast<nixl_status_t>(req->status.load(std::memory_order_acquire));
    if (st == NIXL_IN_PROG && peers_.gone(*req->peer, localAgent)) {
        std::lock_guard<std::mutex> g(r.mu);
        abandonLocked(r, req, NIXL_ERR_REMOTE_DISCONNECT);
        st = NIXL_ERR_REMOTE_DISCONNECT;
    } else if (st == NIXL_IN_PROG && cfg_.stallTimeout.count() > 0 &&
               nowMs() - req->lastProgressMs.load(std::memory_order_relaxed) >
                   cfg_.stallTimeout.count()) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC transfer to " << req->remote
                                << ": no completion for " << cfg_.stallTimeout.count()
                                << " ms (stall_timeout_ms); failed");
        std::lock_guard<std::mutex> g(r.mu);
        abandonLocked(r, req, NIXL_ERR_BACKEND);
        st = NIXL_ERR_BACKEND;
    }
    if (pooled && st == NIXL_IN_PROG) {
        std::this_thread::yield(); // a caller polling in a loop hands the pool its core
    }
    return st;
}

void
lfEngine::abandonLocked(lfRail &r, lfReq *req, nixl_status_t st) const {
    // Operations to a dead process, or ones a provider never completes, may stay outstanding:
    // the request reports the failure now and is freed at release once they complete, or when
    // the engine closes its endpoint.
    req->firstErr = st;
    // A fast operation copies inside its post, under this mutex: none is running now, so the
    // mark can go even if a completion never comes (the target's deregisterMem must not wait
    // for a request that failed).
    leaveMarkLocked(req);
    if (req->posting) { // post nothing more
        auto &pq = r.postQueue;
        pq.erase(std::remove(pq.begin(), pq.end(), req), pq.end());
        req->posting = false;
        if (--req->pending == 0) {
            finishReqLocked(r, req);
        }
    }
    auto &q = r.notifQueue;
    q.erase(std::remove(q.begin(), q.end(), req), q.end());
    req->status.store(st);
}

nixl_status_t
lfEngine::releaseReqH(nixlBackendReqH *handle) const {
    auto *req = static_cast<lfReq *>(handle);
    if (cfg_.numThreads != 0 && req->rail != nullptr) {
        pool_->forget(req); // no pool thread touches it after this
    }
    if (req->rail != nullptr) {
        std::lock_guard<std::mutex> g(req->rail->mu);
        if (req->pending == 0 || cfg_.faultHoldMark) {
            leaveMarkLocked(req); // held only by fault_hold_mark: nothing copies any more
        }
        auto &q = req->rail->notifQueue;
        q.erase(std::remove(q.begin(), q.end(), req), q.end());
        auto &pq = req->rail->postQueue;
        if (req->posting) {
            // Descriptors never posted will not be: drop the posting count.
            pq.erase(std::remove(pq.begin(), pq.end(), req), pq.end());
            req->posting = false;
            --req->pending;
        }
        if (req->pending != 0) {
            req->released = true; // the last completion frees it
            return NIXL_SUCCESS;
        }
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
    lfRail &r = *rails_[peer->rail];
    nixl_status_t st;
    {
        std::lock_guard<std::mutex> g(r.mu);
        // Push back while the peer does not take what was sent; one message always goes, so
        // a message larger than the limit can still be sent alone.
        auto full = [&] {
            const size_t held = peer->notifSendHeld->load(std::memory_order_relaxed);
            return held > 0 && msg.size() > cfg_.notifSendMax - std::min(held, cfg_.notifSendMax);
        };
        if (full()) {
            progressLocked(r);
            if (full()) {
                NIXL_SDK_WARN_LIMITED("agent " << localAgent << ": LIBFABRIC genNotif to "
                                               << remote_agent << " refused for now: "
                                               << peer->notifSendHeld->load(
                                                      std::memory_order_relaxed)
                                               << " bytes of notifications to it are not sent "
                                                  "yet (notif_send_max_bytes="
                                               << cfg_.notifSendMax << "); retry later");
                return NIXL_ERR_REPOST_ACTIVE;
            }
        }
        uint32_t posted = 0;
        st = sendNotifLocked(r, *peer, msg, nullptr, nullptr, &posted);
        progressLocked(r);
    }
    wakeProgressIfIdle();
    return st;
}

} // namespace nixlLf
