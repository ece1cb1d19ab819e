/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_rail.h
 * @brief A rail: one opened libfabric provider (fabric, domain, address vector, completion
 *        queue, endpoint), the data path of every peer reached over it, and the contexts its
 *        completions point to.
 *
 * The rail owns its progress and posting (lf_progress.cpp, lf_post.cpp); what it needs from
 * the engine (trace phases, the inbox, freeing released requests, counting lost
 * notifications) is the lfRailHost interface the engine gives it at open.
 *
 * Thread safety: the public fields are written by open() and close(), which the engine calls
 * before any other thread uses the rail and after all have stopped; only waitFd also changes
 * later, by the progress thread (the only one reading it). Every other member function may be
 * called from any thread: it takes the rail's own mutex, which guards the rail's queues, the
 * counters of the requests posted on it and every call into its libfabric objects (rails are
 * FI_THREAD_DOMAIN to libfabric). The host's callbacks run under it.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_RAIL_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_RAIL_H

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "nixl_backend_sdk.h"

namespace nixlLf {

class lfReq;
struct lfPeer;

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

/** How the engine wants its rails opened and driven (from its configuration). */
struct lfRailOptions {
    bool fastRma = true; ///< shm_fast_rma: try shm's initiator-only RMA
    bool waitFd = false; ///< a progress thread will wait on the completion queue's fd
    size_t fragSize = 8192; ///< notif_fragment_size: each receive buffer's size
    size_t recvBufs = 64; ///< receive buffers posted
    size_t splitBatch = 1024; ///< split_batch_size: descriptors posted per turn
    bool faultHoldMark = false; ///< fault_hold_mark: keep a request's mark until release
    uint64_t nonce = 0; ///< the engine's nonce, in every notification fragment sent
};

/**
 * What a rail needs from its engine. The rail calls these with its mutex held, so they take
 * only locks that are innermost (the inbox's, the request set's) and never call the rail.
 */
class lfRailHost {
public:
    /** Whether the agent traces (fragments then carry the request's trace context). */
    virtual bool
    railTracing() const noexcept = 0;
    /** Records a trace phase of ctx (a no-op when the agent does not trace). */
    virtual void
    railPhase(const nixl_be_trace_ctx_t *ctx,
              nixl_be_trace_phase_t phase,
              const char *label,
              uint64_t tsUs) const noexcept = 0;
    /** A notification fragment of bytes arrived over the rail of provider prov. */
    virtual void
    railReceived(const std::string &prov, std::string_view bytes) const = 0;
    /** A released request's last operation completed: the engine frees it. */
    virtual void
    railFree(lfReq *req) const = 0;
    /** A message genNotif reported sent was lost (said when the engine goes). */
    virtual void
    railNotifLost() const noexcept = 0;

protected:
    ~lfRailHost() = default;
};

/**
 * One opened provider and the data path of every peer reached over it: it reads its
 * completion queue, posts requests' operations and notification fragments, and finishes
 * requests, each under its own mutex.
 */
class lfRail {
public:
    /** How arming the completion queue's wait fd went (armWait). */
    enum class wait_t { ARMED, READY, UNARMABLE };

    /**
     * Opens provider prov as the engine's rail number index (for agent's log lines): fabric,
     * domain, completion queue, address vector, endpoint, receive buffers. False and why if any
     * step fails; the rail is then closed again. host outlives the rail.
     */
    bool
    open(const lfRailHost &host,
         const std::string &agent,
         const std::string &prov,
         size_t index,
         const lfRailOptions &opts,
         std::string &why);

    /**
     * Closes the endpoint first (no completion names a context after it), then the rest; the
     * notification fragments never completed are counted lost (genNotif's) and freed.
     */
    void
    close();

    /**
     * Teardown, no other thread on the rail: reads the completion queue until the RMA
     * operations and notification fragments handed to libfabric completed (released requests
     * are freed by their completions, as at run time), for as long as they keep completing:
     * quiet_ms without a completion ends it, and so does max_ms in all. Returns how many are
     * still outstanding.
     */
    size_t
    drainPosted(int64_t quiet_ms, int64_t max_ms);

    // Registration and addresses (under the rail's mutex).
    int
    registerMr(void *addr, size_t len, uint64_t key, fid_mr **mr);
    void
    closeMr(fid_mr *mr);
    /** Inserts a peer's endpoint name into the address vector; fi_av_insert's count. */
    int
    insertAddr(const std::string &name, fi_addr_t *out);

    // The data path (each takes the rail's mutex).
    /**
     * Starts a post of req (its descriptors set; trace and notification as given): resets its
     * counters; pooled: posts nothing (the pool posts its turns), else posts the first turn and
     * progresses. Returns req's status after.
     */
    nixl_status_t
    post(lfReq &req, const nixl_be_trace_ctx_t *trace, const std::string *notif, bool pooled);
    /**
     * The pool's turn of req: posts split_batch_size descriptors (taking req out of the post
     * queue: the pool posts the rest) and progresses. True if descriptors remain; stalled: none
     * could be posted (the transmit queue is full).
     */
    bool
    postTurn(lfReq &req, bool &stalled);
    /** Reads the completion queue dry, flushes the backlog, posts queued turns and
     *  notifications. */
    void
    progress();
    /** Fails a running request now with st (its outstanding operations are left to drain). */
    void
    abandon(lfReq &req, nixl_status_t st);
    /** Release: nothing more of req is posted; true if the caller frees it now, false if its
     *  last completion will (through the host). */
    bool
    release(lfReq &req);
    /**
     * genNotif: sends msg to peer unless more than sendMax bytes to it are unsent (then
     * progresses once and checks again). NIXL_ERR_REPOST_ACTIVE when still full.
     */
    nixl_status_t
    sendMessage(const lfPeer &peer, const std::string &msg, size_t sendMax);

    // The progress thread.
    /**
     * Before a wait: idle is cleared if anything of the engine's is outstanding here; then the
     * wait fd (if any) is armed. UNARMABLE: it cannot be (logged once; waitFd is -1 after).
     */
    wait_t
    armWait(bool &idle);

    // Written by open() and close() only (then read without the lock).
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
     *  (shm 1.17 has no wait object). Changed later only by armWait (the progress thread). */
    int waitFd = -1;

private:
    /** Opens cq: with a wait fd (waitFd) when wanted and the provider has one, else without a
     *  wait object. */
    int
    openCq(const std::string &agent, bool wantWaitFd, fi_cq_attr &attr);

    // lf_progress.cpp (mu_ held)
    /** Reads the completion queue until empty. */
    void
    readCqLocked();
    void
    progressLocked();
    void
    onCompletionLocked(opCtx *ctx, int err, size_t len);
    void
    finishReqLocked(lfReq *req);
    void
    repostLocked(recvCtx *rc);
    /** Nothing of the engine's is outstanding here (sends holds the posted and the backlogged
     *  notification fragments): the progress thread may wait for waitFd alone. */
    bool
    idleLocked() const noexcept {
        return rmaInflight_ == 0 && sends_.empty() && postQueue_.empty() && notifQueue_.empty();
    }

    // lf_post.cpp (mu_ held)
    /**
     * Posts req's descriptors from nextPost on, a turn (split_batch_size) at most, until the
     * transmit queue is full (it stays in postQueue_ then, and progress posts the rest:
     * posting never waits for a target that only this thread may progress).
     */
    void
    postMoreLocked(lfReq *req);
    /** Fast RMA of descriptors [first, first + count) of req: the initiator copies with
     *  process_vm_writev/readv (memcpy within one process), inside req's mark. */
    nixl_status_t
    copyFastLocked(lfReq &req, size_t first, size_t count) const;
    /** Posts one fragment, or queues it behind earlier ones. */
    nixl_status_t
    postSendLocked(fi_addr_t dest,
                   std::string &&frag,
                   lfReq *req,
                   const lfPeer *notifPeer = nullptr,
                   bool lastOfMsg = false);
    /** Flushes sendBacklog_ in order. */
    void
    flushSendsLocked();
    /** Sends msg to peer in fragments. Number posted in *posted. */
    nixl_status_t
    sendNotifLocked(const lfPeer &peer,
                    const std::string &msg,
                    const nixl_be_trace_ctx_t *trace,
                    lfReq *req,
                    uint32_t *posted);
    /** A send context leaves: uncharges a genNotif fragment; lost: count its message lost. */
    void
    sendDone(sendCtx &s, bool lost) const noexcept;
    static void
    dropFromQueue(std::vector<lfReq *> &q, lfReq *req);

    const lfRailHost *host_ = nullptr;
    std::string agent_; ///< the engine's agent, for log lines
    size_t splitBatch_ = 1024;
    bool faultHoldMark_ = false;
    uint64_t nonce_ = 0;

    /** Guards everything below and every call into the rail's libfabric objects. */
    std::mutex mu_;
    std::vector<std::unique_ptr<recvCtx>> recvs_;
    std::unordered_set<sendCtx *> sends_; ///< posted or in sendBacklog_
    std::deque<sendCtx *> sendBacklog_; ///< fragments the transmit queue had no room for, in order
    std::vector<lfReq *> postQueue_; ///< requests with descriptors not yet posted (FI_EAGAIN)
    std::vector<lfReq *> notifQueue_; ///< data done, notification still to post
    size_t rmaInflight_ = 0; ///< RMA operations posted and not yet completed
};

/** A libfabric return code as text and number, for log lines. */
inline std::string
fiErr(int rc) {
    return std::string(fi_strerror(rc < 0 ? -rc : rc)) + " (" + std::to_string(rc) + ")";
}

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_RAIL_H
