/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: workers' progress, their teardown, and the progress thread.
#include "ucx_internal.h"

#include <algorithm>
#include <map>
#include <poll.h>
#include <thread>
#include <unistd.h>

using nixlUcx::finishReq;

nixlUcxWorker::~nixlUcxWorker() {
    if (worker != nullptr) {
        ucp_worker_destroy(worker);
    }
}

unsigned
nixlUcxWorker::progressLocked() {
    if (worker == nullptr) {
        return 0;
    }
    unsigned total = 0;
    // Bounded, so that one busy worker cannot starve the others of the same thread.
    for (int i = 0; i < 256; ++i) {
        unsigned n = ucp_worker_progress(worker);
        if (n == 0) {
            break;
        }
        total += n;
    }
    while (!ready.empty()) {
        std::vector<nixlUcxReq *> batch;
        batch.swap(ready);
        for (nixlUcxReq *req : batch) {
            req->engine->sendXferNotifLocked(*req);
            ++total;
        }
    }
    if (draining && inflight.empty() && sends.empty()) {
        destroyLocked(NIXL_SUCCESS); // nothing is left for the status to apply to
        drained = true;
    }
    return total;
}

bool
nixlUcxWorker::retireLocked() {
    retired = true;
    if (worker == nullptr || (inflight.empty() && sends.empty())) {
        destroyLocked(NIXL_ERR_NOT_FOUND);
        return false;
    }
    draining = true;
    return true;
}

void
nixlUcxWorker::destroyLocked(nixl_status_t pending_status) {
    draining = false;
    if (worker != nullptr) {
        if (inflight.empty()) {
            // Keys before the worker: its destruction takes the endpoints they belong to.
            for (ucp_rkey_h k : retiredRkeys) {
                ucp_rkey_destroy(k);
            }
            ucp_worker_destroy(worker);
        } else {
            NIXL_SDK_WARN("agent " << (engine != nullptr ? engine->agentName() : std::string())
                                   << ": UCX worker torn down with " << inflight.size()
                                   << " transfer(s) still running in UCX; leaving the worker "
                                      "allocated because UCX 1.13 aborts when it is destroyed "
                                      "with RMA in flight");
            abandoned = true;
        }
        worker = nullptr;
    }
    retiredRkeys.clear(); // an abandoned worker's keys stay with it
    ready.clear();
    // No callback can come any more: what UCX did not complete is finished and freed here.
    // genNotif reported those without a request sent: their loss is said, per peer.
    std::map<std::string, std::pair<size_t, size_t>> lost; // peer -> messages, bytes
    for (nixlUcxAmSend *s : sends) {
        if (s->req != nullptr) {
            s->req->notifSend = nullptr;
        } else {
            auto &[n, bytes] = lost[s->remote];
            ++n;
            bytes += s->body.size();
            s->engine->notifQueue().lost(s->body.size());
        }
        nixlUcx::unchargeSend(*s);
        delete s;
    }
    sends.clear();
    for (const auto &[peer, nb] : lost) {
        NIXL_SDK_ERROR("agent " << (engine != nullptr ? engine->agentName() : std::string())
                                << ": " << nb.first << " notification(s) (" << nb.second
                                << " bytes) that genNotif reported sent to " << peer
                                << " were never sent: the UCX worker was torn down first");
    }
    std::unordered_set<nixlUcxReq *> left;
    left.swap(inflight);
    for (nixlUcxReq *req : left) {
        req->tracked = false;
        req->outstanding = 0;
        req->notifSend = nullptr;
        finishReq(*req, pending_status);
    }
}

void
nixlUcxWorkerSet::add(worker_ptr w) {
    std::lock_guard<std::mutex> g(lock_);
    workers_.push_back(std::move(w));
}

void
nixlUcxWorkerSet::removeIf(const std::function<bool(const worker_ptr &)> &gone) {
    std::lock_guard<std::mutex> g(lock_);
    workers_.erase(std::remove_if(workers_.begin(), workers_.end(), gone), workers_.end());
}

std::vector<nixlUcxWorkerSet::worker_ptr>
nixlUcxWorkerSet::snapshot() const {
    std::lock_guard<std::mutex> g(lock_);
    return workers_;
}

void
nixlUcxWorkerSet::dropDrained(const std::vector<nixlUcxWorker *> &drained) {
    std::lock_guard<std::mutex> g(lock_);
    for (nixlUcxWorker *d : drained) {
        auto it = std::find_if(workers_.begin(), workers_.end(),
                               [d](const auto &w) { return w.get() == d; });
        if (it != workers_.end()) { // another thread may have dropped it first
            workers_.erase(it);
            draining_.fetch_sub(1, std::memory_order_relaxed);
        }
    }
}

void
nixlUcxWorkerSet::clear() {
    std::lock_guard<std::mutex> g(lock_);
    workers_.clear();
}

unsigned
nixlUcxEngine::progressAll(bool try_only) const {
    const std::vector<std::shared_ptr<nixlUcxWorker>> ws = workers_->snapshot();
    unsigned total = 0;
    std::vector<nixlUcxWorker *> drained;
    for (auto &w : ws) {
        std::unique_lock<std::mutex> g(w->lock, std::defer_lock);
        if (try_only ? g.try_lock() : (g.lock(), true)) {
            total += w->progressLocked();
            if (w->drained) {
                drained.push_back(w.get());
            }
        }
    }
    if (!drained.empty()) {
        workers_->dropDrained(drained);
    }
    return total;
}

void
nixlUcxEngine::wakeProgress() const {
    if (wakeFd_ >= 0) {
        uint64_t one = 1;
        ssize_t r = ::write(wakeFd_, &one, sizeof(one));
        (void)r; // a full counter already wakes the thread
    }
}

void
nixlUcxEngine::progressLoop() {
    const int idle_ms =
        static_cast<int>(std::max<uint64_t>(1, (cfg_.pthrDelayUs + 999) / 1000));
    const int timeout_ms = std::min<int>(idle_ms, static_cast<int>(cfg_.peerCheckMs));
    std::vector<struct pollfd> fds;
    std::vector<std::shared_ptr<nixlUcxWorker>> ws;
    int idle_rounds = 0;
    while (!stop_.load(std::memory_order_acquire)) {
        const unsigned events = progressAll(false);
        const size_t bytes = direct_->stepActive();
        checkPeers();
        if (events != 0 || bytes != 0) {
            idle_rounds = 0;
            continue;
        }
        const bool busy = direct_->busy();
        // Spin a little before sleeping: completions that raise no event (cma, shm FIFOs
        // being drained by the peer) are then seen without a poll timeout.
        if (++idle_rounds < 64) {
            std::this_thread::yield();
            continue;
        }
        ws = workers_->snapshot();
        fds.clear();
        fds.push_back({wakeFd_, POLLIN, 0});
        bool armed = true;
        for (auto &w : ws) {
            std::lock_guard<std::mutex> g(w->lock);
            if (w->worker == nullptr || w->efd < 0) {
                continue;
            }
            ucs_status_t st = ucp_worker_arm(w->worker);
            if (st == UCS_ERR_BUSY) {
                armed = false;
                break;
            }
            fds.push_back({w->efd, POLLIN, 0});
        }
        ws.clear();
        if (!armed) {
            idle_rounds = 0;
            continue;
        }
        ::poll(fds.data(), fds.size(), busy ? 1 : timeout_ms);
        uint64_t v = 0;
        ssize_t r = ::read(wakeFd_, &v, sizeof(v));
        (void)r;
        idle_rounds = 0;
    }
}

void
nixlUcxEngine::directHousekeeping() const {
    // A process that only posts direct transfers would otherwise leave UCX's wireup requests
    // from peers that connected to it unanswered in its home workers' FIFOs until its agent is
    // destroyed; if the peer has exited by then, UCX attaches to the peer's removed FIFO and
    // logs "shmat(...) failed: Invalid argument" / "mm ep failed to connect to remote FIFO".
    thread_local unsigned posts = 0;
    if (cfg_.progressThread || (++posts & 63) != 0) {
        return;
    }
    const int64_t now = nixlUcx::nowNs();
    if (now - peers_->lastCheckNs() <
        static_cast<int64_t>(cfg_.peerCheckMs) * 1000000) {
        return;
    }
    progressAll(true);
    checkPeers();
}
