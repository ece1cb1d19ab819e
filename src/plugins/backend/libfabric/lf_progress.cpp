/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Progress: a rail reading its completion queue, finishing, abandoning and releasing requests
// (lfRail); the engine's side: what a rail asks of it (lfRailHost: trace phases, received
// fragments to the inbox, freeing released requests, lost notifications) and the progress
// thread's loop over the rails.

#include "lf_backend.h"
#include "lf_clock.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <thread>
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

// ---------------------------------------------------------------------------------------------
// The rail's progress

void
lfRail::readCqLocked() {
    for (;;) {
        fi_cq_data_entry e[32];
        ssize_t n = fi_cq_read(cq, e, 32);
        if (n > 0) {
            for (ssize_t i = 0; i < n; ++i) {
                onCompletionLocked(static_cast<opCtx *>(e[i].op_context), 0, e[i].len);
            }
            continue;
        }
        if (n == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            if (fi_cq_readerr(cq, &err, 0) > 0) {
                if (err.err == FI_ECANCELED && err.op_context != nullptr &&
                    static_cast<opCtx *>(err.op_context)->kind == opCtx::RECV) {
                    continue; // receives cancelled at close
                }
                onCompletionLocked(static_cast<opCtx *>(err.op_context),
                                   err.err != 0 ? err.err : FI_EIO, 0);
            }
            continue;
        }
        break; // -FI_EAGAIN: empty
    }
}

void
lfRail::progressLocked() {
    readCqLocked();
    flushSendsLocked();
    if (!postQueue_.empty()) {
        std::vector<lfReq *> q = postQueue_; // postMoreLocked edits the queue
        for (lfReq *req : q) {
            postMoreLocked(req);
        }
    }
    // Notifications of requests whose data completed above. Posting may read the queue again
    // (FI_EAGAIN) and so append; take the list each round.
    while (!notifQueue_.empty()) {
        std::vector<lfReq *> q;
        q.swap(notifQueue_);
        for (lfReq *req : q) {
            uint32_t posted = 0;
            nixl_status_t st = sendNotifLocked(*req->peer, req->notif, req->trace, req, &posted);
            req->pending += posted;
            if (st != NIXL_SUCCESS && req->firstErr == NIXL_SUCCESS) {
                req->firstErr = st;
            }
            if (posted > 0) {
                host_->railPhase(req->trace, NIXL_BE_PHASE_NOTIF_SENT, "libfabric.notif", nowUs());
            }
            if (req->pending == 0) {
                finishReqLocked(req);
            }
        }
    }
}

void
lfRail::progress() {
    std::lock_guard<std::mutex> g(mu_);
    progressLocked();
}

size_t
lfRail::drainPosted(int64_t quiet_ms, int64_t max_ms) {
    std::lock_guard<std::mutex> g(mu_);
    // Posted operations only: the backlog was never handed to libfabric.
    auto posted = [this] { return rmaInflight_ + (sends_.size() - sendBacklog_.size()); };
    size_t left = posted();
    const int64_t start = nowMs();
    int64_t quiet_since = start;
    // max_ms bounds a peer that completes one operation just before each quiet period ends.
    while (left > 0 && nowMs() - quiet_since < quiet_ms && nowMs() - start < max_ms) {
        readCqLocked();
        if (const size_t now = posted(); now < left) {
            left = now;
            quiet_since = nowMs();
        } else {
            // The peer's answer is on its way: leave it the core (this machine may have one).
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    }
    return left;
}

void
lfRail::onCompletionLocked(opCtx *ctx, int err, size_t len) {
    if (ctx == nullptr) {
        return;
    }
    if (ctx->kind == opCtx::RECV) {
        auto *rc = static_cast<recvCtx *>(ctx);
        if (err == 0) {
            host_->railReceived(prov,
                                std::string_view(rc->buf.data(), std::min(len, rc->buf.size())));
        } else {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov
                                    << ": receive failed: " << fiErr(err));
        }
        repostLocked(rc);
        return;
    }
    if (ctx->kind == opCtx::RMA && rmaInflight_ > 0) {
        --rmaInflight_;
    }
    lfReq *req = ctx->req;
    if (ctx->kind == opCtx::SEND) {
        auto *s = static_cast<sendCtx *>(ctx);
        sends_.erase(s);
        sendDone(*s, err != 0);
        delete s;
    }
    if (req == nullptr) {
        if (err != 0) {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov
                                    << ": notification send failed: " << fiErr(err));
        }
        return;
    }
    if (err != 0 && req->firstErr == NIXL_SUCCESS) {
        req->firstErr = mapCqErr(err);
        if (!req->released) {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov << ": transfer to "
                                    << req->remote << " failed: " << fiErr(err));
        }
    }
    req->lastProgressMs.store(nowMs(), std::memory_order_relaxed);
    if (--req->pending == 0) {
        finishReqLocked(req);
    }
}

void
lfRail::finishReqLocked(lfReq *req) {
    if (!req->dataDone) {
        req->dataDone = true;
        if (!req->released) {
            host_->railPhase(req->trace, NIXL_BE_PHASE_WIRE_COMPLETED, "libfabric.rma", nowUs());
        }
        if (req->firstErr == NIXL_SUCCESS && req->hasNotif && !req->released) {
            notifQueue_.push_back(req);
            return;
        }
    }
    if (req->released) {
        host_->railFree(req);
        return;
    }
    req->status.store(req->firstErr, std::memory_order_release);
}

void
lfRail::dropFromQueue(std::vector<lfReq *> &q, lfReq *req) {
    q.erase(std::remove(q.begin(), q.end(), req), q.end());
}

void
lfRail::abandon(lfReq &req, nixl_status_t st) {
    std::lock_guard<std::mutex> g(mu_);
    // Operations to a dead process, or ones a provider never completes, may stay outstanding:
    // the request reports the failure now and is freed at release once they complete, or when
    // the engine closes its endpoint.
    req.firstErr = st;
    // A fast operation copies inside its post, under this mutex: none is running now, so the
    // mark can go even if a completion never comes (the target's deregisterMem must not wait
    // for a request that failed).
    req.leaveMark();
    if (req.posting) { // post nothing more
        dropFromQueue(postQueue_, &req);
        req.posting = false;
        if (--req.pending == 0) {
            finishReqLocked(&req);
        }
    }
    dropFromQueue(notifQueue_, &req);
    req.status.store(st);
}

bool
lfRail::release(lfReq &req) {
    std::lock_guard<std::mutex> g(mu_);
    if (req.pending == 0 || faultHoldMark_) {
        req.leaveMark(); // held only by fault_hold_mark: nothing copies any more
    }
    dropFromQueue(notifQueue_, &req);
    if (req.posting) {
        // Descriptors never posted will not be: drop the posting count.
        dropFromQueue(postQueue_, &req);
        req.posting = false;
        --req.pending;
    }
    if (req.pending != 0) {
        req.released = true; // the last completion frees it
        return false;
    }
    return true;
}

lfRail::wait_t
lfRail::armWait(bool &idle) {
    std::lock_guard<std::mutex> g(mu_);
    if (idle && !idleLocked()) {
        idle = false;
    }
    if (waitFd < 0) {
        return wait_t::ARMED;
    }
    fid *f = &cq->fid;
    const int rc = fi_trywait(fabric, &f, 1);
    if (rc == -FI_EAGAIN) {
        return wait_t::READY;
    }
    if (rc != 0) {
        // Never retried: a wait fd we cannot arm would turn the loop into a spin.
        NIXL_SDK_WARN_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov << ": fi_trywait: "
                                       << fiErr(rc) << "; this rail is polled every pthrDelay");
        waitFd = -1;
        return wait_t::UNARMABLE;
    }
    return wait_t::ARMED;
}

// ---------------------------------------------------------------------------------------------
// The engine's side: what rails ask of it, and the progress thread

bool
lfEngine::railTracing() const noexcept {
    return traceSink_ != nullptr;
}

void
lfEngine::railPhase(const nixl_be_trace_ctx_t *ctx,
                    nixl_be_trace_phase_t phase,
                    const char *label,
                    uint64_t tsUs) const noexcept {
    recordPhase(ctx, phase, label, tsUs);
}

void
lfEngine::railReceived(const std::string &prov, std::string_view bytes) const {
    std::vector<notifReassembler::message> ready;
    inbox_.receive(prov, bytes, ready);
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
lfEngine::railFree(lfReq *req) const {
    std::lock_guard<std::mutex> g(reqsMu_);
    reqs_.erase(req);
    delete req;
}

void
lfEngine::railNotifLost() const noexcept {
    notifLost_.fetch_add(1, std::memory_order_relaxed);
}

void
lfEngine::progressAll() const {
    for (const auto &r : rails_) {
        r->progress();
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
            const int fd = r->waitFd;
            const lfRail::wait_t w = r->armWait(idle);
            if (w == lfRail::wait_t::READY) {
                armed = false;
                break;
            }
            if (w == lfRail::wait_t::UNARMABLE) {
                std::erase_if(fds, [&](const pollfd &p) { return p.fd == fd; });
                allWaitable = false;
                idle = false;
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
