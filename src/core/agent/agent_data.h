/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_data.h
 * @brief Internal state of nixlAgent: its backends, memory sections, remote agents, the
 *        request pool and registries, and the helpers the API calls share. Not installed.
 *        The agent lock is in agent_lock.h, registrations in reg_list.h, prepared lists and
 *        requests in xfer_req.h.
 *
 * Locking: every nixlAgent method takes data->lock in reader or writer mode as
 * nixl_thread_sync_t says; the request and list registries have their own small mutex because
 * readers (createXferReq, releaseXferReq) change them. The transfer hot path (post, status) reads
 * only the request itself and one atomic flag of the remote record.
 */
#ifndef NIXL_SRC_CORE_AGENT_AGENT_DATA_H
#define NIXL_SRC_CORE_AGENT_AGENT_DATA_H

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend/backend_engine.h"
#include "nixl.h"
#include "nixl_plugin_names.h"
#include "common/fast_clock.h"
#include "metadata/md_exchange.h"
#include "metadata/p2p/p2p_exchange.h"
#include "telemetry/telemetry.h"
#include "tracing/tracing.h"
#include "ptr_set.h"
#include "agent/agent_lock.h"
#include "agent/reg_list.h"
#include "agent/xfer_req.h"

/** The public handle of a backend: what createBackend returns and hints name. */
class nixlBackendH {
public:
    explicit nixlBackendH(nixlBackendEngineProxy *engine) noexcept : engine_(engine) {}

    const nixl_backend_t &
    getType() const noexcept {
        return engine_->type();
    }

    bool
    supportsRemote() const noexcept {
        return engine_->supportsRemote();
    }

    bool
    supportsLocal() const noexcept {
        return engine_->supportsLocal();
    }

    bool
    supportsNotif() const noexcept {
        return engine_->supportsNotif();
    }

    nixlBackendEngineProxy *
    engine() const noexcept {
        return engine_;
    }

private:
    nixlBackendEngineProxy *engine_;
};

class nixlAgentData {
public:
    nixlAgentData(const std::string &name, const nixlAgentConfig &cfg);

    const std::string name;
    const nixlAgentConfig config;
    /** Per-request timing (getXferTelemetry) is kept: NIXL_TELEMETRY_ENABLE/captureTelemetry. */
    bool telemetryEnabled = false;
    /** The event pipeline; null when telemetry is off or its exporter declined to run. Set at
     *  construction, reset at destruction (final flush); read by any thread in between.
     *  Outlives the engines: backend progress threads count dropped trace phases into it
     *  (addTracePhaseDrops) until the engines join them, so ~nixlAgent destroys the engines
     *  first and, should construction fail, member order (engines are declared later) does. */
    std::unique_ptr<nixlTelemetry> telemetry;
    /** The agent's trace backends; null when tracing is off (NIXL_TRACE_BACKENDS) or none
     *  could be used, so each traced call pays one branch. Set at construction, read by any
     *  thread, destroyed with the agent. */
    std::unique_ptr<nixl::trace::Tracer> tracer;
    nixlAgentLock lock;

    /** Engines in creation order, and their handles. */
    std::vector<std::unique_ptr<nixlBackendEngineProxy>> engines;
    std::vector<std::unique_ptr<nixlBackendH>> handles;
    std::map<nixl_backend_t, nixlBackendH *> byType;
    /** Connection info of each remote-capable engine, fetched once at creation. */
    std::map<nixlBackendEngineProxy *, std::string> localConnInfo;

    std::map<nixl_section_key_t, nixlRegList<nixlLocalReg>> localSection;

    std::unordered_map<std::string, std::shared_ptr<nixlRemoteAgent>> remotes;

    std::mutex registryMutex;
    nixlPtrSet<nixlXferReqH> requests; ///< live requests (no allocation per insert)
    std::unordered_set<nixlDlistH *> dlists;

    /**
     * The request pool (registryMutex). Released requests queue here, oldest first, and are
     * reused only once more than requestQuarantine of them wait, so a released handle is
     * recognised (owner null) until that many requests were released after it. Beyond
     * requestPoolMax waiting ones, the oldest is freed.
     */
    static constexpr size_t requestQuarantine = 1024;
    static constexpr size_t requestPoolMax = 65536;
    nixlXferReqH *freeHead = nullptr;
    nixlXferReqH *freeTail = nullptr;
    size_t freeCount = 0;

    /** A cleared request from the pool, or a new one, entered in `requests` (owner still
     *  null until published). registryMutex held. */
    nixlXferReqH *
    acquireRequest();
    /**
     * Resets req (frees what it holds), removes it from `requests` and queues it in the pool,
     * under one lock. registryMutex not held; the caller holds the agent lock (so no registry
     * walk, which takes it as a writer, sees the reset).
     */
    void
    recycleRequest(nixlXferReqH *req);
    /** Frees every pooled request. registryMutex held or no other thread left. */
    void
    freeRequestPool() noexcept;

    // Metadata exchange (exchange.cpp). Declared last, so destroyed first: their threads call
    // into the state above. ~nixlAgent stops them before anything else.
    /** What the exchanges call back into; set at construction. */
    std::unique_ptr<nixlMdSink> mdSink;
    /** Peer-to-peer sockets: the listener with useListenThread; always present. */
    std::unique_ptr<nixlP2PExchange> p2p;
    /** The central store (etcd) when one is configured; null otherwise. */
    std::unique_ptr<nixlMdExchange> central;
};

/** The sync mode the agent lock runs in: cfg.syncMode, except that NONE becomes RW when a
 *  metadata thread (the P2P listener, the etcd exchange) calls into the agent beside the
 *  application. Reads NIXL_ETCD_ENDPOINTS, so it throws std::invalid_argument, as agent
 *  construction must, when the configuration file does not parse. */
nixl_thread_sync_t
nixlEffectiveSyncMode(const nixlAgentConfig &cfg);

// Helpers on agent state shared by agent.cpp, metadata.cpp, prepare.cpp and transfer.cpp;
// defined in agent_data.cpp. Callers hold the agent lock as noted.

/** Engines to consider: the hinted ones of this agent in hint order, else all in creation
 *  order. Any lock mode. */
std::vector<nixlBackendEngineProxy *>
nixlCandidateEngines(const nixlAgentData &d, const nixl_opt_args_t *extra);

/** Calls f on each engine nixlCandidateEngines lists, in its order, until f returns true
 *  (then returns true). Without hints it walks d.engines in place: no list is built. */
template<typename F>
bool
nixlForEachCandidate(const nixlAgentData &d, const nixl_opt_args_t *extra, F &&f) {
    if (extra != nullptr && !extra->backends.empty()) {
        for (nixlBackendEngineProxy *e : nixlCandidateEngines(d, extra)) {
            if (f(e)) {
                return true;
            }
        }
        return false;
    }
    for (const auto &e : d.engines) {
        if (f(e.get())) {
            return true;
        }
    }
    return false;
}

/** True when a hint is not a handle of this agent. Any lock mode. */
bool
nixlHasForeignHint(const nixlAgentData &d, const nixl_opt_args_t *extra);

/** Disconnects from, unloads and forgets a remote agent. Writer lock. */
void
nixlDropRemote(nixlAgentData &d, const std::string &name);

/**
 * After loadRemoteMD replaced registrations of remote (a re-registration), marks the requests
 * and prepared lists that still hold one of the replaced metadata (old) stale, and unloads
 * each old metadata, and each of remote.retired, that no running request uses; the rest wait
 * in remote.retired. Writer lock.
 */
void
nixlRetireRemoteMds(nixlAgentData &d,
                    nixlRemoteAgent &remote,
                    const std::vector<std::pair<nixlBackendEngineProxy *, nixl_be_md_t *>> &old);

/** One line: a request handle that is not a live request of this agent (released, or another
 *  agent's); returns NIXL_ERR_INVALID_PARAM. Cold. */
[[gnu::cold]] nixl_status_t
nixlDeadRequest(const nixlAgentData &d, const char *call, const nixlXferReqH *req);

/** Records the error event of a negative status when the agent exports telemetry; returns st.
 *  Any lock mode; no allocation. */
inline nixl_status_t
nixlNoteStatus(const nixlAgentData &d, nixl_status_t st) noexcept {
    if (st < 0 && d.telemetry != nullptr) {
        d.telemetry->recordStatus(st);
    }
    return st;
}

#endif // NIXL_SRC_CORE_AGENT_AGENT_DATA_H
