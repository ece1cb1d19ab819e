/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_conn.h
 * @brief What the UCX engine keeps per peer: the connection, its lanes (one endpoint per
 *        worker) and the registrations (own and remote).
 *
 * Thread safety: a connection's identity fields (name .. peerTable, lanes' worker and addr) are
 * written by the engine before it publishes the connection in its peer table and only read
 * after; `state`, `lanesReady` and `notifSendHeld` are atomics; `mds` is guarded by `mdLock`;
 * a lane's endpoint and a remote registration's rkeys by that lane's worker lock. Local
 * registrations are immutable once registerMem returned them.
 *
 * nixlUcxPeerTable, the engine's connections by agent name, may be used from any thread: the
 * map is guarded by its own reader/writer lock (a leaf lock: nothing else is taken under it),
 * the time of the last liveness check is an atomic.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_CONN_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_CONN_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include <ucp/api/ucp.h>

#include "nixl_backend_sdk.h"
#include "reg_table.h"
#include "ucx_utils.h"
#include "ucx_worker.h"

class nixlUcxConn;
class nixlUcxRemoteMD;

/** @brief One endpoint of a connection, on one worker. */
struct nixlUcxLane {
    std::shared_ptr<nixlUcxWorker> worker;
    ucp_ep_h ep = nullptr; ///< guarded by worker->lock
    nixlUcxConn *conn = nullptr;
    size_t index = 0;
    /** The peer's worker address this lane connects to (kept for a deferred endpoint). */
    std::string addr;
};

/** @brief What the engine knows about one remote agent (or itself, for loopback). */
class nixlUcxConn {
public:
    enum state_t : int { ALIVE = 0, LOST = 1, CLOSED = 2 };

    std::string name;
    nixlUcx::procIdentity peer;
    bool local = false; ///< same kernel and pid namespace
    bool self = false; ///< the engine's own agent (loopback)
    bool direct = false; ///< data moves by process_vm_readv/writev
    bool peerMode = false; ///< UCX peer error handling on the endpoints
    bool privateWorkers = false; ///< lanes use workers created for this connection only
    bool watched = false; ///< liveness is checked through /proc
    /**
     * Loaded from NIXL 1.4's forms (ucx_nixl_peer.h): no identity, UCP path only, public data
     * are raw keys, notifications go in NIXL's form (active message 0, serdes body).
     */
    bool nixl = false;
    uint64_t remoteNonce = 0;
    uint64_t remoteRegTable = 0; ///< address of the peer's registration table
    uint64_t remoteRegSlots = 0;
    bool sameProcess = false; ///< direct copies are plain memcpy in this address space
    /** Why the connection is not direct (nixl_path_fallback_t; NONE when it is). Fixed at load. */
    uint32_t fallback = NIXL_PATH_FALLBACK_NONE;
    /** The fallback of the connection / of a request whose memory kind the direct path cannot
     *  copy was reported to telemetry (getXferPath): once per connection each. */
    mutable std::atomic<bool> fallbackReported{false};
    mutable std::atomic<bool> memFallbackReported{false};
    /**
     * The peer's registration table mapped here (same host, same uid, checked on open): direct
     * copies check their registrations in it under the fence instead of a process_vm_readv per
     * post. nullptr: the check of old (one process_vm_readv of the slots at post, no fence).
     */
    std::unique_ptr<nixlReg::nixlRegTable> peerTable;
    std::vector<std::unique_ptr<nixlUcxLane>> lanes;

    std::atomic<int> state{ALIVE};
    /** Bytes of genNotif messages to this peer handed to UCX and not yet completed
     *  (bounded by notif_send_max_bytes). */
    std::shared_ptr<std::atomic<size_t>> notifSendHeld = std::make_shared<std::atomic<size_t>>(0);
    /** Every lane has its worker and endpoint (no pending private worker left). */
    std::atomic<bool> lanesReady{false};
    /** Remote registrations loaded for this connection; rkeys are per lane. */
    std::mutex mdLock;
    std::unordered_set<nixlUcxRemoteMD *> mds;

    bool
    usable() const noexcept {
        return state.load(std::memory_order_acquire) == ALIVE;
    }

    /** Whether one of the lanes runs on w. */
    bool
    usesWorker(const nixlUcxWorker *w) const noexcept {
        for (const auto &lane : lanes) {
            if (lane->worker.get() == w) {
                return true;
            }
        }
        return false;
    }
};

/** @brief One of the engine's own registrations. */
class nixlUcxLocalMD : public nixlBackendMD {
public:
    nixlUcxLocalMD() : nixlBackendMD(true) {}

    uintptr_t base = 0;
    size_t len = 0;
    nixl_mem_t mem = DRAM_SEG;
    ucp_mem_h memh = nullptr;
    uint32_t slot = 0; ///< index in the registration table, 0 if none
    uint64_t regId = 0;
    std::string publicData;
    std::string packedRkey; ///< ucp_rkey_pack's bytes: the public data NIXL peers read
};

/** @brief A registration of a peer (or, for loopback, one of the engine's own). */
class nixlUcxRemoteMD : public nixlBackendMD {
public:
    nixlUcxRemoteMD() : nixlBackendMD(false) {}

    std::shared_ptr<nixlUcxConn> conn;
    uintptr_t base = 0;
    size_t len = 0;
    nixl_mem_t mem = DRAM_SEG;
    uint32_t slot = 0;
    uint64_t regId = 0;
    std::string packedRkey;
    /** One per lane of conn; guarded by that lane's worker lock. */
    std::vector<ucp_rkey_h> rkeys;
};

/** @brief The engine's connections by agent name, and when their liveness was last checked. */
class nixlUcxPeerTable {
public:
    using conn_ptr = std::shared_ptr<nixlUcxConn>;

    /** The connection to name, null if none. */
    conn_ptr
    find(const std::string &name) const;
    /** Adds (or replaces) the connection to name. */
    void
    insert(const std::string &name, conn_ptr conn);
    /** Removes and returns the connection to name, null if none. */
    conn_ptr
    take(const std::string &name);
    /** Removes and returns every connection (teardown). */
    std::map<std::string, conn_ptr>
    takeAll();
    /** The connections whose peers are watched through /proc and not closed. */
    std::vector<conn_ptr>
    watched() const;

    /**
     * Whether a liveness check is due at now_ns (period_ms after the last one, or force); the
     * one caller that gets true does it, the others skip.
     */
    bool
    claimCheck(int64_t now_ns, uint64_t period_ms, bool force) noexcept;

    int64_t
    lastCheckNs() const noexcept {
        return lastCheckNs_.load(std::memory_order_relaxed);
    }

private:
    mutable std::shared_mutex lock_;
    std::map<std::string, conn_ptr> conns_;
    std::atomic<int64_t> lastCheckNs_{0};
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_CONN_H
