/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: prepared lists and transfer request creation (prepXferDlist, makeXferReq,
// createXferReq, releasedDlistH). Posting, status, release and notifications are in
// transfer.cpp.
//
// createXferReq and makeXferReq do every check and resolve every descriptor to backend metadata
// once, so that the hot path (transfer.cpp) touches only the request.

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "agent/agent_data.h"
#include "agent/agent_trace.h"
#include "common/nixl_log.h"
#include "nixl_trace_context.h"
#include "tracing/trace_context.h"

using nixlEnumStrings::memTypeStr;
using nixlEnumStrings::statusStr;
using nixlEnumStrings::xferOpStr;

namespace {

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
    // The section is looked up once per side, not per descriptor (a map search each).
    const nixlRegList<nixlLocalReg> *local = nullptr;
    const nixlRegList<nixlRemoteReg> *remote_list = nullptr;
    if (remote != nullptr) {
        auto it = remote->sections.find({mem, e});
        remote_list = it == remote->sections.end() ? nullptr : &it->second;
    } else {
        auto it = data.localSection.find({mem, e});
        local = it == data.localSection.end() ? nullptr : &it->second;
    }
    if (local == nullptr && remote_list == nullptr) {
        first_missing = 0;
        return descs.descCount() == 0;
    }
    mds.reserve(descs.descCount());
    for (int i = 0; i < descs.descCount(); ++i) {
        nixl_be_md_t *md = nullptr;
        if (remote_list != nullptr) {
            const nixlRemoteReg *reg = remote_list->findCovering(descs[i]);
            md = reg == nullptr ? nullptr : reg->md;
        } else {
            const nixlLocalReg *reg = local->findCovering(descs[i]);
            md = reg == nullptr ? nullptr : (loopback ? reg->loopMd : reg->md);
        }
        if (md == nullptr) {
            first_missing = i;
            return false;
        }
        mds.push_back(md);
    }
    return true;
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
    req.refreshOpt();
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

/** A request from the agent's pool, returned to it unless release() is called. */
class pooledRequest {
public:
    explicit pooledRequest(nixlAgentData &data) : data_(data) {
        std::lock_guard<std::mutex> lock(data.registryMutex);
        req_ = data.acquireRequest();
    }

    ~pooledRequest() {
        if (req_ != nullptr) {
            data_.recycleRequest(req_);
        }
    }

    pooledRequest(const pooledRequest &) = delete;
    pooledRequest &
    operator=(const pooledRequest &) = delete;

    nixlXferReqH *
    operator->() const noexcept {
        return req_;
    }

    nixlXferReqH &
    operator*() const noexcept {
        return *req_;
    }

    nixlXferReqH *
    get() const noexcept {
        return req_;
    }

    /** Makes the request live in the agent: owner set (it is registered already). */
    nixlXferReqH *
    publish() {
        // Already in the registry (acquireRequest); no other thread has the handle yet, and
        // the caller's own synchronisation orders this store before any use of it.
        req_->owner = &data_;
        return std::exchange(req_, nullptr);
    }

private:
    nixlAgentData &data_;
    nixlXferReqH *req_ = nullptr;
};

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

/** What makeXferReq and createXferReq decided before building the request. */
struct nixlRequestSpec {
    const char *caller; ///< for log lines
    nixl_xfer_op_t op;
    nixlBackendEngineProxy *engine;
    const std::string &remoteAgent;
    bool loopback;
    /** Null for loopback. A reference (the record in data.remotes or a list handle, both
     *  stable under the agent lock): the request's copy is the only reference count taken. */
    const std::shared_ptr<nixlRemoteAgent> &remote;
    nixl_mem_t localMem;
    nixl_mem_t remoteMem;
    bool forwardCustomParam; ///< createXferReq hands extra->customParam to the backend
};

/**
 * Gives a traced request its trace context: the trace id of extra->traceParent when that is a
 * valid W3C traceparent (the request's span becomes its child), else a fresh one. An invalid
 * traceparent does not fail the transfer (it usually comes from an upstream request that the
 * transfer must still serve, as W3C asks): one warning, then a trace of the request's own.
 */
void
setTraceContext(const nixlAgentData &data,
                const char *caller,
                const nixl_opt_args_t *extra,
                nixlXferReqH &req) {
    nixl_be_trace_ctx_t parent{};
    const nixl_be_trace_ctx_t *given = nullptr;
    if (extra != nullptr && !extra->traceParent.empty()) {
        const std::string &tp = extra->traceParent;
        const nixl_trace_ctx_result_t r = nixl_trace_ctx_parse_traceparent(tp.data(), tp.size(),
                                                                           &parent);
        if (r == NIXL_TRACE_CTX_OK) {
            given = &parent;
        } else {
            constexpr size_t shown = 128; // enough for any valid form; bounds the line
            NIXL_WARN << "agent " << data.name << ": " << caller << ": traceParent \""
                      << tp.substr(0, shown) << (tp.size() > shown ? "..." : "")
                      << "\" is not a W3C traceparent (" << nixl_trace_ctx_result_str(r)
                      << "); the request gets a trace id of its own";
        }
    }
    nixl::trace::makeRequestContext(req.traceCtx, reinterpret_cast<uintptr_t>(&req), given);
    nixl_trace_ctx_to_hex(req.traceCtx.trace_id, sizeof(req.traceCtx.trace_id), req.traceIdHex);
    req.hasTraceParent = given != nullptr;
    if (given != nullptr) {
        nixl_trace_ctx_to_hex(parent.span_id, sizeof(parent.span_id), req.parentIdHex);
    }
}

/**
 * The common tail of makeXferReq and createXferReq, after every check of the caller passed:
 * a request for spec.engine with extra's notification, descriptors written by fill(local,
 * remote), prepared by the engine and registered with the agent; req_hndl is set only on
 * success.
 */
template<typename Fill>
nixl_status_t
buildRequest(nixlAgentData &data,
             const nixlRequestSpec &spec,
             const nixl_opt_args_t *extra,
             Fill &&fill,
             nixlXferReqH *&req_hndl) {
    pooledRequest req(data);
    req->engine = spec.engine;
    req->backend = handleOf(data, spec.engine);
    req->op = spec.op;
    req->remoteAgent = spec.remoteAgent;
    req->loopback = spec.loopback;
    req->remote = spec.remote;
    req->telemetry = data.telemetryEnabled;
    if (data.tracer) [[unlikely]] {
        setTraceContext(data, spec.caller, extra, *req);
    }
    req->setNotif(extra);
    if (spec.forwardCustomParam && extra != nullptr) {
        req->customParam = extra->customParam;
    }
    if (req->hasNotif && !spec.engine->supportsNotif()) {
        NIXL_ERROR << "agent " << data.name << ": " << spec.caller << ": backend "
                   << spec.engine->type() << " cannot send notifications";
        return NIXL_ERR_BACKEND;
    }
    fill(req->localDescs, req->remoteDescs);
    finishLists(*req, spec.localMem, spec.remoteMem);
    nixl_status_t st = spec.engine->prepXfer(
        spec.op, req->localList, req->remoteList, req->remoteAgent, &req->opt, req->beReq);
    if (st == NIXL_IN_PROG) {
        // Not an answer prepXfer may give: core's finding, so core's line.
        NIXL_ERROR << "agent " << data.name << ": backend " << spec.engine->type()
                   << " answered NIXL_IN_PROG to preparing a " << xferOpStr(spec.op) << " to "
                   << req->remoteAgent << "; treated as NIXL_ERR_BACKEND";
        return NIXL_ERR_BACKEND;
    }
    if (st != NIXL_SUCCESS) {
        // The backend logged why; this adds the context.
        NIXL_DEBUG << "agent " << data.name << ": backend " << spec.engine->type()
                   << " failed to prepare a " << xferOpStr(spec.op) << " of "
                   << req->localDescs.size() << " descriptors to " << req->remoteAgent << ": "
                   << statusStr(st);
        return st;
    }
    if (data.telemetry != nullptr) {
        // Once per request, off the post path: the bytes and request events carry the path.
        const nixl_xfer_path_info_t info = spec.engine->xferPath(req->beReq);
        // Ids fit in a byte of the event's reserved word; a wild one counts as unknown.
        req->path = info.path <= NIXL_TELEMETRY_PATH_MASK ? info.path : 0u;
        if (info.fallback != NIXL_PATH_FALLBACK_NONE && info.first_for_conn != 0) {
            data.telemetry->recordPathFallback(spec.op, req->path, info.fallback);
        }
    }
    req_hndl = req.publish();
    return NIXL_SUCCESS;
}

} // namespace

// prepXferDlist, makeXferReq and createXferReq are split into an *Impl doing the work and a
// public wrapper that clears the output handle (NIXL 1.4: null on entry, so null after any
// failure) and sends every failing status, however it returned, to the telemetry pipeline
// (nixlNoteStatus). The bodies take the agent data as `data` so they read as the methods did.

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
    if (remote_side->remoteStale) {
        NIXL_ERROR << "agent " << data->name << ": makeXferReq: " << remote_side->remoteAgent
                   << " re-registered memory of the remote list and its new metadata was "
                      "loaded since the list was prepared; prepare it again";
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
    const nixlRequestSpec spec{"makeXferReq",
                               operation,
                               engine,
                               remote_side->remoteAgent,
                               remote_side->loopback,
                               remote_side->remote,
                               local_side->mem,
                               remote_side->mem,
                               false}; // NIXL's makeXferReq does not forward customParam
    const bool merge = extra_params == nullptr || !extra_params->skipDescMerge;
    auto fill = [&](std::vector<nixl_be_xfer_desc_t> &lds, std::vector<nixl_be_xfer_desc_t> &rds) {
        lds.reserve(local_indices.size());
        rds.reserve(local_indices.size());
        for (size_t i = 0; i < local_indices.size(); ++i) {
            const int li = local_indices[i];
            const int ri = remote_indices[i];
            const nixlBasicDesc &ld = local_side->descs[li];
            const nixlBasicDesc &rd = remote_side->descs[ri];
            nixl_be_md_t *lmd = (*lmds)[li];
            nixl_be_md_t *rmd = (*rmds)[ri];
            if (merge && i > 0 && local_indices[i - 1] + 1 == li &&
                remote_indices[i - 1] + 1 == ri) {
                // A run of consecutive indices whose ranges also follow each other in memory,
                // in the same registration on both sides, moves as one descriptor.
                nixl_be_xfer_desc_t &pl = lds.back();
                nixl_be_xfer_desc_t &pr = rds.back();
                if (pl.md == lmd && pr.md == rmd && pl.dev_id == ld.devId &&
                    pr.dev_id == rd.devId && pl.addr + pl.len == ld.addr &&
                    pr.addr + pr.len == rd.addr) {
                    pl.len += ld.len;
                    pr.len += rd.len;
                    continue;
                }
            }
            lds.push_back(nixl_be_xfer_desc_t{ld.addr, ld.len, ld.devId, lmd});
            rds.push_back(nixl_be_xfer_desc_t{rd.addr, rd.len, rd.devId, rmd});
        }
    };
    return buildRequest(*data, spec, extra_params, fill, req_hndl);
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
    return nixlTraced(
        *data, nixl::trace::NameId::MAKE_XFER_REQ,
        [&](nixl::trace::Span &span) {
            span.add(nixl::trace::KeyId::DESC_COUNT, local_indices.size());
        },
        [&] {
            return nixlNoteStatus(*data,
                                  makeXferReqImpl(data.get(), operation, local_side,
                                                  local_indices, remote_side, remote_indices,
                                                  req_hndl, extra_params));
        });
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
    // The record stays in data->remotes while the reader lock is held: pointing at its
    // shared_ptr, not copying it, saves two atomic reference count updates per create.
    static const std::shared_ptr<nixlRemoteAgent> no_remote;
    const std::shared_ptr<nixlRemoteAgent> *remote_ref = &no_remote;
    if (!loopback) {
        auto it = data->remotes.find(remote_agent);
        if (it == data->remotes.end() || !it->second->valid.load(std::memory_order_acquire)) {
            NIXL_ERROR << "agent " << data->name << ": createXferReq: no metadata of agent "
                       << remote_agent << " is loaded";
            return NIXL_ERR_NOT_FOUND;
        }
        remote_ref = &it->second;
    }
    nixlRemoteAgent *const remote = remote_ref->get();
    nixlBackendEngineProxy *engine = nullptr;
    // Per-thread scratch, kept between calls: the resolved registrations are copied into the
    // request below, and allocating these two per request was a third of the create path's
    // allocations (agent_overhead agent_create/1).
    thread_local std::vector<nixl_be_md_t *> lmds;
    thread_local std::vector<nixl_be_md_t *> rmds;
    int missing_local = -1;
    int missing_remote = -1;
    auto tryEngine = [&](nixlBackendEngineProxy *e) {
        if (loopback ? !e->supportsLocal() : remote->conns.count(e) == 0) {
            return false;
        }
        int miss = 0;
        if (!resolveSide(*data, nullptr, false, local_descs.getType(), e, local_descs, lmds,
                         miss)) {
            missing_local = missing_local < 0 ? miss : missing_local;
            return false;
        }
        if (!resolveSide(*data, remote, loopback, remote_descs.getType(), e, remote_descs,
                         rmds, miss)) {
            missing_remote = missing_remote < 0 ? miss : missing_remote;
            return false;
        }
        engine = e;
        return true;
    };
    nixlForEachCandidate(*data, extra_params, tryEngine);
    // A huge request leaves no huge scratch behind on this thread.
    const auto trimScratch = [] {
        constexpr size_t keep = 4096;
        if (lmds.capacity() > keep) {
            std::vector<nixl_be_md_t *>().swap(lmds);
        }
        if (rmds.capacity() > keep) {
            std::vector<nixl_be_md_t *>().swap(rmds);
        }
    };
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
        trimScratch();
        return NIXL_ERR_NOT_FOUND;
    }
    const nixlRequestSpec spec{"createXferReq",
                               operation,
                               engine,
                               remote_agent,
                               loopback,
                               *remote_ref,
                               local_descs.getType(),
                               remote_descs.getType(),
                               true};
    auto fill = [&](std::vector<nixl_be_xfer_desc_t> &lds, std::vector<nixl_be_xfer_desc_t> &rds) {
        lds.reserve(local_descs.descCount());
        rds.reserve(local_descs.descCount());
        for (int i = 0; i < local_descs.descCount(); ++i) {
            const nixlBasicDesc &ld = local_descs[i];
            const nixlBasicDesc &rd = remote_descs[i];
            lds.push_back(nixl_be_xfer_desc_t{ld.addr, ld.len, ld.devId, lmds[i]});
            rds.push_back(nixl_be_xfer_desc_t{rd.addr, rd.len, rd.devId, rmds[i]});
        }
    };
    const nixl_status_t st = buildRequest(*data, spec, extra_params, fill, req_hndl);
    trimScratch();
    return st;
}

nixl_status_t
nixlAgent::createXferReq(const nixl_xfer_op_t &operation,
                         const nixl_xfer_dlist_t &local_descs,
                         const nixl_xfer_dlist_t &remote_descs,
                         const std::string &remote_agent,
                         nixlXferReqH *&req_hndl,
                         const nixl_opt_args_t *extra_params) const {
    req_hndl = nullptr; // NIXL 1.4: null on entry, so a failed call leaves null
    return nixlTraced(
        *data, nixl::trace::NameId::CREATE_XFER_REQ,
        [&](nixl::trace::Span &span) {
            span.add(nixl::trace::KeyId::REMOTE_AGENT, remote_agent)
                .add(nixl::trace::KeyId::DESC_COUNT, local_descs.descCount());
        },
        [&] {
            return nixlNoteStatus(*data,
                                  createXferReqImpl(data.get(), operation, local_descs,
                                                    remote_descs, remote_agent, req_hndl,
                                                    extra_params));
        });
}

nixl_status_t
nixlAgent::releasedDlistH(nixlDlistH *dlist_hndl) const {
    nixlReadGuard guard(data->lock);
    {
        std::lock_guard<std::mutex> lock(data->registryMutex);
        if (dlist_hndl == nullptr || data->dlists.erase(dlist_hndl) == 0) {
            NIXL_ERROR_LIMITED << "agent " << data->name
                               << ": releasedDlistH: the handle is null, already released or "
                                  "not a list of this agent";
            return NIXL_ERR_INVALID_PARAM;
        }
    }
    delete dlist_hndl;
    return NIXL_SUCCESS;
}

