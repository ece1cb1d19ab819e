/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Rails: opening a provider, reading its completion queue, notification fragments.

#include "lf_backend.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "nixl_trace_context.h"

namespace nixlLf {

namespace {

    /** process_vm_writev/readv take at most this many iovecs per side (UIO_MAXIOV). */
    constexpr size_t max_copy_iov = 1024;

    std::string
    fiErr(int rc) {
        return std::string(fi_strerror(rc < 0 ? -rc : rc)) + " (" + std::to_string(rc) + ")";
    }

    /** What a failed completion means for the request. */
    nixl_status_t
    mapCqErr(int err) {
        switch (err) {
        case FI_ECONNRESET:
        case FI_ECONNREFUSED:
        case FI_ECONNABORTED:
        case FI_ENOTCONN:
        case FI_EHOSTUNREACH:
        case FI_ENETUNREACH:
        case EPIPE:
        case FI_EIO:
        case FI_ECANCELED:
        case FI_ETIMEDOUT:
            return NIXL_ERR_REMOTE_DISCONNECT;
        default:
            return NIXL_ERR_BACKEND;
        }
    }

} // namespace

bool
lfEngine::openRail(const std::string &prov, std::string &why) {
    auto r = std::make_unique<lfRail>();
    fi_info *hints = fi_allocinfo();
    if (hints == nullptr) {
        why = "fi_allocinfo failed";
        return false;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    // Ask for every mode we can serve; what the provider returns is what we then follow.
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(prov.c_str());
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    int rc = -FI_ENODATA;
    if (prov == "shm" && cfg_.fastRma) {
        // shm's initiator-only RMA needs FI_MR_VIRT_ADDR and no ordering that involves RMA.
        // No SAW is needed: every operation is either delivery-complete (the data is in the
        // target before the notification is posted) or a fast one, whose data is copied before
        // its completion (and so, again, before the notification).
        hints->tx_attr->msg_order = FI_ORDER_SAS;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &r->info);
        if (rc == 0 &&
            ((r->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) == 0 ||
             (r->info->tx_attr->op_flags & FI_DELIVERY_COMPLETE) == 0 ||
             (r->info->tx_attr->msg_order & FI_ORDER_SAS) == 0)) {
            fi_freeinfo(r->info); // not what fast RMA needs: the rail as before
            r->info = nullptr;
            rc = -FI_ENODATA;
        } else if (rc == 0) {
            r->fastRma = true;
        }
    }
    if (rc != 0) {
        // Fragments of one notification must arrive in order (SAS); a send after writes stays
        // behind them (SAW), which backs the completion-ordered notification. tcp;ofi_rxm has
        // no SAR; a READ's notification waits for the read's completion at the initiator.
        hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_SAW;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &r->info);
    }
    if (rc != 0) {
        // Without delivery-complete the notification still waits for the initiator's
        // completions; the ordering above keeps it behind the data.
        hints->tx_attr->op_flags = 0;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &r->info);
    }
    fi_freeinfo(hints);
    if (rc != 0) {
        why = "fi_getinfo: " + fiErr(rc);
        return false;
    }
    r->prov = r->info->fabric_attr->prov_name;
    r->index = rails_.size();
    const uint64_t mm = static_cast<uint64_t>(r->info->domain_attr->mr_mode);
    r->virtAddr = (mm & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
    r->provKey = (mm & (FI_MR_PROV_KEY | FI_MR_BASIC)) != 0;
    r->localDesc = (mm & FI_MR_LOCAL) != 0;
    r->delivery = (r->info->tx_attr->op_flags & FI_DELIVERY_COMPLETE) != 0;
    r->fragSize = cfg_.notifFrag;

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_DATA;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size = 0;
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((rc = fi_fabric(r->info->fabric_attr, &r->fabric, nullptr)) != 0) {
        why = "fi_fabric: " + fiErr(rc);
    } else if ((rc = fi_domain(r->fabric, r->info, &r->domain, nullptr)) != 0) {
        why = "fi_domain: " + fiErr(rc);
    } else if ((rc = openCq(*r, cq_attr)) != 0) {
        why = "fi_cq_open: " + fiErr(rc);
    } else if ((rc = fi_av_open(r->domain, &av_attr, &r->av, nullptr)) != 0) {
        why = "fi_av_open: " + fiErr(rc);
    } else if ((rc = fi_endpoint(r->domain, r->info, &r->ep, nullptr)) != 0) {
        why = "fi_endpoint: " + fiErr(rc);
    } else if ((rc = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV)) != 0) {
        why = "fi_ep_bind(cq): " + fiErr(rc);
    } else if ((rc = fi_ep_bind(r->ep, &r->av->fid, 0)) != 0) {
        why = "fi_ep_bind(av): " + fiErr(rc);
    } else if ((rc = fi_enable(r->ep)) != 0) {
        why = "fi_enable: " + fiErr(rc);
    } else {
        char name[max_ep_addr];
        size_t len = sizeof(name);
        if ((rc = fi_getname(&r->ep->fid, name, &len)) != 0) {
            why = "fi_getname: " + fiErr(rc);
        } else {
            r->addr.assign(name, len);
        }
    }
    if (rc == 0) {
        std::lock_guard<std::mutex> g(r->mu);
        for (size_t i = 0; i < cfg_.recvBufs && rc == 0; ++i) {
            auto rc_ctx = std::make_unique<recvCtx>();
            rc_ctx->kind = opCtx::RECV;
            rc_ctx->buf.resize(r->fragSize);
            rc = static_cast<int>(fi_recv(r->ep, rc_ctx->buf.data(), rc_ctx->buf.size(), nullptr,
                                          FI_ADDR_UNSPEC, &rc_ctx->fctx));
            if (rc != 0) {
                why = "fi_recv: " + fiErr(rc);
            }
            r->recvs.push_back(std::move(rc_ctx));
        }
    }
    if (rc != 0) {
        closeRail(*r);
        return false;
    }
    NIXL_SDK_DEBUG("agent " << localAgent << ": LIBFABRIC provider " << r->prov << " open (domain "
                            << r->info->domain_attr->name << ", mr_mode 0x" << std::hex << mm
                            << std::dec << ", remote addresses are "
                            << (r->virtAddr ? "virtual" : "offsets") << ", delivery-complete "
                            << (r->delivery ? "yes" : "no") << ", fast RMA "
                            << (r->fastRma ? "possible" : "no") << ")");
    rails_.push_back(std::move(r));
    return true;
}

int
lfEngine::openCq(lfRail &r, fi_cq_attr &attr) const {
    if (progThread_) {
        // A wait fd lets the progress thread sleep until the provider has something for it
        // (tcp;ofi_rxm: a socket became readable) instead of waking every pthrDelay.
        attr.wait_obj = FI_WAIT_FD;
        if (fi_cq_open(r.domain, &attr, &r.cq, nullptr) == 0) {
            int fd = -1;
            const int rc = fi_control(&r.cq->fid, FI_GETWAIT, &fd);
            if (rc == 0 && fd >= 0) {
                r.waitFd = fd;
                return 0;
            }
            NIXL_SDK_DEBUG("agent " << localAgent << ": LIBFABRIC " << r.prov
                                    << ": no wait fd from the completion queue ("
                                    << fiErr(rc) << "); polled every pthrDelay");
            fi_close(&r.cq->fid);
            r.cq = nullptr;
        }
        // shm 1.17: FI_WAIT_FD is not implemented. Such a rail is polled.
    }
    attr.wait_obj = FI_WAIT_NONE;
    return fi_cq_open(r.domain, &attr, &r.cq, nullptr);
}

void
lfEngine::closeRail(lfRail &r) {
    // The endpoint goes first: after it is closed no completion names our contexts any more.
    if (r.ep != nullptr) {
        fi_close(&r.ep->fid);
    }
    if (r.av != nullptr) {
        fi_close(&r.av->fid);
    }
    if (r.cq != nullptr) {
        fi_close(&r.cq->fid);
    }
    if (r.domain != nullptr) {
        fi_close(&r.domain->fid);
    }
    if (r.fabric != nullptr) {
        fi_close(&r.fabric->fid);
    }
    if (r.info != nullptr) {
        fi_freeinfo(r.info);
    }
    r.ep = nullptr;
    r.av = nullptr;
    r.cq = nullptr;
    r.waitFd = -1; // closed with the queue
    r.domain = nullptr;
    r.fabric = nullptr;
    r.info = nullptr;
    // Whatever is left was never sent; genNotif reported its messages sent, so they are
    // counted (the destructor says how many).
    for (sendCtx *s : r.sends) {
        sendDone(*s, true);
        delete s;
    }
    r.sends.clear();
    r.recvs.clear();
}

void
lfEngine::readCqLocked(lfRail &r) const {
    for (;;) {
        fi_cq_data_entry e[32];
        ssize_t n = fi_cq_read(r.cq, e, 32);
        if (n > 0) {
            for (ssize_t i = 0; i < n; ++i) {
                onCompletion(r, static_cast<opCtx *>(e[i].op_context), 0, e[i].len);
            }
            continue;
        }
        if (n == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            if (fi_cq_readerr(r.cq, &err, 0) > 0) {
                if (err.err == FI_ECANCELED && err.op_context != nullptr &&
                    static_cast<opCtx *>(err.op_context)->kind == opCtx::RECV) {
                    continue; // receives cancelled at close
                }
                onCompletion(r, static_cast<opCtx *>(err.op_context),
                             err.err != 0 ? err.err : FI_EIO, 0);
            }
            continue;
        }
        break; // -FI_EAGAIN: empty
    }
}

void
lfEngine::progressLocked(lfRail &r) const {
    readCqLocked(r);
    flushSendsLocked(r);
    if (!r.postQueue.empty()) {
        std::vector<lfReq *> q = r.postQueue; // postMoreLocked edits the queue
        for (lfReq *req : q) {
            postMoreLocked(r, req);
        }
    }
    // Notifications of requests whose data completed above. Posting may read the queue again
    // (FI_EAGAIN) and so append; take the list each round.
    while (!r.notifQueue.empty()) {
        std::vector<lfReq *> q;
        q.swap(r.notifQueue);
        for (lfReq *req : q) {
            uint32_t posted = 0;
            nixl_status_t st =
                sendNotifLocked(r, *req->peer, req->notif, req->trace, req, &posted);
            req->pending += posted;
            if (st != NIXL_SUCCESS && req->firstErr == NIXL_SUCCESS) {
                req->firstErr = st;
            }
            if (posted > 0) {
                recordPhase(req->trace, NIXL_BE_PHASE_NOTIF_SENT, "libfabric.notif", nowUs());
            }
            if (req->pending == 0) {
                finishReqLocked(r, req);
            }
        }
    }
}

void
lfEngine::progressAll() const {
    for (const auto &r : rails_) {
        std::lock_guard<std::mutex> g(r->mu);
        progressLocked(*r);
    }
}

void
lfEngine::onCompletion(lfRail &r, opCtx *ctx, int err, size_t len) const {
    if (ctx == nullptr) {
        return;
    }
    if (ctx->kind == opCtx::RECV) {
        auto *rc = static_cast<recvCtx *>(ctx);
        if (err == 0) {
            onRecv(r, rc, len);
        } else {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC " << r.prov
                                    << ": receive failed: " << fiErr(err));
        }
        repost(r, rc);
        return;
    }
    if (ctx->kind == opCtx::RMA && r.rmaInflight > 0) {
        --r.rmaInflight;
    }
    lfReq *req = ctx->req;
    if (ctx->kind == opCtx::SEND) {
        auto *s = static_cast<sendCtx *>(ctx);
        r.sends.erase(s);
        sendDone(*s, err != 0);
        delete s;
    }
    if (req == nullptr) {
        if (err != 0) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC " << r.prov
                                    << ": notification send failed: " << fiErr(err));
        }
        return;
    }
    if (err != 0 && req->firstErr == NIXL_SUCCESS) {
        req->firstErr = mapCqErr(err);
        if (!req->released) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC " << r.prov << ": transfer to "
                                    << req->remote << " failed: " << fiErr(err));
        }
    }
    req->lastProgressMs.store(nowMs(), std::memory_order_relaxed);
    if (--req->pending == 0) {
        finishReqLocked(r, req);
    }
}

void
lfEngine::leaveMarkLocked(lfReq *req) noexcept {
    if (req->markHeld) {
        nixlReg::nixlRegTable::leave(req->mark);
        req->markHeld = false;
    }
}

void
lfEngine::finishReqLocked(lfRail &r, lfReq *req) const {
    if (!req->dataDone) {
        req->dataDone = true;
        if (!req->released) {
            recordPhase(req->trace, NIXL_BE_PHASE_WIRE_COMPLETED, "libfabric.rma", nowUs());
        }
        if (req->firstErr == NIXL_SUCCESS && req->hasNotif && !req->released) {
            r.notifQueue.push_back(req);
            return;
        }
    }
    if (req->released) {
        std::lock_guard<std::mutex> g(reqsMu_);
        reqs_.erase(req);
        delete req;
        return;
    }
    req->status.store(req->firstErr, std::memory_order_release);
}

void
lfEngine::repost(lfRail &r, recvCtx *rc) const {
    for (;;) {
        ssize_t rc2 = fi_recv(r.ep, rc->buf.data(), rc->buf.size(), nullptr, FI_ADDR_UNSPEC,
                              &rc->fctx);
        if (rc2 != -FI_EAGAIN) {
            if (rc2 != 0) {
                NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC " << r.prov
                                        << ": fi_recv: " << fiErr(static_cast<int>(rc2)));
            }
            return;
        }
        // The receive queue is full of completed entries not yet read: a plain read makes room
        // (not progressLocked, which could re-enter here).
        fi_cq_data_entry e;
        if (fi_cq_read(r.cq, &e, 1) == 1) {
            onCompletion(r, static_cast<opCtx *>(e.op_context), 0, e.len);
        }
    }
}

void
lfEngine::onRecv(lfRail &r, recvCtx *rc, size_t len) const {
    std::vector<notifReassembler::message> ready;
    inbox_.receive(r.prov, std::string_view(rc->buf.data(), std::min(len, rc->buf.size())), ready);
    const uint64_t now = nowUs();
    for (const auto &m : ready) {
        nixl_be_trace_ctx_t tc{};
        if (m.traced && nixl_trace_ctx_decode(m.trace, sizeof(m.trace), &tc) == NIXL_TRACE_CTX_OK) {
            recordPhase(&tc, NIXL_BE_PHASE_NOTIF_RECEIVED, "libfabric.notif", now);
            // The notification follows the data: when it is delivered, the data is visible.
            recordPhase(&tc, NIXL_BE_PHASE_REMOTE_OBSERVED, "libfabric.notif", now);
        }
    }
}

nixl_status_t
lfEngine::postSend(lfRail &r,
                   fi_addr_t dest,
                   std::string &&frag,
                   lfReq *req,
                   const lfPeer *notifPeer,
                   bool lastOfMsg) const {
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
    r.sends.insert(s);
    r.sendBacklog.push_back(s);
    flushSendsLocked(r);
    return NIXL_SUCCESS;
}

void
lfEngine::flushSendsLocked(lfRail &r) const {
    while (!r.sendBacklog.empty()) {
        sendCtx *s = r.sendBacklog.front();
        ssize_t rc = fi_send(r.ep, s->buf.data(), s->buf.size(), nullptr, s->dest, &s->fctx);
        if (rc == -FI_EAGAIN) {
            return; // progress flushes the rest
        }
        r.sendBacklog.pop_front();
        if (rc != 0) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC " << r.prov
                                    << ": fi_send: " << fiErr(static_cast<int>(rc)));
            // Completes it as failed, which fails its request.
            onCompletion(r, s, static_cast<int>(-rc), 0);
        }
    }
}

nixl_status_t
lfEngine::copyFastLocked(lfReq &req, size_t first, size_t count) const {
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
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC: peer " << p.name
                                    << " (pid " << p.conn.pid << ") has exited (" << call
                                    << " of descriptor " << i << "); its transfers fail");
            p.dead = true;
            return NIXL_ERR_REMOTE_DISCONNECT;
        }
        if (e == EFAULT) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC "
                                    << (req.op == NIXL_WRITE ? "WRITE" : "READ") << " to "
                                    << req.remote << ", descriptor " << i << " ("
                                    << keepL.iov_len << " bytes, local " << keepL.iov_base
                                    << ", remote " << keepR.iov_base
                                    << "): memory not accessible (unmapped without "
                                       "deregistration?)");
            return NIXL_ERR_NOT_FOUND;
        }
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC "
                                << (req.op == NIXL_WRITE ? "WRITE" : "READ") << " to "
                                << req.remote << ", descriptor " << i << ": " << call << ": "
                                << std::strerror(e));
        return NIXL_ERR_BACKEND;
    }
}

void
lfEngine::postMoreLocked(lfRail &r, lfReq *req) const {
    const uint64_t flags = FI_COMPLETION | (r.delivery ? FI_DELIVERY_COMPLETE : 0);
    const size_t n = req->ctxs.size();
    nixlReg::nixlRegTable *tab = req->peer->table.get();
    size_t turn = 0;
    while (req->nextPost < n && req->firstErr == NIXL_SUCCESS) {
        const size_t i = req->nextPost;
        if (turn++ == cfg_.splitBatch) {
            // split_batch_size per turn: the rest is posted by progress, between other
            // requests' turns and completions.
            if (std::find(r.postQueue.begin(), r.postQueue.end(), req) == r.postQueue.end()) {
                r.postQueue.push_back(req);
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
            const size_t most = std::min({n - i, max_copy_iov, cfg_.splitBatch - turn + 1});
            size_t k = 0;
            while (k < most && req->gen[i + k].first != 0 && fresh(i + k)) {
                ++k;
            }
            if (k == 0) {
                NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC "
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
        ssize_t rc = req->op == NIXL_WRITE ? fi_writemsg(r.ep, &msg, flags) :
                                             fi_readmsg(r.ep, &msg, flags);
        if (rc == -FI_EAGAIN) {
            if (std::find(r.postQueue.begin(), r.postQueue.end(), req) == r.postQueue.end()) {
                r.postQueue.push_back(req);
            }
            break;
        }
        if (rc != 0) {
            NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC " << r.prov << ": "
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
        ++r.rmaInflight;
    }
    if (req->markHeld && !(cfg_.faultHoldMark && req->nextPost > 0)) {
        leaveMarkLocked(req); // every copy under it has returned
    }
    if (req->nextPost < n && req->firstErr == NIXL_SUCCESS) {
        return; // queued: progress posts the rest
    }
    // All posted (or failed): drop the posting count.
    auto &q = r.postQueue;
    q.erase(std::remove(q.begin(), q.end(), req), q.end());
    if (req->posting) {
        req->posting = false;
        if (!req->released) {
            recordPhase(req->trace, NIXL_BE_PHASE_WIRE_SUBMITTED, "libfabric.rma", nowUs());
        }
        if (--req->pending == 0) {
            finishReqLocked(r, req);
        }
    }
}

nixl_status_t
lfEngine::sendNotifLocked(lfRail &r,
                          const lfPeer &peer,
                          const std::string &msg,
                          const nixl_be_trace_ctx_t *trace,
                          lfReq *req,
                          uint32_t *posted) const {
    *posted = 0;
    notifFragWire f;
    f.nonce = nonce_;
    f.seq = peer.seq->fetch_add(1, std::memory_order_relaxed);
    f.total = static_cast<uint32_t>(msg.size());
    f.sender = localAgent;
    if (traceSink_ != nullptr && trace != nullptr && nixl_trace_ctx_is_valid(trace)) {
        f.traced = true;
        nixl_trace_ctx_encode(trace, f.trace);
    }
    size_t off = 0;
    do {
        f.offset = static_cast<uint32_t>(off);
        const size_t room = r.fragSize - notifHeaderSize(f);
        const size_t n = std::min(room, msg.size() - off);
        f.payload = std::string_view(msg).substr(off, n);
        std::string frag;
        frag.reserve(notifHeaderSize(f) + n);
        encodeNotifFrag(f, frag);
        nixl_status_t st = postSend(r, peer.addr, std::move(frag), req,
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
lfEngine::sendDone(sendCtx &s, bool lost) const noexcept {
    if (!s.budget) {
        return;
    }
    s.budget->fetch_sub(s.buf.size(), std::memory_order_relaxed);
    s.budget.reset();
    if (lost && s.lastOfMsg) {
        notifLost_.fetch_add(1, std::memory_order_relaxed);
    }
}

bool
lfEngine::railIdleLocked(const lfRail &r) noexcept {
    // r.sends holds the posted and the backlogged notification fragments.
    return r.rmaInflight == 0 && r.sends.empty() && r.postQueue.empty() && r.notifQueue.empty();
}

void
lfEngine::wakeProgressIfIdle() const noexcept {
    // seq_cst: this load follows our unlock of the rail's mutex; see progressLoop.
    if (wakeFd_ >= 0 && idleWait_.load(std::memory_order_seq_cst)) {
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(wakeFd_, &one, sizeof(one));
    }
}

void
lfEngine::progressLoop() {
    ::pthread_setname_np(::pthread_self(), "nixl_lf_prog");
    const auto delay = std::chrono::microseconds(std::max<uint64_t>(pthrDelayUs_, 50));
    // A target-executed operation (shm RMA, tcp;ofi_rxm) waits for this thread's wake-up: the
    // default 50 us timer slack would double a 50 us period.
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    // What the thread waits on: the wake eventfd, then each rail's wait fd. A rail without one
    // (shm) must be polled, so the thread never waits longer than pthrDelay while one is open.
    std::vector<pollfd> fds;
    fds.push_back({wakeFd_, POLLIN, 0});
    bool allWaitable = true;
    for (const auto &r : rails_) {
        if (r->waitFd >= 0) {
            fds.push_back({r->waitFd, POLLIN, 0});
        } else {
            allWaitable = false;
        }
    }
    while (!stop_.load(std::memory_order_acquire)) {
        progressAll();
        // Idle wait (up to progress_idle_ms) only when every rail can wake us and none has work of
        // ours outstanding. The flag is raised before the rails are checked, each under its
        // mutex; a poster adds its work under the same mutex and reads the flag after: either
        // we see its work, or it sees the flag and writes the eventfd (both seq_cst).
        bool idle = allWaitable;
        if (idle) {
            idleWait_.store(true, std::memory_order_seq_cst);
        }
        // fi_trywait arms each wait fd; -FI_EAGAIN: completions are already there.
        bool armed = true;
        for (const auto &r : rails_) {
            std::lock_guard<std::mutex> g(r->mu);
            if (idle && !railIdleLocked(*r)) {
                idle = false;
            }
            if (r->waitFd >= 0) {
                fid *f = &r->cq->fid;
                const int rc = fi_trywait(r->fabric, &f, 1);
                if (rc == -FI_EAGAIN) {
                    armed = false;
                    break;
                }
                if (rc != 0) {
                    // Never retried: a wait fd we cannot arm would turn this loop into a spin.
                    NIXL_SDK_WARN_LIMITED("agent " << localAgent << ": LIBFABRIC " << r->prov
                                           << ": fi_trywait: " << fiErr(rc)
                                           << "; this rail is polled every pthrDelay");
                    std::erase_if(fds, [&](const pollfd &p) { return p.fd == r->waitFd; });
                    r->waitFd = -1;
                    allWaitable = false;
                    idle = false;
                }
            }
        }
        if (!idle) {
            // A short wait ends by itself: posters need not write the eventfd meanwhile (during
            // a transfer the flag would otherwise cost every post a system call).
            idleWait_.store(false, std::memory_order_relaxed);
        }
        if (armed) {
            timespec ts{};
            if (idle) {
                ts.tv_sec = static_cast<time_t>(cfg_.progressIdleMs / 1000);
                ts.tv_nsec = static_cast<long>(cfg_.progressIdleMs % 1000) * 1000000L;
            } else {
                ts.tv_sec = static_cast<time_t>(delay.count() / 1000000);
                ts.tv_nsec = static_cast<long>(delay.count() % 1000000) * 1000L;
            }
            if (::ppoll(fds.data(), fds.size(), &ts, nullptr) > 0 &&
                (fds[0].revents & POLLIN) != 0) {
                uint64_t v = 0;
                [[maybe_unused]] ssize_t n = ::read(wakeFd_, &v, sizeof(v));
            }
        }
        idleWait_.store(false, std::memory_order_relaxed);
    }
}

} // namespace nixlLf
