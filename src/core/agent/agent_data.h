/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_data.h
 * @brief Internal state of nixlAgent: backends, local and remote memory sections, prepared
 *        lists, transfer requests and the agent lock. Not installed.
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

/** Lock whose behaviour follows nixl_thread_sync_t. */
class nixlAgentLock {
public:
    explicit nixlAgentLock(nixl_thread_sync_t mode) noexcept : mode_(mode) {}

    nixl_thread_sync_t
    mode() const noexcept {
        return mode_;
    }

    void
    lockWrite() {
        if (mode_ != nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE) {
            mutex_.lock();
        }
    }

    void
    unlockWrite() {
        if (mode_ != nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE) {
            mutex_.unlock();
        }
    }

    void
    lockRead() {
        if (mode_ == nixl_thread_sync_t::NIXL_THREAD_SYNC_RW) {
            mutex_.lock_shared();
        } else if (mode_ == nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT) {
            mutex_.lock();
        }
    }

    void
    unlockRead() {
        if (mode_ == nixl_thread_sync_t::NIXL_THREAD_SYNC_RW) {
            mutex_.unlock_shared();
        } else if (mode_ == nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT) {
            mutex_.unlock();
        }
    }

private:
    nixl_thread_sync_t mode_;
    std::shared_mutex mutex_;
};

class nixlWriteGuard {
public:
    explicit nixlWriteGuard(nixlAgentLock &l) : l_(l) {
        l_.lockWrite();
    }

    ~nixlWriteGuard() {
        l_.unlockWrite();
    }

    nixlWriteGuard(const nixlWriteGuard &) = delete;
    nixlWriteGuard &
    operator=(const nixlWriteGuard &) = delete;

private:
    nixlAgentLock &l_;
};

class nixlReadGuard {
public:
    explicit nixlReadGuard(nixlAgentLock &l) : l_(l) {
        l_.lockRead();
    }

    ~nixlReadGuard() {
        l_.unlockRead();
    }

    nixlReadGuard(const nixlReadGuard &) = delete;
    nixlReadGuard &
    operator=(const nixlReadGuard &) = delete;

private:
    nixlAgentLock &l_;
};

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

/** A registration of local memory with one engine. */
struct nixlLocalReg {
    /** The range only: the caller's metaInfo is passed to the backend at registration and
     *  not needed after, and without it a list node fits glibc's fast bins (128 bytes). */
    nixlBasicDesc desc;
    nixl_be_md_t *md = nullptr;
    nixl_be_md_t *loopMd = nullptr; ///< loadLocalMD result (local-capable engines)
    std::string publicData; ///< getPublicData result (remote-capable engines)
};

/** A registration of a remote agent's memory, as loaded from its metadata. */
struct nixlRemoteReg {
    nixlBasicDesc desc;
    nixl_be_md_t *md = nullptr;
    /** When this agent last loaded it from the peer's metadata (the remote record's counter):
     *  of the registrations covering a descriptor, the most recently loaded one is used, since
     *  only the peer's newest metadata is sure to describe memory it still has registered. */
    uint64_t seq = 0;
    /** Hash of the public data it was loaded from. The same range loaded again with other
     *  public data is a re-registration (a freed buffer's address handed out again): it
     *  replaces this one. The same public data again changes nothing. */
    uint64_t publicHash = 0;
};

/**
 * Registrations of one (memory kind, engine), ordered by (devId, addr, len). Insert, erase and
 * exact lookup are O(log N), so one call registering or deregistering N descriptors (a KV cache
 * registers hundreds of thousands of blocks) costs O(N log N); lookups start at a finger (the
 * last entry a writer touched) and at the two ends, so lists walked in order in either
 * direction cost O(1) per descriptor. The registration covering a descriptor is found by
 * binary search plus a backward scan that stops once the gap exceeds the longest registration
 * present: short when registrations do not nest, longer only when a few large registrations
 * overlap many small ones.
 *
 * Thread safety: findCovering, findExact, all, empty and size may run concurrently (agent lock
 * held shared); every other member needs it held exclusively.
 */
template<typename Reg> class nixlRegList {
public:
    /** The ordered store: (devId, addr, len) to registration. */
    using map_t = std::map<nixlBasicDesc, Reg>;

    nixlRegList() = default;
    // The copies and moves drop the finger: it points into the source's map.
    nixlRegList(const nixlRegList &other);
    nixlRegList(nixlRegList &&other) noexcept;
    nixlRegList &
    operator=(const nixlRegList &other);
    nixlRegList &
    operator=(nixlRegList &&other) noexcept;
    ~nixlRegList() = default;

    /** Registration covering q, or nullptr. Zero-length registrations of unbounded kinds
     *  (BLK, OBJ, FILE) cover everything from their address on. */
    const Reg *
    findCovering(const nixlBasicDesc &q) const noexcept;

    /** The registration equal to d in (devId, addr, len), or nullptr. Stable until erased.
     *  Reads only: safe for concurrent readers. */
    Reg *
    findExact(const nixlBasicDesc &d) noexcept;

    /** findExact that also moves the search finger to the result, so that looking up the
     *  neighbours next costs O(1). Writers only (the agent lock held exclusively). */
    Reg *
    seek(const nixlBasicDesc &d) noexcept;

    /** False when an equal (devId, addr, len) registration exists. */
    bool
    insert(Reg reg);

    /** True once two registrations of the list have overlapped (never cleared): findCovering
     *  of a list whose entries carry a load order (nixlRemoteReg::seq) then scans every
     *  covering entry for the newest instead of taking the first. */
    bool
    overlapping() const noexcept {
        return overlapping_;
    }

    bool
    erase(const nixlBasicDesc &d) noexcept;

    /** Removes the registration equal to d and returns it; nullopt when there is none. */
    std::optional<Reg>
    take(const nixlBasicDesc &d);

    /**
     * Every registration, in (devId, addr, len) order: a range of const Reg & with size().
     * Hand-written rather than std::views::values, which clang 14 (the fuzz build) cannot
     * instantiate over libstdc++ 12's std::map.
     */
    class valueRange {
    public:
        class iterator {
        public:
            explicit iterator(typename map_t::const_iterator it) noexcept : it_(it) {}
            const Reg &
            operator*() const noexcept {
                return it_->second;
            }
            iterator &
            operator++() noexcept {
                ++it_;
                return *this;
            }
            bool
            operator==(const iterator &other) const noexcept {
                return it_ == other.it_;
            }

        private:
            typename map_t::const_iterator it_;
        };

        explicit valueRange(const map_t &m) noexcept : map_(m) {}
        iterator
        begin() const noexcept {
            return iterator(map_.begin());
        }
        iterator
        end() const noexcept {
            return iterator(map_.end());
        }
        size_t
        size() const noexcept {
            return map_.size();
        }

    private:
        const map_t &map_;
    };

    valueRange
    all() const noexcept {
        return valueRange(regs_);
    }

    bool
    empty() const noexcept {
        return regs_.empty();
    }

    size_t
    size() const noexcept {
        return regs_.size();
    }

    void
    setUnboundedZeroLength(bool v) noexcept {
        unboundedZero_ = v;
    }

private:
    /** The entry equal to d, or end(). */
    typename map_t::iterator
    locate(const nixlBasicDesc &d) noexcept;

    void
    uncount(size_t len) noexcept;

    /** True when the entry at it overlaps a neighbour on its device. */
    bool
    overlapsNeighbour(typename map_t::const_iterator it) const noexcept;

    /** Moves the finger off it before it is erased. */
    void
    forget(typename map_t::iterator it) noexcept;

    map_t regs_;
    /** The last entry sought, inserted or next to one removed: where lookups start. Only
     *  writers move it; hasFinger_ is false when it points nowhere. */
    typename map_t::iterator finger_{};
    bool hasFinger_ = false;
    /** How many registrations have each length: the longest one bounds the covering scan. */
    std::map<size_t, size_t> lenCount_;
    bool unboundedZero_ = false;
    bool overlapping_ = false;
};

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

class nixlAgentData;

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
