/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The TEST backend's transfers, notifications and cost estimates; setup, registration and
// metadata are in test_backend.cpp.
#include "test_backend.h"

#include <chrono>
#include <cstring>
#include <string>

#include "test_backend_log.h"

using namespace nixlTestLog; // at, range, rawValue: the pieces of a log line

namespace {

/** Modelled throughput of a memcpy "link": 10 GB/s, i.e. 10,000 bytes per microsecond. */
constexpr uint64_t model_bytes_per_us = 10000;

} // namespace

nixl_status_t
nixlTestEngine::prepXfer(const nixl_xfer_op_t &operation,
                         const nixl_meta_dlist_t &local,
                         const nixl_meta_dlist_t &remote,
                         const std::string &remote_agent,
                         nixlBackendReqH *&handle,
                         const nixl_opt_b_args_t *opt_args) const {
    (void)opt_args; // notifications are taken per post
    const uint32_t op = rawValue(operation);
    if (op != NIXL_READ && op != NIXL_WRITE) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent) << "prepXfer: unknown operation " << op);
        return NIXL_ERR_INVALID_PARAM;
    }
    if (local.getType() != DRAM_SEG || remote.getType() != DRAM_SEG) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "prepXfer: memory types " << static_cast<int>(local.getType()) << " -> "
                       << static_cast<int>(remote.getType()) << " not supported, only DRAM_SEG");
        return NIXL_ERR_NOT_SUPPORTED;
    }
    if (local.size() != remote.size()) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "prepXfer: " << local.size() << " local descriptors but "
                       << remote.size() << " remote ones");
        return NIXL_ERR_INVALID_PARAM;
    }
    std::shared_ptr<nixlTestPeer> peer = findPeer(remote_agent);
    if (peer == nullptr) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "prepXfer: no connection info of this agent was loaded");
        return NIXL_ERR_NOT_FOUND;
    }

    auto req = std::make_unique<nixlTestReqH>();
    req->op = operation;
    req->remoteAgent = remote_agent;
    req->peer = peer;
    req->descCount = local.size();
    req->segments.reserve(local.size());

    std::lock_guard<std::mutex> guard(mdLock_);
    for (size_t i = 0; i < local.size(); ++i) {
        const where_t here = at(localAgent, remote_agent, static_cast<long long>(i));
        const nixlMetaDesc ld = local[i];
        const nixlMetaDesc rd = remote[i];
        if (ld.len != rd.len) {
            NIXL_SDK_ERROR(here << "prepXfer: local length " << ld.len << " differs from remote "
                              << "length " << rd.len);
            return NIXL_ERR_INVALID_PARAM;
        }
        auto lit = localMds_.find(ld.metadataP);
        if (lit == localMds_.end()) {
            NIXL_SDK_ERROR(here << "prepXfer: local " << range(ld.addr, ld.len)
                              << " carries no registration of this engine");
            return NIXL_ERR_INVALID_PARAM;
        }
        const nixlTestRegion &lreg = *lit->second->region;
        if (!lreg.desc().covers(ld)) {
            NIXL_SDK_ERROR(here << "prepXfer: local " << range(ld.addr, ld.len)
                              << " lies outside its registration "
                              << range(lreg.addr, lreg.len));
            return NIXL_ERR_INVALID_PARAM;
        }
        auto rit = remoteMds_.find(rd.metadataP);
        if (rit == remoteMds_.end()) {
            NIXL_SDK_ERROR(here << "prepXfer: remote " << range(rd.addr, rd.len)
                              << " carries no metadata loaded by this engine");
            return NIXL_ERR_INVALID_PARAM;
        }
        const nixlTestRemoteMD &rmd = *rit->second;
        if (rmd.agent != remote_agent || rmd.token != peer->token) {
            NIXL_SDK_ERROR(here << "prepXfer: remote " << range(rd.addr, rd.len)
                              << " carries metadata of agent '" << rmd.agent
                              << "' that does not match the loaded connection");
            return NIXL_ERR_INVALID_PARAM;
        }
        if (!rmd.region->desc().covers(rd)) {
            NIXL_SDK_ERROR(here << "prepXfer: remote " << range(rd.addr, rd.len)
                              << " lies outside its registration "
                              << range(rmd.region->addr, rmd.region->len));
            return NIXL_ERR_INVALID_PARAM;
        }
        if (ld.len == 0) {
            continue; // nothing to move, and memmove must not see a null pointer
        }
        char *lptr = reinterpret_cast<char *>(ld.addr);
        char *rptr = reinterpret_cast<char *>(rd.addr);
        if (operation == NIXL_READ) {
            req->segments.push_back({lptr, rptr, ld.len, i, rmd.region});
        } else {
            req->segments.push_back({rptr, lptr, ld.len, i, rmd.region});
        }
        req->totalBytes += ld.len;
    }
    handle = req.release();
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::runCopy(nixlTestReqH &req, const std::string *notif) const {
    nixlTestPeer &peer = *req.peer;
    if (peer.dropped.load(std::memory_order_acquire)) {
        NIXL_SDK_ERROR(at(localAgent, req.remoteAgent)
                       << "transfer: the connection to this agent was dropped");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    nixlTestEndpoint *target = peer.endpoint.get();
    const nixlTestReqH::segment_t *gone = nullptr;
    // Phases with tracing on, under the request's trace context; a no-op (one branch) without.
    if (phasesOn()) {
        recordPhase(req.traceCtx, NIXL_BE_PHASE_WIRE_SUBMITTED, "test.copy", nixlTraceNow);
    }
    const bool reached = target != nullptr && target->withAccess([&] {
        // Check every region first so that a transfer moves all of its data or none.
        for (const auto &seg : req.segments) {
            if (!seg.remote->live) {
                gone = &seg;
                return;
            }
        }
        for (const auto &seg : req.segments) {
            // memmove, not memcpy: a loopback transfer may name overlapping ranges.
            std::memmove(seg.dst, seg.src, seg.len);
        }
        // Queued only now, so the target never sees a notification before the data.
        if (notif != nullptr) {
            target->pushNotif(localAgent, *notif);
        }
    });
    if (!reached) {
        peer.dropped.store(true, std::memory_order_release);
        NIXL_SDK_ERROR(at(localAgent, req.remoteAgent)
                       << "transfer: the engine of this agent was destroyed");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    if (gone != nullptr) {
        NIXL_SDK_ERROR(at(localAgent, req.remoteAgent, static_cast<long long>(gone->index))
                       << "transfer: remote registration "
                       << range(gone->remote->addr, gone->remote->len)
                       << " was deregistered; nothing was moved");
        return NIXL_ERR_BACKEND;
    }
    if (phasesOn()) {
        // nixlTraceNow: core's trace clock, cheaper than a steady_clock read here.
        recordPhase(req.traceCtx, NIXL_BE_PHASE_WIRE_COMPLETED, "test.copy", nixlTraceNow);
        if (notif != nullptr) {
            recordPhase(req.traceCtx, NIXL_BE_PHASE_NOTIF_SENT, "test.notif", nixlTraceNow);
        }
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::postXfer(const nixl_xfer_op_t &operation,
                         const nixl_meta_dlist_t &local,
                         const nixl_meta_dlist_t &remote,
                         const std::string &remote_agent,
                         nixlBackendReqH *&handle,
                         const nixl_opt_b_args_t *opt_args) const {
    auto *req = static_cast<nixlTestReqH *>(handle);
    if (req == nullptr) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent) << "postXfer: null request");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (!cfg_.holdNotifs) [[likely]] {
        return postXferNow(req, operation, local, remote, remote_agent, opt_args);
    }
    if (!awaitDrainer()) {
        return NIXL_ERR_BACKEND;
    }
    const nixl_status_t st = postXferNow(req, operation, local, remote, remote_agent, opt_args);
    noteReturn(true);
    return st;
}

nixl_status_t
nixlTestEngine::postXferNow(nixlTestReqH *req,
                            const nixl_xfer_op_t &operation,
                            const nixl_meta_dlist_t &local,
                            const nixl_meta_dlist_t &remote,
                            const std::string &remote_agent,
                            const nixl_opt_b_args_t *opt_args) const {
    // Hot path: no allocation here unless a notification is queued (see test_backend.h).
    std::lock_guard<std::mutex> guard(req->lock);
    if (rawValue(operation) != static_cast<uint32_t>(req->op) || local.size() != req->descCount ||
        remote.size() != req->descCount) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "postXfer: operation or descriptor counts differ from prepXfer's");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (req->state == nixlTestReqH::state_t::RUNNING) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "postXfer: the request is still running");
        return NIXL_ERR_REPOST_ACTIVE;
    }

    auto fail = [req](nixl_status_t st) {
        req->state = nixlTestReqH::state_t::FAILED;
        req->failure = st;
        return st;
    };

    const uint64_t call = postCalls_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (cfg_.failPostAt != 0 && call == cfg_.failPostAt) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "postXfer call " << call
                       << " fails on request (fail_post_at=" << cfg_.failPostAt << ")");
        return fail(NIXL_ERR_BACKEND);
    }
    nixlTestPeer &peer = *req->peer;
    if (peer.dropped.load(std::memory_order_acquire)) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "postXfer: the connection to this agent was dropped");
        return fail(NIXL_ERR_REMOTE_DISCONNECT);
    }
    // Take a slot first so that concurrent posts cannot overshoot disconnect_after.
    const uint64_t accepted = peer.acceptedPosts.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (cfg_.disconnectAfter != 0 && accepted > cfg_.disconnectAfter) {
        peer.acceptedPosts.fetch_sub(1, std::memory_order_acq_rel);
        peer.dropped.store(true, std::memory_order_release);
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "postXfer: connection dropped on request after "
                       << cfg_.disconnectAfter << " posts (disconnect_after)");
        return fail(NIXL_ERR_REMOTE_DISCONNECT);
    }
    if (peer.endpoint == nullptr) {
        peer.acceptedPosts.fetch_sub(1, std::memory_order_acq_rel);
        peer.dropped.store(true, std::memory_order_release);
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "postXfer: the engine of this agent no longer exists");
        return fail(NIXL_ERR_REMOTE_DISCONNECT);
    }

    req->traceCtx = opt_args != nullptr ? opt_args->traceCtx : nullptr;
    if (phasesOn()) {
        nixl_trace_attr_t attrs[1] = {};
        attrs[0].key = "test.descs";
        attrs[0].type = NIXL_TRACE_ATTR_INT64;
        attrs[0].value.i64 = static_cast<int64_t>(req->descCount);
        recordPhase(req->traceCtx, NIXL_BE_PHASE_SUBMIT, "test.post", nixlTraceNow, attrs);
    }
    const std::string *notif =
        opt_args != nullptr && opt_args->hasNotif ? &opt_args->notifMsg : nullptr;
    if (cfg_.async) {
        req->notifPending = notif != nullptr;
        if (notif != nullptr) {
            req->notifMsg.assign(*notif);
        }
        req->pollsLeft = cfg_.asyncPolls;
        req->state = nixlTestReqH::state_t::RUNNING;
        return NIXL_IN_PROG;
    }
    const nixl_status_t st = runCopy(*req, notif);
    if (st != NIXL_SUCCESS) {
        peer.acceptedPosts.fetch_sub(1, std::memory_order_acq_rel);
        return fail(st);
    }
    req->state = nixlTestReqH::state_t::DONE;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::checkXfer(nixlBackendReqH *handle) const {
    auto *req = static_cast<nixlTestReqH *>(handle);
    if (req == nullptr) {
        NIXL_SDK_ERROR(at(localAgent, "") << "checkXfer: null request");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (!cfg_.holdNotifs) [[likely]] {
        return checkXferNow(req);
    }
    const nixl_status_t st = checkXferNow(req);
    noteReturn(false);
    return st;
}

nixl_status_t
nixlTestEngine::checkXferNow(nixlTestReqH *req) const {
    std::lock_guard<std::mutex> guard(req->lock);
    switch (req->state) {
    case nixlTestReqH::state_t::IDLE:
        NIXL_SDK_ERROR(at(localAgent, req->remoteAgent)
                       << "checkXfer: the request was never posted");
        return NIXL_ERR_NOT_POSTED;
    case nixlTestReqH::state_t::DONE:
        return NIXL_SUCCESS;
    case nixlTestReqH::state_t::FAILED:
        return req->failure; // logged when it failed
    case nixlTestReqH::state_t::RUNNING:
        break;
    }
    if (req->peer->dropped.load(std::memory_order_acquire)) {
        NIXL_SDK_ERROR(at(localAgent, req->remoteAgent)
                       << "checkXfer: the connection to this agent was dropped while the "
                          "transfer ran");
        req->state = nixlTestReqH::state_t::FAILED;
        req->failure = NIXL_ERR_REMOTE_DISCONNECT;
        return req->failure;
    }
    if (req->pollsLeft > 0) {
        --req->pollsLeft;
        return NIXL_IN_PROG;
    }
    const nixl_status_t st = runCopy(*req, req->notifPending ? &req->notifMsg : nullptr);
    if (st != NIXL_SUCCESS) {
        req->state = nixlTestReqH::state_t::FAILED;
        req->failure = st;
        return st;
    }
    req->state = nixlTestReqH::state_t::DONE;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::releaseReqH(nixlBackendReqH *handle) const {
    auto *req = static_cast<nixlTestReqH *>(handle);
    if (req == nullptr) {
        return NIXL_SUCCESS;
    }
    {
        std::lock_guard<std::mutex> guard(req->lock);
        if (req->state == nixlTestReqH::state_t::RUNNING && cfg_.failRelease) {
            NIXL_SDK_ERROR(at(localAgent, req->remoteAgent)
                           << "releaseReqH: cannot abort a running request (fail_release=true)");
            return NIXL_ERR_REPOST_ACTIVE;
        }
    }
    // A running request is aborted: its copy and notification never happen.
    delete req;
    return NIXL_SUCCESS;
}

bool
nixlTestEngine::awaitDrainer() const {
    std::unique_lock<std::mutex> g(hold_.lock);
    if (!hold_.cv.wait_for(g, hold_deadline, [this] { return hold_.entered > 0; })) {
        NIXL_SDK_ERROR(at(localAgent, "")
                       << "postXfer (hold_notifs): no getNotifs call entered the engine in "
                       << hold_deadline.count()
                       << " s; the caller serialises posts with getNotifs");
        return false;
    }
    return true;
}

void
nixlTestEngine::noteReturn(bool post) const {
    {
        std::lock_guard<std::mutex> g(hold_.lock);
        ++(post ? hold_.posts : hold_.checks);
    }
    hold_.cv.notify_all();
}

bool
nixlTestEngine::holdDrain() {
    std::unique_lock<std::mutex> g(hold_.lock);
    ++hold_.entered;
    const uint64_t posts = hold_.posts;
    const uint64_t checks = hold_.checks;
    hold_.cv.notify_all();
    if (!hold_.cv.wait_for(g, hold_deadline, [&] {
            return hold_.posts > posts && hold_.checks > checks;
        })) {
        NIXL_SDK_ERROR(at(localAgent, "")
                       << "getNotifs (hold_notifs): no postXfer and checkXfer returned in "
                       << hold_deadline.count()
                       << " s while it was inside; the caller serialises them with getNotifs");
        return false;
    }
    return true;
}

nixl_status_t
nixlTestEngine::getNotifs(notif_list_t &notif_list) {
    if (cfg_.holdNotifs && !holdDrain()) {
        return NIXL_ERR_BACKEND;
    }
    const size_t before = notif_list.size();
    self_->drainNotifs(notif_list);
    if (phasesOn() && notif_list.size() > before) {
        // Delivered now: the target's side of each notification.
        for (size_t i = before; i < notif_list.size(); ++i) {
            recordPhase(nullptr, NIXL_BE_PHASE_NOTIF_RECEIVED, "test.notif", nixlTraceNow);
        }
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::genNotif(const std::string &remote_agent, const std::string &msg) const {
    std::shared_ptr<nixlTestPeer> peer = findPeer(remote_agent);
    if (peer == nullptr) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "genNotif: no connection info of this agent was loaded");
        return NIXL_ERR_NOT_FOUND;
    }
    if (peer->dropped.load(std::memory_order_acquire)) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "genNotif: the connection to this agent was dropped");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    nixlTestEndpoint *target = peer->endpoint.get();
    if (target == nullptr ||
        !target->withAccess([&] { target->pushNotif(localAgent, msg); })) {
        peer->dropped.store(true, std::memory_order_release);
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "genNotif: the engine of this agent no longer exists");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::queryMem(const std::vector<nixlBlobDesc> &descs,
                         std::vector<nixl_query_resp_t> &resp) const {
    resp.clear();
    resp.reserve(descs.size());
    for (const nixlBlobDesc &d : descs) {
        if (self_->covered(d)) {
            resp.emplace_back(nixl_b_params_t{{"registered", "true"}});
        } else {
            resp.emplace_back(std::nullopt);
        }
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::estimateXferCost(const nixl_xfer_op_t &operation,
                                 const nixl_meta_dlist_t &local,
                                 const nixl_meta_dlist_t &remote,
                                 const std::string &remote_agent,
                                 nixlBackendReqH *const &handle,
                                 std::chrono::microseconds &duration,
                                 std::chrono::microseconds &err_margin,
                                 nixl_cost_t &method) const {
    (void)operation; // reads and writes cost the same memcpy
    uint64_t total = 0;
    if (handle != nullptr) {
        total = static_cast<const nixlTestReqH *>(handle)->totalBytes;
    } else {
        if (local.size() != remote.size()) {
            NIXL_SDK_ERROR(at(localAgent, remote_agent)
                           << "estimateXferCost: " << local.size()
                           << " local descriptors but " << remote.size() << " remote ones");
            return NIXL_ERR_INVALID_PARAM;
        }
        for (size_t i = 0; i < local.size(); ++i) {
            if (local[i].len != remote[i].len) {
                NIXL_SDK_ERROR(at(localAgent, remote_agent, static_cast<long long>(i))
                               << "estimateXferCost: local length " << local[i].len
                               << " differs from remote length " << remote[i].len);
                return NIXL_ERR_INVALID_PARAM;
            }
            total += local[i].len;
        }
    }
    // Rounded up, so that any non-empty transfer costs at least a microsecond.
    duration = std::chrono::microseconds((total + model_bytes_per_us - 1) / model_bytes_per_us);
    err_margin = std::chrono::microseconds(0);
    method = nixl_cost_t::ANALYTICAL_BACKEND;
    return NIXL_SUCCESS;
}
