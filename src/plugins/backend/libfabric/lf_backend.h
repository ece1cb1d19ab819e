/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_backend.h
 * @brief The LIBFABRIC backend: DRAM READ/WRITE between agents over libfabric RDM endpoints
 *        (shm between processes of one host, tcp;ofi_rxm otherwise), with notifications.
 *
 * Structure: the engine owns components, each with its own state, lock and thread-safety
 * contract in its header, and keeps the SDK overrides, which delegate to them:
 *   lfConfig (lf_config.h)      parameters, parsed once, immutable;
 *   lfPeerTable (lf_peers.h)    peers by name and their liveness;
 *   lfRegistry (lf_registry.h)  registrations and the shared registration table's slots;
 *   lfNotifInbox (lf_inbox.h)   received notifications until getNotifs;
 *   lfRail (lf_rail.h)          one per opened provider: the data path of the peers it reaches;
 *   lfProgressWake (lf_wake.h)  waking the progress thread (lf_progress.cpp);
 *   lfPostPool (lf_pool.h)      the posting pool's threads and queue (num_threads).
 * Every registration is registered in every rail's domain; each peer is reached over one rail
 * chosen when its connection info is loaded. Parameters, data paths and the failure model:
 * docs/backends/libfabric.md.
 *
 * Thread safety: core serialises control calls. Transfer calls (postXfer, checkXfer,
 * releaseReqH, genNotif, getNotifs) may run concurrently (NIXL_THREAD_SYNC_RW) and with the
 * progress thread: every call into a rail's libfabric objects, and every change of a request's
 * counters, happens under that rail's mutex, inside the rail's own methods (the rail owns its
 * progress and posting and calls back through lfRailHost). Each component takes only its own
 * lock and calls no other component, so its lock is always innermost (a rail holds its mutex
 * while its host callbacks feed the inbox or free a released request under reqsMu_). The engine's own shared state is the request set (reqsMu_), documented where
 * declared; the progress thread's wake-up is lf_wake.h.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_BACKEND_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_BACKEND_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include <rdma/fabric.h>

#include "nixl_backend_sdk.h"
#include "lf_clock.h"
#include "lf_config.h"
#include "lf_inbox.h"
#include "lf_peers.h"
#include "lf_pool.h"
#include "lf_rail.h"
#include "lf_registry.h"
#include "lf_wake.h"
#include "lf_wire.h"
#include "lf_xfer.h"
#include "proc_identity.h"

namespace nixlLf {

class lfEngine : public nixlBackendEngine, private lfRailHost {
public:
    explicit lfEngine(const nixlBackendInitParams *init);
    ~lfEngine() override;

    static nixl_b_params_t
    pluginOptions();
    static nixl_mem_list_t
    pluginMems() {
        return {DRAM_SEG};
    }

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
    getSupportedMems() const override {
        return {DRAM_SEG};
    }

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
    nixl_status_t
    loadRemoteConnInfo(const std::string &remote_agent, const std::string &conn) override;
    nixl_status_t
    loadRemoteMD(const nixlBlobDesc &input,
                 const nixl_mem_t &nixl_mem,
                 const std::string &remote_agent,
                 nixlBackendMD *&output) override;
    nixl_status_t
    loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) override;

    // prepXfer and postXfer take the SDK's same six parameters.
    nixl_status_t
    prepXfer(const nixl_xfer_op_t &op, const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote, const std::string &remote_agent,
             nixlBackendReqH *&handle, const nixl_opt_b_args_t *opt_args) const override;
    nixl_status_t
    postXfer(const nixl_xfer_op_t &op, const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote, const std::string &remote_agent,
             nixlBackendReqH *&handle, const nixl_opt_b_args_t *opt_args) const override;
    nixl_status_t
    checkXfer(nixlBackendReqH *handle) const override;
    nixl_status_t
    releaseReqH(nixlBackendReqH *handle) const override;
    /** shm or tcp, the peer's rail; not shm: the reason, once per connection. Any thread. */
    nixl_status_t
    getXferPath(const nixlBackendReqH *handle, nixl_xfer_path_info_t &out) const override;
    nixl_status_t
    getNotifs(notif_list_t &notif_list) override;
    nixl_status_t
    genNotif(const std::string &remote_agent, const std::string &msg) const override;

private:
    // lf_progress.cpp: what the rails ask of the engine (lfRailHost), the progress thread
    bool
    railTracing() const noexcept override;
    void
    railPhase(const nixl_be_trace_ctx_t *ctx,
              nixl_be_trace_phase_t phase,
              const char *label,
              uint64_t tsUs) const noexcept override;
    void
    railReceived(const std::string &prov, std::string_view bytes) const override;
    void
    railFree(lfReq *req) const override;
    void
    railNotifLost() const noexcept override;
    void
    progressAll() const;
    void
    progressLoop();
    /** After a call that left work for the progress thread: wakes it if it waits idle. */
    void
    wakeProgressIfIdle() const noexcept {
        wake_.wakeIfIdle();
    }

    // lf_backend.cpp
    /**
     * Teardown, after the progress thread and the pool stopped: lets each tcp;ofi_rxm rail
     * finish the operations posted on it (lfRail::drainPosted). libfabric 1.17 faults in
     * fi_close of an rxm endpoint whose READ is partly received.
     */
    void
    drainBeforeClose();

    // lf_pool.cpp: the engine's side of the posting pool (lf_pool.h)
    /** Starts the num_threads posting threads; false (logged) if one cannot start. */
    bool
    startPool();
    /** Posts one turn (split_batch_size) of req; true if descriptors remain. */
    bool
    poolTurn(lfReq &req) const;

    // lf_xfer.cpp
    nixl_status_t
    postLoopback(lfReq &req, const nixl_meta_dlist_t &local, const nixl_meta_dlist_t &remote,
                 const nixl_opt_b_args_t *opt) const;

    nixl_status_t cfgStatus_ = NIXL_SUCCESS; ///< before cfg_: parsing cfg_ sets it
    const lfConfig cfg_;
    bool progThread_ = false;
    uint64_t pthrDelayUs_ = 0;
    std::string hostId_;
    uint64_t nonce_ = 0;
    std::vector<std::unique_ptr<lfRail>> rails_;
    std::atomic<uint64_t> nextKey_{1};

    /** Same-host fast RMA: this process, and the table peers check before copying. */
    nixlReg::procIdentity self_;
    lfRegistry registry_;
    /** Holds nonce_ for peers' CMA probe (its address is in the connection info). */
    uint64_t probeWord_ = 0;

    lfPeerTable peers_{cfg_.peerCheck};

    /** Received notifications, reassembled and queued for getNotifs (lf_inbox.h). */
    mutable lfNotifInbox inbox_{localAgent, cfg_.notifPeerMax, cfg_.notifTotalMax};

    mutable std::mutex reqsMu_;
    mutable std::unordered_set<lfReq *> reqs_; ///< live requests, freed at destruction at last
    /** Messages genNotif reported sent that were lost (said when the engine goes). */
    mutable std::atomic<uint64_t> notifLost_{0};

    /** The posting pool (no threads when num_threads is 0). */
    const std::unique_ptr<lfPostPool> pool_ = std::make_unique<lfPostPool>();

    std::thread progress_;
    /** Ends the progress thread's wait: stop, or work posted while it waits idle. */
    mutable lfProgressWake wake_;
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_BACKEND_H
