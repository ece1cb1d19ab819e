/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Progress: reading completion queues, finishing requests, received fragments, and the
// progress thread's loop.

#include "lf_backend.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "nixl_trace_context.h"

namespace nixlLf {

namespace {

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
    fds.push_back({wake_.fd(), POLLIN, 0});
    bool allWaitable = true;
    for (const auto &r : rails_) {
        if (r->waitFd >= 0) {
            fds.push_back({r->waitFd, POLLIN, 0});
        } else {
            allWaitable = false;
        }
    }
    while (!wake_.stopping()) {
        progressAll();
        // Idle wait (up to progress_idle_ms) only when every rail can wake us and none has work of
        // ours outstanding. The flag is raised before the rails are checked, each under its
        // mutex; a poster adds its work under the same mutex and reads the flag after: either
        // we see its work, or it sees the flag and writes the eventfd (both seq_cst).
        bool idle = allWaitable;
        if (idle) {
            wake_.enterIdle();
        }
        // fi_trywait arms each wait fd; -FI_EAGAIN: completions are already there.
        bool armed = true;
        for (const auto &r : rails_) {
            std::lock_guard<std::mutex> g(r->mu);
            if (idle && !r->idleLocked()) {
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
            wake_.leaveIdle();
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
                wake_.drain();
            }
        }
        wake_.leaveIdle();
    }
}

} // namespace nixlLf
