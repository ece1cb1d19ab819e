/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Peers: the connection table, liveness, and the same-host registration-table check.

#include "lf_peers.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include <sys/uio.h>

#include "lf_clock.h"
#include "nixl_backend_sdk.h"

namespace nixlLf {

std::shared_ptr<lfPeer>
lfPeerTable::find(const std::string &name) const {
    std::shared_lock<std::shared_mutex> g(mu_);
    auto it = peers_.find(name);
    return it == peers_.end() ? nullptr : it->second;
}

void
lfPeerTable::add(std::shared_ptr<lfPeer> peer) {
    std::unique_lock<std::shared_mutex> g(mu_);
    auto &seq = seqByName_[peer->name];
    if (!seq) {
        seq = std::make_shared<std::atomic<uint32_t>>(0);
    }
    peer->seq = seq;
    peers_[peer->name] = std::move(peer);
}

void
lfPeerTable::remove(const std::string &name) {
    std::unique_lock<std::shared_mutex> g(mu_);
    auto it = peers_.find(name);
    if (it != peers_.end()) {
        // Requests hold the peer; its address-vector entry stays valid for them (entries are
        // not removed: a later connection gets a new one).
        it->second->dead = true;
        peers_.erase(it);
    }
}

bool
lfPeerTable::gone(lfPeer &p, const std::string &agent) const {
    if (p.dead.load()) {
        return true;
    }
    if (!p.sameHost) {
        return false; // another host: the connection's own errors tell (docs: failure model)
    }
    const int64_t now = nowMs();
    int64_t last = lastCheckMs_.load(std::memory_order_relaxed);
    if (now - last < check_.count() ||
        !lastCheckMs_.compare_exchange_strong(last, now)) {
        return false;
    }
    if (::kill(p.conn.pid, 0) == 0 || errno != ESRCH) {
        return false;
    }
    NIXL_SDK_ERROR_LIMITED("agent " << agent << ": LIBFABRIC: peer " << p.name << " (pid "
                            << p.conn.pid << ") has exited; its transfers fail");
    p.dead = true;
    return true;
}

bool
openPeerTable(lfPeer &peer,
              bool fastRail,
              const nixlReg::procIdentity &self,
              uint64_t nonce,
              const std::string &agent,
              std::string &why) {
    const connInfoWire &ci = peer.conn;
    if (!fastRail || !peer.sameHost) {
        why = "not shm";
        return false;
    }
    if (ci.version < 2 || ci.regTable.empty()) {
        why = ci.version < 2 ? "the peer's plugin publishes no registration table" :
                               "the peer has no shared registration table";
        return false;
    }
    if (self.pid == 0) {
        why = "this process's identity is unknown";
        return false;
    }
    // shm copies with process_vm_writev/readv only if the kernel lets this process into the
    // peer's (same uid or CAP_SYS_PTRACE, Yama): otherwise it falls back to target-executed
    // RMA, whose completion need not wait for the data. Probe the way shm will copy.
    uint64_t word = 0;
    struct iovec liov = {&word, sizeof(word)};
    struct iovec riov = {reinterpret_cast<void *>(ci.probeAddr), sizeof(word)};
    const ssize_t n = ::process_vm_readv(ci.pid, &liov, 1, &riov, 1, 0);
    const int e = errno;
    if (n != static_cast<ssize_t>(sizeof(word)) || word != ci.nonce) {
        why = n != static_cast<ssize_t>(sizeof(word)) ?
            std::string("cannot read the peer's memory: process_vm_readv: ") + std::strerror(e) :
            std::string("the CMA probe read another value (another process has that pid)");
        return false;
    }
    nixlReg::procIdentity pid;
    pid.pid = ci.pid;
    pid.startTime = ci.startTime;
    std::string err;
    peer.table = nixlReg::nixlRegTable::open(ci.regTable, ci.nonce, pid, ci.regSlots, self,
                                             nonce, err);
    if (peer.table == nullptr) {
        // A table that fails its checks (another uid, wrong mode, another engine's) is not
        // trusted: the peer is reached the safe way, and the cause is worth one line.
        NIXL_SDK_WARN("agent " << agent << ": LIBFABRIC: registration table of "
                               << peer.name << " refused: " << err
                               << "; delivery-complete RMA to it");
        why = "its registration table was refused: " + err;
        return false;
    }
    peer.sameProcess = ci.pid == self.pid && ci.startTime == self.startTime;
    return true;
}

} // namespace nixlLf
