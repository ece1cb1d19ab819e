/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Posting (lfRail): starting a post, the pool's turns, a request's RMA operations (fast copies
// on shm, fi_writemsg/readmsg otherwise) and notification fragments, with the backlog the
// transmit queue leaves.

#include "lf_rail.h"

#include "lf_clock.h"
#include "lf_wire.h"
#include "lf_xfer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/uio.h>
#include <unistd.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "nixl_trace_context.h"

namespace nixlLf {

namespace {

    /** process_vm_writev/readv take at most this many iovecs per side (UIO_MAXIOV). */
    constexpr size_t max_copy_iov = 1024;

} // namespace

nixl_status_t
lfRail::postSendLocked(fi_addr_t dest,
                       std::string &&frag,
                       lfReq *req,
                       const lfPeer *notifPeer,
                       bool lastOfMsg) {
    auto *s = new sendCtx;
    s->kind = opCtx::SEND;
    s->req = req;
    s->buf = std::move(frag);
    s->dest = dest;
    if (notifPeer != nullptr) {
        s->budget = notifPeer->notifSendHeld;
        s->budget->fetch_add(s->buf.size(), std::memory_order_relaxed);
        s->lastOfMsg = lastOfMsg;
    }
    sends_.insert(s);
    sendBacklog_.push_back(s);
    flushSendsLocked();
    return NIXL_SUCCESS;
}

void
lfRail::flushSendsLocked() {
    while (!sendBacklog_.empty()) {
        sendCtx *s = sendBacklog_.front();
        ssize_t rc = fi_send(ep, s->buf.data(), s->buf.size(), nullptr, s->dest, &s->fctx);
        if (rc == -FI_EAGAIN) {
            return; // progress flushes the rest
        }
        sendBacklog_.pop_front();
        if (rc != 0) {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov
                                    << ": fi_send: " << fiErr(static_cast<int>(rc)));
            // Completes it as failed, which fails its request.
            onCompletionLocked(s, static_cast<int>(-rc), 0);
        }
    }
}

nixl_status_t
lfRail::copyFastLocked(lfReq &req, size_t first, size_t count) const {
    struct iovec *l = &req.iov[first];
    struct iovec *rv = &req.riov[first];
    lfPeer &p = *req.peer;
    if (p.sameProcess) {
        // Agents of one process: a plain copy, no system call.
        for (size_t d = 0; d < count; ++d) {
            if (req.op == NIXL_WRITE) {
                std::memcpy(rv[d].iov_base, l[d].iov_base, l[d].iov_len);
            } else {
                std::memcpy(l[d].iov_base, rv[d].iov_base, l[d].iov_len);
            }
        }
        return NIXL_SUCCESS;
    }
    size_t d = 0;
    size_t off = 0; // bytes of descriptor first + d already copied
    while (true) {
        while (d < count && l[d].iov_len == off) {
            ++d;
            off = 0;
        }
        if (d == count) {
            return NIXL_SUCCESS;
        }
        // A short count stops inside descriptor d: go on from there (the next call reports
        // the failing one). The arrays are the request's; d's entries are restored below.
        const struct iovec keepL = l[d];
        const struct iovec keepR = rv[d];
        l[d] = {static_cast<char *>(keepL.iov_base) + off, keepL.iov_len - off};
        rv[d] = {static_cast<char *>(keepR.iov_base) + off, keepR.iov_len - off};
        const ssize_t got = req.op == NIXL_WRITE ?
            ::process_vm_writev(p.conn.pid, l + d, count - d, rv + d, count - d, 0) :
            ::process_vm_readv(p.conn.pid, l + d, count - d, rv + d, count - d, 0);
        const int e = got < 0 ? errno : EFAULT;
        l[d] = keepL;
        rv[d] = keepR;
        if (got > 0) {
            size_t left = static_cast<size_t>(got);
            while (left > 0) {
                const size_t rest = l[d].iov_len - off;
                if (left < rest) {
                    off += left;
                    break;
                }
                left -= rest;
                ++d;
                off = 0;
            }
            continue;
        }
        if (e == EINTR) {
            continue;
        }
        const char *call = req.op == NIXL_WRITE ? "process_vm_writev" : "process_vm_readv";
        const size_t i = first + d;
        if (e == ESRCH) {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC: peer " << p.name
                                    << " (pid " << p.conn.pid << ") has exited (" << call
                                    << " of descriptor " << i << "); its transfers fail");
            p.dead = true;
            return NIXL_ERR_REMOTE_DISCONNECT;
        }
        if (e == EFAULT) {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC "
                                    << (req.op == NIXL_WRITE ? "WRITE" : "READ") << " to "
                                    << req.remote << ", descriptor " << i << " ("
                                    << keepL.iov_len << " bytes, local " << keepL.iov_base
                                    << ", remote " << keepR.iov_base
                                    << "): memory not accessible (unmapped without "
                                       "deregistration?)");
            return NIXL_ERR_NOT_FOUND;
        }
        NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC "
                                << (req.op == NIXL_WRITE ? "WRITE" : "READ") << " to "
                                << req.remote << ", descriptor " << i << ": " << call << ": "
                                << std::strerror(e));
        return NIXL_ERR_BACKEND;
    }
}

void
lfRail::postMoreLocked(lfReq *req) {
    const uint64_t flags = FI_COMPLETION | (delivery ? FI_DELIVERY_COMPLETE : 0);
    const size_t n = req->ctxs.size();
    nixlReg::nixlRegTable *tab = req->peer->table.get();
    size_t turn = 0;
    while (req->nextPost < n && req->firstErr == NIXL_SUCCESS) {
        const size_t i = req->nextPost;
        if (turn++ == splitBatch_) {
            // split_batch_size per turn: the rest is posted by progress, between other
            // requests' turns and completions.
            if (std::find(postQueue_.begin(), postQueue_.end(), req) == postQueue_.end()) {
                postQueue_.push_back(req);
            }
            break;
        }
        // Fast RMA (initiator-only, no key check at the target) only inside a mark of the
        // target's table and after its slot still names this registration: the target's
        // deregisterMem then waits for the copy (reg_table.h has the argument). The initiator
        // copies itself instead of asking shm: shm would first send a connection request that
        // only the target's progress answers, and an idle target (nixlbench's) never does.
        if (tab != nullptr && req->gen[i].first != 0) {
            if (!req->markHeld) {
                req->mark = tab->enter();
                req->markHeld = true;
            }
            std::atomic<uint64_t> *slots = tab->slots();
            // seq_cst loads: they must not move before the mark's enter.
            const auto fresh = [&](size_t d) {
                return slots[0].load(std::memory_order_seq_cst) == req->peer->conn.nonce &&
                    slots[req->gen[d].first].load(std::memory_order_seq_cst) ==
                    req->gen[d].second;
            };
            // One system call for a run of descriptors, within this turn's budget (turn
            // already counts descriptor i).
            const size_t most = std::min({n - i, max_copy_iov, splitBatch_ - turn + 1});
            size_t k = 0;
            while (k < most && req->gen[i + k].first != 0 && fresh(i + k)) {
                ++k;
            }
            if (k == 0) {
                NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC "
                                        << (req->op == NIXL_WRITE ? "WRITE" : "READ") << " to "
                                        << req->remote << ", descriptor " << i
                                        << ": the remote registration was released (stale "
                                           "remote key); reload its metadata");
                req->firstErr = NIXL_ERR_NOT_FOUND;
                break;
            }
            turn += k - 1;
            const nixl_status_t st = copyFastLocked(*req, i, k);
            if (st != NIXL_SUCCESS) {
                req->firstErr = st;
                break;
            }
            req->nextPost += k;
            continue;
        }
        fi_msg_rma msg{};
        msg.msg_iov = &req->iov[i];
        msg.desc = &req->desc[i];
        msg.iov_count = 1;
        msg.addr = req->peer->addr;
        msg.rma_iov = &req->rma[i];
        msg.rma_iov_count = 1;
        msg.context = &req->ctxs[i].fctx;
        ssize_t rc = req->op == NIXL_WRITE ? fi_writemsg(ep, &msg, flags) :
                                             fi_readmsg(ep, &msg, flags);
        if (rc == -FI_EAGAIN) {
            if (std::find(postQueue_.begin(), postQueue_.end(), req) == postQueue_.end()) {
                postQueue_.push_back(req);
            }
            break;
        }
        if (rc != 0) {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov << ": "
                                    << (req->op == NIXL_WRITE ? "fi_writemsg" : "fi_readmsg")
                                    << " of descriptor " << i << " to " << req->remote << ": "
                                    << fiErr(static_cast<int>(rc)));
            req->firstErr = rc == -FI_ENOTCONN || rc == -FI_ECONNRESET ?
                NIXL_ERR_REMOTE_DISCONNECT :
                NIXL_ERR_BACKEND;
            break;
        }
        ++req->pending;
        ++req->nextPost;
        ++rmaInflight_;
    }
    if (req->markHeld && !(faultHoldMark_ && req->nextPost > 0)) {
        req->leaveMark(); // every copy under it has returned
    }
    if (req->nextPost < n && req->firstErr == NIXL_SUCCESS) {
        return; // queued: progress posts the rest
    }
    // All posted (or failed): drop the posting count.
    dropFromQueue(postQueue_, req);
    if (req->posting) {
        req->posting = false;
        if (!req->released) {
            host_->railPhase(req->trace, NIXL_BE_PHASE_WIRE_SUBMITTED, "libfabric.rma", nowUs());
        }
        if (--req->pending == 0) {
            finishReqLocked(req);
        }
    }
}

nixl_status_t
lfRail::post(lfReq &req, const nixl_be_trace_ctx_t *trace, const std::string *notif, bool pooled) {
    std::lock_guard<std::mutex> g(mu_);
    // Under the rail's lock: completions of an earlier post that failed early (a dead peer)
    // may still be read by another thread.
    req.trace = trace;
    req.hasNotif = notif != nullptr;
    if (req.hasNotif) {
        req.notif = *notif;
    }
    req.firstErr = NIXL_SUCCESS;
    req.dataDone = false;
    req.status.store(NIXL_IN_PROG, std::memory_order_relaxed);
    // One count for the posting itself, so completions read while we post (FI_EAGAIN) cannot
    // finish the request before its last operation is posted.
    req.pending = 1;
    req.lastProgressMs.store(nowMs(), std::memory_order_relaxed);
    req.posting = true;
    req.nextPost = 0;
    if (pooled) {
        return NIXL_IN_PROG; // the pool posts it, turn by turn
    }
    postMoreLocked(&req);
    progressLocked();
    return static_cast<nixl_status_t>(req.status.load(std::memory_order_acquire));
}

bool
lfRail::postTurn(lfReq &req, bool &stalled) {
    std::lock_guard<std::mutex> g(mu_);
    stalled = false;
    if (!req.posting) {
        return false; // failed (abandon) or all posted
    }
    const size_t before = req.nextPost;
    postMoreLocked(&req);
    if (req.posting) {
        // The pool posts the rest, not progress: out of the post queue (where postMoreLocked
        // left it after its turn, or when the transmit queue was full).
        dropFromQueue(postQueue_, &req);
    }
    // Completions (room in the transmit queue), other requests' turns, notifications.
    progressLocked();
    stalled = req.posting && req.nextPost == before;
    return req.posting;
}

nixl_status_t
lfRail::sendMessage(const lfPeer &peer, const std::string &msg, size_t sendMax) {
    std::lock_guard<std::mutex> g(mu_);
    // Push back while the peer does not take what was sent; one message always goes, so a
    // message larger than the limit can still be sent alone.
    auto full = [&] {
        const size_t held = peer.notifSendHeld->load(std::memory_order_relaxed);
        return held > 0 && msg.size() > sendMax - std::min(held, sendMax);
    };
    if (full()) {
        progressLocked();
        if (full()) {
            return NIXL_ERR_REPOST_ACTIVE;
        }
    }
    uint32_t posted = 0;
    const nixl_status_t st = sendNotifLocked(peer, msg, nullptr, nullptr, &posted);
    progressLocked();
    return st;
}

nixl_status_t
lfRail::sendNotifLocked(const lfPeer &peer,
                        const std::string &msg,
                        const nixl_be_trace_ctx_t *trace,
                        lfReq *req,
                        uint32_t *posted) {
    *posted = 0;
    notifFragWire f;
    f.nonce = nonce_;
    f.seq = peer.seq->fetch_add(1, std::memory_order_relaxed);
    f.total = static_cast<uint32_t>(msg.size());
    f.sender = agent_;
    if (host_->railTracing() && trace != nullptr && nixl_trace_ctx_is_valid(trace)) {
        f.traced = true;
        nixl_trace_ctx_encode(trace, f.trace);
    }
    size_t off = 0;
    do {
        f.offset = static_cast<uint32_t>(off);
        const size_t room = fragSize - notifHeaderSize(f);
        const size_t n = std::min(room, msg.size() - off);
        f.payload = std::string_view(msg).substr(off, n);
        std::string frag;
        frag.reserve(notifHeaderSize(f) + n);
        encodeNotifFrag(f, frag);
        nixl_status_t st = postSendLocked(peer.addr, std::move(frag), req,
                                          req == nullptr ? &peer : nullptr, off + n >= msg.size());
        if (st != NIXL_SUCCESS) {
            return st;
        }
        ++*posted;
        off += n;
    } while (off < msg.size());
    return NIXL_SUCCESS;
}

void
lfRail::sendDone(sendCtx &s, bool lost) const noexcept {
    if (!s.budget) {
        return;
    }
    s.budget->fetch_sub(s.buf.size(), std::memory_order_relaxed);
    s.budget.reset();
    if (lost && s.lastOfMsg) {
        host_->railNotifLost();
    }
}

} // namespace nixlLf
