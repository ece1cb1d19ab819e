/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "ucx_backend.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <poll.h>
#include <random>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <uct/api/uct.h>

using nixlUcx::nixlUcxReader;
using nixlUcx::nixlUcxWriter;

namespace {

constexpr uint32_t conn_magic = 0x4355584eu; // "NXUC"
constexpr uint32_t rkey_magic = 0x5255584eu; // "NXUR"
constexpr uint32_t notif_magic = 0x4e55584eu; // "NXUN"
constexpr uint16_t wire_version = 1;
constexpr unsigned notif_am_id = 1;

/** Registration table slots (8 bytes each, touched lazily): more than any agent registers. */
constexpr size_t reg_table_slots = size_t(1) << 20;
/** process_vm_readv/writev take at most this many iovecs per side (UIO_MAXIOV). */
constexpr size_t iov_batch = 1024;
/** A post copies this much inline before handing the rest to checkXfer or the thread. */
constexpr size_t inline_bytes = 64 * 1024;
/** Bytes one checkXfer or one post copies at most on the direct path. */
constexpr size_t step_budget = 4 * 1024 * 1024;
/** Bytes the progress thread copies per request and round, so requests share it fairly. */
constexpr size_t thread_budget = 1024 * 1024;

int64_t
nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/** A small per-thread number, so that threads spread over the workers without asking. */
size_t
threadSlot() {
    static std::atomic<size_t> next{0};
    thread_local size_t slot = next.fetch_add(1, std::memory_order_relaxed);
    return slot;
}

/** Plugins do not call into libnixl, so this file names memory kinds itself. */
const char *
memName(nixl_mem_t m) {
    switch (m) {
    case DRAM_SEG:
        return "DRAM_SEG";
    case VRAM_SEG:
        return "VRAM_SEG";
    case BLK_SEG:
        return "BLK_SEG";
    case OBJ_SEG:
        return "OBJ_SEG";
    case FILE_SEG:
        return "FILE_SEG";
    }
    return "BAD_SEG";
}

const char *
opName(nixl_xfer_op_t op) {
    return op == NIXL_WRITE ? "WRITE" : "READ";
}

/**
 * UCX presets, applied only when the user set neither the variable nor an engine_config entry
 * for it, and only when this UCX knows the key at UCP level (an unknown key makes every worker
 * warn). UCX 1.13 knows neither, so there they are documentation of intent.
 */
const std::pair<const char *, const char *> ucx_presets[] = {
    // Two RMA rails spread large transfers over two NICs where a host has them.
    {"MAX_RMA_RAILS", "2"},
    // Relaxed PCIe ordering speeds RDMA up where the root complex allows it; "try" is safe.
    {"IB_PCI_RELAXED_ORDERING", "try"},
};

/**
 * Completes req. A tracked request (UCX operations or a notification in flight) is only
 * finished with its lane worker's lock held, which is also what guards the tracking set.
 */
void
finishReq(nixlUcxReq &req, nixl_status_t st) {
    if (req.tracked) {
        req.lane->worker->inflight.erase(&req);
        req.tracked = false;
    }
    req.phase = nixlUcxReq::phase_t::DONE;
    req.status.store(st, std::memory_order_release);
}

void
track(nixlUcxReq &req) {
    if (!req.tracked) {
        req.lane->worker->inflight.insert(&req);
        req.tracked = true;
    }
}

/** What a request to a connection that is no longer usable reports. */
nixl_status_t
goneStatus(const nixlUcxConn &conn) {
    return conn.state.load(std::memory_order_acquire) == nixlUcxConn::LOST ?
        NIXL_ERR_REMOTE_DISCONNECT :
        NIXL_ERR_NOT_FOUND; // disconnected: the agent invalidated the peer's metadata
}

/** All UCX operations of req completed (or none was posted); lane worker lock held. */
void
ucxDataDoneLocked(nixlUcxReq &req) {
    const bool lost = !req.conn->usable();
    if (req.ucxError != UCS_OK || lost) {
        nixl_status_t st = lost ? goneStatus(*req.conn) :
                                  nixlUcx::statusFromUcs(req.ucxError, false);
        if (!lost) {
            if (req.failedDesc != SIZE_MAX && req.ucxError == UCS_ERR_NO_ELEM) {
                NIXL_SDK_ERROR("agent " << req.engine->agentName() << ": UCX "
                                        << opName(req.op) << " to " << req.remoteAgent
                                        << ", descriptor " << req.failedDesc
                                        << ": the remote key is gone (metadata unloaded)");
            } else if (req.failedDesc != SIZE_MAX) {
                NIXL_SDK_ERROR("agent " << req.engine->agentName() << ": UCX "
                                        << opName(req.op) << " to " << req.remoteAgent
                                        << ", descriptor " << req.failedDesc << " of "
                                        << req.count << ": "
                                        << ucs_status_string(req.ucxError));
            } else {
                NIXL_SDK_ERROR("agent " << req.engine->agentName() << ": UCX "
                                        << opName(req.op) << " of " << req.count
                                        << " descriptors to " << req.remoteAgent
                                        << " completed with an error: "
                                        << ucs_status_string(req.ucxError));
            }
        }
        finishReq(req, st);
        return;
    }
    if (req.hasNotif && !req.dropNotif) {
        req.lane->worker->ready.push_back(&req);
        return;
    }
    finishReq(req, NIXL_SUCCESS);
}

void
ucxDataCb(void *request, ucs_status_t status, void *user_data) {
    ucp_request_free(request);
    auto *req = static_cast<nixlUcxReq *>(user_data);
    if (status != UCS_OK && req->ucxError == UCS_OK) {
        req->ucxError = status;
    }
    if (--req->outstanding == 0) {
        ucxDataDoneLocked(*req);
    }
}

void
amSendCb(void *request, ucs_status_t status, void *user_data) {
    ucp_request_free(request);
    auto *s = static_cast<nixlUcxAmSend *>(user_data);
    s->worker->sends.erase(s);
    if (s->req != nullptr) {
        nixlUcxReq &req = *s->req;
        req.notifSend = nullptr;
        const bool lost = !req.conn->usable();
        if (status == UCS_OK) {
            finishReq(req, NIXL_SUCCESS);
        } else {
            if (!lost) {
                NIXL_SDK_ERROR("agent " << s->engine->agentName() << ": notification of a "
                                        << opName(req.op) << " to " << s->remote
                                        << " failed after the data was delivered: "
                                        << ucs_status_string(status));
            }
            finishReq(req, nixlUcx::statusFromUcs(status, lost));
        }
    } else if (status != UCS_OK && status != UCS_ERR_CANCELED) {
        NIXL_SDK_ERROR("agent " << s->engine->agentName() << ": notification to " << s->remote
                                << " failed: " << ucs_status_string(status));
    }
    delete s;
}

void
epErrorCb(void *arg, ucp_ep_h ep, ucs_status_t status) {
    (void)ep;
    auto *lane = static_cast<nixlUcxLane *>(arg);
    const nixlUcxEngine *engine = lane->worker->engine;
    engine->markLost(*lane->conn,
                     std::string("UCX reported ") + ucs_status_string(status) + " on lane " +
                         std::to_string(lane->index));
}

/** A rendezvous notification being received. */
struct rndvRecv {
    const nixlUcxEngine *engine;
    std::string sender;
    std::string msg;
};

void
rndvRecvCb(void *request, ucs_status_t status, size_t length, void *user_data) {
    auto *r = static_cast<rndvRecv *>(user_data);
    if (status == UCS_OK) {
        r->msg.resize(length);
        r->engine->pushNotif(std::move(r->sender), std::move(r->msg));
    } else {
        NIXL_SDK_ERROR("agent " << r->engine->agentName() << ": receiving a "
                                << r->msg.size() << "-byte notification from " << r->sender
                                << " failed: " << ucs_status_string(status));
    }
    ucp_request_free(request);
    delete r;
}

ucs_status_t
amRecvCb(void *arg,
         const void *header,
         size_t header_length,
         void *data,
         size_t length,
         const ucp_am_recv_param_t *param) {
    auto *w = static_cast<nixlUcxWorker *>(arg);
    const nixlUcxEngine *engine = w->engine;
    uint32_t magic = 0;
    if (header_length < sizeof(magic) ||
        (std::memcpy(&magic, header, sizeof(magic)), magic != notif_magic)) {
        NIXL_SDK_ERROR("agent " << engine->agentName() << ": dropped a " << length
                                << "-byte active message with a foreign header");
        return UCS_OK;
    }
    std::string sender(static_cast<const char *>(header) + sizeof(magic),
                       header_length - sizeof(magic));
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
        auto *r = new rndvRecv{engine, std::move(sender), std::string(length, '\0')};
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.recv_am = rndvRecvCb;
        p.user_data = r;
        ucs_status_ptr_t sp = ucp_am_recv_data_nbx(w->worker, data, r->msg.data(), length, &p);
        if (sp == nullptr) {
            engine->pushNotif(std::move(r->sender), std::move(r->msg));
            delete r;
        } else if (UCS_PTR_IS_ERR(sp)) {
            NIXL_SDK_ERROR("agent " << engine->agentName() << ": cannot receive a " << length
                                    << "-byte notification from " << r->sender << ": "
                                    << ucs_status_string(UCS_PTR_STATUS(sp)));
            delete r;
        }
        return UCS_OK;
    }
    engine->pushNotif(std::move(sender), std::string(static_cast<const char *>(data), length));
    return UCS_OK;
}

/**
 * Splits "a=1,b=2" into pairs. An item without '=' continues the previous value, so that
 * "TLS=sysv,posix,self,RNDV_THRESH=8k" is TLS=sysv,posix,self and RNDV_THRESH=8k; false when
 * the first item has no '='.
 */
bool
splitPairs(std::string_view s, std::vector<std::pair<std::string, std::string>> &out) {
    size_t pos = 0;
    while (pos < s.size()) {
        size_t comma = s.find(',', pos);
        std::string_view item =
            nixlUcx::trim(s.substr(pos, comma == std::string_view::npos ? s.size() - pos :
                                                                           comma - pos));
        pos = comma == std::string_view::npos ? s.size() : comma + 1;
        if (item.empty()) {
            continue;
        }
        size_t eq = item.find('=');
        if (eq == std::string_view::npos && !out.empty()) {
            out.back().second += ",";
            out.back().second.append(item);
            continue;
        }
        if (eq == std::string_view::npos || eq == 0) {
            return false;
        }
        out.emplace_back(std::string(nixlUcx::trim(item.substr(0, eq))),
                         std::string(nixlUcx::trim(item.substr(eq + 1))));
    }
    return true;
}

bool
rangeCovers(uintptr_t base, size_t len, uintptr_t addr, size_t n) {
    return addr >= base && n <= len && addr - base <= len - n;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// nixlUcxWorker

nixlUcxWorker::~nixlUcxWorker() {
    if (worker != nullptr) {
        ucp_worker_destroy(worker);
    }
}

unsigned
nixlUcxWorker::progressLocked() {
    if (worker == nullptr) {
        return 0;
    }
    unsigned total = 0;
    // Bounded, so that one busy worker cannot starve the others of the same thread.
    for (int i = 0; i < 256; ++i) {
        unsigned n = ucp_worker_progress(worker);
        if (n == 0) {
            break;
        }
        total += n;
    }
    while (!ready.empty()) {
        std::vector<nixlUcxReq *> batch;
        batch.swap(ready);
        for (nixlUcxReq *req : batch) {
            req->engine->sendXferNotifLocked(*req);
            ++total;
        }
    }
    return total;
}

void
nixlUcxWorker::destroyLocked(nixl_status_t pending_status) {
    if (worker != nullptr) {
        if (inflight.empty()) {
            ucp_worker_destroy(worker);
        } else {
            NIXL_SDK_WARN("agent " << (engine != nullptr ? engine->agentName() : std::string())
                                   << ": UCX worker torn down with " << inflight.size()
                                   << " transfer(s) still running in UCX; leaving the worker "
                                      "allocated because UCX 1.13 aborts when it is destroyed "
                                      "with RMA in flight");
            abandoned = true;
        }
        worker = nullptr;
    }
    ready.clear();
    // No callback can come any more: what UCX did not complete is finished and freed here.
    for (nixlUcxAmSend *s : sends) {
        if (s->req != nullptr) {
            s->req->notifSend = nullptr;
        }
        delete s;
    }
    sends.clear();
    std::unordered_set<nixlUcxReq *> left;
    left.swap(inflight);
    for (nixlUcxReq *req : left) {
        req->tracked = false;
        req->outstanding = 0;
        req->notifSend = nullptr;
        finishReq(*req, pending_status);
    }
}

// ---------------------------------------------------------------------------------------------
// Creation and parameters

nixl_b_params_t
nixlUcxEngine::pluginOptions() {
    return {
        {"ucx_devices", ""},
        {"num_workers", "1"},
        {"ucx_error_handling_mode", "peer"},
        {"engine_config", ""},
        {"ucx_direct_cma", "yes"},
        {"ucx_peer_check_ms", "200"},
        {"ucx_release_timeout_ms", "2000"},
    };
}

nixl_mem_list_t
nixlUcxEngine::pluginMems() {
    nixl_mem_list_t mems = {DRAM_SEG};
    // VRAM only when UCX was built with a CUDA component; asking uct needs no context.
    uct_component_h *comps = nullptr;
    unsigned n = 0;
    if (uct_query_components(&comps, &n) == UCS_OK) {
        bool cuda = false;
        for (unsigned i = 0; i < n; ++i) {
            uct_component_attr_t attr{};
            attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
            if (uct_component_query(comps[i], &attr) == UCS_OK &&
                std::strncmp(attr.name, "cuda", 4) == 0) {
                cuda = true;
            }
        }
        uct_release_component_list(comps);
        if (cuda) {
            mems.push_back(VRAM_SEG);
        }
    }
    return mems;
}

nixl_mem_list_t
nixlUcxEngine::getSupportedMems() const {
    nixl_mem_list_t mems = {DRAM_SEG};
    if (vram_) {
        mems.push_back(VRAM_SEG);
    }
    return mems;
}

bool
nixlUcxEngine::parseParams(const nixl_b_params_t &params) {
    auto get = [&](const char *key, std::string &value) {
        auto it = params.find(key);
        if (it == params.end()) {
            return false;
        }
        value = it->second;
        return true;
    };
    std::string v;
    if (get("device_list", v) && !nixlUcx::trim(v).empty()) {
        cfg_.devices = std::string(nixlUcx::trim(v));
    } else if (get("ucx_devices", v)) {
        cfg_.devices = std::string(nixlUcx::trim(v));
    }
    uint64_t n = 0;
    if (get("num_workers", v)) {
        if (!nixlUcx::parseUnsigned(v, n) || n == 0 || n > 64) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX num_workers must be 1..64, not '"
                                    << v << "'");
            return false;
        }
        cfg_.numWorkers = n;
    } else {
        setInitParam("num_workers", "1");
    }
    if (get("ucx_error_handling_mode", v)) {
        std::string m(nixlUcx::trim(v));
        if (m == "peer") {
            cfg_.peerErrMode = true;
        } else if (m == "none") {
            cfg_.peerErrMode = false;
        } else {
            NIXL_SDK_ERROR("agent " << localAgent
                                    << ": UCX ucx_error_handling_mode must be none or peer, not '"
                                    << v << "'");
            return false;
        }
    } else {
        setInitParam("ucx_error_handling_mode", "peer");
    }
    if (get("ucx_direct_cma", v)) {
        if (!nixlUcx::parseBool(v, cfg_.directCma)) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX ucx_direct_cma must be yes or no, "
                                    << "not '" << v << "'");
            return false;
        }
    }
    if (get("ucx_peer_check_ms", v)) {
        if (!nixlUcx::parseUnsigned(v, n) || n == 0 || n > 60000) {
            NIXL_SDK_ERROR("agent " << localAgent
                                    << ": UCX ucx_peer_check_ms must be 1..60000, not '" << v
                                    << "'");
            return false;
        }
        cfg_.peerCheckMs = n;
    }
    if (get("ucx_release_timeout_ms", v)) {
        if (!nixlUcx::parseUnsigned(v, n) || n > 600000) {
            NIXL_SDK_ERROR("agent " << localAgent
                                    << ": UCX ucx_release_timeout_ms must be 0..600000, not '"
                                    << v << "'");
            return false;
        }
        cfg_.releaseTimeoutMs = n;
    }
    if (get("ucx_fault_direct_hold_bytes", v)) {
        if (!nixlUcx::parseUnsigned(v, cfg_.faultDirectHoldBytes)) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX ucx_fault_direct_hold_bytes must "
                                    << "be a byte count, not '" << v << "'");
            return false;
        }
    }
    if (get("engine_config", v)) {
        cfg_.engineConfig = v;
    }
    if (get("num_threads", v) && v != "0" && !v.empty()) {
        NIXL_SDK_WARN("agent " << localAgent << ": UCX num_threads=" << v
                               << " (NIXL's thread-pool engine) is not supported; use "
                               << "num_workers and several posting threads instead");
    }
    return true;
}

bool
nixlUcxEngine::initUcx() {
    std::string err;
    if (!nixlUcx::readSelfIdentity(self_, err)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX: " << err);
        return false;
    }
    std::random_device rd;
    nonce_ = (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(nowNs()) ^ uint64_t(self_.pid);
    if (nonce_ == 0) {
        nonce_ = 1;
    }

    void *table = ::mmap(nullptr,
                         reg_table_slots * sizeof(uint64_t),
                         PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                         -1,
                         0);
    if (table == MAP_FAILED) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX: cannot map the registration table: "
                                << std::strerror(errno));
        return false;
    }
    regTable_ = static_cast<std::atomic<uint64_t> *>(table);
    regSlots_ = reg_table_slots;
    regTable_[0].store(nonce_, std::memory_order_release);

    // Can this process read memory by pid at all (seccomp and LSMs may forbid it)?
    uint64_t probe = 0;
    struct iovec liov = {&probe, sizeof(probe)};
    struct iovec riov = {table, sizeof(probe)};
    cmaWorks_ = ::process_vm_readv(::getpid(), &liov, 1, &riov, 1, 0) ==
            static_cast<ssize_t>(sizeof(probe)) &&
        probe == nonce_;
    if (!cmaWorks_) {
        NIXL_SDK_DEBUG("agent " << localAgent << ": UCX: process_vm_readv is not permitted ("
                                << std::strerror(errno) << "); data goes through UCX only");
    }

    ucp_config_t *config = nullptr;
    ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_config_read: " << ucs_status_string(st));
        return false;
    }
    std::unique_ptr<ucp_config_t, void (*)(ucp_config_t *)> cfg_guard(config,
                                                                       ucp_config_release);
    if (!cfg_.devices.empty() && cfg_.devices != "all") {
        st = ucp_config_modify(config, "NET_DEVICES", cfg_.devices.c_str());
        if (st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX device list '" << cfg_.devices
                                    << "' rejected: " << ucs_status_string(st));
            return false;
        }
    }
    std::vector<std::pair<std::string, std::string>> overrides;
    if (!splitPairs(cfg_.engineConfig, overrides)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX engine_config '" << cfg_.engineConfig
                                << "' is not a comma-separated KEY=VALUE list");
        return false;
    }
    for (auto &[key, value] : overrides) {
        if (key.rfind("UCX_", 0) == 0) {
            key = key.substr(4);
        }
        st = ucp_config_modify(config, key.c_str(), value.c_str());
        if (st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX engine_config " << key << "="
                                    << value << " rejected: " << ucs_status_string(st));
            return false;
        }
        std::string known;
        NIXL_SDK_DEBUG("agent " << localAgent << ": UCX_" << key << "=" << value
                                << " (engine_config"
                                << (nixlUcx::configValue(config, key, known) ?
                                        ")" :
                                        "; not a UCP key, left to the transports)"));
    }
    for (const auto &[key, value] : ucx_presets) {
        const std::string env = std::string("UCX_") + key;
        bool overridden = std::getenv(env.c_str()) != nullptr;
        for (const auto &o : overrides) {
            overridden = overridden || o.first == key;
        }
        std::string current;
        if (overridden || !nixlUcx::configValue(config, key, current)) {
            NIXL_SDK_DEBUG("agent " << localAgent << ": UCX preset " << env << "=" << value
                                    << " not applied ("
                                    << (overridden ? "set by the user" : "unknown to this UCX")
                                    << ")");
            continue;
        }
        st = ucp_config_modify(config, key, value);
        NIXL_SDK_DEBUG("agent " << localAgent << ": UCX preset " << env << "=" << value << ": "
                                << ucs_status_string(st));
    }
    std::string tls = "all";
    nixlUcx::configValue(config, "TLS", tls);
    cmaAllowed_ = nixlUcx::tlsAllowsCma(tls);
    shmAllowed_ = nixlUcx::tlsAllowsShm(tls);

    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
        UCP_PARAM_FIELD_NAME;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
    if (progThread_) {
        params.features |= UCP_FEATURE_WAKEUP;
    }
    params.mt_workers_shared = 1;
    params.name = localAgent.c_str();
    st = ucp_init(&params, config, &ctx_);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_init: " << ucs_status_string(st));
        return false;
    }
    ucp_context_attr_t attr{};
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    if (ucp_context_query(ctx_, &attr) == UCS_OK) {
        vram_ = (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
    }

    nixlUcxWriter w;
    w.put<uint32_t>(conn_magic);
    w.put<uint16_t>(wire_version);
    w.put<uint16_t>(0);
    w.put<uint64_t>(nonce_);
    w.putBytes(self_.bootId);
    w.put<uint64_t>(self_.pidNs);
    w.put<int32_t>(self_.pid);
    w.put<uint64_t>(self_.startTime);
    w.put<uint64_t>(reinterpret_cast<uintptr_t>(regTable_));
    w.put<uint64_t>(regSlots_);
    w.put<uint32_t>(static_cast<uint32_t>(cfg_.numWorkers));
    for (size_t i = 0; i < cfg_.numWorkers; ++i) {
        auto worker = createWorker(true, localAgent + "/home" + std::to_string(i));
        if (!worker) {
            return false;
        }
        ucp_address_t *addr = nullptr;
        size_t addr_len = 0;
        st = ucp_worker_get_address(worker->worker, &addr, &addr_len);
        if (st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << localAgent
                                    << ": ucp_worker_get_address: " << ucs_status_string(st));
            return false;
        }
        w.putBytes(addr, addr_len);
        ucp_worker_release_address(worker->worker, addr);
        home_.push_back(std::move(worker));
    }
    connInfo_ = std::move(w.str());
    NIXL_SDK_DEBUG("agent " << localAgent << ": UCX engine up: " << cfg_.numWorkers
                            << " worker(s), UCX_TLS=" << tls << ", direct cma "
                            << (cfg_.directCma && cmaAllowed_ && cmaWorks_ ? "on" : "off")
                            << ", error handling "
                            << (cfg_.peerErrMode ? "peer" : "none") << ", progress thread "
                            << (progThread_ ? "on" : "off"));
    return true;
}

std::shared_ptr<nixlUcxWorker>
nixlUcxEngine::createWorker(bool home, const std::string &name) {
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE | UCP_WORKER_PARAM_FIELD_NAME;
    // Every use of a worker holds its mutex, so UCX needs no locking of its own.
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    wp.name = name.c_str();
    ucp_worker_h h = nullptr;
    ucs_status_t st = ucp_worker_create(ctx_, &wp, &h);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_worker_create(" << name
                                << "): " << ucs_status_string(st));
        return nullptr;
    }
    int efd = -1;
    if (progThread_) {
        st = ucp_worker_get_efd(h, &efd);
        if (st != UCS_OK) {
            NIXL_SDK_WARN("agent " << localAgent << ": ucp_worker_get_efd(" << name
                                   << "): " << ucs_status_string(st)
                                   << "; the progress thread will poll it");
            efd = -1;
        }
    }
    auto w = std::make_shared<nixlUcxWorker>(h, efd, home, name);
    w->engine = this;
    if (home) {
        ucp_am_handler_param_t hp{};
        hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
            UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
        hp.id = notif_am_id;
        hp.flags = UCP_AM_FLAG_WHOLE_MSG;
        hp.cb = amRecvCb;
        hp.arg = w.get();
        st = ucp_worker_set_am_recv_handler(h, &hp);
        if (st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << localAgent << ": cannot install the notification "
                                    << "handler on " << name << ": " << ucs_status_string(st));
            return nullptr;
        }
    }
    {
        std::lock_guard<std::mutex> g(workersLock_);
        workers_.push_back(w);
    }
    wakeProgress();
    return w;
}

nixlUcxEngine::nixlUcxEngine(const nixlBackendInitParams *init_params)
    : nixlBackendEngine(init_params) {
    progThread_ = init_params->enableProgTh;
    pthrDelayUs_ = init_params->pthrDelay;
    if (!parseParams(getCustomParams()) || !initUcx()) {
        initErr = true;
        return;
    }
    if (progThread_) {
        wakeFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (wakeFd_ < 0) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX: eventfd: " << std::strerror(errno));
            initErr = true;
            return;
        }
        try {
            thread_ = std::thread([this] { progressLoop(); });
        }
        catch (const std::exception &e) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX: cannot start the progress thread: "
                                    << e.what());
            initErr = true;
        }
    }
}

nixlUcxEngine::~nixlUcxEngine() {
    if (thread_.joinable()) {
        stop_.store(true, std::memory_order_release);
        wakeProgress();
        thread_.join();
    }
    std::map<std::string, std::shared_ptr<nixlUcxConn>> conns;
    {
        std::unique_lock<std::shared_mutex> g(connLock_);
        conns.swap(conns_);
    }
    for (auto &[name, conn] : conns) {
        closeConn(*conn);
    }
    for (auto &w : home_) {
        std::lock_guard<std::mutex> g(w->lock);
        w->destroyLocked(NIXL_ERR_NOT_FOUND);
        abandonedWorkers_ = abandonedWorkers_ || w->abandoned;
    }
    {
        std::lock_guard<std::mutex> g(workersLock_);
        workers_.clear();
    }
    home_.clear();
    // A context with an abandoned worker cannot be cleaned up either (see destroyLocked).
    if (ctx_ != nullptr && !abandonedWorkers_) {
        ucp_cleanup(ctx_);
    }
    if (regTable_ != nullptr) {
        ::munmap(regTable_, regSlots_ * sizeof(uint64_t));
    }
    if (wakeFd_ >= 0) {
        ::close(wakeFd_);
    }
}

// ---------------------------------------------------------------------------------------------
// Registration and metadata

nixl_status_t
nixlUcxEngine::registerMem(const nixlBlobDesc &mem,
                           const nixl_mem_t &nixl_mem,
                           nixlBackendMD *&out) {
    if (nixl_mem != DRAM_SEG && !(nixl_mem == VRAM_SEG && vram_)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot register "
                                << memName(nixl_mem) << " memory");
        return NIXL_ERR_NOT_SUPPORTED;
    }
    if (mem.len == 0) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot register 0 bytes at 0x"
                                << std::hex << mem.addr << std::dec);
        return NIXL_ERR_INVALID_PARAM;
    }
    auto md = std::make_unique<nixlUcxLocalMD>();
    md->base = mem.addr;
    md->len = mem.len;
    md->mem = nixl_mem;
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
        UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    mp.address = reinterpret_cast<void *>(mem.addr);
    mp.length = mem.len;
    mp.memory_type = nixl_mem == VRAM_SEG ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
    ucs_status_t st = ucp_mem_map(ctx_, &mp, &md->memh);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_mem_map of " << mem.len
                                << " bytes at 0x" << std::hex << mem.addr << std::dec << ": "
                                << ucs_status_string(st));
        return NIXL_ERR_BACKEND;
    }
    void *rkey = nullptr;
    size_t rkey_len = 0;
    st = ucp_rkey_pack(ctx_, md->memh, &rkey, &rkey_len);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_rkey_pack for " << mem.len
                                << " bytes at 0x" << std::hex << mem.addr << std::dec << ": "
                                << ucs_status_string(st));
        ucp_mem_unmap(ctx_, md->memh);
        return NIXL_ERR_BACKEND;
    }
    {
        std::lock_guard<std::mutex> g(regLock_);
        if (!freeSlots_.empty()) {
            md->slot = freeSlots_.back();
            freeSlots_.pop_back();
        } else if (nextSlot_ < regSlots_) {
            md->slot = nextSlot_++;
        }
        md->regId = nextRegId_++;
        if (md->slot != 0) {
            regTable_[md->slot].store(md->regId, std::memory_order_release);
        }
    }
    nixlUcxWriter w;
    w.put<uint32_t>(rkey_magic);
    w.put<uint16_t>(wire_version);
    w.put<uint16_t>(static_cast<uint16_t>(nixl_mem));
    w.put<uint64_t>(md->base);
    w.put<uint64_t>(md->len);
    w.put<uint32_t>(md->slot);
    w.put<uint64_t>(md->regId);
    w.putBytes(rkey, rkey_len);
    ucp_rkey_buffer_release(rkey);
    md->publicData = std::move(w.str());
    out = md.release();
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::deregisterMem(nixlBackendMD *meta) {
    auto *md = dynamic_cast<nixlUcxLocalMD *>(meta);
    if (md == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX deregisterMem: not a UCX registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (md->slot != 0) {
        std::lock_guard<std::mutex> g(regLock_);
        // Peers compare this before a direct transfer: a released registration reads as stale.
        regTable_[md->slot].store(0, std::memory_order_release);
        freeSlots_.push_back(md->slot);
    }
    ucs_status_t st = ucp_mem_unmap(ctx_, md->memh);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_mem_unmap of " << md->len
                                << " bytes at 0x" << std::hex << md->base << std::dec << ": "
                                << ucs_status_string(st));
    }
    delete md;
    return st == UCS_OK ? NIXL_SUCCESS : NIXL_ERR_BACKEND;
}

nixl_status_t
nixlUcxEngine::getPublicData(const nixlBackendMD *meta, std::string &str) const {
    auto *md = dynamic_cast<const nixlUcxLocalMD *>(meta);
    if (md == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX getPublicData: not a UCX registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    str = md->publicData;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::getConnInfo(std::string &str) const {
    str = connInfo_;
    return NIXL_SUCCESS;
}

std::shared_ptr<nixlUcxConn>
nixlUcxEngine::findConn(const std::string &name) const {
    std::shared_lock<std::shared_mutex> g(connLock_);
    auto it = conns_.find(name);
    return it == conns_.end() ? nullptr : it->second;
}

nixl_status_t
nixlUcxEngine::buildConn(const std::string &remote_agent,
                         const std::string &conn_info,
                         std::shared_ptr<nixlUcxConn> &out) {
    nixlUcxReader rd(conn_info);
    uint32_t magic = 0;
    uint16_t version = 0;
    uint16_t flags = 0;
    std::string_view boot;
    uint32_t nworkers = 0;
    auto conn = std::make_shared<nixlUcxConn>();
    conn->name = remote_agent;
    bool ok = rd.get(magic) && magic == conn_magic && rd.get(version) &&
        version == wire_version && rd.get(flags) && rd.get(conn->remoteNonce) &&
        rd.getBytes(boot) && rd.get(conn->peer.pidNs) && rd.get(conn->peer.pid) &&
        rd.get(conn->peer.startTime) && rd.get(conn->remoteRegTable) &&
        rd.get(conn->remoteRegSlots) && rd.get(nworkers) && nworkers > 0 && nworkers <= 1024;
    std::vector<std::string_view> addrs;
    for (uint32_t i = 0; ok && i < nworkers; ++i) {
        std::string_view a;
        ok = rd.getBytes(a) && !a.empty();
        addrs.push_back(a);
    }
    if (!ok || !rd.atEnd()) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX connection info of " << remote_agent
                                << " (" << conn_info.size()
                                << " bytes) is malformed or from another UCX plugin version");
        return NIXL_ERR_MISMATCH;
    }
    conn->peer.bootId = std::string(boot);
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
        std::lock_guard<std::mutex> g(workersLock_);
        for (auto &lane : conn->lanes) {
            workers_.erase(std::remove(workers_.begin(), workers_.end(), lane->worker),
                           workers_.end());
        }
    };

    for (size_t i = 0; i < cfg_.numWorkers; ++i) {
        auto lane = std::make_unique<nixlUcxLane>();
        lane->conn = conn.get();
        lane->index = i;
        if (conn->privateWorkers) {
            lane->worker = createWorker(false, localAgent + "->" + remote_agent + "/" +
                                                   std::to_string(i));
            if (!lane->worker) {
                cleanup();
                return NIXL_ERR_BACKEND;
            }
        } else {
            lane->worker = home_[i];
        }
        const std::string_view addr = addrs[i % addrs.size()];
        const std::string ep_name = localAgent + "->" + remote_agent;
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
            UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_NAME;
        ep.address = reinterpret_cast<const ucp_address_t *>(addr.data());
        ep.err_mode = conn->peerMode ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
        ep.name = ep_name.c_str();
        if (conn->peerMode) {
            ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
            ep.err_handler.cb = epErrorCb;
            ep.err_handler.arg = lane.get();
        }
        nixlUcxLane *raw = lane.get();
        conn->lanes.push_back(std::move(lane));
        ucs_status_t st;
        std::string transports;
        {
            std::lock_guard<std::mutex> g(raw->worker->lock);
            st = ucp_ep_create(raw->worker->worker, &ep, &raw->ep);
            if (st != UCS_OK) {
                raw->ep = nullptr;
            } else if (nixlSdk::logEnabled(NIXL_PLUGIN_LOG_DEBUG)) {
                transports = nixlUcx::epTransports(raw->ep);
            }
        }
        if (st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot reach " << remote_agent
                                    << " (worker " << (i % addrs.size())
                                    << " of its connection info): " << ucs_status_string(st)
                                    << "; no common transport");
            cleanup();
            return NIXL_ERR_BACKEND;
        }
        NIXL_SDK_DEBUG("agent " << localAgent << ": UCX lane " << i << " to " << remote_agent
                                << " on " << raw->worker->name << ": transports " << transports
                                << ", error handling " << (conn->peerMode ? "peer" : "none"));
    }

    std::string why_not;
    if (!cfg_.directCma) {
        why_not = "ucx_direct_cma=no";
    } else if (!conn->local) {
        why_not = "peer on another host or pid namespace";
    } else if (!cmaAllowed_) {
        why_not = "UCX_TLS excludes cma";
    } else if (!cmaWorks_) {
        why_not = "process_vm_readv not permitted";
    } else {
        uint64_t probe = 0;
        struct iovec liov = {&probe, sizeof(probe)};
        struct iovec riov = {reinterpret_cast<void *>(conn->remoteRegTable), sizeof(probe)};
        ssize_t r = ::process_vm_readv(conn->peer.pid, &liov, 1, &riov, 1, 0);
        if (r == static_cast<ssize_t>(sizeof(probe)) && probe == conn->remoteNonce) {
            conn->direct = true;
        } else if (r < 0) {
            why_not = std::string("cma probe failed: ") + std::strerror(errno);
        } else {
            why_not = "cma probe read another process";
        }
    }
    NIXL_SDK_DEBUG("agent " << localAgent << ": UCX connection to " << remote_agent
                            << " (pid " << conn->peer.pid << (conn->local ? ", same host" : "")
                            << "): data path "
                            << (conn->direct ? std::string("direct cma") :
                                               "ucp_put/get (" + why_not + ")")
                            << ", " << conn->lanes.size() << " lane(s)"
                            << (conn->privateWorkers ? " on private workers" : "")
                            << (conn->watched ? ", liveness from /proc" : ""));
    out = std::move(conn);
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
    std::unique_lock<std::shared_mutex> g(connLock_);
    conns_[remote_agent] = std::move(conn);
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
        std::unique_lock<std::shared_mutex> g(connLock_);
        conns_[localAgent] = conn;
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
    // The endpoints exist since the connection info was loaded; a flush starts the wireup now
    // rather than with the first transfer.
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
    std::lock_guard<std::mutex> reap(reapLock_);
    for (auto &lane : conn.lanes) {
        nixlUcxWorker &w = *lane->worker;
        std::lock_guard<std::mutex> g(w.lock);
        {
            std::lock_guard<std::mutex> m(conn.mdLock);
            for (nixlUcxRemoteMD *md : conn.mds) {
                if (md->rkeys[lane->index] != nullptr) {
                    if (w.worker != nullptr) {
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
            w.destroyLocked(was_lost ? NIXL_ERR_REMOTE_DISCONNECT : NIXL_ERR_NOT_FOUND);
            abandonedWorkers_ = abandonedWorkers_ || w.abandoned;
        }
    }
    if (conn.privateWorkers) {
        std::lock_guard<std::mutex> g(workersLock_);
        for (auto &lane : conn.lanes) {
            workers_.erase(std::remove(workers_.begin(), workers_.end(), lane->worker),
                           workers_.end());
        }
    }
}

nixl_status_t
nixlUcxEngine::disconnect(const std::string &remote_agent) {
    std::shared_ptr<nixlUcxConn> conn;
    {
        std::unique_lock<std::shared_mutex> g(connLock_);
        auto it = conns_.find(remote_agent);
        if (it == conns_.end()) {
            NIXL_SDK_DEBUG("agent " << localAgent << ": UCX disconnect: " << remote_agent
                                    << " is not connected");
            return NIXL_SUCCESS;
        }
        conn = std::move(it->second);
        conns_.erase(it);
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
    std::lock_guard<std::mutex> reap(reapLock_);
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
        any = true;
    }
    if (any) {
        std::lock_guard<std::mutex> g(workersLock_);
        for (auto &lane : conn.lanes) {
            workers_.erase(std::remove(workers_.begin(), workers_.end(), lane->worker),
                           workers_.end());
        }
    }
}

nixl_status_t
nixlUcxEngine::unpackRkeys(nixlUcxRemoteMD &md) const {
    for (auto &lane : md.conn->lanes) {
        std::lock_guard<std::mutex> g(lane->worker->lock);
        if (lane->worker->worker == nullptr || lane->ep == nullptr) {
            continue;
        }
        ucs_status_t st =
            ucp_ep_rkey_unpack(lane->ep, md.packedRkey.data(), &md.rkeys[lane->index]);
        if (st != UCS_OK) {
            md.rkeys[lane->index] = nullptr;
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot unpack the remote key of "
                                    << md.len << " bytes at 0x" << std::hex << md.base
                                    << std::dec << " of " << md.conn->name << " (lane "
                                    << lane->index << "): " << ucs_status_string(st));
            return NIXL_ERR_BACKEND;
        }
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::loadRemoteMD(const nixlBlobDesc &input,
                            const nixl_mem_t &nixl_mem,
                            const std::string &remote_agent,
                            nixlBackendMD *&output) {
    std::shared_ptr<nixlUcxConn> conn = findConn(remote_agent);
    if (!conn) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX loadRemoteMD: no connection info of "
                                << remote_agent);
        return NIXL_ERR_NOT_FOUND;
    }
    if (!conn->usable()) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX loadRemoteMD: " << remote_agent
                                << " was lost");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    nixlUcxReader rd(input.metaInfo);
    uint32_t magic = 0;
    uint16_t version = 0;
    uint16_t mem = 0;
    std::string_view rkey;
    auto md = std::make_unique<nixlUcxRemoteMD>();
    bool ok = rd.get(magic) && magic == rkey_magic && rd.get(version) &&
        version == wire_version && rd.get(mem) && rd.get(md->base) && rd.get(md->len) &&
        rd.get(md->slot) && rd.get(md->regId) && rd.getBytes(rkey) && rd.atEnd();
    if (!ok || mem != static_cast<uint16_t>(nixl_mem) || md->base != input.addr ||
        md->len != input.len) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX public data of " << remote_agent
                                << "'s registration of " << input.len << " bytes at 0x"
                                << std::hex << input.addr << std::dec
                                << " is malformed or describes another range");
        return NIXL_ERR_MISMATCH;
    }
    if (md->slot >= conn->remoteRegSlots) {
        md->slot = 0;
    }
    md->mem = nixl_mem;
    md->conn = conn;
    md->packedRkey = std::string(rkey);
    md->rkeys.assign(conn->lanes.size(), nullptr);
    {
        std::lock_guard<std::mutex> g(conn->mdLock);
        conn->mds.insert(md.get());
    }
    nixl_status_t st = unpackRkeys(*md);
    if (st != NIXL_SUCCESS) {
        unloadMD(md.release());
        return st;
    }
    output = md.release();
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) {
    auto *local = dynamic_cast<nixlUcxLocalMD *>(input);
    if (local == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX loadLocalMD: not a UCX registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    nixlBlobDesc desc(local->base, local->len, 0, local->publicData);
    return loadRemoteMD(desc, local->mem, localAgent, output);
}

nixl_status_t
nixlUcxEngine::unloadMD(nixlBackendMD *input) {
    auto *md = dynamic_cast<nixlUcxRemoteMD *>(input);
    if (md == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX unloadMD: not a remote registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    for (auto &lane : md->conn->lanes) {
        std::lock_guard<std::mutex> g(lane->worker->lock);
        if (md->rkeys[lane->index] != nullptr) {
            if (lane->worker->worker != nullptr) {
                ucp_rkey_destroy(md->rkeys[lane->index]);
            }
            md->rkeys[lane->index] = nullptr;
        }
    }
    {
        std::lock_guard<std::mutex> g(md->conn->mdLock);
        md->conn->mds.erase(md);
    }
    delete md;
    return NIXL_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// Transfers

nixl_status_t
nixlUcxEngine::prepXfer(const nixl_xfer_op_t &operation,
                        const nixl_meta_dlist_t &local,
                        const nixl_meta_dlist_t &remote,
                        const std::string &remote_agent,
                        nixlBackendReqH *&handle,
                        const nixl_opt_b_args_t *opt_args) const {
    auto supported = [&](nixl_mem_t m) { return m == DRAM_SEG || (m == VRAM_SEG && vram_); };
    if (!supported(local.getType()) || !supported(remote.getType())) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot move "
                                << memName(local.getType()) << " to/from "
                                << memName(remote.getType()) << " of "
                                << remote_agent);
        return NIXL_ERR_NOT_SUPPORTED;
    }
    if (local.size() != remote.size() || local.size() == 0) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX prepXfer to " << remote_agent << ": "
                                << local.size() << " local and " << remote.size()
                                << " remote descriptors");
        return NIXL_ERR_INVALID_PARAM;
    }
    std::shared_ptr<nixlUcxConn> conn = findConn(remote_agent);
    if (!conn) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX prepXfer: no connection to "
                                << remote_agent);
        return NIXL_ERR_NOT_FOUND;
    }
    auto req = std::make_unique<nixlUcxReq>();
    req->engine = this;
    req->op = operation;
    req->conn = conn;
    req->local = local.data();
    req->remote = remote.data();
    req->count = local.size();
    req->remoteAgent = remote_agent;
    std::unordered_set<const nixlUcxRemoteMD *> seen;
    for (size_t i = 0; i < req->count; ++i) {
        const nixl_be_xfer_desc_t &l = req->local[i];
        const nixl_be_xfer_desc_t &r = req->remote[i];
        auto *lmd = dynamic_cast<const nixlUcxLocalMD *>(reinterpret_cast<nixlBackendMD *>(l.md));
        auto *rmd =
            dynamic_cast<const nixlUcxRemoteMD *>(reinterpret_cast<nixlBackendMD *>(r.md));
        if (lmd == nullptr || rmd == nullptr) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX prepXfer to " << remote_agent
                                    << ": descriptor " << i << " has no UCX "
                                    << (lmd == nullptr ? "local" : "remote") << " registration");
            return NIXL_ERR_INVALID_PARAM;
        }
        if (rmd->conn != conn) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX prepXfer to " << remote_agent
                                    << ": remote descriptor " << i << " belongs to agent "
                                    << rmd->conn->name);
            return NIXL_ERR_INVALID_PARAM;
        }
        if (l.len != r.len || !rangeCovers(lmd->base, lmd->len, l.addr, l.len) ||
            !rangeCovers(rmd->base, rmd->len, r.addr, r.len)) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX prepXfer to " << remote_agent
                                    << ": descriptor " << i << " (" << l.len << " bytes at 0x"
                                    << std::hex << l.addr << " -> " << r.len << " bytes at 0x"
                                    << r.addr << std::dec
                                    << ") differs in length or leaves its registration");
            return NIXL_ERR_INVALID_PARAM;
        }
        req->totalBytes += l.len;
        if (rmd->slot != 0 && seen.insert(rmd).second) {
            req->remoteMds.push_back(rmd);
        }
    }
    req->path = conn->direct && local.getType() == DRAM_SEG && remote.getType() == DRAM_SEG ?
        nixlUcxReq::path_t::DIRECT :
        nixlUcxReq::path_t::UCX;
    size_t lane = threadSlot();
    if (opt_args != nullptr && !opt_args->customParam.empty()) {
        std::vector<std::pair<std::string, std::string>> kv;
        if (splitPairs(opt_args->customParam, kv)) {
            for (const auto &[k, v] : kv) {
                uint64_t id = 0;
                if (k != "worker_id") {
                    continue;
                }
                if (!nixlUcx::parseUnsigned(v, id) || id >= conn->lanes.size()) {
                    NIXL_SDK_ERROR("agent " << localAgent << ": UCX prepXfer to "
                                            << remote_agent << ": worker_id=" << v
                                            << " is not below num_workers ("
                                            << conn->lanes.size() << ")");
                    return NIXL_ERR_INVALID_PARAM;
                }
                lane = id;
            }
        }
    }
    req->lane = conn->lanes[lane % conn->lanes.size()].get();
    if (opt_args != nullptr) {
        req->hasNotif = opt_args->hasNotif;
        req->notif = opt_args->notifMsg;
    }
    handle = req.release();
    return NIXL_SUCCESS;
}

bool
nixlUcxEngine::staleCheck(nixlUcxReq &req) const {
    // Peers write 0 into a registration's slot when they release it, so one readv of the
    // slots tells whether every remote key of the request is still valid.
    uint64_t vals[iov_batch];
    struct iovec liov[iov_batch];
    struct iovec riov[iov_batch];
    for (size_t base = 0; base < req.remoteMds.size(); base += iov_batch) {
        size_t n = std::min(iov_batch, req.remoteMds.size() - base);
        for (size_t i = 0; i < n; ++i) {
            vals[i] = 0;
            liov[i] = {&vals[i], sizeof(uint64_t)};
            riov[i] = {reinterpret_cast<void *>(req.conn->remoteRegTable +
                                                req.remoteMds[base + i]->slot * sizeof(uint64_t)),
                       sizeof(uint64_t)};
        }
        ssize_t r = ::process_vm_readv(req.conn->peer.pid, liov, n, riov, n, 0);
        if (r != static_cast<ssize_t>(n * sizeof(uint64_t))) {
            int e = r < 0 ? errno : EFAULT;
            if (e == ESRCH || e == EFAULT) {
                // The process is gone, or (same process) its engine was destroyed.
                markLost(*req.conn,
                         std::string("its registration table is unreadable: ") +
                             std::strerror(e));
                reapLost(*req.conn);
                finishReq(req, NIXL_ERR_REMOTE_DISCONNECT);
            } else {
                NIXL_SDK_ERROR("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                        << req.remoteAgent
                                        << ": cannot read its registration table: "
                                        << std::strerror(e));
                finishReq(req, NIXL_ERR_BACKEND);
            }
            return false;
        }
        for (size_t i = 0; i < n; ++i) {
            const nixlUcxRemoteMD *md = req.remoteMds[base + i];
            if (vals[i] != md->regId) {
                size_t desc = 0;
                while (desc < req.count &&
                       reinterpret_cast<nixlBackendMD *>(req.remote[desc].md) != md) {
                    ++desc;
                }
                NIXL_SDK_ERROR("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                        << req.remoteAgent << ", descriptor " << desc
                                        << ": the remote registration of " << md->len
                                        << " bytes at 0x" << std::hex << md->base << std::dec
                                        << " was released (stale remote key); reload its "
                                        << "metadata");
                finishReq(req, NIXL_ERR_NOT_FOUND);
                return false;
            }
        }
    }
    return true;
}

void
nixlUcxEngine::stepDirectLocked(nixlUcxReq &req, size_t budget) const {
    if (req.phase != nixlUcxReq::phase_t::DATA || req.cancelled) {
        return;
    }
    if (!req.conn->usable()) {
        finishReq(req, goneStatus(*req.conn));
        return;
    }
    if (cfg_.faultDirectHoldBytes != 0) {
        // Fault injection (tests only): copy no further, so that the request is still in
        // flight when the test kills the peer, however slowly this process runs.
        if (req.copied >= cfg_.faultDirectHoldBytes) {
            return;
        }
        budget = std::min<size_t>(budget, cfg_.faultDirectHoldBytes - req.copied);
    }
    struct iovec liov[iov_batch];
    struct iovec riov[iov_batch];
    size_t done = 0;
    while (done < budget && req.curDesc < req.count) {
        size_t n = 0;
        size_t bytes = 0;
        size_t d = req.curDesc;
        size_t off = req.curOff;
        while (n < iov_batch && d < req.count && done + bytes < budget) {
            const size_t len = req.local[d].len - off;
            if (len == 0) {
                ++d;
                off = 0;
                continue;
            }
            const size_t take = std::min(len, budget - done - bytes);
            liov[n] = {reinterpret_cast<void *>(req.local[d].addr + off), take};
            riov[n] = {reinterpret_cast<void *>(req.remote[d].addr + off), take};
            ++n;
            bytes += take;
            if (take == len) {
                ++d;
                off = 0;
            } else {
                off += take;
            }
        }
        if (n == 0) {
            req.curDesc = d;
            req.curOff = off;
            break;
        }
        ssize_t r = req.op == NIXL_WRITE ?
            ::process_vm_writev(req.conn->peer.pid, liov, n, riov, n, 0) :
            ::process_vm_readv(req.conn->peer.pid, liov, n, riov, n, 0);
        if (r <= 0) {
            int e = r < 0 ? errno : EFAULT;
            if (e == EINTR) {
                continue;
            }
            const size_t i = req.curDesc;
            if (e == ESRCH) {
                markLost(*req.conn, std::string(req.op == NIXL_WRITE ? "process_vm_writev" :
                                                                       "process_vm_readv") +
                                        ": no such process");
                reapLost(*req.conn);
                finishReq(req, NIXL_ERR_REMOTE_DISCONNECT);
                return;
            }
            if (e == EFAULT) {
                NIXL_SDK_ERROR("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                        << req.remoteAgent << ", descriptor " << i << " ("
                                        << req.local[i].len << " bytes, local 0x" << std::hex
                                        << req.local[i].addr << ", remote 0x"
                                        << req.remote[i].addr << std::dec
                                        << "): memory not accessible; the remote registration "
                                        << "was probably released (stale remote key)");
                finishReq(req, NIXL_ERR_NOT_FOUND);
                return;
            }
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                    << req.remoteAgent << ", descriptor " << i << ": "
                                    << (req.op == NIXL_WRITE ? "process_vm_writev" :
                                                               "process_vm_readv")
                                    << ": " << std::strerror(e));
            finishReq(req, NIXL_ERR_BACKEND);
            return;
        }
        // Advance the cursor by what was copied; a short count stops at the failing iovec,
        // which the next call then reports.
        size_t left = static_cast<size_t>(r);
        done += left;
        req.copied += left;
        while (left > 0) {
            const size_t len = req.local[req.curDesc].len - req.curOff;
            if (left >= len) {
                left -= len;
                ++req.curDesc;
                req.curOff = 0;
            } else {
                req.curOff += left;
                left = 0;
            }
        }
        while (req.curDesc < req.count && req.local[req.curDesc].len == req.curOff) {
            ++req.curDesc;
            req.curOff = 0;
        }
    }
    if (req.curDesc >= req.count) {
        finishDirectDataLocked(req);
    }
}

void
nixlUcxEngine::finishDirectDataLocked(nixlUcxReq &req) const {
    if (!req.hasNotif) {
        finishReq(req, NIXL_SUCCESS);
        return;
    }
    nixlUcxWorker &w = *req.lane->worker;
    std::lock_guard<std::mutex> g(w.lock);
    sendXferNotifLocked(req);
    w.progressLocked();
}

void
nixlUcxEngine::sendXferNotifLocked(nixlUcxReq &req) const {
    if (!req.hasNotif || req.dropNotif) {
        finishReq(req, NIXL_SUCCESS);
        return;
    }
    if (!req.conn->usable()) {
        finishReq(req, goneStatus(*req.conn));
        return;
    }
    req.phase = nixlUcxReq::phase_t::NOTIF;
    nixl_status_t st = sendAm(*req.lane, req.remoteAgent, req.notif, &req);
    if (st != NIXL_IN_PROG) {
        finishReq(req, st);
    }
}

nixl_status_t
nixlUcxEngine::sendAm(nixlUcxLane &lane,
                      const std::string &remote,
                      const std::string &msg,
                      nixlUcxReq *req) const {
    if (lane.worker->worker == nullptr || lane.ep == nullptr) {
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    auto s = std::make_unique<nixlUcxAmSend>();
    s->header.reserve(sizeof(uint32_t) + localAgent.size());
    s->header.append(reinterpret_cast<const char *>(&notif_magic), sizeof(notif_magic));
    s->header.append(localAgent);
    s->body = msg;
    s->req = req;
    s->remote = remote;
    s->engine = this;
    s->worker = lane.worker.get();
    ucp_request_param_t p{};
    p.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    p.cb.send = amSendCb;
    p.user_data = s.get();
    // To a watched same-host peer, eager only: a rendezvous would leave the receiver reading
    // from this process, and that read cannot be cancelled on a "none" endpoint if we die.
    p.flags = lane.conn->watched ? UCP_AM_SEND_FLAG_EAGER : 0;
    ucs_status_ptr_t sp = ucp_am_send_nbx(
        lane.ep, notif_am_id, s->header.data(), s->header.size(), s->body.data(), s->body.size(),
        &p);
    if (sp == nullptr) {
        return NIXL_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(sp)) {
        const bool lost = !lane.conn->usable();
        if (!lost) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot send a " << msg.size()
                                    << "-byte notification to " << remote << ": "
                                    << ucs_status_string(UCS_PTR_STATUS(sp)));
        }
        return nixlUcx::statusFromUcs(UCS_PTR_STATUS(sp), lost);
    }
    if (req != nullptr) {
        req->notifSend = s.get();
        track(*req);
    }
    lane.worker->sends.insert(s.get());
    s.release();
    return NIXL_IN_PROG;
}

nixl_status_t
nixlUcxEngine::postUcx(nixlUcxReq &req) const {
    nixlUcxLane &lane = *req.lane;
    nixlUcxWorker &w = *lane.worker;
    {
        std::lock_guard<std::mutex> g(w.lock);
        if (w.worker == nullptr || lane.ep == nullptr || !req.conn->usable()) {
            const nixl_status_t st = goneStatus(*req.conn);
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX " << opName(req.op) << " to "
                                    << req.remoteAgent << ": the connection is "
                                    << (st == NIXL_ERR_REMOTE_DISCONNECT ? "lost" : "closed"));
            finishReq(req, st);
            return st;
        }
        track(req);
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.send = ucxDataCb;
        p.user_data = &req;
        const bool vram = req.local[0].md != nullptr &&
            dynamic_cast<const nixlUcxLocalMD *>(reinterpret_cast<nixlBackendMD *>(
                req.local[0].md))
                    ->mem == VRAM_SEG;
        if (vram) {
            p.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMORY_TYPE;
            p.memory_type = UCS_MEMORY_TYPE_CUDA;
        }
        req.outstanding = 1; // held by this loop, so no callback finishes the request early
        for (size_t i = 0; i < req.count; ++i) {
            const nixl_be_xfer_desc_t &l = req.local[i];
            const nixl_be_xfer_desc_t &r = req.remote[i];
            if (l.len == 0) {
                continue;
            }
            // prepXfer checked the type; a static cast is enough here.
            auto *rmd = static_cast<nixlUcxRemoteMD *>(reinterpret_cast<nixlBackendMD *>(r.md));
            ucp_rkey_h rkey = rmd->rkeys[lane.index];
            if (rkey == nullptr) {
                req.ucxError = UCS_ERR_NO_ELEM;
                req.failedDesc = i;
                break;
            }
            ucs_status_ptr_t sp = req.op == NIXL_WRITE ?
                ucp_put_nbx(lane.ep, reinterpret_cast<void *>(l.addr), l.len, r.addr, rkey, &p) :
                ucp_get_nbx(lane.ep, reinterpret_cast<void *>(l.addr), l.len, r.addr, rkey, &p);
            if (UCS_PTR_IS_ERR(sp)) {
                req.ucxError = UCS_PTR_STATUS(sp);
                req.failedDesc = i;
                break;
            }
            if (sp != nullptr) {
                ++req.outstanding;
            }
        }
        if (req.ucxError == UCS_OK && req.op == NIXL_WRITE) {
            // Remote completion: after the flush every put is visible at the target.
            ucs_status_ptr_t sp = ucp_ep_flush_nbx(lane.ep, &p);
            if (UCS_PTR_IS_ERR(sp)) {
                req.ucxError = UCS_PTR_STATUS(sp);
            } else if (sp != nullptr) {
                ++req.outstanding;
            }
        }
        if (--req.outstanding == 0) {
            ucxDataDoneLocked(req);
        }
        w.progressLocked();
    }
    wakeProgress();
    return req.status.load(std::memory_order_acquire);
}

nixl_status_t
nixlUcxEngine::postXfer(const nixl_xfer_op_t &operation,
                        const nixl_meta_dlist_t &local,
                        const nixl_meta_dlist_t &remote,
                        const std::string &remote_agent,
                        nixlBackendReqH *&handle,
                        const nixl_opt_b_args_t *opt_args) const {
    (void)operation;
    (void)local;
    (void)remote;
    auto *req = static_cast<nixlUcxReq *>(handle);
    if (req == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX postXfer to " << remote_agent
                                << ": no prepared request");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (req->status.load(std::memory_order_acquire) == NIXL_IN_PROG) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX postXfer to " << remote_agent
                                << ": the request is still running");
        return NIXL_ERR_REPOST_ACTIVE;
    }
    if (opt_args != nullptr) {
        req->hasNotif = opt_args->hasNotif;
        req->notif = opt_args->notifMsg;
    }
    if (!req->conn->usable()) {
        const bool lost = req->conn->state.load() == nixlUcxConn::LOST;
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX postXfer: " << remote_agent
                                << (lost ? " was lost" : " was disconnected"));
        return lost ? NIXL_ERR_REMOTE_DISCONNECT : NIXL_ERR_NOT_FOUND;
    }
    {
        // The progress thread may still hold the request in its active list from the last
        // post and look at it under stepLock.
        std::lock_guard<std::mutex> g(req->stepLock);
        req->phase = nixlUcxReq::phase_t::DATA;
        req->curDesc = 0;
        req->curOff = 0;
        req->copied = 0;
        req->cancelled = false;
        req->outstanding = 0;
        req->ucxError = UCS_OK;
        req->failedDesc = SIZE_MAX;
        req->dropNotif = false;
        req->notifSend = nullptr;
        req->status.store(NIXL_IN_PROG, std::memory_order_release);
    }

    if (req->path == nixlUcxReq::path_t::UCX) {
        return postUcx(*req);
    }
    {
        std::lock_guard<std::mutex> g(req->stepLock);
        if (!staleCheck(*req)) {
            return req->status.load(std::memory_order_acquire);
        }
        // Small transfers complete inside the post; with a progress thread the rest is its
        // job, without one a first slice goes now and checkXfer does the others.
        if (req->totalBytes <= inline_bytes) {
            stepDirectLocked(*req, inline_bytes);
        } else if (!progThread_) {
            stepDirectLocked(*req, step_budget);
        }
    }
    if (req->status.load(std::memory_order_acquire) == NIXL_IN_PROG && progThread_) {
        std::lock_guard<std::mutex> g(activeLock_);
        if (!req->listed) {
            req->listed = true;
            active_.push_back(req);
        }
    }
    wakeProgress();
    return req->status.load(std::memory_order_acquire);
}

nixl_status_t
nixlUcxEngine::checkXfer(nixlBackendReqH *handle) const {
    auto *req = static_cast<nixlUcxReq *>(handle);
    nixl_status_t st = req->status.load(std::memory_order_acquire);
    if (st != NIXL_IN_PROG) {
        return st;
    }
    if (req->path == nixlUcxReq::path_t::DIRECT) {
        std::unique_lock<std::mutex> g(req->stepLock, std::defer_lock);
        if (progThread_ ? g.try_lock() : (g.lock(), true)) {
            stepDirectLocked(*req, step_budget);
        }
    }
    if (req->status.load(std::memory_order_acquire) == NIXL_IN_PROG) {
        // All workers, not only the request's: UCX's wireup replies to peers that connect to
        // this engine wait on the home workers, and a peer leaving while one waits there can
        // trip an assertion inside UCX 1.13's tcp transport.
        progressAll(progThread_);
        checkPeers();
        if (!req->conn->usable()) {
            reapLost(*req->conn);
        }
    }
    return req->status.load(std::memory_order_acquire);
}

nixl_status_t
nixlUcxEngine::releaseReqH(nixlBackendReqH *handle) const {
    auto *req = static_cast<nixlUcxReq *>(handle);
    if (req == nullptr) {
        return NIXL_SUCCESS;
    }
    {
        std::lock_guard<std::mutex> g(activeLock_);
        if (req->listed) {
            active_.erase(std::remove(active_.begin(), active_.end(), req), active_.end());
            req->listed = false;
        }
    }
    // req owns the last references to its connection and worker when the peer was
    // disconnected meanwhile; keep them until the locks below are released.
    const std::shared_ptr<nixlUcxConn> keep_conn = req->conn;
    const std::shared_ptr<nixlUcxWorker> keep_worker = req->lane->worker;
    nixlUcxWorker &w = *keep_worker;
    if (req->status.load(std::memory_order_acquire) != NIXL_IN_PROG) {
        // A callback may still be on its way out of the worker; its lock orders the delete.
        std::lock_guard<std::mutex> g(w.lock);
        delete req;
        return NIXL_SUCCESS;
    }
    if (req->path == nixlUcxReq::path_t::DIRECT) {
        {
            std::lock_guard<std::mutex> s(req->stepLock);
            req->cancelled = true;
            std::lock_guard<std::mutex> g(w.lock);
            w.ready.erase(std::remove(w.ready.begin(), w.ready.end(), req), w.ready.end());
            if (req->notifSend != nullptr) {
                req->notifSend->req = nullptr; // the message still goes; nobody waits for it
            }
            if (req->tracked) {
                w.inflight.erase(req);
                req->tracked = false;
            }
        }
        NIXL_SDK_WARN("agent " << localAgent << ": UCX released a running " << opName(req->op)
                               << " to " << req->remoteAgent << " after " << req->copied
                               << " of " << req->totalBytes
                               << " bytes; the rest is not copied"
                               << (req->phase == nixlUcxReq::phase_t::NOTIF ?
                                       " (its notification was already on its way)" :
                                       "; no notification is sent"));
        delete req;
        return NIXL_SUCCESS;
    }
    // UCX path: posted puts and gets cannot be recalled, and they may still touch the buffers.
    // Wait for them (a lost peer's operations are cancelled when its workers are destroyed).
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.releaseTimeoutMs);
    for (;;) {
        {
            std::lock_guard<std::mutex> g(w.lock);
            req->dropNotif = true;
            w.ready.erase(std::remove(w.ready.begin(), w.ready.end(), req), w.ready.end());
            if (req->notifSend != nullptr) {
                req->notifSend->req = nullptr;
                req->notifSend = nullptr;
            }
            if (req->outstanding == 0) {
                if (req->tracked) {
                    w.inflight.erase(req);
                }
                NIXL_SDK_WARN("agent " << localAgent << ": UCX released a running "
                                       << opName(req->op) << " to " << req->remoteAgent
                                       << " once its UCX operations finished; no notification "
                                       << "is sent");
                delete req;
                return NIXL_SUCCESS;
            }
            w.progressLocked();
        }
        checkPeers();
        if (!keep_conn->usable()) {
            reapLost(*keep_conn);
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        std::this_thread::yield();
    }
    NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot release a running "
                            << opName(req->op) << " of " << req->count << " descriptors to "
                            << req->remoteAgent << ": its UCX operations did not finish within "
                            << cfg_.releaseTimeoutMs
                            << " ms (UCX cannot recall them); release it again later");
    return NIXL_ERR_REPOST_ACTIVE;
}

// ---------------------------------------------------------------------------------------------
// Notifications

void
nixlUcxEngine::pushNotif(std::string sender, std::string msg) const {
    std::lock_guard<std::mutex> g(notifLock_);
    notifs_.emplace_back(std::move(sender), std::move(msg));
}

nixl_status_t
nixlUcxEngine::getNotifs(notif_list_t &notif_list) {
    progressAll(progThread_);
    checkPeers();
    std::lock_guard<std::mutex> g(notifLock_);
    if (notif_list.empty()) {
        notif_list.swap(notifs_);
    } else {
        for (auto &n : notifs_) {
            notif_list.push_back(std::move(n));
        }
        notifs_.clear();
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::genNotif(const std::string &remote_agent, const std::string &msg) const {
    std::shared_ptr<nixlUcxConn> conn = findConn(remote_agent);
    if (!conn) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX genNotif: no connection to "
                                << remote_agent);
        return NIXL_ERR_NOT_FOUND;
    }
    if (!conn->usable()) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX genNotif: " << remote_agent
                                << " was lost or disconnected");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    nixlUcxLane &lane = *conn->lanes[threadSlot() % conn->lanes.size()];
    nixl_status_t st;
    {
        std::lock_guard<std::mutex> g(lane.worker->lock);
        st = sendAm(lane, remote_agent, msg, nullptr);
        lane.worker->progressLocked();
    }
    wakeProgress();
    return st == NIXL_IN_PROG ? NIXL_SUCCESS : st;
}

// ---------------------------------------------------------------------------------------------
// Progress and liveness

unsigned
nixlUcxEngine::progressAll(bool try_only) const {
    std::vector<std::shared_ptr<nixlUcxWorker>> ws;
    {
        std::lock_guard<std::mutex> g(workersLock_);
        ws = workers_;
    }
    unsigned total = 0;
    for (auto &w : ws) {
        std::unique_lock<std::mutex> g(w->lock, std::defer_lock);
        if (try_only ? g.try_lock() : (g.lock(), true)) {
            total += w->progressLocked();
        }
    }
    return total;
}

void
nixlUcxEngine::checkPeers(bool force) const {
    const int64_t now = nowNs();
    int64_t last = lastPeerCheckNs_.load(std::memory_order_relaxed);
    if (!force && now - last < static_cast<int64_t>(cfg_.peerCheckMs) * 1000000) {
        return;
    }
    if (!lastPeerCheckNs_.compare_exchange_strong(last, now)) {
        return; // another thread is checking
    }
    std::vector<std::shared_ptr<nixlUcxConn>> watched;
    {
        std::shared_lock<std::shared_mutex> g(connLock_);
        for (const auto &[name, conn] : conns_) {
            if (conn->watched && conn->state.load(std::memory_order_acquire) !=
                                     nixlUcxConn::CLOSED) {
                watched.push_back(conn);
            }
        }
    }
    for (auto &conn : watched) {
        if (conn->usable() &&
            nixlUcx::probeProcess(conn->peer.pid, conn->peer.startTime) ==
                nixlUcx::proc_state_t::GONE) {
            markLost(*conn, "process " + std::to_string(conn->peer.pid) + " exited");
        }
        reapLost(*conn);
    }
}

void
nixlUcxEngine::wakeProgress() const {
    if (wakeFd_ >= 0) {
        uint64_t one = 1;
        ssize_t r = ::write(wakeFd_, &one, sizeof(one));
        (void)r; // a full counter already wakes the thread
    }
}

size_t
nixlUcxEngine::stepActive() const {
    std::lock_guard<std::mutex> g(activeLock_);
    size_t total = 0;
    for (auto it = active_.begin(); it != active_.end();) {
        nixlUcxReq *req = *it;
        bool drop = false;
        if (req->stepLock.try_lock()) {
            const size_t before = req->copied;
            stepDirectLocked(*req, thread_budget);
            total += req->copied - before;
            drop = req->phase != nixlUcxReq::phase_t::DATA || req->cancelled ||
                req->status.load(std::memory_order_acquire) != NIXL_IN_PROG;
            req->stepLock.unlock();
        }
        if (drop) {
            req->listed = false;
            it = active_.erase(it);
        } else {
            ++it;
        }
    }
    return total;
}

void
nixlUcxEngine::progressLoop() {
    const int idle_ms =
        static_cast<int>(std::max<uint64_t>(1, (pthrDelayUs_ + 999) / 1000));
    const int timeout_ms = std::min<int>(idle_ms, static_cast<int>(cfg_.peerCheckMs));
    std::vector<struct pollfd> fds;
    std::vector<std::shared_ptr<nixlUcxWorker>> ws;
    int idle_rounds = 0;
    while (!stop_.load(std::memory_order_acquire)) {
        const unsigned events = progressAll(false);
        const size_t bytes = stepActive();
        checkPeers();
        if (events != 0 || bytes != 0) {
            idle_rounds = 0;
            continue;
        }
        bool busy;
        {
            std::lock_guard<std::mutex> g(activeLock_);
            busy = !active_.empty();
        }
        // Spin a little before sleeping: completions that raise no event (cma, shm FIFOs
        // being drained by the peer) are then seen without a poll timeout.
        if (++idle_rounds < 64) {
            std::this_thread::yield();
            continue;
        }
        {
            std::lock_guard<std::mutex> g(workersLock_);
            ws = workers_;
        }
        fds.clear();
        fds.push_back({wakeFd_, POLLIN, 0});
        bool armed = true;
        for (auto &w : ws) {
            std::lock_guard<std::mutex> g(w->lock);
            if (w->worker == nullptr || w->efd < 0) {
                continue;
            }
            ucs_status_t st = ucp_worker_arm(w->worker);
            if (st == UCS_ERR_BUSY) {
                armed = false;
                break;
            }
            fds.push_back({w->efd, POLLIN, 0});
        }
        ws.clear();
        if (!armed) {
            idle_rounds = 0;
            continue;
        }
        ::poll(fds.data(), fds.size(), busy ? 1 : timeout_ms);
        uint64_t v = 0;
        ssize_t r = ::read(wakeFd_, &v, sizeof(v));
        (void)r;
        idle_rounds = 0;
    }
}

NIXL_BACKEND_PLUGIN_DEFINE(nixlUcxEngine, "UCX", "1.0.0")
