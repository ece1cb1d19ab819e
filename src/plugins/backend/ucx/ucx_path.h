/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_path.h
 * @brief The UCX backend's two data paths as strategies: nixlUcxDataPath, its direct
 *        implementation (process_vm_writev/readv or memcpy under the registration fence,
 *        ucx_direct.cpp) and its UCP one (ucp_put/get and the flush, ucx_ucp.cpp), and the
 *        narrow nixlUcxPathHost through which both reach the engine.
 *
 * The engine picks a path once per request at prepXfer (nixlUcxReq::dataPath) and delegates
 * the post, the check's own step, the posting pool's batches and the release of a running
 * request to it. What the paths share with the rest of the engine (marking a peer lost, the
 * notification, tracing, the pool's queue, liveness) goes through the host.
 *
 * Thread safety: a path object holds only state fixed at construction, except the direct
 * path's nixlUcxActiveList (its own lock, see ucx_req.h); every member may be called from any
 * thread. The request's own fields are guarded as ucx_req.h says; each member says which lock
 * it expects.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_PATH_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_PATH_H

#include <cstddef>
#include <string>
#include <string_view>

#include "nixl_backend_sdk.h"
#include "ucx_config.h"
#include "ucx_req.h"

/** What a data path needs from its engine. Implemented by nixlUcxEngine. */
class nixlUcxPathHost {
public:
    /** The local agent's name, for log lines. */
    virtual const std::string &
    pathAgent() const noexcept = 0;
    /** Whether the agent traces. */
    virtual bool
    pathTracing() const noexcept = 0;
    /** A phase of req's current post (into its phase batch when it has one). */
    virtual void
    pathPhase(nixlUcxReq &req, nixl_be_trace_phase_t phase, std::string_view label) const
        noexcept = 0;
    /** Records a post's batch of phases under ctx (may be null). */
    virtual void
    pathRecord(const nixl_be_trace_ctx_t *ctx, nixlTracePhaseBatch &batch) const noexcept = 0;
    /** The peer of conn is gone (why, logged once): marks it lost and reaps its workers. */
    virtual void
    pathLost(nixlUcxConn &conn, const std::string &why) const = 0;
    /** Liveness of the peers now; a lost conn's workers are reaped (no worker lock held). */
    virtual void
    pathCheckPeer(nixlUcxConn &conn) const = 0;
    /** Sends req's notification on its lane, or completes it; lane worker lock held. */
    virtual void
    pathSendNotifLocked(nixlUcxReq &req) const = 0;
    /** Wakes the progress thread (when there is one). */
    virtual void
    pathWake() const = 0;
    /** A direct post completed inline: the engine's occasional progress without a thread. */
    virtual void
    pathHousekeeping() const = 0;
    /** Queues req's batches of split_batch_size descriptors to the posting pool. */
    virtual void
    pathSubmit(nixlUcxReq &req) const = 0;

protected:
    ~nixlUcxPathHost() = default;
};

/** Where a post's trace phases go while it runs inline (postXfer's stack). */
struct nixlUcxPostTrace {
    /** The post's batch, or null: phases are recorded as they happen. */
    nixlTracePhaseBatch *batch = nullptr;
    /** The context the batch is recorded under (a copy on postXfer's stack), or null. */
    const nixl_be_trace_ctx_t *ctx = nullptr;
};

/** @brief One way of moving a request's bytes; see the file comment. */
class nixlUcxDataPath {
public:
    virtual ~nixlUcxDataPath() = default;

    /** The value of the SUBMIT phase's ucx.path attribute. */
    virtual nixl_plugin_str_t
    traceName() const noexcept = 0;
    /**
     * Posts req: its status is IN_PROG and SUBMIT recorded (into trace.batch when set). A
     * split request (req.split, counters reset) goes to the pool in batches. Returns the
     * request's status after the post; trace.batch is recorded before it returns.
     */
    virtual nixl_status_t
    post(nixlUcxReq &req, const nixlUcxPostTrace &trace) const = 0;
    /** checkXfer of a running request, before the engine progresses the workers. */
    virtual void
    check(nixlUcxReq &req) const = 0;
    /** Pool: moves descriptors [begin, end) of req (no lock held). */
    virtual void
    runBatch(nixlUcxReq &req, size_t begin, size_t end) const = 0;
    /** Pool: the last batch of req's post finished (no lock held). */
    virtual void
    finishSplit(nixlUcxReq &req) const = 0;
    /** releaseReqH, before anything else: afterwards no thread of the path looks at req. */
    virtual void
    detach(nixlUcxReq &req) const = 0;
    /**
     * releaseReqH of a running request (status IN_PROG, pool batches done). NIXL_SUCCESS:
     * req was deleted; else req stays and the result is releaseReqH's. worker is req's lane
     * worker, kept alive by the caller.
     */
    virtual nixl_status_t
    releaseRunning(nixlUcxReq &req, nixlUcxWorker &worker) const = 0;

protected:
    nixlUcxDataPath() = default;
};

/**
 * @brief The direct path: process_vm_writev/readv to a same-host peer, or memcpy between
 *        agents of one process, each copy checked inside a mark of the peer's registration
 *        table (the fence of src/utils/regtable/reg_table.h). Owns the list of requests the
 *        progress thread copies.
 */
class nixlUcxDirectPath final : public nixlUcxDataPath {
public:
    nixlUcxDirectPath(const nixlUcxPathHost &host, const nixlUcxConfig &cfg)
        : host_(host),
          cfg_(cfg) {}

    nixl_plugin_str_t
    traceName() const noexcept override {
        return nixl_plugin_str_t{"direct", 6};
    }

    nixl_status_t
    post(nixlUcxReq &req, const nixlUcxPostTrace &trace) const override;
    void
    check(nixlUcxReq &req) const override;
    void
    runBatch(nixlUcxReq &req, size_t begin, size_t end) const override;
    void
    finishSplit(nixlUcxReq &req) const override;
    void
    detach(nixlUcxReq &req) const override;
    nixl_status_t
    releaseRunning(nixlUcxReq &req, nixlUcxWorker &worker) const override;

    /** Round-robins the listed requests (progress thread); returns bytes copied. */
    size_t
    stepActive() const;
    /** Whether requests are listed for the progress thread. */
    bool
    busy() const {
        return !active_.empty();
    }

private:
    /** Without a progress thread a peer's slot readv checks the keys before the copies. */
    bool
    staleCheck(nixlUcxReq &req) const;
    /** Logs that md of req was released and finishes req with NIXL_ERR_NOT_FOUND. */
    void
    reportStale(nixlUcxReq &req, const nixlUcxRemoteMD &md) const;
    /** Copies up to budget bytes of req; stepLock held. */
    void
    stepLocked(nixlUcxReq &req, size_t budget) const;
    /** After the last byte: sends the notification or completes; stepLock held. */
    void
    finishDataLocked(nixlUcxReq &req) const;
    /** Records a batch's error; the first one logs msg. */
    void
    failSplit(nixlUcxReq &req, nixl_status_t st, const std::string &msg) const;

    const nixlUcxPathHost &host_;
    const nixlUcxConfig &cfg_;
    /** Requests with bytes left that the progress thread copies. */
    mutable nixlUcxActiveList active_;
};

/** @brief The UCP path: ucp_put_nbx/ucp_get_nbx on the request's lane, then the flush. */
class nixlUcxUcpPath final : public nixlUcxDataPath {
public:
    nixlUcxUcpPath(const nixlUcxPathHost &host, const nixlUcxConfig &cfg)
        : host_(host),
          cfg_(cfg) {}

    nixl_plugin_str_t
    traceName() const noexcept override {
        return nixl_plugin_str_t{"ucx", 3};
    }

    nixl_status_t
    post(nixlUcxReq &req, const nixlUcxPostTrace &trace) const override;
    void
    check(nixlUcxReq &) const override {} // the workers' progress completes it
    void
    runBatch(nixlUcxReq &req, size_t begin, size_t end) const override;
    void
    finishSplit(nixlUcxReq &req) const override;
    void
    detach(nixlUcxReq &) const override {}
    nixl_status_t
    releaseRunning(nixlUcxReq &req, nixlUcxWorker &worker) const override;

private:
    /**
     * A post begins (lane worker lock held): false, with st, the request finished and one
     * line logged, when the connection is gone; else tracked, held once, WIRE_SUBMITTED.
     */
    bool
    startLocked(nixlUcxReq &req, nixl_status_t &st) const;

    const nixlUcxPathHost &host_;
    const nixlUcxConfig &cfg_;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_PATH_H
