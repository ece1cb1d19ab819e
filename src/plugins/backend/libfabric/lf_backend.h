/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_backend.h
 * @brief The LIBFABRIC backend: DRAM READ/WRITE between agents over libfabric RDM endpoints
 *        (shm between processes of one host, tcp;ofi_rxm otherwise), with notifications.
 *
 * Structure: one "rail" per opened provider (fabric, domain, address vector, completion queue,
 * endpoint); every registration is registered in every rail's domain; each peer is reached over
 * one rail chosen when its connection info is loaded. Parameters, data paths and the failure
 * model: docs/backends/libfabric.md.
 *
 * Thread safety: core serialises control calls. Transfer calls (postXfer, checkXfer,
 * releaseReqH, genNotif, getNotifs) may run concurrently (NIXL_THREAD_SYNC_RW) and with the
 * progress thread: every call into a rail's libfabric objects, and every change of a request's
 * counters, happens under that rail's mutex (rails are FI_THREAD_DOMAIN to libfabric). The peer
 * table has a shared mutex; received notifications their own.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_BACKEND_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_BACKEND_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include "nixl_backend_sdk.h"
#include "lf_clock.h"
#include "lf_config.h"
#include "lf_inbox.h"
#include "lf_peers.h"
#include "lf_registry.h"
#include "lf_notif.h"
#include "lf_wire.h"
#include "proc_identity.h"
#include "reg_table.h"

namespace nixlLf {

class lfReq;

/** What a completion's op_context points to; fctx first, as FI_CONTEXT2 mode wants. */
struct opCtx {
    enum kind_t : uint8_t { RMA, SEND, RECV };
    fi_context2 fctx{};
    kind_t kind = RMA;
    lfReq *req = nullptr; ///< RMA and SEND of a transfer's notification; null otherwise
};

/** A notification fragment in flight; freed by its completion. */
struct sendCtx : opCtx {
    std::string buf;
    fi_addr_t dest = FI_ADDR_UNSPEC;
    /** genNotif only: the peer's bytes in flight it is charged to (notif_send_max_bytes),
     *  shared so that it outlives the peer's record. */
    std::shared_ptr<std::atomic<size_t>> budget;
    bool lastOfMsg = false; ///< genNotif: the message's last fragment (counts it once)
};

/** A posted receive buffer, reposted after each message. */
struct recvCtx : opCtx {
    std::vector<char> buf;
};

/** One opened provider. All members after `mu` are guarded by it. */
struct lfRail {
    std::string prov;
    size_t index = 0;
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
    fid_ep *ep = nullptr;
    bool virtAddr = false; ///< the returned mr_mode has FI_MR_VIRT_ADDR (or FI_MR_BASIC)
    bool provKey = false; ///< the returned mr_mode has FI_MR_PROV_KEY
    bool localDesc = false; ///< the returned mr_mode has FI_MR_LOCAL
    bool delivery = false; ///< FI_DELIVERY_COMPLETE accepted as a default op flag
    /** shm opened for its initiator-only RMA (FI_MR_VIRT_ADDR, no RMA ordering): an operation
     *  posted without FI_DELIVERY_COMPLETE is copied by the initiator with CMA, unchecked by
     *  the target, so only under the registration table's check and mark (docs). */
    bool fastRma = false;
    size_t fragSize = 0; ///< receive buffer size = largest notification fragment
    std::string addr;
    /** The completion queue's wait fd (FI_WAIT_FD, opened only for a progress thread), which
     *  the provider signals on incoming traffic and completions; -1: this rail must be polled
     *  (shm 1.17 has no wait object). */
    int waitFd = -1;

    std::mutex mu;
    std::vector<std::unique_ptr<recvCtx>> recvs;
    std::unordered_set<sendCtx *> sends; ///< posted or in sendBacklog
    std::deque<sendCtx *> sendBacklog; ///< fragments the transmit queue had no room for, in order
    std::vector<lfReq *> postQueue; ///< requests with descriptors not yet posted (FI_EAGAIN)
    std::vector<lfReq *> notifQueue; ///< data done, notification still to post
    size_t rmaInflight = 0; ///< RMA operations posted and not yet completed
};

/** A transfer request. Counters are changed under its rail's mutex; status is read lock-free. */
class lfReq : public nixlBackendReqH {
public:
    nixl_xfer_op_t op = NIXL_WRITE;
    std::string remote;
    std::shared_ptr<lfPeer> peer; ///< null for loopback
    lfRail *rail = nullptr;
    std::vector<opCtx> ctxs; ///< one per descriptor
    std::vector<struct iovec> iov;
    std::vector<void *> desc;
    std::vector<fi_rma_iov> rma;
    /** The remote buffers in the peer's address space: fast RMA copies to them itself. */
    std::vector<struct iovec> riov;
    /** Per descriptor: the remote registration's slot and id (slot 0: delivery-complete). */
    std::vector<std::pair<uint64_t, uint64_t>> gen;
    const nixl_be_trace_ctx_t *trace = nullptr;
    bool hasNotif = false;
    std::string notif;

    std::atomic<int> status{NIXL_SUCCESS};
    uint32_t pending = 0; ///< operations posted and not completed, +1 while posting (rail->mu)
    size_t nextPost = 0; ///< first descriptor not yet posted
    bool posting = false; ///< descriptors remain to post (the +1 in pending)
    nixl_status_t firstErr = NIXL_SUCCESS;
    bool released = false;
    bool dataDone = false;
    std::atomic<int64_t> lastProgressMs{0}; ///< post or latest completion (stall_timeout_ms)
    /** The mark held in the peer's table while this request's fast copies run (rail->mu):
     *  taken and left within one postMoreLocked (fault_hold_mark: until release). */
    nixlReg::nixlRegTable::mark_t mark;
    bool markHeld = false;
    /** num_threads > 0: the posting pool posts this request's turns (engine's poolMu_). */
    bool poolQueued = false; ///< in the pool's queue
    bool poolRunning = false; ///< a pool thread is posting a turn of it
    bool poolCancel = false; ///< released: not queued again
    /** Reposted while a turn of the previous post ran: that turn queues it again. */
    bool poolAgain = false;
    /** Queued or running in the pool (written under poolMu_): its turns progress the rail,
     *  so checkXfer does not (it would only contend for the rail's mutex). */
    std::atomic<bool> poolActive{false};
};

class lfEngine : public nixlBackendEngine {
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

    nixl_status_t
    prepXfer(const nixl_xfer_op_t &op,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args) const override;
    nixl_status_t
    postXfer(const nixl_xfer_op_t &op,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args) const override;
    nixl_status_t
    checkXfer(nixlBackendReqH *handle) const override;
    nixl_status_t
    releaseReqH(nixlBackendReqH *handle) const override;
    nixl_status_t
    getNotifs(notif_list_t &notif_list) override;
    nixl_status_t
    genNotif(const std::string &remote_agent, const std::string &msg) const override;

private:
    // lf_rail.cpp
    bool
    openRail(const std::string &prov, std::string &why);
    void
    closeRail(lfRail &r);
    /** Opens r's completion queue: with a wait fd (r.waitFd) when a progress thread will wait
     *  on it and the provider has one, else without a wait object. */
    int
    openCq(lfRail &r, fi_cq_attr &attr) const;
    /** Reads r's completion queue dry and posts queued notifications; r.mu held. */
    void
    progressLocked(lfRail &r) const;
    void
    progressAll() const;
    void
    onCompletion(lfRail &r, opCtx *ctx, int err, size_t len) const;
    void
    onRecv(lfRail &r, recvCtx *rc, size_t len) const;
    void
    repost(lfRail &r, recvCtx *rc) const;
    /**
     * Posts req's descriptors from nextPost on until the transmit queue is full (it stays in
     * r.postQueue then, and progress posts the rest: posting never waits for a target that
     * only this thread may progress); r.mu held.
     */
    void
    postMoreLocked(lfRail &r, lfReq *req) const;
    /** Fast RMA of descriptors [first, first + count) of req: the initiator copies with
     *  process_vm_writev/readv (memcpy within one process), inside req's mark; r.mu held. */
    nixl_status_t
    copyFastLocked(lfReq &req, size_t first, size_t count) const;
    /** Flushes r.sendBacklog in order; r.mu held. */
    void
    flushSendsLocked(lfRail &r) const;
    /** Posts one fragment, or queues it behind earlier ones; r.mu held. */
    nixl_status_t
    postSend(lfRail &r,
             fi_addr_t dest,
             std::string &&frag,
             lfReq *req,
             const lfPeer *notifPeer = nullptr,
             bool lastOfMsg = false) const;
    /** A send context leaves: uncharges a genNotif fragment; lost: count its message lost. */
    void
    sendDone(sendCtx &s, bool lost) const noexcept;
    /** Sends msg to peer in fragments; r.mu held. Number posted in *posted. */
    nixl_status_t
    sendNotifLocked(lfRail &r,
                    const lfPeer &peer,
                    const std::string &msg,
                    const nixl_be_trace_ctx_t *trace,
                    lfReq *req,
                    uint32_t *posted) const;
    void
    finishReqLocked(lfRail &r, lfReq *req) const;
    /** Reads r's completion queue until empty; r.mu held. */
    void
    readCqLocked(lfRail &r) const;
    /** Ends req's mark (its fast operations completed or were abandoned); r.mu held. */
    static void
    leaveMarkLocked(lfReq *req) noexcept;
    void
    progressLoop();
    /** Nothing of ours is outstanding on r: the progress thread may wait for r's wait fd
     *  alone; r.mu held. */
    static bool
    railIdleLocked(const lfRail &r) noexcept;
    /** After a call that left work for the progress thread: wakes it if it waits idle. */
    void
    wakeProgressIfIdle() const noexcept;

    // lf_pool.cpp
    /** Starts the num_threads posting threads; false (logged) if one cannot start. */
    bool
    startPool();
    /** Stops and joins them; queued requests are left to the engine's teardown. */
    void
    stopPool();
    void
    poolLoop();
    /** Hands a posted request (posting, nothing posted yet) to the pool. */
    void
    poolPost(lfReq *req) const;
    /** Posts one turn (split_batch_size) of req; true if descriptors remain. */
    bool
    poolTurn(lfReq &req) const;
    /** Release: takes req out of the pool's queue and waits for a turn of it running. */
    void
    poolForget(lfReq *req) const;

    // lf_xfer.cpp
    nixl_status_t
    postLoopback(lfReq &req, const nixl_meta_dlist_t &local, const nixl_meta_dlist_t &remote,
                 const nixl_opt_b_args_t *opt) const;
    /** Fails a running request now with st (its outstanding operations are left to drain). */
    void
    abandonLocked(lfRail &r, lfReq *req, nixl_status_t st) const;

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

    /** Posting pool (num_threads > 0): requests with turns to post, in order. */
    mutable std::mutex poolMu_;
    mutable std::condition_variable poolCv_; ///< a request was queued, or stop
    mutable std::condition_variable poolDoneCv_; ///< a turn ended
    mutable std::deque<lfReq *> poolQueue_;
    bool poolStop_ = false; ///< poolMu_
    std::vector<std::thread> pool_;

    std::atomic<bool> stop_{false};
    std::thread progress_;
    /** eventfd that ends the progress thread's wait (stop, or work posted while it waits). */
    int wakeFd_ = -1;
    /** The progress thread waits idle (up to progress_idle_ms): posters wake it.
     *  seq_cst with the rails' mutexes: see progressLoop. */
    mutable std::atomic<bool> idleWait_{false};
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_BACKEND_H
