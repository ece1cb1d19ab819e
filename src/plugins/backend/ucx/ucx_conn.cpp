/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: connections (connection info, endpoints, lanes) and peer liveness.
#include "ucx_internal.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/uio.h>

using nixlUcx::nowNs;

namespace {

void
epErrorCb(void *arg, ucp_ep_h ep, ucs_status_t status) {
    (void)ep;
    auto *lane = static_cast<nixlUcxLane *>(arg);
    const nixlUcxEngine *engine = lane->worker->engine;
    engine->markLost(*lane->conn,
                     std::string("UCX reported ") + ucs_status_string(status) + " on lane " +
                         std::to_string(lane->index));
}

} // namespace

nixl_status_t
nixlUcxEngine::getConnInfo(std::string &str) const {
    str = connInfo_;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::getConnInfoNixl(std::string &str) const {
    str = connInfoNixl_;
    return NIXL_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// nixlUcxPeerTable

nixlUcxPeerTable::conn_ptr
nixlUcxPeerTable::find(const std::string &name) const {
    std::shared_lock<std::shared_mutex> g(lock_);
    auto it = conns_.find(name);
    return it == conns_.end() ? nullptr : it->second;
}

void
nixlUcxPeerTable::insert(const std::string &name, conn_ptr conn) {
    std::unique_lock<std::shared_mutex> g(lock_);
    conns_[name] = std::move(conn);
}

nixlUcxPeerTable::conn_ptr
nixlUcxPeerTable::take(const std::string &name) {
    std::unique_lock<std::shared_mutex> g(lock_);
    auto it = conns_.find(name);
    if (it == conns_.end()) {
        return nullptr;
    }
    conn_ptr conn = std::move(it->second);
    conns_.erase(it);
    return conn;
}

std::map<std::string, nixlUcxPeerTable::conn_ptr>
nixlUcxPeerTable::takeAll() {
    std::map<std::string, conn_ptr> all;
    std::unique_lock<std::shared_mutex> g(lock_);
    all.swap(conns_);
    return all;
}

std::vector<nixlUcxPeerTable::conn_ptr>
nixlUcxPeerTable::watched() const {
    std::vector<conn_ptr> out;
    std::shared_lock<std::shared_mutex> g(lock_);
    for (const auto &[name, conn] : conns_) {
        if (conn->watched &&
            conn->state.load(std::memory_order_acquire) != nixlUcxConn::CLOSED) {
            out.push_back(conn);
        }
    }
    return out;
}

bool
nixlUcxPeerTable::claimCheck(int64_t now_ns, uint64_t period_ms, bool force) noexcept {
    int64_t last = lastCheckNs_.load(std::memory_order_relaxed);
    if (!force && now_ns - last < static_cast<int64_t>(period_ms) * 1000000) {
        return false;
    }
    return lastCheckNs_.compare_exchange_strong(last, now_ns); // false: another thread checks
}

// ---------------------------------------------------------------------------------------------
// The engine's connections

std::shared_ptr<nixlUcxConn>
nixlUcxEngine::findConn(const std::string &name) const {
    return peers_->find(name);
}

nixl_status_t
nixlUcxEngine::decodePeerConnInfo(const std::string &remote_agent,
                                  const std::string &conn_info,
                                  nixlUcx::connInfoWire &ci,
                                  bool &nixl) const {
    std::string why;
    // Nothing of the peer's bytes reaches UCX before they pass these checks (ucx_wire.h,
    // ucx_nixl_peer.h). Our magic tells our form from NIXL's raw worker address.
    nixl = !nixlUcx::isOwnConnInfo(conn_info);
    if (nixl) {
        std::string addr;
        if (nixlUcx::decodeNixlConnInfo(conn_info, addr, why)) {
            ci = nixlUcx::connInfoWire{};
            addr.append(nixlUcx::nixl_addr_pad, '\0');
            ci.addrs.push_back(std::move(addr));
            return NIXL_SUCCESS;
        }
    } else if (nixlUcx::decodeConnInfo(conn_info, ci, why)) {
        return NIXL_SUCCESS;
    }
    NIXL_SDK_ERROR("agent " << localAgent << ": UCX refused the connection info of "
                            << remote_agent << " (" << conn_info.size() << " bytes): " << why);
    return NIXL_ERR_MISMATCH;
}

nixl_status_t
nixlUcxEngine::buildConn(const std::string &remote_agent,
                         const std::string &conn_info,
                         std::shared_ptr<nixlUcxConn> &out) {
    nixlUcx::connInfoWire ci;
    bool nixl = false;
    if (nixl_status_t st = decodePeerConnInfo(remote_agent, conn_info, ci, nixl);
        st != NIXL_SUCCESS) {
        return st;
    }
    auto conn = std::make_shared<nixlUcxConn>();
    conn->name = remote_agent;
    // Without identity data the peer is on no known host: UCP path, UCX error handling.
    conn->nixl = nixl;
    conn->remoteNonce = ci.nonce;
    conn->peer.pidNs = ci.pidNs;
    conn->peer.pid = ci.pid;
    conn->peer.startTime = ci.startTime;
    conn->remoteRegTable = ci.regTable;
    conn->remoteRegSlots = ci.regSlots;
    const std::vector<std::string> &addrs = ci.addrs;
    conn->peer.bootId = std::move(ci.bootId);
    conn->self = remote_agent == localAgent;
    conn->local = self_.sameHost(conn->peer);
    const bool same_process = self_.sameProcess(conn->peer);
    conn->watched = conn->local && !same_process;
    if (conn->watched &&
        nixlUcx::probeProcess(conn->peer.pid, conn->peer.startTime) ==
            nixlUcx::proc_state_t::GONE) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX connection info of " << remote_agent
                                << " names process " << conn->peer.pid
                                << ", which has exited");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    // "none" only where it buys the shared-memory transports (UCX 1.13 drops them in peer
    // mode); a same-host peer reached over tcp anyway keeps UCX's own failure handling.
    conn->peerMode = cfg_.peerErrMode && !(conn->local && shmAllowed_);
    // Operations on a "none" endpoint to a process that died can only be completed by
    // destroying their worker, so same-host peers in other processes get workers of their own.
    conn->privateWorkers = conn->watched;

    auto cleanup = [&]() {
        for (auto &lane : conn->lanes) {
            std::lock_guard<std::mutex> g(lane->worker->lock);
            if (lane->ep != nullptr && lane->worker->worker != nullptr) {
                ucp_request_param_t p{};
                p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
                p.flags = conn->peerMode ? UCP_EP_CLOSE_FLAG_FORCE : 0;
                ucs_status_ptr_t sp = ucp_ep_close_nbx(lane->ep, &p);
                if (UCS_PTR_IS_PTR(sp)) {
                    ucp_request_free(sp);
                }
            }
            lane->ep = nullptr;
            if (conn->privateWorkers) {
                lane->worker->destroyLocked(NIXL_ERR_REMOTE_DISCONNECT);
            }
        }
        workers_->removeIf([&conn](const auto &w) { return conn->usesWorker(w.get()); });
    };

    for (size_t i = 0; i < cfg_.numWorkers; ++i) {
        auto lane = std::make_unique<nixlUcxLane>();
        lane->conn = conn.get();
        lane->index = i;
        lane->addr = addrs[i % addrs.size()];
        if (conn->privateWorkers) {
            // Created at first use (ensureLanes): a worker costs tens of milliseconds, most
            // of it zero-filling its shared-memory segments, and a process of a mesh loads
            // every peer but may move data with few of them.
            lane->worker = std::make_shared<nixlUcxWorker>(
                nullptr, -1, false, localAgent + "->" + remote_agent + "/" + std::to_string(i));
            lane->worker->engine = this;
            lane->worker->pending = true;
            conn->lanes.push_back(std::move(lane));
            continue;
        }
        lane->worker = home_[i];
        nixlUcxLane *raw = lane.get();
        conn->lanes.push_back(std::move(lane));
        nixl_status_t st;
        {
            std::lock_guard<std::mutex> g(raw->worker->lock);
            st = setupLaneLocked(*conn, *raw);
        }
        if (st != NIXL_SUCCESS) {
            cleanup();
            return st;
        }
    }

    std::string why_not;
    if (conn->nixl) {
        why_not = "NIXL peer: no identity data";
        conn->fallback = NIXL_PATH_FALLBACK_NIXL_PEER;
    } else if (!cfg_.directCma) {
        why_not = "ucx_direct_cma=no";
        conn->fallback = NIXL_PATH_FALLBACK_DISABLED_BY_CONFIG;
    } else if (!conn->local) {
        why_not = "peer on another host or pid namespace";
        conn->fallback = NIXL_PATH_FALLBACK_PEER_OTHER_HOST;
    } else if (!cmaAllowed_) {
        why_not = "UCX_TLS excludes cma";
        conn->fallback = NIXL_PATH_FALLBACK_TRANSPORT_UNAVAILABLE;
    } else if (!cmaWorks_) {
        why_not = "process_vm_readv not permitted";
        conn->fallback = NIXL_PATH_FALLBACK_CMA_DENIED;
    } else {
        uint64_t probe = 0;
        struct iovec liov = {&probe, sizeof(probe)};
        struct iovec riov = {reinterpret_cast<void *>(conn->remoteRegTable), sizeof(probe)};
        ssize_t r = ::process_vm_readv(conn->peer.pid, &liov, 1, &riov, 1, 0);
        if (r == static_cast<ssize_t>(sizeof(probe)) && probe == conn->remoteNonce) {
            conn->direct = true;
        } else if (r < 0) {
            why_not = std::string("cma probe failed: ") + std::strerror(errno);
            conn->fallback = NIXL_PATH_FALLBACK_CMA_DENIED;
        } else {
            why_not = "cma probe read another process";
            conn->fallback = NIXL_PATH_FALLBACK_PROBE_MISMATCH;
        }
    }
    conn->sameProcess = same_process;
    if (conn->direct) {
        // Registration checks without a system call, under the deregistration fence; refused
        // tables (another uid, wrong mode, another engine) leave the process_vm_readv check.
        std::string why;
        if (ci.regTableName.empty()) {
            why = "it has no table in shared memory";
        } else {
            conn->peerTable = nixlReg::nixlRegTable::open(ci.regTableName, conn->remoteNonce,
                                                            conn->peer, conn->remoteRegSlots,
                                                            self_, nonce_, why);
        }
        if (!conn->peerTable) {
            NIXL_SDK_WARN("agent " << localAgent << ": UCX cannot use the registration table "
                                   << "of " << remote_agent << " (pid " << conn->peer.pid
                                   << "): " << why << "; direct transfers to it check "
                                   << "registrations with process_vm_readv at post, without "
                                   << "the deregistration fence");
        }
    }
    NIXL_SDK_DEBUG("agent " << localAgent << ": UCX connection to " << remote_agent
                            << " (pid " << conn->peer.pid << (conn->local ? ", same host" : "")
                            << "): data path "
                            << (conn->direct ?
                                    std::string(conn->sameProcess && conn->peerTable ?
                                                    "direct memcpy" :
                                                    "direct cma") +
                                        (conn->peerTable ? ", registration table mapped" :
                                                           ", registration checks by cma") :
                                               "ucp_put/get (" + why_not + ")")
                            << ", " << conn->lanes.size() << " lane(s)"
                            << (conn->privateWorkers ? " on private workers" : "")
                            << (conn->watched ? ", liveness from /proc" : ""));
    out = std::move(conn);
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::setupLaneLocked(nixlUcxConn &conn, nixlUcxLane &lane) const {
    nixlUcxWorker &w = *lane.worker;
    if (lane.ep != nullptr) {
        return NIXL_SUCCESS;
    }
    const bool create = w.pending;
    if (create && !openWorker(privateContext(), w.name, w.worker, w.efd)) {
        w.worker = nullptr;
        w.efd = -1;
        return NIXL_ERR_BACKEND;
    }
    if (w.worker == nullptr) {
        return NIXL_SUCCESS; // destroyed: the connection's uses report it lost or closed
    }
    const std::string ep_name = localAgent + "->" + conn.name;
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
        UCP_EP_PARAM_FIELD_NAME;
    ep.address = reinterpret_cast<const ucp_address_t *>(lane.addr.data());
    ep.err_mode = conn.peerMode ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
    ep.name = ep_name.c_str();
    if (conn.peerMode) {
        ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.err_handler.cb = epErrorCb;
        ep.err_handler.arg = &lane;
    }
    ucs_status_t st = ucp_ep_create(w.worker, &ep, &lane.ep);
    if (st != UCS_OK) {
        lane.ep = nullptr;
        if (create) {
            ucp_worker_destroy(w.worker); // nothing ran on it yet
            w.worker = nullptr;
            w.efd = -1;
        }
        // A peer that exited since its load cannot be reached: that is the status its
        // transfers get anyway (markLost logs the one line).
        if (conn.watched && nixlUcx::probeProcess(conn.peer.pid, conn.peer.startTime) ==
                                nixlUcx::proc_state_t::GONE) {
            markLost(conn, "process " + std::to_string(conn.peer.pid) + " exited");
            return NIXL_ERR_REMOTE_DISCONNECT;
        }
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot reach " << conn.name
                                << " (lane " << lane.index << " of its connection info): "
                                << ucs_status_string(st) << "; no common transport");
        return NIXL_ERR_BACKEND;
    }
    if (create) {
        w.pending = false;
        workers_->add(lane.worker);
    }
    // Registrations loaded before the endpoint existed have no key on this lane yet.
    {
        std::lock_guard<std::mutex> m(conn.mdLock);
        for (nixlUcxRemoteMD *md : conn.mds) {
            if (md->rkeys[lane.index] != nullptr) {
                continue;
            }
            st = ucp_ep_rkey_unpack(lane.ep, md->packedRkey.data(), &md->rkeys[lane.index]);
            if (st != UCS_OK) {
                // Its transfers on this lane fail at post (no key), each with a log line.
                md->rkeys[lane.index] = nullptr;
                NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot unpack the remote key of "
                                        << md->len << " bytes at 0x" << std::hex << md->base
                                        << std::dec << " of " << conn.name << " (lane "
                                        << lane.index << "): " << ucs_status_string(st));
            }
        }
    }
    NIXL_SDK_DEBUG("agent " << localAgent << ": UCX lane " << lane.index << " to " << conn.name
                            << " on " << w.name << (create ? " (created now)" : "")
                            << ": transports "
                            << (nixlSdk::logEnabled(NIXL_PLUGIN_LOG_DEBUG) ?
                                    nixlUcx::epTransports(lane.ep) :
                                    std::string())
                            << ", error handling " << (conn.peerMode ? "peer" : "none"));
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::ensureLanes(nixlUcxConn &conn) const {
    if (conn.lanesReady.load(std::memory_order_acquire)) {
        return NIXL_SUCCESS;
    }
    bool all = true;
    bool built = false;
    for (auto &lane : conn.lanes) {
        std::lock_guard<std::mutex> g(lane->worker->lock);
        if (!lane->worker->pending) {
            continue; // built by another thread, or on a home worker since the load
        }
        // Checked under the lock that closeConn and reapLost take after changing the state:
        // a worker is either built before they look, and torn down by them, or never.
        if (!conn.usable()) {
            all = false;
            continue;
        }
        nixl_status_t st = setupLaneLocked(conn, *lane);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        built = true;
    }
    if (all) {
        conn.lanesReady.store(true, std::memory_order_release);
    }
    if (built) {
        wakeProgress(); // the progress thread watches the new workers' event fds
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::loadRemoteConnInfo(const std::string &remote_agent,
                                  const std::string &remote_conn_info) {
    if (findConn(remote_agent)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX already has connection info of "
                                << remote_agent << "; disconnect first");
        return NIXL_ERR_NOT_ALLOWED;
    }
    std::shared_ptr<nixlUcxConn> conn;
    nixl_status_t st = buildConn(remote_agent, remote_conn_info, conn);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    peers_->insert(remote_agent, std::move(conn));
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::connect(const std::string &remote_agent) {
    std::shared_ptr<nixlUcxConn> conn = findConn(remote_agent);
    if (!conn && remote_agent == localAgent) {
        nixl_status_t st = buildConn(localAgent, connInfo_, conn);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        peers_->insert(localAgent, conn);
        return NIXL_SUCCESS;
    }
    if (!conn) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX connect: no connection info of "
                                << remote_agent << " was loaded");
        return NIXL_ERR_NOT_FOUND;
    }
    if (!conn->usable()) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX connect: " << remote_agent
                                << " was lost");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    // Private workers and their endpoints are made here if no transfer made them yet; a
    // flush starts the wireup now rather than with the first transfer.
    if (nixl_status_t st = ensureLanes(*conn); st != NIXL_SUCCESS) {
        return st;
    }
    for (auto &lane : conn->lanes) {
        std::lock_guard<std::mutex> g(lane->worker->lock);
        if (lane->worker->worker == nullptr || lane->ep == nullptr) {
            continue;
        }
        ucp_request_param_t p{};
        ucs_status_ptr_t sp = ucp_ep_flush_nbx(lane->ep, &p);
        if (UCS_PTR_IS_PTR(sp)) {
            ucp_request_free(sp); // nobody waits for it; UCX frees it when done
        } else if (UCS_PTR_IS_ERR(sp)) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX connect to " << remote_agent
                                    << ", lane " << lane->index << ": "
                                    << ucs_status_string(UCS_PTR_STATUS(sp)));
            return nixlUcx::statusFromUcs(UCS_PTR_STATUS(sp), false);
        }
        lane->worker->progressLocked();
    }
    wakeProgress();
    return NIXL_SUCCESS;
}

void
nixlUcxEngine::closeConn(nixlUcxConn &conn) {
    const bool was_lost = conn.state.load(std::memory_order_acquire) == nixlUcxConn::LOST;
    conn.state.store(nixlUcxConn::CLOSED, std::memory_order_release);
    const auto reap = workers_->teardownLock();
    std::vector<bool> draining(conn.lanes.size(), false);
    for (auto &lane : conn.lanes) {
        nixlUcxWorker &w = *lane->worker;
        std::lock_guard<std::mutex> g(w.lock);
        {
            std::lock_guard<std::mutex> m(conn.mdLock);
            for (nixlUcxRemoteMD *md : conn.mds) {
                if (md->rkeys[lane->index] != nullptr) {
                    if (w.worker != nullptr && conn.privateWorkers) {
                        // Operations of a draining worker may still use it (retireLocked).
                        w.retiredRkeys.push_back(md->rkeys[lane->index]);
                    } else if (w.worker != nullptr) {
                        ucp_rkey_destroy(md->rkeys[lane->index]);
                    }
                    md->rkeys[lane->index] = nullptr;
                }
            }
        }
        if (lane->ep != nullptr && w.worker != nullptr && !conn.privateWorkers) {
            ucp_request_param_t p{};
            p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            // A failed peer-mode endpoint cannot flush. A live one closes gracefully, without
            // waiting here: the peer may be an agent of this very thread, and the worker's
            // later progress (or destruction) completes the close. UCX frees a released
            // request when it completes, and insists on the release before the worker goes.
            p.flags = conn.peerMode && was_lost ? UCP_EP_CLOSE_FLAG_FORCE : 0;
            ucs_status_ptr_t sp = ucp_ep_close_nbx(lane->ep, &p);
            if (UCS_PTR_IS_PTR(sp)) {
                ucp_request_free(sp);
            } else if (UCS_PTR_IS_ERR(sp)) {
                NIXL_SDK_DEBUG("agent " << localAgent << ": UCX closing the endpoint to "
                                        << conn.name << ": "
                                        << ucs_status_string(UCS_PTR_STATUS(sp)));
            }
            w.progressLocked();
        }
        lane->ep = nullptr;
        if (conn.privateWorkers) {
            // A live peer completes what it was sent once progressed: drain (bounded in
            // number). A lost one never will, and its worker goes now.
            if (!was_lost && workers_->mayDrain()) {
                if (w.retireLocked()) {
                    workers_->drainStarted();
                    draining[lane->index] = true;
                }
            } else {
                w.retired = true;
                w.destroyLocked(was_lost ? NIXL_ERR_REMOTE_DISCONNECT : NIXL_ERR_NOT_FOUND);
                workers_->noteAbandoned(w);
            }
        }
    }
    if (conn.privateWorkers) {
        // A draining worker stays listed: progressAll drops it once it drained.
        workers_->removeIf([&](const auto &w) {
            for (size_t i = 0; i < conn.lanes.size(); ++i) {
                if (!draining[i] && conn.lanes[i]->worker == w) {
                    return true;
                }
            }
            return false;
        });
    }
}

nixl_status_t
nixlUcxEngine::disconnect(const std::string &remote_agent) {
    const std::shared_ptr<nixlUcxConn> conn = peers_->take(remote_agent);
    if (!conn) {
        NIXL_SDK_DEBUG("agent " << localAgent << ": UCX disconnect: " << remote_agent
                                << " is not connected");
        return NIXL_SUCCESS;
    }
    closeConn(*conn);
    NIXL_SDK_DEBUG("agent " << localAgent << ": UCX disconnected from " << remote_agent);
    return NIXL_SUCCESS;
}

void
nixlUcxEngine::markLost(nixlUcxConn &conn, const std::string &why) const {
    int expected = nixlUcxConn::ALIVE;
    if (conn.state.compare_exchange_strong(expected, nixlUcxConn::LOST)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX lost agent " << conn.name << " (pid "
                                << conn.peer.pid << "): " << why
                                << "; its transfers fail with NIXL_ERR_REMOTE_DISCONNECT");
    }
}

void
nixlUcxEngine::reapLost(nixlUcxConn &conn) const {
    if (!conn.privateWorkers ||
        conn.state.load(std::memory_order_acquire) != nixlUcxConn::LOST) {
        return;
    }
    const auto reap = workers_->teardownLock();
    bool any = false;
    for (auto &lane : conn.lanes) {
        nixlUcxWorker &w = *lane->worker;
        std::lock_guard<std::mutex> g(w.lock);
        if (w.worker == nullptr) {
            continue;
        }
        {
            std::lock_guard<std::mutex> m(conn.mdLock);
            for (nixlUcxRemoteMD *md : conn.mds) {
                if (md->rkeys[lane->index] != nullptr) {
                    ucp_rkey_destroy(md->rkeys[lane->index]);
                    md->rkeys[lane->index] = nullptr;
                }
            }
        }
        lane->ep = nullptr;
        // Completes everything stuck on it (callbacks run here, or destroyLocked finishes them).
        w.destroyLocked(NIXL_ERR_REMOTE_DISCONNECT);
        // A worker left allocated with RMA in flight keeps its context alive: the destructor
        // must not ucp_cleanup it.
        workers_->noteAbandoned(w);
        any = true;
    }
    if (any) {
        workers_->removeIf([&conn](const auto &w) { return conn.usesWorker(w.get()); });
    }
}

void
nixlUcxEngine::checkPeers(bool force) const {
    if (!peers_->claimCheck(nowNs(), cfg_.peerCheckMs, force)) {
        return;
    }
    for (auto &conn : peers_->watched()) {
        if (conn->usable() &&
            nixlUcx::probeProcess(conn->peer.pid, conn->peer.startTime) ==
                nixlUcx::proc_state_t::GONE) {
            markLost(*conn, "process " + std::to_string(conn->peer.pid) + " exited");
        }
        reapLost(*conn);
    }
}
