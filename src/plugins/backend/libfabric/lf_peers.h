/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_peers.h
 * @brief The LIBFABRIC engine's peers: the connection table by agent name, each peer's
 *        liveness, and the same-host check that opens a peer's registration table.
 *
 * Thread safety: lfPeerTable's map and the per-name notification sequences are under its shared
 * mutex (lookups shared, changes exclusive). A peer's fields are written before it is added and
 * only read after, except `dead` and the shared atomics; requests keep a peer alive (shared_ptr)
 * after it leaves the table.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_PEERS_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_PEERS_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>

#include <rdma/fabric.h>

#include "lf_wire.h"
#include "nixl_xfer_path.h"
#include "proc_identity.h"
#include "reg_table.h"

namespace nixlLf {

/** A remote agent: the rail chosen for it and its address there. */
struct lfPeer {
    std::string name;
    connInfoWire conn;
    bool sameHost = false;
    size_t rail = 0;
    /** The rail's data path and, when it is not shm, why (nixl_xfer_path.h); fixed at load. */
    uint32_t path = NIXL_XFER_PATH_UNKNOWN;
    uint32_t fallback = NIXL_PATH_FALLBACK_NONE;
    /** The fallback went to telemetry (getXferPath): once per connection. */
    mutable std::atomic<bool> fallbackReported{false};
    fi_addr_t addr = FI_ADDR_UNSPEC;
    std::atomic<bool> dead{false};
    /** The peer's registration table, mapped: fast RMA to it (shm, same uid, CMA probe
     *  passed). Null: every operation goes with FI_DELIVERY_COMPLETE. */
    std::unique_ptr<nixlReg::nixlRegTable> table;
    /** The peer is an agent of this process (same pid and start time): fast RMA is memcpy. */
    bool sameProcess = false;
    /** Next notification number to this peer; shared with later connections to the same
     *  name (the receiver delivers each sender's notifications in this order). */
    std::shared_ptr<std::atomic<uint32_t>> seq;
    /** Bytes of genNotif fragments to this peer posted or backlogged, not yet completed. */
    std::shared_ptr<std::atomic<size_t>> notifSendHeld = std::make_shared<std::atomic<size_t>>(0);
};

/** The connected peers by name; see the file comment for the locking. */
class lfPeerTable {
public:
    /** check: how often (at most, over all peers) a same-host peer's pid is probed. */
    explicit lfPeerTable(std::chrono::milliseconds check) noexcept : check_(check) {}

    std::shared_ptr<lfPeer>
    find(const std::string &name) const;

    /** Adds peer, replacing one of the same name; it continues that name's sequence. */
    void
    add(std::shared_ptr<lfPeer> peer);

    /** Forgets name; requests still holding it see it dead. */
    void
    remove(const std::string &name);

    /**
     * p is known dead, or is on this host and its process has exited (probed at most once per
     * check period; the exit is logged, for agent, when found).
     */
    bool
    gone(lfPeer &p, const std::string &agent) const;

private:
    const std::chrono::milliseconds check_;
    mutable std::shared_mutex mu_;
    std::map<std::string, std::shared_ptr<lfPeer>> peers_; ///< mu_
    std::map<std::string, std::shared_ptr<std::atomic<uint32_t>>> seqByName_; ///< mu_
    mutable std::atomic<int64_t> lastCheckMs_{0};
};

/**
 * Maps peer's registration table when fast RMA to it is possible: a fast (shm) rail, same host,
 * a table published, and this process (self, nonce) able to read the peer's memory. False and
 * why otherwise (a refused table is also logged, for agent).
 */
bool
openPeerTable(lfPeer &peer, bool fastRail, const nixlReg::procIdentity &self, uint64_t nonce,
              const std::string &agent, std::string &why);

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_PEERS_H
