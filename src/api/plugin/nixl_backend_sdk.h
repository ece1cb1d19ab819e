/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_backend_sdk.h
 * @brief Header-only C++ SDK for writing a data-backend plugin.
 *
 * Derive from nixlBackendEngine (its virtuals follow NIXL's backend engine), give the class two
 * static functions, and export it:
 * @code
 *   class myEngine : public nixlBackendEngine {
 *   public:
 *       explicit myEngine(const nixlBackendInitParams *p) : nixlBackendEngine(p) {}
 *       static nixl_b_params_t pluginOptions() { return {{"threads", "1"}}; }
 *       static nixl_mem_list_t pluginMems() { return {DRAM_SEG}; }
 *       ... // the pure virtuals
 *   };
 *   NIXL_BACKEND_PLUGIN_DEFINE(myEngine, "MINE", "1.0.0")
 * @endcode
 * and build it as libplugin_MINE.so.
 *
 * The SDK fills the C tables of nixl_backend_plugin.h, so no C++ type crosses into libnixl: the
 * plugin may be built by another compiler or standard library. Every call into the engine is
 * wrapped so that an exception becomes NIXL_ERR_BACKEND (or NIXL_ERR_UNKNOWN) plus one log line;
 * none escapes into core. The SDK needs only headers: nixl_types.h, nixl_descriptors.h and the
 * plugin C headers. Do not call libnixl functions from a plugin.
 *
 * Hot path: post_xfer, check_xfer and release_req go straight to the virtuals. The request
 * wrapper made at prep time keeps the remote agent name and the optional arguments, so a
 * re-post allocates nothing beyond what a longer notification needs.
 *
 * Trace phases (backend ABI v2, docs/tracing.md "Backend phases"): an engine records what it
 * does for a request with recordPhase(ctx, phase, label, nixlTraceNow, attrs), a no-op
 * when the agent does not trace (traceSink_ null); nixlRecordPhase does the same from code
 * outside the engine, and nixlTracePhaseName names a phase. Phases that happen together (those of
 * a post that completes inline) can go in a nixlTracePhaseBatch recorded with recordPhases: one
 * call into core and one clock read for all of them.
 *
 * What an author uses is declared here: the types the virtuals take, nixlBackendEngine, and
 * NIXL_BACKEND_PLUGIN_DEFINE; logging (NIXL_SDK_ERROR and friends) and NIXL_* options
 * (nixlSdk::config*) come from nixl_plugin_sdk_common.h. The adapter that fills the C tables
 * lives in internal/nixl_backend_sdk_adapter.h (namespace nixlSdk::detail) and is not API.
 */
#ifndef NIXL_BACKEND_SDK_H
#define NIXL_BACKEND_SDK_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nixl_backend_plugin.h"
#include "nixl_plugin_sdk_common.h"
#include "nixl_descriptors.h"
#include "nixl_types.h"

/**
 * (sender agent, message) pairs: what nixlBackendEngine::getNotifs appends to, one pair per
 * notification received, in arrival order.
 */
using notif_list_t = std::vector<std::pair<std::string, std::string>>;

/**
 * The per-transfer options of prepXfer and postXfer (the opt_args argument; null when the
 * application gave none). postXfer may see options that differ from prepXfer's: the
 * application can change the notification at each post.
 */
struct nixlBackendOptionalArgs {
    /** The notification to deliver to the remote agent when the transfer completes. */
    nixl_blob_t notifMsg;
    /** Whether notifMsg is to be sent (an empty message is still a notification). */
    bool hasNotif = false;
    /** The application's opaque per-request parameter, passed through unchanged. */
    nixl_blob_t customParam;
    /**
     * The request's trace context (ABI v2), owned by core and valid until the request is
     * released: the same at prep and every post. Pass it to recordPhase so the phases belong to
     * the request; all-zero trace id when the agent does not trace.
     */
    const nixl_be_trace_ctx_t *traceCtx = nullptr;
};
using nixl_opt_b_args_t = nixlBackendOptionalArgs;

/**
 * What the engine constructor receives; pass it on to nixlBackendEngine's constructor. The
 * object and customParams are valid during construction only: copy what you keep.
 */
class nixlBackendInitParams {
public:
    /** Name of the agent that creates this engine (for log lines and self-connections). */
    std::string localAgent;
    /** The backend type, the NAME of NIXL_BACKEND_PLUGIN_DEFINE (e.g. "UCX"). */
    nixl_backend_t type;
    /** The application's createBackend parameters over pluginOptions()'s defaults. */
    nixl_b_params_t *customParams = nullptr;
    /** Whether the agent asks for a progress thread (nixlAgentConfig::useProgThread). */
    bool enableProgTh = false;
    /** Progress thread's polling delay in microseconds (nixlAgentConfig::pthrDelay). */
    uint64_t pthrDelay = 0;
    /** The agent's thread-synchronisation mode: tells whether transfer calls may overlap. */
    nixl_thread_sync_t syncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_DEFAULT;
    /** Whether the agent records telemetry; an engine may skip its own counters when not. */
    bool enableTelemetry_ = false;
    /**
     * Where the engine records trace phases (nixlRecordPhase), or null when the agent does not
     * trace. Unlike the rest of this object it stays valid for the engine's whole life.
     */
    const nixl_be_trace_sink_t *traceSink = nullptr;
};

/**
 * The lower-case name of a trace phase ("submit", "wire_submitted", ..., "other"), as
 * nixl_be_trace_phase_name gives it and core's nixl.phase.name attribute carries; "unknown"
 * outside the enum.
 */
constexpr std::string_view
nixlTracePhaseName(nixl_be_trace_phase_t phase) noexcept {
    switch (phase) {
    case NIXL_BE_PHASE_SUBMIT:
        return "submit";
    case NIXL_BE_PHASE_WIRE_SUBMITTED:
        return "wire_submitted";
    case NIXL_BE_PHASE_WIRE_COMPLETED:
        return "wire_completed";
    case NIXL_BE_PHASE_NOTIF_SENT:
        return "notif_sent";
    case NIXL_BE_PHASE_NOTIF_RECEIVED:
        return "notif_received";
    case NIXL_BE_PHASE_REMOTE_OBSERVED:
        return "remote_observed";
    case NIXL_BE_PHASE_OTHER:
        return "other";
    default:
        return "unknown";
    }
}

/** ts_us of a phase recorded as it happens: core takes the time (see nixlRecordPhase). */
inline constexpr uint64_t nixlTraceNow = 0;

/**
 * Records one trace phase through sink; does nothing when sink is null (the agent does not
 * trace) or too old to have record_phase. Never fails and never throws: a phase core cannot
 * record is dropped and counted there. Any thread.
 *   ctx        the request's trace context (nixlBackendOptionalArgs), one decoded from the
 *              wire, or null for work that belongs to no request
 *   label      always recorded; the event's name for NIXL_BE_PHASE_OTHER; borrowed
 *   ts_us      when it happened, nixlTime::getUs() (steady clock microseconds, not wall time);
 *              0 (nixlTraceNow) means now: core reads its trace clock, the same counter in
 *              the same units, from the TSC where usable, much cheaper than a steady_clock
 *              read in the plugin
 *   attrs      extra attributes (keys are NUL-terminated literals), borrowed for the call
 */
inline void
nixlRecordPhase(const nixl_be_trace_sink_t *sink,
                const nixl_be_trace_ctx_t *ctx,
                nixl_be_trace_phase_t phase,
                std::string_view label,
                uint64_t ts_us,
                std::span<const nixl_trace_attr_t> attrs = {}) noexcept {
    if (sink == nullptr ||
        sink->size < offsetof(nixl_be_trace_sink_t, record_phase) + sizeof(sink->record_phase) ||
        sink->record_phase == nullptr) {
        return;
    }
    sink->record_phase(sink->ctx, ctx, static_cast<uint32_t>(phase),
                       nixl_plugin_str_t{label.data(), label.size()}, ts_us,
                       attrs.empty() ? nullptr : attrs.data(), attrs.size());
}

/**
 * Phases of one request gathered to be recorded with one call (nixlRecordPhases), e.g. those
 * of a post that completes inline: one clock read and one call into core instead of one of
 * each per phase. Holds at most max_phases; add() records nothing, and the caller records
 * directly once full() (or keeps the batch short by construction). Labels and attributes are
 * borrowed until the batch is recorded. Not thread-safe: one thread fills and records it.
 */
struct nixlTracePhaseBatch {
    static constexpr size_t max_phases = 8;

    nixl_be_trace_phase_rec_t recs[max_phases];
    size_t n = 0;

    /** Appends a phase that happened now (its time: the batch's, read when it is recorded);
     *  false when full (nothing appended). */
    bool
    add(nixl_be_trace_phase_t phase,
        std::string_view label,
        std::span<const nixl_trace_attr_t> attrs = {}) noexcept {
        if (n == max_phases) {
            return false;
        }
        nixl_be_trace_phase_rec_t &r = recs[n++];
        r.phase = static_cast<uint32_t>(phase);
        r.reserved = 0;
        r.label = nixl_plugin_str_t{label.data(), label.size()};
        r.timestamp_us = nixlTraceNow;
        r.attrs = attrs.empty() ? nullptr : attrs.data();
        r.n_attrs = attrs.size();
        return true;
    }

    bool
    full() const noexcept {
        return n == max_phases;
    }
};

/**
 * Records the n phases of recs under one context, in order, through core's batch entry
 * (nixl_plugin_core_services_t.record_phases: one call, one clock read for every record whose
 * timestamp_us is 0); with an older core that lacks it, one sink->record_phase per record
 * (each 0 then read separately). Does nothing when sink is null. Never fails, never throws.
 * Any thread.
 */
inline void
nixlRecordPhases(const nixl_be_trace_sink_t *sink,
                 const nixl_be_trace_ctx_t *ctx,
                 const nixl_be_trace_phase_rec_t *recs,
                 size_t n) noexcept {
    if (sink == nullptr || n == 0) {
        return;
    }
    const nixl_plugin_core_services_t *core =
        nixlSdk::coreServices().load(std::memory_order_acquire);
    if (core != nullptr &&
        core->size >= offsetof(nixl_plugin_core_services_t, record_phases) +
                          sizeof(core->record_phases) &&
        core->record_phases != nullptr) {
        core->record_phases(core->ctx, sink, ctx, recs, sizeof(nixl_be_trace_phase_rec_t), n);
        return;
    }
    if (sink->size < offsetof(nixl_be_trace_sink_t, record_phase) + sizeof(sink->record_phase) ||
        sink->record_phase == nullptr) {
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        sink->record_phase(sink->ctx, ctx, recs[i].phase, recs[i].label, recs[i].timestamp_us,
                           recs[i].attrs, recs[i].n_attrs);
    }
}

/**
 * Base of an engine's per-request state: derive your request type from it, create it in
 * prepXfer (or postXfer, if handle is null there) and free it in releaseReqH.
 */
class nixlBackendReqH {
public:
    nixlBackendReqH() = default;
    virtual ~nixlBackendReqH() = default;
};

/**
 * Base of an engine's metadata for one registration: derive from it for what registerMem
 * (is_private true), loadRemoteMD and loadLocalMD (is_private false) create. Core hands the
 * pointer back in transfer lists (nixlMetaDesc::metadataP), deregisterMem and unloadMD.
 */
class nixlBackendMD {
protected:
    /** True for a local registration's metadata, false for metadata loaded from a peer. */
    bool isPrivateMD;

public:
    explicit nixlBackendMD(bool is_private) : isPrivateMD(is_private) {}
    virtual ~nixlBackendMD() = default;
};

/**
 * One element of a transfer list: an address range (addr, len, devId) and the metadata of the
 * registration that covers it. Cast metadataP to your metadata type.
 */
class nixlMetaDesc : public nixlBasicDesc {
public:
    /** The covering registration's metadata: local (registerMem) or remote (loadRemoteMD). */
    nixlBackendMD *metadataP = nullptr;

    nixlMetaDesc() : nixlBasicDesc(0, 0, 0) {}
    nixlMetaDesc(uintptr_t addr, size_t len, uint64_t dev_id, nixlBackendMD *metadata = nullptr)
        : nixlBasicDesc(addr, len, dev_id),
          metadataP(metadata) {}
};

/**
 * @brief Read-only view of a transfer list handed in by core. Indexing builds a small
 *        nixlMetaDesc value; nothing is allocated. Valid for the duration of the call, and for a
 *        request's lifetime the same arrays are passed to every post and check of it.
 */
class nixlMetaDlist {
public:
    explicit nixlMetaDlist(const nixl_be_xfer_list_t *list) noexcept
        : type_(static_cast<nixl_mem_t>(list->mem_type)),
          descs_(list->descs),
          count_(list->count) {}

    /** The memory kind of every descriptor in the list. */
    nixl_mem_t
    getType() const noexcept {
        return type_;
    }

    /** Number of descriptors, as NIXL's int-returning accessor. */
    int
    descCount() const noexcept {
        return static_cast<int>(count_);
    }

    /** Number of descriptors. */
    size_t
    size() const noexcept {
        return count_;
    }

    /** Whether the list has no descriptors. */
    bool
    isEmpty() const noexcept {
        return count_ == 0;
    }

    /** Descriptor i (i < size(), unchecked), with its registration's metadata. */
    nixlMetaDesc
    operator[](size_t i) const noexcept {
        const nixl_be_xfer_desc_t &d = descs_[i];
        return nixlMetaDesc(d.addr, d.len, d.dev_id, reinterpret_cast<nixlBackendMD *>(d.md));
    }

    /** The raw C array, for engines that want to avoid the per-element copy. */
    const nixl_be_xfer_desc_t *
    data() const noexcept {
        return descs_;
    }

private:
    nixl_mem_t type_;
    const nixl_be_xfer_desc_t *descs_;
    size_t count_;
};
using nixl_meta_dlist_t = nixlMetaDlist;


/**
 * @brief Base class of a backend engine. One instance per agent backend.
 *
 * Derive from it, implement the pure virtuals, override the optional ones your capabilities
 * promise (supportsRemote: getConnInfo, loadRemoteConnInfo, getPublicData, loadRemoteMD;
 * supportsLocal: loadLocalMD; supportsNotif: getNotifs, genNotif), and add two static
 * functions the SDK calls before any engine exists:
 *   static nixl_b_params_t pluginOptions();  // createBackend defaults, shown by getPluginParams
 *   static nixl_mem_list_t pluginMems();     // memory kinds, shown by getPluginParams
 *
 * Every virtual reports failure as a nixl_status_t. Log the cause once where you detect it
 * (NIXL_SDK_ERROR naming the agent, peer, descriptor, errno text); core propagates the status
 * without a line of its own. An exception is caught by the SDK and becomes NIXL_ERR_BACKEND,
 * but returning a status is the intended way to fail.
 *
 * Thread safety: core serialises control calls (registration, metadata, connections). Transfer
 * calls (postXfer, checkXfer, releaseReqH, genNotif, getNotifs) may run concurrently from
 * several threads when the agent's sync mode is NIXL_THREAD_SYNC_RW, getNotifs with itself too
 * (each notification goes to exactly one call); an engine that cannot allow that must lock
 * itself.
 */
class nixlBackendEngine {
private:
    nixl_backend_t backendType_;
    nixl_b_params_t customParams_;

protected:
    /**
     * Set by a constructor that cannot produce a working engine, after logging why; creation
     * then fails with NIXL_ERR_BACKEND (throwing from the constructor works too).
     */
    bool initErr = false;
    /** What creation fails with when initErr is set, e.g. NIXL_ERR_INVALID_PARAM for a refused
     *  parameter. */
    nixl_status_t initErrStatus = NIXL_ERR_BACKEND;
    /** Name of the agent that owns this engine. */
    const std::string localAgent;
    /** Whether the agent records telemetry (nixlBackendInitParams::enableTelemetry_). */
    const bool enableTelemetry_;
    /** Where to record trace phases; null when the agent does not trace (then record nothing
     *  and encode no trace context). Valid for the engine's life. */
    const nixl_be_trace_sink_t *const traceSink_;

    /** nixlRecordPhase through this engine's sink; a no-op when the agent does not trace. */
    void
    recordPhase(const nixl_be_trace_ctx_t *ctx,
                nixl_be_trace_phase_t phase,
                std::string_view label,
                uint64_t ts_us,
                std::span<const nixl_trace_attr_t> attrs = {}) const noexcept {
        nixlRecordPhase(traceSink_, ctx, phase, label, ts_us, attrs);
    }

    /** nixlRecordPhases of batch through this engine's sink, then empties the batch. */
    void
    recordPhases(const nixl_be_trace_ctx_t *ctx, nixlTracePhaseBatch &batch) const noexcept {
        nixlRecordPhases(traceSink_, ctx, batch.recs, batch.n);
        batch.n = 0;
    }

    /** Adds a parameter reported by getBackendParams; NIXL_ERR_NOT_ALLOWED if already set. */
    nixl_status_t
    setInitParam(const std::string &key, const std::string &value) {
        if (customParams_.count(key) != 0) {
            return NIXL_ERR_NOT_ALLOWED;
        }
        customParams_[key] = value;
        return NIXL_SUCCESS;
    }

    /** Reads a creation parameter; NIXL_ERR_INVALID_PARAM if absent. */
    nixl_status_t
    getInitParam(const std::string &key, std::string &value) const {
        auto it = customParams_.find(key);
        if (it == customParams_.end()) {
            return NIXL_ERR_INVALID_PARAM;
        }
        value = it->second;
        return NIXL_SUCCESS;
    }

public:
    /** Copies what it keeps from init_params; call it from your engine's constructor. */
    explicit nixlBackendEngine(const nixlBackendInitParams *init_params)
        : backendType_(init_params->type),
          customParams_(init_params->customParams != nullptr ? *init_params->customParams :
                                                               nixl_b_params_t()),
          localAgent(init_params->localAgent),
          enableTelemetry_(init_params->enableTelemetry_),
          traceSink_(init_params->traceSink) {}

    nixlBackendEngine(const nixlBackendEngine &) = delete;
    nixlBackendEngine &
    operator=(const nixlBackendEngine &) = delete;
    virtual ~nixlBackendEngine() = default;

    /** Whether the constructor set initErr. */
    bool
    getInitErr() const noexcept {
        return initErr;
    }

    /** The status creation fails with when getInitErr() (initErrStatus). */
    nixl_status_t
    getInitErrStatus() const noexcept {
        return initErrStatus;
    }

    /** The backend type this engine was created as. */
    const nixl_backend_t &
    getType() const noexcept {
        return backendType_;
    }

    /**
     * The creation parameters plus those added with setInitParam: what the application's
     * getBackendParams reports. Read your options from here in the constructor.
     */
    const nixl_b_params_t &
    getCustomParams() const noexcept {
        return customParams_;
    }

    /** Whether the engine moves data to other agents (needs the remote-metadata virtuals). */
    virtual bool
    supportsRemote() const = 0;
    /** Whether the engine moves data within its own agent (needs loadLocalMD). */
    virtual bool
    supportsLocal() const = 0;
    /** Whether the engine delivers notifications (needs getNotifs and genNotif). */
    virtual bool
    supportsNotif() const = 0;
    /** The memory kinds this engine registers; queried once, right after construction. */
    virtual nixl_mem_list_t
    getSupportedMems() const = 0;

    /**
     * Registers one range of memory of kind nixl_mem (mem.metaInfo carries the application's
     * per-descriptor bytes, e.g. a file path) and sets out to its new private metadata.
     */
    virtual nixl_status_t
    registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem, nixlBackendMD *&out) = 0;
    /** Undoes registerMem and frees meta. Core unloads local/remote copies of it first. */
    virtual nixl_status_t
    deregisterMem(nixlBackendMD *meta) = 0;
    /**
     * Makes the connection to remote_agent ready now rather than at the first transfer
     * (makeConnection); also called with the own agent's name when supportsLocal().
     */
    virtual nixl_status_t
    connect(const std::string &remote_agent) = 0;
    /** Drops the connection to remote_agent (invalidateRemoteMD, a peer's departure). */
    virtual nixl_status_t
    disconnect(const std::string &remote_agent) = 0;
    /** Frees metadata made by loadRemoteMD or loadLocalMD. */
    virtual nixl_status_t
    unloadMD(nixlBackendMD *input) = 0;

    /**
     * Checks a transfer and prepares what its posts reuse, setting handle to a new request
     * (or leaving it null, then postXfer creates it). local and remote have the same length;
     * element i of local moves to or from element i of remote, per operation. Bad input is
     * refused here so that postXfer can stay lean.
     */
    virtual nixl_status_t
    prepXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const = 0;
    /**
     * Starts (or restarts, for a completed request) the transfer of handle: NIXL_SUCCESS when
     * it completed already, NIXL_IN_PROG when checkXfer is to be polled. Hot path: no
     * allocation or logging on success.
     */
    virtual nixl_status_t
    postXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const = 0;
    /**
     * Progress of a posted request: NIXL_IN_PROG while it runs, NIXL_SUCCESS once it is
     * complete, or the error that ended it. Hot path.
     */
    virtual nixl_status_t
    checkXfer(nixlBackendReqH *handle) const = 0;
    /** Frees handle, aborting the transfer if it runs; an error keeps the request alive. */
    virtual nixl_status_t
    releaseReqH(nixlBackendReqH *handle) const = 0;

    /**
     * The data path of a prepared request and, when it is a fallback, why (nixl_xfer_path.h;
     * see nixl_be_ops_t::get_xfer_path). Called once per request after a successful prepXfer
     * when telemetry is on; handle may be null (prepXfer left it so). The default: unknown.
     */
    virtual nixl_status_t
    getXferPath(const nixlBackendReqH *handle, nixl_xfer_path_info_t &out) const {
        (void)handle;
        (void)out;
        return NIXL_ERR_NOT_SUPPORTED;
    }

    /**
     * The bytes a peer needs to reach the registration meta (e.g. a remote key); core ships
     * them in the agent's metadata, and the peer's loadRemoteMD receives them.
     */
    virtual nixl_status_t
    getPublicData(const nixlBackendMD *meta, std::string &str) const {
        (void)meta;
        (void)str;
        return NIXL_ERR_BACKEND;
    }

    /**
     * The bytes a peer needs to connect to this engine (e.g. a worker address); called once
     * after construction when supportsRemote(), and shipped in the agent's metadata.
     */
    virtual nixl_status_t
    getConnInfo(std::string &str) const {
        (void)str;
        return NIXL_ERR_BACKEND;
    }

    /**
     * The connection info in NIXL 1.4's form for this backend (what NIXL's backend of the same
     * name writes), for NIXL peers; NIXL_ERR_NOT_SUPPORTED (the default) keeps the engine out
     * of the part of the metadata NIXL peers read. See nixl_be_ops_t::get_conn_info_nixl.
     */
    virtual nixl_status_t
    getConnInfoNixl(std::string &str) const {
        (void)str;
        return NIXL_ERR_NOT_SUPPORTED;
    }

    /** A registration's public data in NIXL 1.4's form; as getConnInfoNixl. */
    virtual nixl_status_t
    getPublicDataNixl(const nixlBackendMD *meta, std::string &str) const {
        (void)meta;
        (void)str;
        return NIXL_ERR_NOT_SUPPORTED;
    }

    /**
     * Takes remote_agent's getConnInfo bytes, which come from another process: check them
     * before use and refuse bad ones with a status and one log line, never crash.
     */
    virtual nixl_status_t
    loadRemoteConnInfo(const std::string &remote_agent, const std::string &remote_conn_info) {
        (void)remote_agent;
        (void)remote_conn_info;
        return NIXL_ERR_BACKEND;
    }

    /**
     * Makes metadata (is_private false) for remote_agent's registration input, whose metaInfo
     * holds the peer's getPublicData bytes; like loadRemoteConnInfo, check them first.
     */
    virtual nixl_status_t
    loadRemoteMD(const nixlBlobDesc &input,
                 const nixl_mem_t &nixl_mem,
                 const std::string &remote_agent,
                 nixlBackendMD *&output) {
        (void)input;
        (void)nixl_mem;
        (void)remote_agent;
        (void)output;
        return NIXL_ERR_BACKEND;
    }

    /** Makes metadata through which this agent's own transfers reach registration input. */
    virtual nixl_status_t
    loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) {
        (void)input;
        (void)output;
        return NIXL_ERR_BACKEND;
    }

    /** Appends received notifications to notif_list. */
    virtual nixl_status_t
    getNotifs(notif_list_t &notif_list) {
        (void)notif_list;
        return NIXL_ERR_BACKEND;
    }

    /** Sends msg to remote_agent as a notification outside any transfer. */
    virtual nixl_status_t
    genNotif(const std::string &remote_agent, const std::string &msg) const {
        (void)remote_agent;
        (void)msg;
        return NIXL_ERR_BACKEND;
    }

    /**
     * For each of descs (memory the application has not necessarily registered, e.g. files),
     * sets resp[i] to what the engine knows about it, or leaves it empty when it has nothing.
     */
    virtual nixl_status_t
    queryMem(const std::vector<nixlBlobDesc> &descs, std::vector<nixl_query_resp_t> &resp) const {
        (void)descs;
        (void)resp;
        return NIXL_ERR_NOT_SUPPORTED;
    }

    /**
     * Predicts how long a prepared transfer takes (duration +- err_margin) and says how
     * (method); NIXL_ERR_NOT_SUPPORTED when the engine cannot tell.
     */
    virtual nixl_status_t
    estimateXferCost(const nixl_xfer_op_t &operation,
                     const nixl_meta_dlist_t &local,
                     const nixl_meta_dlist_t &remote,
                     const std::string &remote_agent,
                     nixlBackendReqH *const &handle,
                     std::chrono::microseconds &duration,
                     std::chrono::microseconds &err_margin,
                     nixl_cost_t &method) const {
        (void)operation;
        (void)local;
        (void)remote;
        (void)remote_agent;
        (void)handle;
        (void)duration;
        (void)err_margin;
        (void)method;
        return NIXL_ERR_NOT_SUPPORTED;
    }
};

// The C-table adapter (nixlSdk::detail), used by NIXL_BACKEND_PLUGIN_DEFINE below; not API.
#include "internal/nixl_backend_sdk_adapter.h"

/**
 * Exports Engine as the plugin NAME (a string literal matching libplugin_NAME.so) of release
 * VERSION (a string literal, e.g. "1.0.0"): defines the plugin's one exported symbol,
 * nixl_backend_plugin_get. Use once, at namespace scope, in one source file of the plugin.
 */
#define NIXL_BACKEND_PLUGIN_DEFINE(Engine, NAME, VERSION)                                    \
    extern "C" __attribute__((visibility("default"))) const nixl_backend_plugin_t *         \
    nixl_backend_plugin_get(void) {                                                         \
        static const nixl_backend_plugin_t plugin =                                          \
            ::nixlSdk::detail::makePlugin<Engine>(NAME, VERSION);                            \
        return &plugin;                                                                      \
    }

#endif // NIXL_BACKEND_SDK_H
