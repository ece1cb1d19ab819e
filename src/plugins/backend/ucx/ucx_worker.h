/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_worker.h
 * @brief One UCP worker of the UCX engine (home or private) and the lock that serialises it.
 *
 * Thread safety: every non-const member is guarded by `lock`, which is held for each call into
 * UCX on the worker and while its callbacks run; name, home and engine are set before the
 * worker is shared and never change.
 *
 * nixlUcxWorkerSet, the engine's list of the workers its progress paths visit, is safe to use
 * from any thread: the list is guarded by its own leaf lock (no worker lock is taken under it,
 * and callers take it with no worker lock held or only for add/remove), the draining count is
 * an atomic. nixlUcxPrivateContext is safe from any thread too (its own leaf lock, held while
 * the context is made once).
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_WORKER_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_WORKER_H

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <ucp/api/ucp.h>

#include "nixl_types.h"

class nixlUcxEngine;
class nixlUcxReq;
struct nixlUcxAmSend;

/** @brief One UCP worker and the mutex that serialises every use of it. */
class nixlUcxWorker {
public:
    nixlUcxWorker(ucp_worker_h worker, int efd, bool home, std::string name)
        : worker(worker),
          efd(efd),
          home(home),
          name(std::move(name)) {}

    nixlUcxWorker(const nixlUcxWorker &) = delete;
    nixlUcxWorker &
    operator=(const nixlUcxWorker &) = delete;
    ~nixlUcxWorker();

    /** Held for every call into UCX on this worker and while its callbacks run. */
    std::mutex lock;
    /**
     * nullptr once destroyed (a private worker of a lost or disconnected peer), and while
     * pending.
     */
    ucp_worker_h worker;
    int efd; ///< set with worker (guarded by lock)
    /**
     * A private worker not created yet: the connection's first use (connect, prepXfer,
     * postXfer, genNotif) creates it and its endpoint, under lock, once (ensureLanes).
     */
    bool pending = false;
    const bool home;
    const std::string name;
    const nixlUcxEngine *engine = nullptr;
    /**
     * Requests whose UCX operations completed inside a callback and whose notification is still
     * to be sent; sent right after the progress call returns, outside UCX's callback context.
     */
    std::vector<nixlUcxReq *> ready;
    /**
     * Requests with UCX operations on this worker, and active messages in flight. UCX 1.13
     * does not call back every operation of a worker it destroys, so destroyLocked finishes
     * what is left here itself.
     */
    std::unordered_set<nixlUcxReq *> inflight;
    std::unordered_set<nixlUcxAmSend *> sends;

    /**
     * Progresses until UCX reports no more work, then sends ready notifications. A draining
     * worker whose last operation completed is destroyed here (worker becomes nullptr).
     */
    unsigned
    progressLocked();
    /**
     * Retires a private worker whose connection closed while the peer lives: destroyed now
     * when UCX has nothing of it in flight (returns false), otherwise left draining (returns
     * true). A draining worker stays in the engine's list and is progressed like any other;
     * its requests stay in progress until UCX completes their operations (the buffers are
     * UCX's until then) and finish through their callbacks, with the closed connection's
     * status. The peer then answers what it was sent, and the worker goes once nothing is
     * left, instead of being abandoned with its sockets and segments.
     */
    bool
    retireLocked();
    /**
     * Destroys the UCP worker. Operations UCX cancels complete through their callbacks; the
     * requests still in flight afterwards finish with pending_status.
     *
     * UCX 1.13 aborts the process (an assertion in ucp_ep_destroy_base) when a worker is
     * destroyed while an RMA operation of an endpoint without peer error handling is still
     * running, e.g. a READ over tcp whose target never progressed. Such a worker is therefore
     * abandoned instead (never progressed or destroyed again; `abandoned` is set) and the
     * requests finish with pending_status all the same: a leak at teardown beats an abort.
     */
    void
    destroyLocked(nixl_status_t pending_status);
    bool abandoned = false; ///< destroyLocked left the UCP worker alive (see there)
    /** retireLocked left it draining; cleared when it is destroyed. */
    bool draining = false;
    /** No connection uses it any more (retireLocked was called). */
    bool retired = false;
    /** It drained and was destroyed: the engine drops it from its list (progressAll). */
    bool drained = false;
    /**
     * Remote keys of the closed connection's lanes on this worker: UCX requires a key to
     * outlive the operations that use it, so they go with the worker (before it).
     */
    std::vector<ucp_rkey_h> retiredRkeys;
};

/**
 * @brief Every worker the engine progresses: the home ones and the private ones of live
 *        peers (and those still draining), with the count of draining ones.
 */
class nixlUcxWorkerSet {
public:
    using worker_ptr = std::shared_ptr<nixlUcxWorker>;

    void
    add(worker_ptr w);
    /** Drops the workers for which gone is true (a closed or lost connection's). */
    void
    removeIf(const std::function<bool(const worker_ptr &)> &gone);
    /** A copy of the list, to progress without the set's lock. */
    std::vector<worker_ptr>
    snapshot() const;
    /** Drops drained workers (retired ones that were destroyed once idle) and uncounts them. */
    void
    dropDrained(const std::vector<nixlUcxWorker *> &drained);
    void
    clear();

    /**
     * Private workers draining (retireLocked) and not destroyed yet; at most max_draining,
     * past which a closed connection's busy worker is abandoned (a peer that never completes
     * what it was sent cannot hold more than that).
     */
    static constexpr size_t max_draining = 64;

    bool
    mayDrain() const noexcept {
        return draining_.load(std::memory_order_relaxed) < max_draining;
    }

    void
    drainStarted() noexcept {
        draining_.fetch_add(1, std::memory_order_relaxed);
    }

    const std::atomic<size_t> &
    draining() const noexcept {
        return draining_;
    }

    /**
     * Serialises the retiring and destroying of connections' private workers (closeConn,
     * reapLost); taken before any worker lock, never under the set's list lock.
     */
    std::unique_lock<std::mutex>
    teardownLock() {
        return std::unique_lock<std::mutex>(teardown_);
    }

    /** Records that a destroyLocked left w's UCP worker alive (see there). */
    void
    noteAbandoned(const nixlUcxWorker &w) noexcept {
        if (w.abandoned) {
            abandoned_.store(true, std::memory_order_relaxed);
        }
    }

    /** Some worker was abandoned: the UCP contexts must stay (teardown). */
    bool
    anyAbandoned() const noexcept {
        return abandoned_.load(std::memory_order_relaxed);
    }

private:
    mutable std::mutex lock_;
    std::vector<worker_ptr> workers_;
    std::atomic<size_t> draining_{0};
    std::mutex teardown_;
    std::atomic<bool> abandoned_{false};
};

/** @brief The UCP context of private workers, made once, at the first private worker. */
class nixlUcxPrivateContext {
public:
    /**
     * The context: made by make() at the first call (make returns null when it cannot, and
     * says why itself); fallback, the engine's context, when it could not be made.
     */
    ucp_context_h
    get(ucp_context_h fallback, const std::function<ucp_context_h()> &make) {
        std::lock_guard<std::mutex> g(lock_);
        if (ctx_ == nullptr && !failed_) {
            ctx_ = make();
            failed_ = ctx_ == nullptr;
        }
        return ctx_ != nullptr ? ctx_ : fallback;
    }

    /** The context made, null if none (the engine cleans it up at teardown). */
    ucp_context_h
    made() const {
        std::lock_guard<std::mutex> g(lock_);
        return ctx_;
    }

private:
    mutable std::mutex lock_;
    ucp_context_h ctx_ = nullptr;
    bool failed_ = false;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_WORKER_H
