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
 * Thread safety: the fields above `mu` are written by open() and close(), which the engine calls
 * before any other thread uses the rail and after all have stopped; only waitFd also changes
 * later, by the progress thread (the only one reading it). Everything after
 * `mu` is guarded by it, and so is every call into the rail's libfabric objects (rails are
 * FI_THREAD_DOMAIN to libfabric).
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_RAIL_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_RAIL_H

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

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

/** How the engine wants its rails opened (from its configuration). */
struct lfRailOptions {
    bool fastRma = true; ///< shm_fast_rma: try shm's initiator-only RMA
    bool waitFd = false; ///< a progress thread will wait on the completion queue's fd
    size_t fragSize = 8192; ///< notif_fragment_size: each receive buffer's size
    size_t recvBufs = 64; ///< receive buffers posted
};

/** One opened provider. All members after `mu` are guarded by it. */
struct lfRail {
    /**
     * Opens provider prov as the engine's rail number index (for agent's log lines): fabric,
     * domain, completion queue, address vector, endpoint, receive buffers. False and why if any
     * step fails; the rail is then closed again.
     */
    bool
    open(const std::string &agent,
         const std::string &prov,
         size_t index,
         const lfRailOptions &opts,
         std::string &why);

    /**
     * Closes the endpoint first (no completion names a context after it), then the rest;
     * returns the send contexts never completed, for the engine to account and free.
     */
    std::unordered_set<sendCtx *>
    close();

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

    /** Nothing of the engine's is outstanding here (sends holds the posted and the backlogged
     *  notification fragments): the progress thread may wait for waitFd alone; mu held. */
    bool
    idleLocked() const noexcept {
        return rmaInflight == 0 && sends.empty() && postQueue.empty() && notifQueue.empty();
    }

private:
    /** Opens cq: with a wait fd (waitFd) when wanted and the provider has one, else without a
     *  wait object. */
    int
    openCq(const std::string &agent, bool wantWaitFd, fi_cq_attr &attr);
};

/** A libfabric return code as text and number, for log lines. */
inline std::string
fiErr(int rc) {
    return std::string(fi_strerror(rc < 0 ? -rc : rc)) + " (" + std::to_string(rc) + ")";
}

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_RAIL_H
