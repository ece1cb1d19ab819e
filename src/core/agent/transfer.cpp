/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: prepared lists, transfer requests, notifications.
//
// createXferReq and makeXferReq do every check and resolve every descriptor to backend metadata
// once; postXferReq and getXferStatus then touch only the request and one atomic flag of the
// remote record: no allocation, no string building, no lookup. With telemetry on they also
// append fixed-size events to the agent's staging queue (telemetry/telemetry.h).

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "agent/agent_data.h"
#include "agent/agent_internal.h"
#include "common/nixl_log.h"

using nixlEnumStrings::memTypeStr;
using nixlEnumStrings::statusStr;
using nixlEnumStrings::xferOpStr;

namespace {

/** Metadata of the local registration covering d with engine e, or nullptr. */
nixl_be_md_t *
localMd(const nixlAgentData &data, nixl_mem_t mem, nixlBackendEngineProxy *e,
        const nixlBasicDesc &d, bool loopback_side) {
    auto it = data.localSection.find({mem, e});
    if (it == data.localSection.end()) {
        return nullptr;
    }
    const nixlLocalReg *reg = it->second.findCovering(d);
    if (reg == nullptr) {
        return nullptr;
    }
    return loopback_side ? reg->loopMd : reg->md;
}

nixl_be_md_t *
remoteMd(const nixlRemoteAgent &remote, nixl_mem_t mem, nixlBackendEngineProxy *e,
         const nixlBasicDesc &d) {
    auto it = remote.sections.find({mem, e});
    if (it == remote.sections.end()) {
        return nullptr;
    }
    const nixlRemoteReg *reg = it->second.findCovering(d);
    return reg == nullptr ? nullptr : reg->md;
}

/** Resolves every descriptor of a side for engine e; false at the first one not covered. */
bool
resolveSide(const nixlAgentData &data,
            const nixlRemoteAgent *remote,
            bool loopback,
            nixl_mem_t mem,
            nixlBackendEngineProxy *e,
            const nixl_xfer_dlist_t &descs,
            std::vector<nixl_be_md_t *> &mds,
            int &first_missing) {
    mds.clear();
    mds.reserve(descs.descCount());
    for (int i = 0; i < descs.descCount(); ++i) {
        nixl_be_md_t *md = remote != nullptr ? remoteMd(*remote, mem, e, descs[i]) :
                                               localMd(data, mem, e, descs[i], loopback);
        if (md == nullptr) {
            first_missing = i;
            return false;
        }
        mds.push_back(md);
    }
    return true;
}

void
setNotif(nixlXferReqH &req, const nixl_opt_args_t *extra) {
    if (extra == nullptr) {
        req.hasNotif = false;
        req.notif.clear();
        return;
    }
    if (extra->notif.has_value()) {
        req.hasNotif = true;
        req.notif = *extra->notif;
    } else if (extra->hasNotif) {
        req.hasNotif = true;
        req.notif = extra->notifMsg;
    } else {
        req.hasNotif = false;
        req.notif.clear();
    }
}

void
refreshOpt(nixlXferReqH &req) noexcept {
    req.opt.size = sizeof(req.opt);
    req.opt.has_notif = req.hasNotif ? 1 : 0;
    req.opt.notif = nixl_plugin_str_t{req.notif.data(), req.notif.size()};
    req.opt.custom_param = nixl_plugin_str_t{req.customParam.data(), req.customParam.size()};
}

void
finishLists(nixlXferReqH &req, nixl_mem_t local_mem, nixl_mem_t remote_mem) {
    req.localList = nixl_be_xfer_list_t{
        static_cast<uint32_t>(local_mem), 0, req.localDescs.data(), req.localDescs.size()};
    req.remoteList = nixl_be_xfer_list_t{
        static_cast<uint32_t>(remote_mem), 0, req.remoteDescs.data(), req.remoteDescs.size()};
    req.totalBytes = 0;
    for (const auto &d : req.localDescs) {
        req.totalBytes += d.len;
    }
    refreshOpt(req);
}

nixlBackendH *
handleOf(const nixlAgentData &data, nixlBackendEngineProxy *e) {
    for (const auto &h : data.handles) {
        if (h->engine() == e) {
            return h.get();
        }
    }
    return nullptr;
}

void
markDisconnected(const nixlAgentData &data, nixlXferReqH &req) {
    if (req.remote != nullptr) {
        req.remote->valid.store(false, std::memory_order_release);
    }
    NIXL_ERROR << "agent " << data.name << ": backend " << req.engine->type() << " lost agent "
               << req.remoteAgent << "; its metadata is dropped until loaded again";
}

void
registerRequest(nixlAgentData &data, nixlXferReqH *req) {
    std::lock_guard<std::mutex> lock(data.registryMutex);
    data.requests.insert(req);
}

/**
 * True for NIXL_READ and NIXL_WRITE. Reads the raw bits: a caller may pass any integer cast to
 * the enum, and loading an out-of-range enum value directly is undefined behaviour.
 */
bool
validOp(const nixl_xfer_op_t &op) noexcept {
    std::underlying_type_t<nixl_xfer_op_t> raw;
    static_assert(sizeof(raw) == sizeof(op));
    std::memcpy(&raw, &op, sizeof(raw));
    return raw == NIXL_READ || raw == NIXL_WRITE;
}

/**
 * Sends the outcome of a request to the telemetry pipeline, once: a completed transfer as one
 * batch (post time, transfer time, bytes, request), a failure as its error event. Called when
 * req.status stopped being NIXL_IN_PROG. Hot path: no allocation.
 */
void
finishXfer(const nixlAgentData &data, nixlXferReqH &req) noexcept {
    if (req.statusReported || data.telemetry == nullptr) {
        return;
    }
    req.statusReported = true;
    if (req.status == NIXL_SUCCESS) {
        const auto post = nixlFastClock::toMicros(req.postTicks - req.startTicks);
        const auto xfer = nixlFastClock::toMicros(req.doneTicks - req.startTicks);
        data.telemetry->recordTransfer(req.op,
                                       req.totalBytes,
                                       static_cast<uint64_t>(post.count()),
                                       static_cast<uint64_t>(xfer.count()));
    } else {
        data.telemetry->recordStatus(req.status);
    }
}

} // namespace

// prepXferDlist, makeXferReq, createXferReq and estimateXferCost are split into an *Impl
// doing the work and a public wrapper that sends every failing status, however it returned,
// to the telemetry pipeline (nixlNoteStatus). The bodies take the agent data as `data` so
// they read as the methods did.

static nixl_status_t
prepXferDlistImpl(nixlAgentData *data,
                  const std::string &agent_name,
                  const nixl_xfer_dlist_t &descs,
                  nixlDlistH *&dlist_hndl,
                  const nixl_opt_args_t *extra_params) {
    nixlReadGuard guard(data->lock);
    if (nixlHasForeignHint(*data, extra_params)) {
        NIXL_ERROR << "agent " << data->name
                   << ": prepXferDlist: a backend hint is not a backend of this agent";
        return NIXL_ERR_INVALID_PARAM;
    }
    auto dl = std::make_unique<nixlDlistH>();
    dl->remoteAgent = agent_name;
    dl->mem = descs.getType();
    dl->descs.assign(descs.begin(), descs.end());
    const bool local = agent_name.empty();
    dl->loopback = agent_name == data->name;
    const nixlRemoteAgent *remote = nullptr;
    if (!local && !dl->loopback) {
        auto it = data->remotes.find(agent_name);
        if (it == data->remotes.end() || !it->second->valid.load(std::memory_order_acquire)) {
            NIXL_ERROR << "agent " << data->name << ": prepXferDlist: no metadata of agent "
                       << agent_name << " is loaded";
            return NIXL_ERR_NOT_FOUND;
        }
        dl->remote = it->second;
        remote = it->second.get();
    }
    int missing = 0;
    for (nixlBackendEngineProxy *e : nixlCandidateEngines(*data, extra_params)) {
        if (dl->loopback && !e->supportsLocal()) {
            continue;
        }
        if (remote != nullptr && remote->conns.count(e) == 0) {
            continue;
        }
        std::vector<nixl_be_md_t *> mds;
        if (resolveSide(*data, remote, dl->loopback, dl->mem, e, descs, mds, missing)) {
            dl->engines.emplace_back(e, std::move(mds));
        }
    }
    if (dl->engines.empty()) {
        if (descs.isEmpty()) {
            NIXL_ERROR << "agent " << data->name << ": prepXferDlist: the list is empty";
            return NIXL_ERR_INVALID_PARAM;
        }
        NIXL_ERROR << "agent " << data->name << ": prepXferDlist: no backend covers descriptor "
                   << missing << " (" << descs[missing].len << " bytes at 0x" << std::hex
                   << descs[missing].addr << std::dec << ", " << memTypeStr(dl->mem) << ") of "
                   << (local ? std::string("the local side") : "agent " + agent_name);
        return NIXL_ERR_NOT_FOUND;
    }
    dlist_hndl = dl.get();
    std::lock_guard<std::mutex> lock(data->registryMutex);
    data->dlists.insert(dl.release());
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::prepXferDlist(const std::string &agent_name,
                         const nixl_xfer_dlist_t &descs,
                         nixlDlistH *&dlist_hndl,
                         const nixl_opt_args_t *extra_params) const {
    dlist_hndl = nullptr; // NIXL 1.4: null on entry, so a failed call leaves null
    return nixlNoteStatus(
        *data, prepXferDlistImpl(data.get(), agent_name, descs, dlist_hndl, extra_params));
}

nixl_status_t
nixlAgent::prepXferDlist(const nixl_xfer_dlist_t &descs,
                         nixlDlistH *&dlist_hndl,
                         const nixl_opt_args_t *extra_params) const {
    dlist_hndl = nullptr;
    return prepXferDlist(NIXL_INIT_AGENT, descs, dlist_hndl, extra_params);
}

static nixl_status_t
makeXferReqImpl(nixlAgentData *data,
                const nixl_xfer_op_t &operation,
                const nixlDlistH *local_side,
                const std::vector<int> &local_indices,
                const nixlDlistH *remote_side,
                const std::vector<int> &remote_indices,
                nixlXferReqH *&req_hndl,
                const nixl_opt_args_t *extra_params) {
    nixlReadGuard guard(data->lock);
    if (!validOp(operation)) {
        NIXL_ERROR << "agent " << data->name << ": makeXferReq: operation is neither "
                   << "NIXL_READ nor NIXL_WRITE";
        return NIXL_ERR_INVALID_PARAM;
    }
    {
        std::lock_guard<std::mutex> lock(data->registryMutex);
        auto known = [&](const nixlDlistH *h) {
            return h != nullptr && data->dlists.count(const_cast<nixlDlistH *>(h)) != 0;
        };
        if (!known(local_side) || !known(remote_side)) {
            NIXL_ERROR << "agent " << data->name
                       << ": makeXferReq: a list handle is null or not from prepXferDlist of "
                          "this agent";
            return NIXL_ERR_INVALID_PARAM;
        }
    }
    if (!local_side->remoteAgent.empty() || remote_side->remoteAgent.empty()) {
        NIXL_ERROR << "agent " << data->name << ": makeXferReq: the first list must be prepared "
                   << "for the local side (NIXL_INIT_AGENT) and the second for a remote agent";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (local_indices.empty() || local_indices.size() != remote_indices.size()) {
        NIXL_ERROR << "agent " << data->name << ": makeXferReq: " << local_indices.size()
                   << " local and " << remote_indices.size()
                   << " remote indices; they must be equal and non-zero";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (local_side->stale || remote_side->stale) {
        NIXL_ERROR << "agent " << data->name << ": makeXferReq: memory of a list was deregistered "
                   << "since the list was prepared";
        return NIXL_ERR_NOT_FOUND;
    }
    if (remote_side->remote != nullptr &&
        !remote_side->remote->valid.load(std::memory_order_acquire)) {
        NIXL_ERROR << "agent " << data->name << ": makeXferReq: metadata of agent "
                   << remote_side->remoteAgent << " was invalidated since the list was prepared";
        return NIXL_ERR_NOT_FOUND;
    }
    for (size_t i = 0; i < local_indices.size(); ++i) {
        int li = local_indices[i];
        int ri = remote_indices[i];
        if (li < 0 || static_cast<size_t>(li) >= local_side->descs.size() || ri < 0 ||
            static_cast<size_t>(ri) >= remote_side->descs.size()) {
            NIXL_ERROR << "agent " << data->name << ": makeXferReq: index pair " << i << " ("
                       << li << ", " << ri << ") is out of range (" << local_side->descs.size()
                       << " local, " << remote_side->descs.size() << " remote descriptors)";
            return NIXL_ERR_INVALID_PARAM;
        }
        if (local_side->descs[li].len != remote_side->descs[ri].len) {
            NIXL_ERROR << "agent " << data->name << ": makeXferReq: index pair " << i
                       << " has lengths " << local_side->descs[li].len << " and "
                       << remote_side->descs[ri].len;
            return NIXL_ERR_INVALID_PARAM;
        }
    }
    // The first engine of both lists, in hint order when hints are given.
    const std::vector<nixlBackendEngineProxy *> order =
        nixlCandidateEngines(*data, extra_params);
    const std::vector<nixl_be_md_t *> *lmds = nullptr;
    const std::vector<nixl_be_md_t *> *rmds = nullptr;
    nixlBackendEngineProxy *engine = nullptr;
    for (nixlBackendEngineProxy *e : order) {
        auto l = std::find_if(local_side->engines.begin(), local_side->engines.end(),
                              [e](const auto &p) { return p.first == e; });
        auto r = std::find_if(remote_side->engines.begin(), remote_side->engines.end(),
                              [e](const auto &p) { return p.first == e; });
        if (l != local_side->engines.end() && r != remote_side->engines.end()) {
            engine = e;
            lmds = &l->second;
            rmds = &r->second;
            break;
        }
    }
    if (engine == nullptr) {
        NIXL_ERROR << "agent " << data->name << ": makeXferReq: no "
                   << (extra_params != nullptr && !extra_params->backends.empty() ? "hinted " :
                                                                                    "")
                   << "backend is common to both lists";
        return NIXL_ERR_INVALID_PARAM;
    }
    auto req = std::make_unique<nixlXferReqH>();
    req->engine = engine;
    req->backend = handleOf(*data, engine);
    req->op = operation;
    req->remoteAgent = remote_side->remoteAgent;
    req->loopback = remote_side->loopback;
    req->remote = remote_side->remote;
    req->telemetry = data->telemetryEnabled;
    setNotif(*req, extra_params);
    if (req->hasNotif && !engine->supportsNotif()) {
        NIXL_ERROR << "agent " << data->name << ": makeXferReq: backend " << engine->type()
                   << " cannot send notifications";
        return NIXL_ERR_BACKEND;
    }
    const bool merge = extra_params == nullptr || !extra_params->skipDescMerge;
    req->localDescs.reserve(local_indices.size());
    req->remoteDescs.reserve(local_indices.size());
    for (size_t i = 0; i < local_indices.size(); ++i) {
        const int li = local_indices[i];
        const int ri = remote_indices[i];
        const nixlBasicDesc &ld = local_side->descs[li];
        const nixlBasicDesc &rd = remote_side->descs[ri];
        nixl_be_md_t *lmd = (*lmds)[li];
        nixl_be_md_t *rmd = (*rmds)[ri];
        if (merge && i > 0 && local_indices[i - 1] + 1 == li && remote_indices[i - 1] + 1 == ri) {
            // A run of consecutive indices whose ranges also follow each other in memory, in
            // the same registration on both sides, moves as one descriptor.
            nixl_be_xfer_desc_t &pl = req->localDescs.back();
            nixl_be_xfer_desc_t &pr = req->remoteDescs.back();
            if (pl.md == lmd && pr.md == rmd && pl.dev_id == ld.devId && pr.dev_id == rd.devId &&
                pl.addr + pl.len == ld.addr && pr.addr + pr.len == rd.addr) {
                pl.len += ld.len;
                pr.len += rd.len;
                continue;
            }
        }
        req->localDescs.push_back(nixl_be_xfer_desc_t{ld.addr, ld.len, ld.devId, lmd});
        req->remoteDescs.push_back(nixl_be_xfer_desc_t{rd.addr, rd.len, rd.devId, rmd});
    }
    finishLists(*req, local_side->mem, remote_side->mem);
    nixl_status_t st = engine->prepXfer(operation,
                                        req->localList,
                                        req->remoteList,
                                        req->remoteAgent,
                                        &req->opt,
                                        req->beReq);
    if (st != NIXL_SUCCESS) {
        NIXL_ERROR << "agent " << data->name << ": backend " << engine->type()
                   << " failed to prepare a " << xferOpStr(operation) << " of "
                   << req->localDescs.size() << " descriptors to " << req->remoteAgent << ": "
                   << statusStr(st);
        return st == NIXL_IN_PROG ? NIXL_ERR_BACKEND : st;
    }
    req_hndl = req.get();
    registerRequest(*data, req.release());
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::makeXferReq(const nixl_xfer_op_t &operation,
                       const nixlDlistH *local_side,
                       const std::vector<int> &local_indices,
                       const nixlDlistH *remote_side,
                       const std::vector<int> &remote_indices,
                       nixlXferReqH *&req_hndl,
                       const nixl_opt_args_t *extra_params) const {
    req_hndl = nullptr; // NIXL 1.4: null on entry, so a failed call leaves null
    return nixlNoteStatus(*data,
                          makeXferReqImpl(data.get(), operation, local_side, local_indices,
                                          remote_side, remote_indices, req_hndl, extra_params));
}

static nixl_status_t
createXferReqImpl(nixlAgentData *data,
                  const nixl_xfer_op_t &operation,
                  const nixl_xfer_dlist_t &local_descs,
                  const nixl_xfer_dlist_t &remote_descs,
                  const std::string &remote_agent,
                  nixlXferReqH *&req_hndl,
                  const nixl_opt_args_t *extra_params) {
    nixlReadGuard guard(data->lock);
    if (!validOp(operation)) {
        NIXL_ERROR << "agent " << data->name << ": createXferReq: operation is neither "
                   << "NIXL_READ nor NIXL_WRITE";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (nixlHasForeignHint(*data, extra_params)) {
        NIXL_ERROR << "agent " << data->name
                   << ": createXferReq: a backend hint is not a backend of this agent";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (local_descs.isEmpty() || local_descs.descCount() != remote_descs.descCount()) {
        NIXL_ERROR << "agent " << data->name << ": createXferReq: " << local_descs.descCount()
                   << " local and " << remote_descs.descCount()
                   << " remote descriptors; they must be equal and non-zero";
        return NIXL_ERR_INVALID_PARAM;
    }
    for (int i = 0; i < local_descs.descCount(); ++i) {
        if (local_descs[i].len != remote_descs[i].len) {
            NIXL_ERROR << "agent " << data->name << ": createXferReq: descriptor " << i
                       << " has length " << local_descs[i].len << " locally and "
                       << remote_descs[i].len << " remotely";
            return NIXL_ERR_INVALID_PARAM;
        }
    }
    const bool loopback = remote_agent == data->name;
    std::shared_ptr<nixlRemoteAgent> remote;
    if (!loopback) {
        auto it = data->remotes.find(remote_agent);
        if (it == data->remotes.end() || !it->second->valid.load(std::memory_order_acquire)) {
            NIXL_ERROR << "agent " << data->name << ": createXferReq: no metadata of agent "
                       << remote_agent << " is loaded";
            return NIXL_ERR_NOT_FOUND;
        }
        remote = it->second;
    }
    nixlBackendEngineProxy *engine = nullptr;
    std::vector<nixl_be_md_t *> lmds;
    std::vector<nixl_be_md_t *> rmds;
    int missing_local = -1;
    int missing_remote = -1;
    for (nixlBackendEngineProxy *e : nixlCandidateEngines(*data, extra_params)) {
        if (loopback ? !e->supportsLocal() : remote->conns.count(e) == 0) {
            continue;
        }
        int miss = 0;
        if (!resolveSide(*data, nullptr, false, local_descs.getType(), e, local_descs, lmds,
                         miss)) {
            missing_local = missing_local < 0 ? miss : missing_local;
            continue;
        }
        if (!resolveSide(*data, remote.get(), loopback, remote_descs.getType(), e, remote_descs,
                         rmds, miss)) {
            missing_remote = missing_remote < 0 ? miss : missing_remote;
            continue;
        }
        engine = e;
        break;
    }
    if (engine == nullptr) {
        if (missing_remote >= 0) {
            NIXL_ERROR << "agent " << data->name << ": createXferReq: remote descriptor "
                       << missing_remote << " (" << remote_descs[missing_remote].len
                       << " bytes at 0x" << std::hex << remote_descs[missing_remote].addr
                       << std::dec << ") is not registered by " << remote_agent
                       << " with a common backend";
        } else if (missing_local >= 0) {
            NIXL_ERROR << "agent " << data->name << ": createXferReq: local descriptor "
                       << missing_local << " (" << local_descs[missing_local].len
                       << " bytes at 0x" << std::hex << local_descs[missing_local].addr
                       << std::dec << ", " << memTypeStr(local_descs.getType())
                       << ") is not registered with a backend that reaches " << remote_agent;
        } else {
            NIXL_ERROR << "agent " << data->name << ": createXferReq: no backend reaches "
                       << remote_agent;
        }
        return NIXL_ERR_NOT_FOUND;
    }
    auto req = std::make_unique<nixlXferReqH>();
    req->engine = engine;
    req->backend = handleOf(*data, engine);
    req->op = operation;
    req->remoteAgent = remote_agent;
    req->loopback = loopback;
    req->remote = remote;
    req->telemetry = data->telemetryEnabled;
    setNotif(*req, extra_params);
    if (extra_params != nullptr) {
        req->customParam = extra_params->customParam;
    }
    if (req->hasNotif && !engine->supportsNotif()) {
        NIXL_ERROR << "agent " << data->name << ": createXferReq: backend " << engine->type()
                   << " cannot send notifications";
        return NIXL_ERR_BACKEND;
    }
    req->localDescs.reserve(local_descs.descCount());
    req->remoteDescs.reserve(local_descs.descCount());
    for (int i = 0; i < local_descs.descCount(); ++i) {
        const nixlBasicDesc &ld = local_descs[i];
        const nixlBasicDesc &rd = remote_descs[i];
        req->localDescs.push_back(nixl_be_xfer_desc_t{ld.addr, ld.len, ld.devId, lmds[i]});
        req->remoteDescs.push_back(nixl_be_xfer_desc_t{rd.addr, rd.len, rd.devId, rmds[i]});
    }
    finishLists(*req, local_descs.getType(), remote_descs.getType());
    nixl_status_t st = engine->prepXfer(operation,
                                        req->localList,
                                        req->remoteList,
                                        req->remoteAgent,
                                        &req->opt,
                                        req->beReq);
    if (st != NIXL_SUCCESS) {
        NIXL_ERROR << "agent " << data->name << ": backend " << engine->type()
                   << " failed to prepare a " << xferOpStr(operation) << " of "
                   << req->localDescs.size() << " descriptors to " << remote_agent << ": "
                   << statusStr(st);
        return st == NIXL_IN_PROG ? NIXL_ERR_BACKEND : st;
    }
    req_hndl = req.get();
    registerRequest(*data, req.release());
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::createXferReq(const nixl_xfer_op_t &operation,
                         const nixl_xfer_dlist_t &local_descs,
                         const nixl_xfer_dlist_t &remote_descs,
                         const std::string &remote_agent,
                         nixlXferReqH *&req_hndl,
                         const nixl_opt_args_t *extra_params) const {
    req_hndl = nullptr; // NIXL 1.4: null on entry, so a failed call leaves null
    return nixlNoteStatus(*data,
                          createXferReqImpl(data.get(), operation, local_descs, remote_descs,
                                            remote_agent, req_hndl, extra_params));
}

static nixl_status_t
estimateXferCostImpl(nixlAgentData *data,
                     const nixlXferReqH *req_hndl,
                     std::chrono::microseconds &duration,
                     std::chrono::microseconds &err_margin,
                     nixl_cost_t &method,
                     const nixl_opt_args_t *extra_params) {
    (void)extra_params;
    nixlReadGuard guard(data->lock);
    if (req_hndl == nullptr) {
        NIXL_ERROR << "agent " << data->name << ": estimateXferCost: request handle is null";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (req_hndl->remote != nullptr && !req_hndl->remote->valid.load(std::memory_order_acquire)) {
        NIXL_ERROR << "agent " << data->name << ": estimateXferCost: metadata of agent "
                   << req_hndl->remoteAgent << " was invalidated";
        return NIXL_ERR_NOT_FOUND;
    }
    return req_hndl->engine->estimateXferCost(req_hndl->op,
                                              req_hndl->localList,
                                              req_hndl->remoteList,
                                              req_hndl->remoteAgent,
                                              req_hndl->beReq,
                                              duration,
                                              err_margin,
                                              method);
}

nixl_status_t
nixlAgent::estimateXferCost(const nixlXferReqH *req_hndl,
                            std::chrono::microseconds &duration,
                            std::chrono::microseconds &err_margin,
                            nixl_cost_t &method,
                            const nixl_opt_args_t *extra_params) const {
    return nixlNoteStatus(*data,
                          estimateXferCostImpl(data.get(), req_hndl, duration, err_margin, method,
                                               extra_params));
}

nixl_status_t
nixlAgent::postXferReq(nixlXferReqH *req_hndl, const nixl_opt_args_t *extra_params) const {
    if (req_hndl == nullptr) {
        NIXL_ERROR << "agent " << data->name << ": postXferReq: request handle is null";
        return nixlNoteStatus(*data, NIXL_ERR_INVALID_PARAM);
    }
    nixlReadGuard guard(data->lock);
    nixlXferReqH &req = *req_hndl;
    if (req.remote != nullptr && !req.remote->valid.load(std::memory_order_acquire)) {
        NIXL_ERROR << "agent " << data->name << ": postXferReq: metadata of agent "
                   << req.remoteAgent << " was invalidated or the peer disconnected";
        return nixlNoteStatus(*data, NIXL_ERR_NOT_FOUND);
    }
    if (req.localStale) {
        NIXL_ERROR << "agent " << data->name << ": postXferReq: memory of this request to "
                   << req.remoteAgent << " was deregistered";
        return nixlNoteStatus(*data, NIXL_ERR_NOT_FOUND);
    }
    if (req.status == NIXL_IN_PROG) {
        nixl_status_t st = req.engine->checkXfer(req.beReq);
        if (st == NIXL_IN_PROG) {
            NIXL_ERROR << "agent " << data->name << ": postXferReq: the request to "
                       << req.remoteAgent << " is still running";
            return nixlNoteStatus(*data, NIXL_ERR_REPOST_ACTIVE);
        }
        // The previous transfer ended unobserved; it still counts before the repost.
        req.status = st;
        if (st == NIXL_SUCCESS && req.telemetry) {
            req.doneTicks = nixlFastClock::now();
        }
        finishXfer(*data, req);
    }
    if (extra_params != nullptr) {
        setNotif(req, extra_params);
        refreshOpt(req);
    }
    if (req.hasNotif && !req.engine->supportsNotif()) {
        NIXL_ERROR << "agent " << data->name << ": postXferReq: backend " << req.engine->type()
                   << " cannot send notifications";
        return nixlNoteStatus(*data, NIXL_ERR_BACKEND);
    }
    const nixlFastClock::ticks_t start = req.telemetry ? nixlFastClock::now() : 0;
    nixl_status_t st = req.engine->postXfer(req.op,
                                            req.localList,
                                            req.remoteList,
                                            nixl_plugin_str_t{req.remoteAgent.data(),
                                                              req.remoteAgent.size()},
                                            req.beReq,
                                            &req.opt);
    if (req.telemetry) {
        req.startTicks = start;
        req.postTicks = nixlFastClock::now();
        req.doneTicks = req.postTicks;
    }
    req.status = st;
    req.statusReported = false;
    if (st < 0) {
        if (st == NIXL_ERR_REMOTE_DISCONNECT) {
            markDisconnected(*data, req);
        } else {
            NIXL_ERROR << "agent " << data->name << ": backend " << req.engine->type()
                       << " failed to post a " << xferOpStr(req.op) << " of "
                       << req.localDescs.size() << " descriptors to " << req.remoteAgent << ": "
                       << statusStr(st);
        }
    }
    if (st != NIXL_IN_PROG) {
        finishXfer(*data, req);
    }
    return st;
}

nixl_status_t
nixlAgent::getXferStatus(nixlXferReqH *req_hndl) const {
    if (req_hndl == nullptr) {
        NIXL_ERROR << "agent " << data->name << ": getXferStatus: request handle is null";
        return nixlNoteStatus(*data, NIXL_ERR_INVALID_PARAM);
    }
    nixlReadGuard guard(data->lock);
    nixlXferReqH &req = *req_hndl;
    if (req.status != NIXL_IN_PROG) {
        // Reported once per outcome (e.g. a never-posted request's NOT_POSTED), not per poll.
        finishXfer(*data, req);
        return req.status;
    }
    if (req.remote != nullptr && !req.remote->valid.load(std::memory_order_acquire)) {
        NIXL_ERROR << "agent " << data->name << ": getXferStatus: metadata of agent "
                   << req.remoteAgent << " was invalidated or the peer disconnected";
        return nixlNoteStatus(*data, NIXL_ERR_NOT_FOUND);
    }
    nixl_status_t st = req.engine->checkXfer(req.beReq);
    if (st == NIXL_IN_PROG) {
        return st;
    }
    req.status = st;
    if (st == NIXL_SUCCESS) {
        if (req.telemetry) {
            req.doneTicks = nixlFastClock::now();
        }
    } else if (st == NIXL_ERR_REMOTE_DISCONNECT) {
        markDisconnected(*data, req);
    } else {
        NIXL_ERROR << "agent " << data->name << ": backend " << req.engine->type() << ": "
                   << xferOpStr(req.op) << " of " << req.localDescs.size()
                   << " descriptors to " << req.remoteAgent << " failed: " << statusStr(st);
    }
    finishXfer(*data, req);
    return st;
}

nixl_status_t
nixlAgent::getXferTelemetry(const nixlXferReqH *req_hndl, nixl_xfer_telem_t &telemetry) const {
    if (!data->telemetryEnabled) {
        return NIXL_ERR_NO_TELEMETRY;
    }
    if (req_hndl == nullptr) {
        NIXL_ERROR << "agent " << data->name << ": getXferTelemetry: request handle is null";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixlReadGuard guard(data->lock);
    if (req_hndl->status != NIXL_SUCCESS) {
        return req_hndl->status;
    }
    telemetry.startTime = nixlFastClock::toSteady(req_hndl->startTicks);
    telemetry.postDuration = nixlFastClock::toMicros(req_hndl->postTicks - req_hndl->startTicks);
    telemetry.xferDuration = nixlFastClock::toMicros(req_hndl->doneTicks - req_hndl->startTicks);
    telemetry.totalBytes = req_hndl->totalBytes;
    telemetry.descCount = req_hndl->localDescs.size();
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::queryXferBackend(const nixlXferReqH *req_hndl, nixlBackendH *&backend) const {
    if (req_hndl == nullptr) {
        NIXL_ERROR << "agent " << data->name << ": queryXferBackend: request handle is null";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixlReadGuard guard(data->lock);
    backend = req_hndl->backend;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::releaseXferReq(nixlXferReqH *req_hndl) const {
    nixlReadGuard guard(data->lock);
    {
        std::lock_guard<std::mutex> lock(data->registryMutex);
        if (req_hndl == nullptr || data->requests.count(req_hndl) == 0) {
            NIXL_ERROR << "agent " << data->name
                       << ": releaseXferReq: the handle is null, already released or not a "
                          "request of this agent";
            return NIXL_ERR_INVALID_PARAM;
        }
    }
    if (req_hndl->beReq != nullptr) {
        nixl_status_t st = req_hndl->engine->releaseReq(req_hndl->beReq);
        if (st != NIXL_SUCCESS) {
            NIXL_ERROR << "agent " << data->name << ": backend " << req_hndl->engine->type()
                       << " could not abort the running request to " << req_hndl->remoteAgent
                       << " (" << statusStr(st) << "); it stays allocated, release it later";
            return NIXL_ERR_REPOST_ACTIVE;
        }
    }
    {
        std::lock_guard<std::mutex> lock(data->registryMutex);
        data->requests.erase(req_hndl);
    }
    delete req_hndl;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::releasedDlistH(nixlDlistH *dlist_hndl) const {
    nixlReadGuard guard(data->lock);
    {
        std::lock_guard<std::mutex> lock(data->registryMutex);
        if (dlist_hndl == nullptr || data->dlists.erase(dlist_hndl) == 0) {
            NIXL_ERROR << "agent " << data->name
                       << ": releasedDlistH: the handle is null, already released or not a "
                          "list of this agent";
            return NIXL_ERR_INVALID_PARAM;
        }
    }
    delete dlist_hndl;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::prepMemView(const nixl_remote_dlist_t &dlist,
                       nixlMemViewH &mvh,
                       const nixl_opt_args_t *extra_params) const {
    (void)dlist;
    (void)mvh;
    (void)extra_params;
    NIXL_ERROR << "agent " << data->name
               << ": prepMemView: no backend of this build offers device memory views";
    return NIXL_ERR_NOT_SUPPORTED;
}

nixl_status_t
nixlAgent::prepMemView(const nixl_local_dlist_t &dlist,
                       nixlMemViewH &mvh,
                       const nixl_opt_args_t *extra_params) const {
    (void)dlist;
    (void)mvh;
    (void)extra_params;
    NIXL_ERROR << "agent " << data->name
               << ": prepMemView: no backend of this build offers device memory views";
    return NIXL_ERR_NOT_SUPPORTED;
}

void
nixlAgent::releaseMemView(nixlMemViewH mvh) const {
    NIXL_WARN << "agent " << data->name << ": releaseMemView: unknown view handle " << mvh;
}

nixl_status_t
nixlAgent::getNotifs(nixl_notifs_t &notif_map, const nixl_opt_args_t *extra_params) {
    nixlWriteGuard guard(data->lock);
    nixl_status_t result = NIXL_SUCCESS;
    bool any = false;
    for (nixlBackendEngineProxy *e : nixlCandidateEngines(*data, extra_params)) {
        if (!e->supportsNotif()) {
            continue;
        }
        any = true;
        nixl_status_t st = e->getNotifs(notif_map);
        if (st != NIXL_SUCCESS) {
            // Keep draining the others; report one failure.
            NIXL_ERROR << "agent " << data->name << ": backend " << e->type()
                       << " failed to deliver notifications: " << statusStr(st);
            result = st;
        }
    }
    if (!any) {
        NIXL_ERROR << "agent " << data->name
                   << ": getNotifs: no backend of this agent supports notifications";
        return NIXL_ERR_BACKEND;
    }
    return result;
}

nixl_status_t
nixlAgent::genNotif(const std::string &remote_agent,
                    const nixl_blob_t &msg,
                    const nixl_opt_args_t *extra_params) const {
    nixlReadGuard guard(data->lock);
    const bool loopback = remote_agent == data->name;
    const nixlRemoteAgent *remote = nullptr;
    if (!loopback) {
        auto it = data->remotes.find(remote_agent);
        if (it == data->remotes.end() || !it->second->valid.load(std::memory_order_acquire)) {
            NIXL_ERROR << "agent " << data->name << ": genNotif: no metadata of agent "
                       << remote_agent << " is loaded";
            return NIXL_ERR_NOT_FOUND;
        }
        remote = it->second.get();
    }
    for (nixlBackendEngineProxy *e : nixlCandidateEngines(*data, extra_params)) {
        if (!e->supportsNotif()) {
            continue;
        }
        if (loopback ? !e->supportsLocal() : remote->conns.count(e) == 0) {
            continue;
        }
        nixl_status_t st = e->genNotif(remote_agent, msg);
        if (st != NIXL_SUCCESS) {
            NIXL_ERROR << "agent " << data->name << ": backend " << e->type()
                       << " failed to send a notification to " << remote_agent << ": "
                       << statusStr(st);
        }
        return st;
    }
    NIXL_ERROR << "agent " << data->name << ": genNotif: no "
               << (extra_params != nullptr && !extra_params->backends.empty() ? "hinted " : "")
               << "backend can notify " << remote_agent;
    return NIXL_ERR_BACKEND;
}
