/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The LIBFABRIC engine: set-up and teardown, registrations, connections and metadata.

#include "lf_backend.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sys/uio.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "nixl_plugin_names.h"

namespace nixlLf {

namespace {

    /** Teardown: how long the engine waits for the next completion of an operation still
     *  posted on a tcp;ofi_rxm rail before it closes the endpoint anyway (drainBeforeClose). */
    constexpr int64_t closeDrainQuietMs = 500;
    /** ...and how long in all, per rail, however slowly the peer trickles its completions. */
    constexpr int64_t closeDrainMaxMs = 5000;

    /** Same host and same IPC namespace: what shm needs to reach a peer. */
    std::string
    readHostId() {
        std::string boot;
        std::ifstream f("/proc/sys/kernel/random/boot_id");
        std::getline(f, boot);
        char ns[128] = {};
        ssize_t n = readlink("/proc/self/ns/ipc", ns, sizeof(ns) - 1);
        std::string id = boot + "/" + (n > 0 ? std::string(ns, static_cast<size_t>(n)) : "");
        // The pid namespace too: peer liveness is checked by pid for same-host peers.
        n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
        return id + "/" + (n > 0 ? std::string(ns, static_cast<size_t>(n)) : "");
    }

} // namespace

nixl_b_params_t
lfEngine::pluginOptions() {
    return lfConfig::options();
}

lfEngine::lfEngine(const nixlBackendInitParams *init)
    : nixlBackendEngine(init),
      cfg_(lfConfig::parse(localAgent, getCustomParams(), cfgStatus_)),
      progThread_(init->enableProgTh),
      pthrDelayUs_(init->pthrDelay) {
    if (cfgStatus_ != NIXL_SUCCESS) {
        initErr = true;
        initErrStatus = cfgStatus_;
        return;
    }
    hostId_ = readHostId();
    nonce_ = std::random_device{}() | (uint64_t(std::random_device{}()) << 32);
    const bool autoProv = cfg_.providers.empty();
    std::vector<std::string> provs =
        autoProv ? std::vector<std::string>{"shm", "tcp;ofi_rxm"} : cfg_.providers;
    const lfRailOptions railOpts{.fastRma = cfg_.fastRma,
                                 .waitFd = progThread_,
                                 .fragSize = cfg_.notifFrag,
                                 .recvBufs = cfg_.recvBufs,
                                 .splitBatch = cfg_.splitBatch,
                                 .faultHoldMark = cfg_.faultHoldMark,
                                 .nonce = nonce_};
    std::string whyAll;
    for (const auto &prov : provs) {
        std::string why;
        auto rail = std::make_unique<lfRail>();
        if (rail->open(*this, localAgent, prov, rails_.size(), railOpts, why)) {
            rails_.push_back(std::move(rail));
        } else {
            if (!autoProv) {
                NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC provider " << prov
                                        << " cannot be opened: " << why);
                initErr = true;
                return;
            }
            NIXL_SDK_DEBUG("agent " << localAgent << ": LIBFABRIC provider " << prov
                                    << " not used: " << why);
            whyAll += (whyAll.empty() ? "" : "; ") + prov + ": " + why;
        }
    }
    if (rails_.empty()) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC: no usable provider ("
                                << whyAll << "; FI_PROVIDER="
                                << nixlSdk::cutValue(getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "unset")
                                << ")");
        initErr = true;
        return;
    }
    probeWord_ = nonce_;
    bool anyFast = false;
    for (const auto &r : rails_) {
        anyFast = anyFast || r->fastRma;
    }
    std::string err;
    if (anyFast && !nixlReg::readSelfIdentity(self_, err)) {
        NIXL_SDK_WARN("agent " << localAgent << ": LIBFABRIC: shm fast RMA off: " << err);
        anyFast = false;
    }
    if (anyFast) {
        registry_.open(localAgent, self_, nonce_);
    }
    if (progThread_) {
        if (!wake_.open()) {
            NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC progress thread: eventfd: "
                                    << std::strerror(errno));
            initErr = true;
            return;
        }
        progress_ = std::thread([this] { progressLoop(); });
    }
    if (!startPool()) {
        initErr = true;
    }
}

lfEngine::~lfEngine() {
    pool_->stop(); // first: its threads post on the rails
    wake_.stop();
    if (progress_.joinable()) {
        progress_.join();
    }
    drainBeforeClose(); // no other thread touches the rails now
    // No flush of queued notifications here: progressing shm (libfabric 1.17) after a peer
    // in this process closed its endpoint faults inside fi_cq_read. What is left is counted
    // as lost as each rail closes, and said below.
    for (auto &r : rails_) {
        r->close(); // counts what genNotif reported sent and was never sent (said below)
    }
    if (const uint64_t lost = notifLost_.load(std::memory_order_relaxed); lost > 0) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC engine closing: " << lost
                                << " notification(s) that genNotif reported sent were lost "
                                   "(their peers were lost or never took them)");
    }
    // Requests released while their operations were outstanding (a dead peer): no completion
    // can name them now that the endpoints are closed.
    for (lfReq *req : reqs_) {
        req->leaveMark();
        delete req;
    }
    reqs_.clear();
}

void
lfEngine::drainBeforeClose() {
    for (auto &r : rails_) {
        // shm is left alone: progressing it after a peer endpoint in this process closed
        // faults (see the destructor), and closing it with operations outstanding does not.
        if (r->prov == "shm") {
            continue;
        }
        if (const size_t left = r->drainPosted(closeDrainQuietMs, closeDrainMaxMs); left > 0) {
            NIXL_SDK_WARN("agent " << localAgent << ": LIBFABRIC engine closing: " << left
                                   << " operation(s) on " << r->prov << " did not complete ("
                                   << closeDrainQuietMs << " ms without a completion, or "
                                   << closeDrainMaxMs
                                   << " ms in all: peer not progressing?); closed with them "
                                      "outstanding, they are lost");
        }
    }
}

nixl_status_t
lfEngine::registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem, nixlBackendMD *&out) {
    if (nixl_mem != DRAM_SEG) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC registers DRAM only, not "
                                << nixl_be_mem_name(static_cast<uint32_t>(nixl_mem)));
        return NIXL_ERR_NOT_SUPPORTED;
    }
    auto md = std::make_unique<lfLocalMD>();
    md->base = mem.addr;
    md->len = mem.len;
    for (auto &r : rails_) {
        fid_mr *mr = nullptr;
        // Keys are ours to choose (no provider here offers FI_MR_PROV_KEY) and must be unique
        // in the domain; never reusing one also makes a stale remote key fail at the target
        // instead of reaching memory registered later.
        const uint64_t key = nextKey_.fetch_add(1, std::memory_order_relaxed);
        int rc = r->registerMr(reinterpret_cast<void *>(mem.addr), mem.len, key, &mr);
        if (rc != 0) {
            NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC " << r->prov
                                    << ": fi_mr_reg of [0x" << std::hex << mem.addr << std::dec
                                    << ", +" << mem.len << "): " << fi_strerror(-rc));
            for (size_t i = 0; i < md->mrs.size(); ++i) {
                rails_[i]->closeMr(md->mrs[i]); // each under its own rail's mutex
            }
            return NIXL_ERR_BACKEND;
        }
        md->mrs.push_back(mr);
        md->descs.push_back(fi_mr_desc(mr));
        md->keys.push_back(r->provKey ? fi_mr_key(mr) : key);
    }
    if (registry_.enabled()) {
        // Ids come from the key counter: unique in the engine and never reused, so a slot
        // given to a later registration never matches the id a peer holds for this one.
        md->regId = nextKey_.fetch_add(1, std::memory_order_relaxed);
        registry_.assign(localAgent, *md);
    }
    out = md.release();
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::deregisterMem(nixlBackendMD *meta) {
    auto *md = static_cast<lfLocalMD *>(meta);
    const nixl_status_t st = registry_.release(localAgent, *md, cfg_.releaseTimeoutMs);
    for (size_t i = 0; i < md->mrs.size(); ++i) {
        rails_[i]->closeMr(md->mrs[i]);
    }
    delete md;
    return st;
}

nixl_status_t
lfEngine::connect(const std::string &remote_agent) {
    if (remote_agent == localAgent || peers_.find(remote_agent) != nullptr) {
        return NIXL_SUCCESS;
    }
    NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC: no connection info of "
                            << remote_agent);
    return NIXL_ERR_NOT_FOUND;
}

nixl_status_t
lfEngine::disconnect(const std::string &remote_agent) {
    peers_.remove(remote_agent);
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::unloadMD(nixlBackendMD *input) {
    delete static_cast<lfRemoteMD *>(input);
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::getPublicData(const nixlBackendMD *meta, std::string &str) const {
    const auto *md = static_cast<const lfLocalMD *>(meta);
    publicDataWire w;
    w.mem = DRAM_SEG;
    w.base = md->base;
    w.len = md->len;
    for (size_t i = 0; i < rails_.size(); ++i) {
        w.rails.push_back({rails_[i]->prov, md->keys[i], uint8_t(rails_[i]->virtAddr ? 1 : 0)});
    }
    w.slot = md->slot;
    w.regId = md->regId;
    w.owner = nonce_;
    str = encodePublicData(w);
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::getConnInfo(std::string &str) const {
    connInfoWire w;
    w.nonce = nonce_;
    w.hostId = hostId_;
    w.pid = static_cast<int32_t>(getpid());
    for (const auto &r : rails_) {
        w.rails.push_back({r->prov, r->addr});
    }
    w.startTime = self_.startTime;
    w.regTable = registry_.name();
    w.regSlots = registry_.slotCount();
    w.probeAddr = reinterpret_cast<uintptr_t>(&probeWord_);
    str = encodeConnInfo(w);
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::loadRemoteConnInfo(const std::string &remote_agent, const std::string &conn) {
    auto peer = std::make_shared<lfPeer>();
    std::string why;
    if (!decodeConnInfo(conn, peer->conn, why)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC connection info of " << remote_agent
                                << " refused: " << why);
        return NIXL_ERR_INVALID_PARAM;
    }
    peer->name = remote_agent;
    peer->sameHost = peer->conn.hostId == hostId_;
    auto peerHas = [&](const std::string &prov) -> const railWire * {
        for (const auto &r : peer->conn.rails) {
            if (r.prov == prov) {
                return &r;
            }
        }
        return nullptr;
    };
    // First choice: shm for a peer on this host; then our rails in the order opened.
    const lfRail *pick = nullptr;
    const railWire *theirs = nullptr;
    std::string reason;
    for (const auto &r : rails_) {
        if (r->prov == "shm" && peer->sameHost && (theirs = peerHas("shm")) != nullptr) {
            pick = r.get();
            reason = "same host and IPC namespace, both offer shm";
            break;
        }
    }
    if (pick == nullptr) {
        for (const auto &r : rails_) {
            if (r->prov == "shm" && !peer->sameHost) {
                continue; // shm cannot reach another host
            }
            if ((theirs = peerHas(r->prov)) != nullptr) {
                pick = r.get();
                reason = peer->sameHost ? "same host, but the peer offers no shm" :
                                          "peer on another host (or IPC namespace)";
                break;
            }
        }
    }
    if (pick == nullptr) {
        std::string offered;
        for (const auto &r : peer->conn.rails) {
            offered += (offered.empty() ? "" : ", ") + r.prov;
        }
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC: no provider in common with "
                                << remote_agent << " (it offers " << offered
                                << (peer->sameHost ? "" : " from another host") << ")");
        return NIXL_ERR_NOT_SUPPORTED;
    }
    lfRail &r = *rails_[pick->index];
    if (const int n = r.insertAddr(theirs->addr, &peer->addr); n != 1) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC " << r.prov
                                << ": fi_av_insert of " << remote_agent << "'s address failed ("
                                << n << ")");
        return NIXL_ERR_BACKEND;
    }
    peer->rail = r.index;
    peer->path = r.prov == "shm"            ? NIXL_XFER_PATH_LIBFABRIC_SHM :
        r.prov.rfind("tcp", 0) == 0 ? NIXL_XFER_PATH_LIBFABRIC_TCP :
                                      NIXL_XFER_PATH_UNKNOWN;
    if (r.prov != "shm") {
        // Why not shm, the rail a peer of this host would get: as decided above.
        const bool haveShm =
            std::any_of(rails_.begin(), rails_.end(), [](const auto &x) { return x->prov == "shm"; });
        peer->fallback = !peer->sameHost   ? NIXL_PATH_FALLBACK_PEER_OTHER_HOST :
            !haveShm                       ? NIXL_PATH_FALLBACK_DISABLED_BY_CONFIG :
                                             NIXL_PATH_FALLBACK_TRANSPORT_UNAVAILABLE;
    }
    if (r.fastRma) {
        std::string whyNot;
        if (openPeerTable(*peer, r.fastRma, self_, nonce_, localAgent, whyNot)) {
            reason += "; fast RMA (initiator copies, checked against the peer's registration "
                      "table)";
        } else {
            reason += "; delivery-complete RMA (" + whyNot + ")";
        }
    }
    NIXL_SDK_DEBUG("agent " << localAgent << ": LIBFABRIC connection to " << remote_agent
                            << " over " << r.prov << ": " << reason);
    peers_.add(std::move(peer));
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::loadRemoteMD(const nixlBlobDesc &input,
                       const nixl_mem_t &nixl_mem,
                       const std::string &remote_agent,
                       nixlBackendMD *&output) {
    publicDataWire w;
    std::string why;
    if (!decodePublicData(input.metaInfo, w, why)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC public data of " << remote_agent
                                << " [0x" << std::hex << input.addr << std::dec << ", +"
                                << input.len << ") refused: " << why);
        return NIXL_ERR_INVALID_PARAM;
    }
    if (nixl_mem != DRAM_SEG || w.mem != DRAM_SEG) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC public data of " << remote_agent
                                << " refused: descriptor [0x" << std::hex << input.addr
                                << std::dec << ", +" << input.len << ") is not DRAM");
        return NIXL_ERR_INVALID_PARAM;
    }
    // A section's descriptor is the registration itself (getLocalMD and getLocalPartialMD
    // send registrations whole), so its range must be the one the public data seals: a length
    // changed in the blob (0 included) is damage, not a sub-range.
    if (input.addr != w.base || input.len != w.len) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC public data of " << remote_agent
                                << " refused: descriptor [0x" << std::hex << input.addr
                                << std::dec << ", +" << input.len
                                << ") is not the registration it describes ([0x" << std::hex
                                << w.base << std::dec << ", +" << w.len << "))");
        return NIXL_ERR_MISMATCH;
    }
    // Each registration names the engine that made it (version 3): one of another engine
    // than the loaded connection info's (a blob spliced from two agents') would be written
    // through the connection, into the memory of whichever process it reaches.
    std::shared_ptr<lfPeer> peer = peers_.find(remote_agent);
    if (peer == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC public data of " << remote_agent
                                << " [0x" << std::hex << input.addr << std::dec << ", +"
                                << input.len << ") refused: no connection info of it loaded");
        return NIXL_ERR_NOT_FOUND;
    }
    const bool bound = w.version >= 3 || peer->conn.version >= 3;
    if (bound && (w.version < 3 || w.owner != peer->conn.nonce)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": LIBFABRIC public data of " << remote_agent
                                << " [0x" << std::hex << input.addr << ", +" << std::dec
                                << input.len << ") refused: "
                                << (w.version < 3 ? std::string("it names no engine (version ") +
                                            std::to_string(w.version) +
                                            ") but the connection info is version " +
                                            std::to_string(peer->conn.version) :
                                        "made by another engine than the loaded connection "
                                        "info's (a blob mixing two agents' metadata?)"));
        return NIXL_ERR_MISMATCH;
    }
    auto md = std::make_unique<lfRemoteMD>();
    md->base = w.base;
    md->len = w.len;
    md->keys.assign(rails_.size(), 0);
    md->virtAddr.assign(rails_.size(), 0);
    md->hasRail.assign(rails_.size(), 0);
    // The slot is read in the peer's mapped table at every fast post: out of it, or without
    // storage there (a SIGBUS), it is forged or damaged; an honest peer reserves a slot
    // before it publishes it.
    if (w.slot != 0 && peer->table && !peer->table->backed(w.slot)) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC refused the public data of "
                                        << remote_agent << "'s registration of " << w.len
                                        << " bytes: its slot " << w.slot << " is not a slot of "
                                        << "the peer's registration table with storage (of "
                                        << peer->table->slotCount()
                                        << "; forged or damaged metadata)");
        return NIXL_ERR_MISMATCH;
    }
    md->slot = w.slot;
    md->regId = w.regId;
    for (const auto &mr : w.rails) {
        for (size_t i = 0; i < rails_.size(); ++i) {
            if (rails_[i]->prov == mr.prov) {
                md->keys[i] = mr.key;
                md->virtAddr[i] = mr.virtAddr;
                md->hasRail[i] = 1;
            }
        }
    }
    output = md.release();
    return NIXL_SUCCESS;
}

nixl_status_t
lfEngine::loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) {
    auto *in = static_cast<lfLocalMD *>(input);
    auto md = std::make_unique<lfRemoteMD>();
    md->base = in->base;
    md->len = in->len;
    md->local = in;
    output = md.release();
    return NIXL_SUCCESS;
}

} // namespace nixlLf

NIXL_BACKEND_PLUGIN_DEFINE(nixlLf::lfEngine, "LIBFABRIC", "0.1.0")
