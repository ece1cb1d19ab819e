/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: transfer requests once made (estimate, post, status, telemetry, release),
// memory views and notifications. Lists and requests are made in prepare.cpp.
//
// postXferReq and getXferStatus touch only the request and one atomic flag of the remote
// record: no allocation, no string building, no lookup. With telemetry on they also append
// fixed-size events to the agent's staging queue (telemetry/telemetry.h).

#include "agent/agent_data.h"
#include "agent/agent_trace.h"
#include "common/nixl_log.h"

using nixlEnumStrings::statusStr;
using nixlEnumStrings::xferOpStr;

namespace {

void
markDisconnected(const nixlAgentData &data, nixlXferReqH &req) {
    if (req.remote != nullptr) {
        req.remote->valid.store(false, std::memory_order_release);
    }
    // The backend logged the loss; this adds what core does about it.
    NIXL_DEBUG << "agent " << data.name << ": backend " << req.engine->type() << " lost agent "
               << req.remoteAgent << "; its metadata is dropped until loaded again";
}

/**
 * Sends the outcome of a request to the telemetry pipeline, once: a completed transfer as one
 * batch (post time, transfer time, bytes, request), a failure as its error event. Called when
 * req.status stopped being NIXL_IN_PROG. Hot path: no allocation.
 */
[[gnu::always_inline]] inline void
finishXfer(const nixlAgentData &data, nixlXferReqH &req) noexcept {
    if (req.statusReported || data.telemetry == nullptr) {
        return;
    }
    req.statusReported = true;
    if (req.status == NIXL_SUCCESS) {
        // Raw tick intervals: the flush thread converts them to microseconds.
        data.telemetry->recordTransferTicks(req.op,
                                            req.totalBytes,
                                            req.postTicks - req.startTicks,
                                            req.doneTicks - req.startTicks,
                                            req.path);
    } else {
        data.telemetry->recordStatus(req.status);
    }
}
} // namespace

// estimateXferCost is split into an *Impl doing the work and a public wrapper that sends every
// failing status, however it returned, to the telemetry pipeline (nixlNoteStatus).

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
        NIXL_ERROR_LIMITED << "agent " << data->name
                           << ": estimateXferCost: request handle is null";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (req_hndl->owner != data) [[unlikely]] {
        return nixlDeadRequest(*data, "estimateXferCost", req_hndl);
    }
    if (req_hndl->remote != nullptr && !req_hndl->remote->valid.load(std::memory_order_acquire)) {
        NIXL_ERROR_LIMITED << "agent " << data->name << ": estimateXferCost: metadata of agent "
                   << req_hndl->remoteAgent << " was invalidated";
        return NIXL_ERR_NOT_FOUND;
    }
    nixlXferCostEstimate cost;
    const nixl_status_t st = req_hndl->engine->estimateXferCost(
        req_hndl->op, req_hndl->localList, req_hndl->remoteList, req_hndl->remoteAgent,
        req_hndl->beReq, cost);
    if (st == NIXL_SUCCESS) {
        duration = cost.duration;
        err_margin = cost.errMargin;
        method = cost.method;
    }
    return st;
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

// postXferReq, getXferStatus, prepMemView, releaseMemView, getNotifs and genNotif are *Impl
// functions doing the work and public wrappers that trace the call when the agent traces: one
// branch when it does not.

/** The clock readings a traced post shares with telemetry (postXferReqImpl<true>). */
struct postClock {
    nixlFastClock::ticks_t begin = 0;
    nixlFastClock::ticks_t posted = 0;
};

/**
 * The post. Traced (postXferReqTraced; clock non-null): clock->begin, the time the caller's span
 * began, is telemetry's start instead of a read of its own, and clock->posted receives the time
 * the backend's post returned (0 when it was not called), which telemetry reads anyway: one
 * counter read each, shared. A template so that the untraced instance is the code as it was
 * before tracing existed, without even a test of clock.
 */
template<bool Traced>
static nixl_status_t
postXferReqImpl(nixlAgentData *data,
                nixlXferReqH *req_hndl,
                const nixl_opt_args_t *extra_params,
                postClock *clock = nullptr) {
    if (req_hndl == nullptr) {
        NIXL_ERROR_LIMITED << "agent " << data->name
                           << ": postXferReq: request handle is null";
        return nixlNoteStatus(*data, NIXL_ERR_INVALID_PARAM);
    }
    nixlReadGuard guard(data->lock);
    nixlXferReqH &req = *req_hndl;
    if (req.owner != data) [[unlikely]] {
        return nixlNoteStatus(*data, nixlDeadRequest(*data, "postXferReq", req_hndl));
    }
    if (req.remote != nullptr && !req.remote->valid.load(std::memory_order_acquire)) {
        NIXL_ERROR_LIMITED << "agent " << data->name << ": postXferReq: metadata of agent "
                   << req.remoteAgent << " was invalidated or the peer disconnected";
        return nixlNoteStatus(*data, NIXL_ERR_NOT_FOUND);
    }
    if (req.localStale || req.remoteStale) [[unlikely]] {
        if (req.localStale) {
            NIXL_ERROR << "agent " << data->name << ": postXferReq: memory of this request to "
                       << req.remoteAgent << " was deregistered";
        } else {
            NIXL_ERROR << "agent " << data->name << ": postXferReq: " << req.remoteAgent
                       << " re-registered memory this request targets and its new metadata "
                          "was loaded; create the request again";
        }
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
        req.setNotif(extra_params);
        req.refreshOpt();
    }
    if (req.hasNotif && !req.engine->supportsNotif()) {
        NIXL_ERROR << "agent " << data->name << ": postXferReq: backend " << req.engine->type()
                   << " cannot send notifications";
        return nixlNoteStatus(*data, NIXL_ERR_BACKEND);
    }
    nixlFastClock::ticks_t start = 0;
    if constexpr (Traced) {
        start = clock->begin;
    } else {
        start = req.telemetry ? nixlFastClock::now() : 0;
    }
    nixl_status_t st = req.engine->postXfer(req.op,
                                            req.localList,
                                            req.remoteList,
                                            nixl_plugin_str_t{req.remoteAgent.data(),
                                                              req.remoteAgent.size()},
                                            req.beReq,
                                            &req.opt);
    if constexpr (Traced) {
        clock->posted = nixlFastClock::now();
        if (req.telemetry) {
            req.startTicks = start;
            req.postTicks = clock->posted;
            req.doneTicks = clock->posted; // completed inline: the return is the completion
        }
    } else if (req.telemetry) {
        req.startTicks = start;
        if (st == NIXL_SUCCESS && data->telemetry != nullptr) [[likely]] {
            // Completed by the post (finishXfer's work, done here): the pipeline reads the
            // return time itself, after finding this thread's lane (cheaper, telemetry.h).
            req.status = st;
            req.statusReported = true;
            req.postTicks = data->telemetry->recordPostedTransferTicks(
                req.op, req.totalBytes, req.path, start, [] { return nixlFastClock::now(); });
            req.doneTicks = req.postTicks; // completed inline: the return is the completion
            return st;
        }
        req.postTicks = nixlFastClock::now();
        req.doneTicks = req.postTicks;
    }
    req.status = st;
    req.statusReported = false;
    if (st < 0) {
        if (st == NIXL_ERR_REMOTE_DISCONNECT) {
            markDisconnected(*data, req);
        } else if (!nixlStatusKnown(st)) {
            // Not a status at all: core's finding (the backend logged nothing meaningful).
            NIXL_ERROR << "agent " << data->name << ": backend " << req.engine->type()
                       << " answered a post of a " << xferOpStr(req.op) << " to "
                       << req.remoteAgent << " with a value that is not a nixl_status_t";
        } else {
            // The backend logged why; this adds the context.
            NIXL_DEBUG << "agent " << data->name << ": backend " << req.engine->type()
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

/**
 * The traced post: a span named after the direction, with the request's address as the
 * correlation id of the span and of the xfer.complete mark, which is emitted here (inside the
 * span) when the post completes the transfer at once. The span carries the request's trace id
 * ("trace_id", and "parent_id" at its end when a traceparent was attached) so trace plugins
 * can link it to the application's trace; both are hex kept in the request, so no allocation.
 * Clock reads are shared with telemetry: the span's begin is telemetry's start, and the post's
 * return (telemetry's post time) is the span's end and, when the post completed the transfer,
 * the mark's time; so with both on a post reads the counter twice, as with telemetry alone.
 */
[[gnu::noinline]] static nixl_status_t
postXferReqTraced(nixlAgentData *data, nixlXferReqH *req, const nixl_opt_args_t *extra_params) {
    if (req == nullptr || req->owner != data) [[unlikely]] {
        return postXferReqImpl<false>(data, req, extra_params); // refuses it, untraced
    }
    const nixl::trace::Tracer &tracer = *data->tracer;
    // op, remoteAgent and totalBytes are fixed when the request is made.
    nixl::trace::CorrelationScope corr(&tracer, reinterpret_cast<uintptr_t>(req));
    nixl::trace::Span span(tracer,
                           req->op == NIXL_WRITE ? nixl::trace::NameId::POST_XFER_WRITE :
                                                   nixl::trace::NameId::POST_XFER_READ,
                           nixl::trace::defer_begin);
    span.addString(nixl::trace::KeyId::REMOTE_AGENT, req->remoteAgent.data(),
                   req->remoteAgent.size())
        .addInt(nixl::trace::KeyId::BYTES, static_cast<int64_t>(req->totalBytes))
        .addString(nixl::trace::KeyId::TRACE_ID, req->traceIdHex, sizeof(req->traceIdHex));
    span.begin();
    if (req->hasTraceParent) {
        span.addString(nixl::trace::KeyId::PARENT_ID, req->parentIdHex, sizeof(req->parentIdHex));
    }
    postClock clock;
    clock.begin = span.beginTicks();
    const nixl_status_t st = postXferReqImpl<true>(data, req, extra_params, &clock);
    if (clock.posted != 0) {
        // The span's end is the post's return, and when the post completed the transfer so is
        // the completion mark (folded into the span's end event); converted with the begin
        // when the span ends.
        span.setEndTicks(clock.posted, st == NIXL_SUCCESS);
    }
    return nixlTraceStatus(span, st);
}

nixl_status_t
nixlAgent::postXferReq(nixlXferReqH *req_hndl, const nixl_opt_args_t *extra_params) const {
    if (data->tracer) [[unlikely]] {
        return postXferReqTraced(data.get(), req_hndl, extra_params);
    }
    return postXferReqImpl<false>(data.get(), req_hndl, extra_params);
}

static nixl_status_t
getXferStatusImpl(nixlAgentData *data, nixlXferReqH *req_hndl) {
    if (req_hndl == nullptr) {
        NIXL_ERROR_LIMITED << "agent " << data->name
                           << ": getXferStatus: request handle is null";
        return nixlNoteStatus(*data, NIXL_ERR_INVALID_PARAM);
    }
    nixlReadGuard guard(data->lock);
    nixlXferReqH &req = *req_hndl;
    if (req.owner != data) [[unlikely]] {
        return nixlNoteStatus(*data, nixlDeadRequest(*data, "getXferStatus", req_hndl));
    }
    if (req.status != NIXL_IN_PROG) {
        // Reported once per outcome (e.g. a never-posted request's NOT_POSTED), not per poll.
        finishXfer(*data, req);
        return req.status;
    }
    if (req.remote != nullptr && !req.remote->valid.load(std::memory_order_acquire)) {
        NIXL_ERROR_LIMITED << "agent " << data->name << ": getXferStatus: metadata of agent "
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
    } else if (!nixlStatusKnown(st)) {
        NIXL_ERROR << "agent " << data->name << ": backend " << req.engine->type()
                   << " answered a check of a " << xferOpStr(req.op) << " to " << req.remoteAgent
                   << " with a value that is not a nixl_status_t";
    } else {
        // The backend logged why; this adds the context.
        NIXL_DEBUG << "agent " << data->name << ": backend " << req.engine->type() << ": "
                   << xferOpStr(req.op) << " of " << req.localDescs.size()
                   << " descriptors to " << req.remoteAgent << " failed: " << statusStr(st);
    }
    finishXfer(*data, req);
    return st;
}

/** The traced status check: the xfer.complete mark when this call sees the transfer succeed. */
[[gnu::noinline]] static nixl_status_t
getXferStatusTraced(nixlAgentData *data, nixlXferReqH *req) {
    // Read as getXferStatusImpl reads it: concurrent checks of one request are the caller's race.
    const bool running = req != nullptr && req->owner == data && req->status == NIXL_IN_PROG;
    const nixl_status_t st = getXferStatusImpl(data, req);
    if (running && st == NIXL_SUCCESS) {
        nixl::trace::CorrelationScope corr(data->tracer.get(), reinterpret_cast<uintptr_t>(req));
        // Telemetry read the completion time already: the mark shares it.
        const uint64_t at = req->telemetry ? nixl::trace::ticksToNs(req->doneTicks) :
                                             nixl::trace::nowNs();
        data->tracer->markAt(nixl::trace::NameId::XFER_COMPLETE, at);
    }
    return st;
}

nixl_status_t
nixlAgent::getXferStatus(nixlXferReqH *req_hndl) const {
    if (data->tracer) [[unlikely]] {
        return getXferStatusTraced(data.get(), req_hndl);
    }
    return getXferStatusImpl(data.get(), req_hndl);
}

nixl_status_t
nixlAgent::getXferTelemetry(const nixlXferReqH *req_hndl, nixl_xfer_telem_t &telemetry) const {
    if (!data->telemetryEnabled) {
        return NIXL_ERR_NO_TELEMETRY;
    }
    if (req_hndl == nullptr) {
        NIXL_ERROR_LIMITED << "agent " << data->name
                           << ": getXferTelemetry: request handle is null";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixlReadGuard guard(data->lock);
    if (req_hndl->owner != data.get()) [[unlikely]] {
        return nixlDeadRequest(*data, "getXferTelemetry", req_hndl);
    }
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
        NIXL_ERROR_LIMITED << "agent " << data->name
                           << ": queryXferBackend: request handle is null";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixlReadGuard guard(data->lock);
    if (req_hndl->owner != data.get()) [[unlikely]] {
        return nixlDeadRequest(*data, "queryXferBackend", req_hndl);
    }
    backend = req_hndl->backend;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::releaseXferReq(nixlXferReqH *req_hndl) const {
    nixlReadGuard guard(data->lock);
    {
        std::lock_guard<std::mutex> lock(data->registryMutex);
        if (req_hndl == nullptr) {
            NIXL_ERROR_LIMITED << "agent " << data->name
                               << ": releaseXferReq: request handle is null";
            return NIXL_ERR_INVALID_PARAM;
        }
        // The registry, not the handle, decides: a pointer that was never a request is not
        // dereferenced.
        if (data->requests.count(req_hndl) == 0) {
            return nixlDeadRequest(*data, "releaseXferReq", req_hndl);
        }
    }
    if (req_hndl->beReq != nullptr) {
        nixl_status_t st = req_hndl->engine->releaseReq(req_hndl->beReq);
        if (st != NIXL_SUCCESS) {
            NIXL_DEBUG << "agent " << data->name << ": backend " << req_hndl->engine->type()
                       << " could not abort the running request to " << req_hndl->remoteAgent
                       << " (" << statusStr(st) << "); it stays allocated, release it later";
            return NIXL_ERR_REPOST_ACTIVE;
        }
    }
    // Out of the registry and back to the pool (not to the allocator) under one lock: later
    // calls with this handle find it released.
    data->recycleRequest(req_hndl);
    return NIXL_SUCCESS;
}

static nixl_status_t
prepMemViewImpl(const nixlAgentData *data, nixlMemViewH &mvh) {
    (void)mvh;
    NIXL_ERROR << "agent " << data->name
               << ": prepMemView: no backend of this build offers device memory views";
    return NIXL_ERR_NOT_SUPPORTED;
}

/** prepMemView of either list kind; extra_params is unused (no backend offers views). */
template<typename Dlist>
static nixl_status_t
prepMemViewOf(const nixlAgentData *data, const Dlist &dlist, nixlMemViewH &mvh) {
    return nixlTraced(
        *data, nixl::trace::NameId::PREP_MEM_VIEW,
        [&](nixl::trace::Span &span) {
            span.add(nixl::trace::KeyId::MEM_TYPE, nixl_be_mem_name(dlist.getType()))
                .add(nixl::trace::KeyId::DESC_COUNT, dlist.descCount());
        },
        [&] { return prepMemViewImpl(data, mvh); });
}

nixl_status_t
nixlAgent::prepMemView(const nixl_remote_dlist_t &dlist,
                       nixlMemViewH &mvh,
                       const nixl_opt_args_t *) const {
    return prepMemViewOf(data.get(), dlist, mvh);
}

nixl_status_t
nixlAgent::prepMemView(const nixl_local_dlist_t &dlist,
                       nixlMemViewH &mvh,
                       const nixl_opt_args_t *) const {
    return prepMemViewOf(data.get(), dlist, mvh);
}

void
nixlAgent::releaseMemView(nixlMemViewH mvh) const {
    nixlTraced(*data, nixl::trace::NameId::RELEASE_MEM_VIEW, nixl_no_trace_attrs, [&] {
        NIXL_WARN << "agent " << data->name << ": releaseMemView: unknown view handle " << mvh;
    });
}

// Notifications run under the reader lock, like the transfer calls: they read only the engine
// list, which control calls change under the writer lock. Each engine's queue has its own lock
// (nixl_backend_plugin.h: get_notifs and gen_notif may run concurrently with each other and with
// post/check/release), so concurrent drains take every message exactly once, and a thread
// draining notifications does not stall the threads posting and polling transfers.

static nixl_status_t
getNotifsImpl(nixlAgentData *data, nixl_notifs_t &notif_map, const nixl_opt_args_t *extra_params) {
    nixlReadGuard guard(data->lock);
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
            NIXL_DEBUG << "agent " << data->name << ": backend " << e->type()
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
nixlAgent::getNotifs(nixl_notifs_t &notif_map, const nixl_opt_args_t *extra_params) {
    return nixlTraced(*data, nixl::trace::NameId::GET_NOTIFS, nixl_no_trace_attrs,
                      [&] { return getNotifsImpl(data.get(), notif_map, extra_params); });
}

static nixl_status_t
genNotifImpl(nixlAgentData *data,
             const std::string &remote_agent,
             const nixl_blob_t &msg,
             const nixl_opt_args_t *extra_params) {
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
            NIXL_DEBUG << "agent " << data->name << ": backend " << e->type()
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

nixl_status_t
nixlAgent::genNotif(const std::string &remote_agent,
                    const nixl_blob_t &msg,
                    const nixl_opt_args_t *extra_params) const {
    return nixlTraced(
        *data, nixl::trace::NameId::GEN_NOTIF,
        [&](nixl::trace::Span &span) { span.add(nixl::trace::KeyId::REMOTE_AGENT, remote_agent); },
        [&] { return genNotifImpl(data.get(), remote_agent, msg, extra_params); });
}
