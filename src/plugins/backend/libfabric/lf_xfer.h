/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_xfer.h
 * @brief A LIBFABRIC transfer request: its descriptors as posted, its progress counters, and its
 *        place in the posting pool.
 *
 * Thread safety: the descriptor arrays are written by prepXfer/postXfer before the request is
 * posted; the counters change under its rail's mutex, the pool fields under the posting pool's
 * lock (lf_pool.h); status, poolActive and lastProgressMs are atomics read without a lock.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_XFER_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_XFER_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include "nixl_backend_sdk.h"
#include "lf_peers.h"
#include "lf_rail.h"
#include "reg_table.h"

namespace nixlLf {

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
    /** Operations posted and not completed, +1 while posting (its rail's mutex). */
    uint32_t pending = 0;
    size_t nextPost = 0; ///< first descriptor not yet posted
    bool posting = false; ///< descriptors remain to post (the +1 in pending)
    nixl_status_t firstErr = NIXL_SUCCESS;
    bool released = false;
    bool dataDone = false;
    std::atomic<int64_t> lastProgressMs{0}; ///< post or latest completion (stall_timeout_ms)
    /** The mark held in the peer's table while this request's fast copies run (its rail's mutex):
     *  taken and left within one lfRail::postMoreLocked (fault_hold_mark: until release). */
    nixlReg::nixlRegTable::mark_t mark;
    bool markHeld = false;
    /** Ends the mark (its fast operations completed or were abandoned); its rail's mutex
     *  held, or no other thread left (the engine's teardown). */
    void
    leaveMark() noexcept {
        if (markHeld) {
            nixlReg::nixlRegTable::leave(mark);
            markHeld = false;
        }
    }
    /** num_threads > 0: the posting pool posts this request's turns (the pool's lock). */
    bool poolQueued = false; ///< in the pool's queue
    bool poolRunning = false; ///< a pool thread is posting a turn of it
    bool poolCancel = false; ///< released: not queued again
    /** Reposted while a turn of the previous post ran: that turn queues it again. */
    bool poolAgain = false;
    /** Queued or running in the pool (written under the pool's lock): its turns progress the rail,
     *  so checkXfer does not (it would only contend for the rail's mutex). */
    std::atomic<bool> poolActive{false};
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_XFER_H
