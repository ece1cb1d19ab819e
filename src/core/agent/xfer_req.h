/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file xfer_req.h
 * @brief What prepared lists and transfer requests hold: the record of a remote agent they
 *        target (nixlRemoteAgent), a list prepared by prepXferDlist (nixlDlistH) and a transfer
 *        request (nixlXferReqH), with the request's in-place reset for the agent's pool. Not
 *        installed.
 *
 * Thread safety: a nixlRemoteAgent's valid flag is atomic (read on the transfer path without
 * the agent lock); its other members change under the agent lock held exclusively. A list or
 * request is changed by one call at a time (the agent's calls on one handle do not overlap,
 * NIXL 1.4) except for the stale flags, set under the writer lock while no reader runs.
 */
#ifndef NIXL_SRC_CORE_AGENT_XFER_REQ_H
#define NIXL_SRC_CORE_AGENT_XFER_REQ_H

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/reg_list.h"
#include "backend/backend_engine.h"
#include "common/fast_clock.h"
#include "nixl.h"

class nixlAgentData;
class nixlBackendH;

using nixl_section_key_t = std::pair<nixl_mem_t, nixlBackendEngineProxy *>;

/** What this agent knows about one remote agent. Shared with requests that target it. */
struct nixlRemoteAgent {
    std::string name;
    /** Cleared when the metadata is invalidated or the peer reported disconnected. */
    std::atomic<bool> valid{true};
    /** Engines that loaded this agent's connection info, with that info. */
    std::map<nixlBackendEngineProxy *, std::string> conns;
    std::map<nixl_section_key_t, nixlRegList<nixlRemoteReg>> sections;
    /** Load order of the next registration loaded (nixlRemoteReg::seq). Writer lock. */
    uint64_t nextSeq = 1;
    /** Metadata of replaced registrations that a running request still used when they were
     *  replaced: unloaded once no running request uses them (next load of this agent's
     *  metadata) or when the record is dropped. Writer lock. */
    std::vector<std::pair<nixlBackendEngineProxy *, nixl_be_md_t *>> retired;
};

/** A list prepared by prepXferDlist. */
class nixlDlistH {
public:
    std::string remoteAgent; ///< "" for the local side; own name for loopback
    bool loopback = false;
    std::shared_ptr<nixlRemoteAgent> remote; ///< remote side (not loopback)
    nixl_mem_t mem = DRAM_SEG;
    std::vector<nixlBasicDesc> descs;
    /** Engines covering every descriptor, in preference order, with the metadata per desc. */
    std::vector<std::pair<nixlBackendEngineProxy *, std::vector<nixl_be_md_t *>>> engines;
    /** Set by deregisterMem (writer lock) when a registration this list resolved to is gone. */
    bool stale = false;
    /** Set by loadRemoteMD (writer lock) when the peer re-registered memory this list resolved
     *  to and its new metadata replaced the registration the list holds. */
    bool remoteStale = false;
};

/**
 * A transfer request. Kept in its agent's request pool (nixlAgentData::acquireRequest): a
 * released request is reset, owner cleared, and its memory kept for later requests, so a call
 * with a released handle reads a cleared owner instead of freed memory.
 */
class nixlXferReqH {
public:
    /** The agent this request is live in; null once released (and while pooled). */
    const nixlAgentData *owner = nullptr;
    /** Next released request in the pool's queue (pooled requests only). */
    nixlXferReqH *nextFree = nullptr;
    nixlBackendEngineProxy *engine = nullptr;
    nixlBackendH *backend = nullptr;
    nixl_be_req_t *beReq = nullptr;
    nixl_xfer_op_t op = NIXL_WRITE;
    std::string remoteAgent;
    bool loopback = false;
    std::shared_ptr<nixlRemoteAgent> remote; ///< null for loopback
    /** Set by deregisterMem (writer lock) when a local or loopback registration it uses is
     *  gone. Metadata pointers are not compared later: a new registration may reuse one. */
    bool localStale = false;
    /** Set by loadRemoteMD (writer lock) when the peer re-registered a range this request
     *  targets and its newer metadata replaced the registration the request was made with. */
    bool remoteStale = false;

    std::vector<nixl_be_xfer_desc_t> localDescs;
    std::vector<nixl_be_xfer_desc_t> remoteDescs;
    nixl_be_xfer_list_t localList{};
    nixl_be_xfer_list_t remoteList{};

    bool hasNotif = false;
    nixl_blob_t notif;
    nixl_blob_t customParam;
    nixl_be_opt_args_t opt{}; ///< points into notif/customParam; rebuilt per post, no allocation

    /** The request's trace context, which opt.trace_ctx points at for prep and every post:
     *  set once when the request is made (tracing/trace_context.h); all zero when the agent
     *  does not trace. */
    nixl_be_trace_ctx_t traceCtx{};
    /** traceCtx's trace id, and the parent id of an attached traceparent, as lower-case hex
     *  for the post span's attributes (no allocation per post); set only when traced. */
    char traceIdHex[32]{};
    char parentIdHex[16]{};
    bool hasTraceParent = false;

    nixl_status_t status = NIXL_ERR_NOT_POSTED;
    size_t totalBytes = 0;

    bool telemetry = false;
    /** The current terminal status already went to the telemetry pipeline (cleared by post). */
    bool statusReported = false;
    /** The backend's data path of this request (nixl_xfer_path_t; 0 unknown), learnt once at
     *  prep when telemetry is on, for the per-path series (issue 34). Sits in padding. */
    uint32_t path = 0;
    // Raw nixlFastClock timestamps (converted when reported): post entry, post return, and
    // completion seen. Three steady_clock reads per request cost more than the rest of telemetry.
    nixlFastClock::ticks_t startTicks = 0;
    nixlFastClock::ticks_t postTicks = 0;
    nixlFastClock::ticks_t doneTicks = 0;

    /**
     * Back to a fresh request's state, in place: what it refers to (the remote record, the
     * backend request) is dropped and its strings are emptied, but a small request keeps its
     * descriptor arrays' storage, so that the next request made from the pool allocates none.
     * Cheaper than assigning a new object (472 bytes built and moved). Every member is reset
     * here: the static_assert after the class is there to make a new member come here too.
     */
    void
    resetForPool() {
        owner = nullptr;
        nextFree = nullptr;
        engine = nullptr;
        backend = nullptr;
        beReq = nullptr;
        op = NIXL_WRITE;
        remoteAgent.clear();
        loopback = false;
        remote.reset();
        localStale = false;
        remoteStale = false;
        constexpr size_t keep = 256;
        if (localDescs.capacity() <= keep && remoteDescs.capacity() <= keep) {
            localDescs.clear();
            remoteDescs.clear();
        } else {
            std::vector<nixl_be_xfer_desc_t>().swap(localDescs);
            std::vector<nixl_be_xfer_desc_t>().swap(remoteDescs);
        }
        localList = {};
        remoteList = {};
        hasNotif = false;
        // A long message or parameter is not kept in the pool; a short one's storage is.
        if (notif.capacity() > 256) {
            nixl_blob_t().swap(notif);
        } else {
            notif.clear();
        }
        if (customParam.capacity() > 256) {
            nixl_blob_t().swap(customParam);
        } else {
            customParam.clear();
        }
        opt = {};
        traceCtx = {};
        std::memset(traceIdHex, 0, sizeof(traceIdHex));
        std::memset(parentIdHex, 0, sizeof(parentIdHex));
        hasTraceParent = false;
        status = NIXL_ERR_NOT_POSTED;
        totalBytes = 0;
        telemetry = false;
        statusReported = false;
        path = 0;
        startTicks = 0;
        postTicks = 0;
        doneTicks = 0;
    }

    /** Takes the notification of extra: notif if engaged, else notifMsg if hasNotif, else none
     *  (also when extra is null). Call refreshOpt() afterwards. */
    void
    setNotif(const nixl_opt_args_t *extra) {
        if (extra != nullptr && extra->notif.has_value()) {
            hasNotif = true;
            notif = *extra->notif;
        } else if (extra != nullptr && extra->hasNotif) {
            hasNotif = true;
            notif = extra->notifMsg;
        } else {
            hasNotif = false;
            notif.clear();
        }
    }

    /** Points opt at the current notification and custom parameter. No allocation. */
    void
    refreshOpt() noexcept {
        opt.size = sizeof(opt);
        opt.has_notif = hasNotif ? 1 : 0;
        opt.notif = nixl_plugin_str_t{notif.data(), notif.size()};
        opt.custom_param = nixl_plugin_str_t{customParam.data(), customParam.size()};
        opt.trace_ctx = &traceCtx;
    }
};

// A member added to nixlXferReqH changes its size: reset it in resetForPool, then update this.
static_assert(sizeof(void *) != 8 || sizeof(nixlXferReqH) == 472,
              "reset the new member in resetForPool");

#endif // NIXL_SRC_CORE_AGENT_XFER_REQ_H
