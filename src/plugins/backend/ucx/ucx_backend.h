/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_backend.h
 * @brief The UCX data backend (libplugin_UCX.so): DRAM (and, when UCX has CUDA support, VRAM)
 *        transfers between agents, with notifications, over UCX 1.13 or newer.
 *
 * Design in short (docs/backends/ucx.md has the long form):
 *  - One UCP context per engine and num_workers "home" workers. Their addresses are the
 *    connection info; notifications (active messages) arrive on them.
 *  - Data path. UCX 1.13 serves ucp_put/ucp_get between two processes of one host by software
 *    emulation over the sysv/posix FIFOs, which needs the target to progress and lets a stale
 *    remote key crash the target. For peers in the same kernel and pid namespace that cma can
 *    reach (probed at connection time) the engine therefore moves the bytes itself with
 *    process_vm_writev/readv, which is what UCX's cma transport does: one-sided, one copy,
 *    errors returned synchronously. Every other peer (other hosts, UCX_TLS without cma,
 *    ucx_direct_cma=no, VRAM) goes through ucp_put_nbx/ucp_get_nbx and ucp_ep_flush_nbx.
 *    Agents of one process copy with memcpy instead.
 *  - Registration checks and the deregistration fence (src/utils/regtable/reg_table.h): each engine's table of
 *    registration ids lives in 0600 shared memory that same-host peers of its uid map; every
 *    direct copy checks its registrations there inside a mark, and deregisterMem waits out
 *    the marks, so no copy touches a range after its deregistration returned.
 *  - Failure detection. Endpoints to other hosts use UCX peer error handling (unless
 *    ucx_error_handling_mode=none). Endpoints to same-host peers use UCX's "none" mode, the only
 *    one in which UCX 1.13 selects shared-memory transports, on private workers, and the engine
 *    watches the peer process itself (pid + start time in /proc every ucx_peer_check_ms). A lost
 *    peer fails its transfers with NIXL_ERR_REMOTE_DISCONNECT; its private workers are destroyed,
 *    which is the only way UCX 1.13 completes operations stuck on a "none" endpoint.
 *  - A notification is an active message sent after the data is visible at the target: after
 *    the flush (WRITE) or the gets (READ) completed on the UCX path, after the last
 *    process_vm_writev returned on the direct path.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_BACKEND_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_BACKEND_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include <ucp/api/ucp.h>

#include "nixl_backend_sdk.h"
#include "reg_table.h"
#include "ucx_utils.h"
#include "ucx_wire.h"

#include "ucx_config.h"
#include "ucx_conn.h"
#include "ucx_notif_queue.h"
#include "ucx_path.h"
#include "ucx_pool.h"
#include "ucx_registry.h"
#include "ucx_req.h"
#include "ucx_worker.h"

class nixlUcxEngine;

/** @brief The UCX engine; one per agent backend. */
class nixlUcxEngine : public nixlBackendEngine, private nixlUcxPathHost {
public:
    explicit nixlUcxEngine(const nixlBackendInitParams *init_params);
    ~nixlUcxEngine() override;

    static nixl_b_params_t
    pluginOptions();
    static nixl_mem_list_t
    pluginMems();

    bool
    supportsRemote() const override {
        return true;
    }

    bool
    supportsLocal() const override {
        return true;
    }

    bool
    supportsNotif() const override {
        return true;
    }

    nixl_mem_list_t
    getSupportedMems() const override;

    nixl_status_t
    registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem, nixlBackendMD *&out) override;
    nixl_status_t
    deregisterMem(nixlBackendMD *meta) override;
    nixl_status_t
    connect(const std::string &remote_agent) override;
    nixl_status_t
    disconnect(const std::string &remote_agent) override;
    nixl_status_t
    unloadMD(nixlBackendMD *input) override;

    nixl_status_t
    getPublicData(const nixlBackendMD *meta, std::string &str) const override;
    nixl_status_t
    getConnInfo(std::string &str) const override;
    /** NIXL 1.4's form: worker 0's raw UCP address (ucx_nixl_peer.h). */
    nixl_status_t
    getConnInfoNixl(std::string &str) const override;
    /** NIXL 1.4's form: the registration's raw packed remote key. */
    nixl_status_t
    getPublicDataNixl(const nixlBackendMD *meta, std::string &str) const override;
    nixl_status_t
    loadRemoteConnInfo(const std::string &remote_agent,
                       const std::string &remote_conn_info) override;
    nixl_status_t
    loadRemoteMD(const nixlBlobDesc &input,
                 const nixl_mem_t &nixl_mem,
                 const std::string &remote_agent,
                 nixlBackendMD *&output) override;
    nixl_status_t
    loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) override;

    nixl_status_t
    prepXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const override;
    nixl_status_t
    postXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const override;
    nixl_status_t
    checkXfer(nixlBackendReqH *handle) const override;
    nixl_status_t
    releaseReqH(nixlBackendReqH *handle) const override;
    /**
     * direct_memcpy, direct_cma or ucp, as prepXfer picked; a ucp request's reason is the
     * connection's (why it is not direct) or, on a direct connection, mem_type_unsupported,
     * each flagged first_for_conn once per connection. Any thread.
     */
    nixl_status_t
    getXferPath(const nixlBackendReqH *handle, nixl_xfer_path_info_t &out) const override;
    /**
     * UCX's own model of the request's endpoint (ucp_ep_evaluate_perf: the fastest lane's
     * latency plus bytes over its bandwidth), summed over the descriptors, plus the WRITE flush
     * and the notification; err_margin is 16 times it, which covered the measured times
     * (docs/backends/ucx.md). Method ANALYTICAL_BACKEND, as NIXL's UCX backend.
     */
    nixl_status_t
    estimateXferCost(const nixl_xfer_op_t &operation,
                     const nixl_meta_dlist_t &local,
                     const nixl_meta_dlist_t &remote,
                     const std::string &remote_agent,
                     nixlBackendReqH *const &handle,
                     std::chrono::microseconds &duration,
                     std::chrono::microseconds &err_margin,
                     nixl_cost_t &method) const override;

    nixl_status_t
    getNotifs(notif_list_t &notif_list) override;
    nixl_status_t
    genNotif(const std::string &remote_agent, const std::string &msg) const override;

    // Called from UCX callbacks and the worker wrapper; not part of the engine API.

    /** Whether the agent traces (the engine has a trace sink). */
    bool
    tracing() const noexcept {
        return traceSink_ != nullptr;
    }

    /**
     * Whether a notification of req carries its trace context (a version-2 header): the agent
     * traces, the context is valid and the name fits the header's 16-bit length.
     */
    bool
    carriesTrace(const nixlUcxReq *req) const noexcept;

    /** Records a phase under ctx now; a no-op when the agent does not trace. Any thread. */
    void
    tracePhase(const nixl_be_trace_ctx_t *ctx,
               nixl_be_trace_phase_t phase,
               std::string_view label) const noexcept;

    /**
     * A phase of req's current post: into the post's batch when it has one (see
     * nixlUcxReq::phaseBatch; call with stepLock held then), else tracePhase(req.traceCtx).
     */
    void
    tracePhase(nixlUcxReq &req, nixl_be_trace_phase_t phase, std::string_view label) const
        noexcept;

    /** Sends req's notification on its lane, or completes it; lane worker lock held. */
    void
    sendXferNotifLocked(nixlUcxReq &req) const;
    /** Marks a connection lost (once) and logs why; cleanup happens outside callbacks. */
    void
    markLost(nixlUcxConn &conn, const std::string &why) const;

    /** Received notifications and the counts of sent, dropped and lost ones. */
    nixlUcxNotifQueue &
    notifQueue() const noexcept {
        return *notifs_;
    }

    const std::string &
    agentName() const noexcept {
        return localAgent;
    }

private:
    bool
    initUcx();
    /**
     * The context of private workers: the engine's configuration with small shared-memory
     * queues (ucx_config.cpp, private_presets), created at the first private worker; the
     * engine's context if it cannot be made (one warning).
     */
    ucp_context_h
    privateContext() const;
    /** Packs a key of the engine's own for host memory and keeps its layout (hostRkey_). */
    bool
    learnRkeyLayout();
    std::shared_ptr<nixlUcxWorker>
    createWorker(bool home, const std::string &name) const;
    /** ucp_worker_create (serialized, named) and, with a progress thread, its event fd. */
    bool
    openWorker(ucp_context_h ctx, const std::string &name, ucp_worker_h &h, int &efd) const;
    /**
     * Creates lane's endpoint, and first its private worker when pending; then unpacks the
     * remote keys of the registrations loaded so far. Lane worker lock held. Logs a failure
     * (naming the peer) and leaves the lane as it was, so a later use tries again.
     */
    nixl_status_t
    setupLaneLocked(nixlUcxConn &conn, nixlUcxLane &lane) const;
    /**
     * The connection's first use: builds every pending lane, each exactly once even when
     * several threads arrive at once (the lane's worker lock orders them); afterwards one
     * atomic load. A lost or closed connection builds nothing: its uses report that.
     */
    nixl_status_t
    ensureLanes(nixlUcxConn &conn) const;
    /**
     * The peer's connection info decoded: ours (identity, every home worker's address) or
     * NIXL's (one raw address, no identity: nixl is set). False, logged, when refused.
     */
    nixl_status_t
    decodePeerConnInfo(const std::string &remote_agent,
                       const std::string &conn_info,
                       nixlUcx::connInfoWire &ci,
                       bool &nixl) const;
    /** Checks NIXL-form public data (a raw key) of remote_agent; pd gets input's range. */
    bool
    decodeNixlPublicData(const nixlBlobDesc &input,
                         nixl_mem_t mem,
                         nixlUcx::publicDataWire &pd,
                         std::string &why) const;
    nixl_status_t
    buildConn(const std::string &remote_agent,
              const std::string &conn_info,
              std::shared_ptr<nixlUcxConn> &out);
    void
    closeConn(nixlUcxConn &conn);
    /** Destroys the private workers of a lost connection (no worker lock held). */
    void
    reapLost(nixlUcxConn &conn) const;
    std::shared_ptr<nixlUcxConn>
    findConn(const std::string &name) const;
    nixl_status_t
    unpackRkeys(nixlUcxRemoteMD &md) const;

    /** Progresses every worker (home and private); returns the events handled. */
    unsigned
    progressAll(bool try_only) const;
    /** Liveness of watched peers, at most once per ucx_peer_check_ms unless forced. */
    void
    checkPeers(bool force = false) const;
    void
    wakeProgress() const;
    void
    progressLoop();
    /**
     * Without a progress thread: a direct transfer that completed inside postXferReq never
     * reaches checkXfer, which progresses the workers; this does it from the post, at most
     * once per ucx_peer_check_ms (a clock read every 64th post of a thread).
     */
    void
    directHousekeeping() const;
    /** Posting pool (num_threads > 0, ucx_pool.cpp) ------------------------------------ */
    /** Starts the num_threads pool threads, which run the requests' data paths on their
     *  batches; false (logged) if one cannot be started. */
    bool
    startPool();

    // nixlUcxPathHost: what the data paths (ucx_path.h) reach of the engine.
    const std::string &
    pathAgent() const noexcept override {
        return localAgent;
    }
    bool
    pathTracing() const noexcept override {
        return tracing();
    }
    void
    pathPhase(nixlUcxReq &req, nixl_be_trace_phase_t phase, std::string_view label) const
        noexcept override {
        tracePhase(req, phase, label);
    }
    void
    pathRecord(const nixl_be_trace_ctx_t *ctx, nixlTracePhaseBatch &batch) const
        noexcept override {
        recordPhases(ctx, batch);
    }
    void
    pathLost(nixlUcxConn &conn, const std::string &why) const override {
        markLost(conn, why);
        reapLost(conn);
    }
    void
    pathCheckPeer(nixlUcxConn &conn) const override {
        checkPeers();
        if (!conn.usable()) {
            reapLost(conn);
        }
    }
    void
    pathSendNotifLocked(nixlUcxReq &req) const override {
        sendXferNotifLocked(req);
    }
    void
    pathWake() const override {
        wakeProgress();
    }
    void
    pathHousekeeping() const override {
        directHousekeeping();
    }
    /** ucx_pool.cpp */
    void
    pathSubmit(nixlUcxReq &req) const override;
    nixl_status_t
    sendAm(nixlUcxLane &lane,
           const std::string &remote,
           const std::string &msg,
           nixlUcxReq *req) const;
    /** sendAm to a NIXL peer: active message 0, no header, a serdes body. */
    nixl_status_t
    sendNixlAm(nixlUcxLane &lane,
               const std::string &remote,
               const std::string &msg,
               nixlUcxReq *req,
               std::unique_ptr<nixlUcxAmSend> s) const;
    /** Hands s (header and body set) to UCX as active message am_id; sendAm's result. */
    nixl_status_t
    postAm(nixlUcxLane &lane,
           const std::string &remote,
           size_t msg_size,
           nixlUcxReq *req,
           std::unique_ptr<nixlUcxAmSend> s,
           unsigned am_id,
           uint32_t flags) const;
    /** Fault injection of ucx_fault_notif_trace on an encoded context. */
    void
    damageTrace(uint8_t *trace) const;

    /** Parsed once in the constructor; immutable, read by every thread without a lock. */
    const nixlUcxConfig cfg_;
    /**
     * The components: each thread-safe on its own (its header says how). Held by const
     * pointers to non-const objects because the SDK declares the posting and checking
     * methods const while they change what these components hold.
     */
    const std::unique_ptr<nixlUcxNotifQueue> notifs_;
    /** The posting pool (no threads when num_threads is 0). */
    const std::unique_ptr<nixlUcxPostPool> pool_;
    /** Every worker the progress paths visit: home ones and private ones of live peers. */
    const std::unique_ptr<nixlUcxWorkerSet> workers_;
    /** The connections by agent name (liveness included). */
    const std::unique_ptr<nixlUcxPeerTable> peers_;
    /** The registration table peers check, its slots and ids, and the fence. */
    const std::unique_ptr<nixlUcxRegistry> registry_;
    /** The two data paths (ucx_path.h); each request uses the one prepXfer picked. The direct
     *  one holds the requests the progress thread copies. */
    const std::unique_ptr<nixlUcxDirectPath> direct_;
    const std::unique_ptr<nixlUcxUcpPath> ucp_;
    /** Context of the private workers (privateContext), made at the first one. */
    const std::unique_ptr<nixlUcxPrivateContext> privCtx_;
    bool vram_ = false;
    bool cmaAllowed_ = false; ///< UCX_TLS (after overrides) keeps cma enabled
    bool shmAllowed_ = false; ///< UCX_TLS keeps a shared-memory transport enabled
    bool mmAllowed_ = false; ///< ... and one with FIFOs (sysv, posix, xpmem)
    bool cmaWorks_ = false; ///< process_vm_readv is permitted in this process
    /** What a peer's key for DRAM must look like; checked before UCX unpacks one. */
    nixlUcx::rkeyLayout hostRkey_;
    bool rkeyLayoutKnown_ = false;

    ucp_context_h ctx_ = nullptr;
    std::vector<std::shared_ptr<nixlUcxWorker>> home_;
    nixlUcx::procIdentity self_;
    uint64_t nonce_ = 0;
    std::string connInfo_;
    /** Worker 0's raw address: the connection info a NIXL peer reads. */
    std::string connInfoNixl_;




    int wakeFd_ = -1;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_BACKEND_H
