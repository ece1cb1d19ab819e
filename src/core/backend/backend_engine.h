/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file backend_engine.h
 * @brief Core's C++ view of one backend engine living in a plugin: converts between core types
 *        and the C ABI of nixl_backend_plugin.h and supplies defaults for optional operations.
 *
 * Logging (one line per error, where it is detected): a plugin logs the failures it detects
 * (its contract, docs/BackendGuide.md section 7), so a plugin's error status is propagated
 * without another ERROR line; the agent adds its context (agent, descriptor index) at DEBUG.
 * The proxy logs only what the plugin cannot: a factory that returned no engine, an exception
 * that escaped a plugin call, a status that is not a nixl_status_t (then NIXL_ERR_BACKEND).
 *
 * Thread safety: as the underlying engine (see nixl_backend_plugin.h); the proxy itself holds
 * no mutable state after creation.
 */
#ifndef NIXL_SRC_CORE_BACKEND_BACKEND_ENGINE_H
#define NIXL_SRC_CORE_BACKEND_BACKEND_ENGINE_H

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nixl_backend_plugin.h"
#include "nixl_descriptors.h"
#include "nixl_params.h"
#include "nixl_types.h"
#include "plugin/plugin_loader.h"
#include "tracing/phase_sink.h"

/**
 * Whether st is one of nixl_status_t's values. A plugin may return any int32_t; control calls
 * are checked by the proxy, the hot-path calls (post, check, release) by their callers.
 */
inline bool
nixlStatusKnown(nixl_status_t st) noexcept {
    int32_t raw = 0;
    static_assert(sizeof(raw) == sizeof(st), "nixl_status_t travels as int32_t");
    std::memcpy(&raw, &st, sizeof(raw)); // the enum object may hold a value outside its range
    return raw >= NIXL_ERR_NO_TELEMETRY && raw <= NIXL_IN_PROG;
}

/** What estimateXferCost answers: the expected duration, its margin and how it was estimated. */
struct nixlXferCostEstimate {
    std::chrono::microseconds duration{0};
    std::chrono::microseconds errMargin{0};
    nixl_cost_t method{};
};

class nixlBackendEngineProxy {
public:
    /**
     * Creates an engine of plugin for agent_name. Returns the plugin's status on failure,
     * NIXL_ERR_BACKEND when the factory threw or reported success without an engine.
     * tracer: the agent's, or null when it does not trace; when set, the engine gets a trace
     * sink of its own (init_params.trace_sink), which lives until after the engine is
     * destroyed and counts its drops into events (may be null). Both must outlive the proxy.
     */
    static nixl_status_t
    create(const std::shared_ptr<const nixlLoadedPlugin> &plugin,
           const std::string &agent_name,
           const nixl_b_params_t &params,
           const nixlAgentConfig &cfg,
           bool telemetry,
           std::unique_ptr<nixlBackendEngineProxy> &out,
           const nixl::trace::Tracer *tracer = nullptr,
           nixlTelemetry *events = nullptr);

    /** The engine's trace sink, or null when the agent does not trace. */
    const nixl::trace::nixlTracePhaseSink *
    traceSink() const noexcept {
        return sink_.get();
    }

    ~nixlBackendEngineProxy();
    nixlBackendEngineProxy(const nixlBackendEngineProxy &) = delete;
    nixlBackendEngineProxy &
    operator=(const nixlBackendEngineProxy &) = delete;

    const nixl_backend_t &
    type() const noexcept {
        return type_;
    }

    bool
    supportsRemote() const noexcept {
        return (caps_ & NIXL_BE_CAP_REMOTE) != 0;
    }

    bool
    supportsLocal() const noexcept {
        return (caps_ & NIXL_BE_CAP_LOCAL) != 0;
    }

    bool
    supportsNotif() const noexcept {
        return (caps_ & NIXL_BE_CAP_NOTIF) != 0;
    }

    bool
    supportsMem(nixl_mem_t mem) const noexcept {
        return (memMask_ & NIXL_BE_MEM_BIT(static_cast<uint32_t>(mem))) != 0;
    }

    nixl_mem_list_t
    supportedMems() const;

    nixl_status_t
    registerMem(const nixlBlobDesc &desc, nixl_mem_t mem, nixl_be_md_t *&out);
    nixl_status_t
    deregisterMem(nixl_be_md_t *md);
    nixl_status_t
    connect(const std::string &remote);
    nixl_status_t
    disconnect(const std::string &remote);
    nixl_status_t
    unloadMD(nixl_be_md_t *md);
    nixl_status_t
    getPublicData(const nixl_be_md_t *md, std::string &out);
    nixl_status_t
    getConnInfo(std::string &out);
    /** The NIXL 1.4 forms (nixl_be_ops_t::get_conn_info_nixl); NIXL_ERR_NOT_SUPPORTED when the
     *  plugin has none (entry NULL, or a table built before the entries were appended). */
    nixl_status_t
    getConnInfoNixl(std::string &out);
    nixl_status_t
    getPublicDataNixl(const nixl_be_md_t *md, std::string &out);
    /**
     * The data path of a prepared request (nixl_be_ops_t::get_xfer_path); all zero (path
     * unknown, no fallback) when the plugin has no entry or answers an error. A path or
     * reason outside the enums is returned as it is: readers map it to unknown / other.
     */
    nixl_xfer_path_info_t
    xferPath(const nixl_be_req_t *req);
    nixl_status_t
    loadRemoteConnInfo(const std::string &remote, const std::string &conn);
    nixl_status_t
    loadRemoteMD(const nixlBasicDesc &desc,
                 const std::string &public_data,
                 nixl_mem_t mem,
                 const std::string &remote,
                 nixl_be_md_t *&out);
    nixl_status_t
    loadLocalMD(nixl_be_md_t *in, nixl_be_md_t *&out);

    nixl_status_t
    prepXfer(nixl_xfer_op_t op,
             const nixl_be_xfer_list_t &local,
             const nixl_be_xfer_list_t &remote,
             const std::string &remote_agent,
             const nixl_be_opt_args_t *opt,
             nixl_be_req_t *&out);

    /** Hot path: no allocation, forwards straight to the plugin. */
    nixl_status_t
    postXfer(nixl_xfer_op_t op,
             const nixl_be_xfer_list_t &local,
             const nixl_be_xfer_list_t &remote,
             nixl_plugin_str_t remote_agent,
             nixl_be_req_t *req,
             const nixl_be_opt_args_t *opt) noexcept {
        return static_cast<nixl_status_t>(ops_->post_xfer(
            engine_, static_cast<uint32_t>(op), &local, &remote, remote_agent, req, opt));
    }

    /** Hot path. */
    nixl_status_t
    checkXfer(nixl_be_req_t *req) noexcept {
        return static_cast<nixl_status_t>(ops_->check_xfer(engine_, req));
    }

    nixl_status_t
    releaseReq(nixl_be_req_t *req) noexcept {
        return static_cast<nixl_status_t>(ops_->release_req(engine_, req));
    }

    /** Appends drained notifications to notifs. */
    nixl_status_t
    getNotifs(nixl_notifs_t &notifs);
    nixl_status_t
    genNotif(const std::string &remote, const nixl_blob_t &msg);
    nixl_status_t
    queryMem(const nixl_reg_dlist_t &descs, std::vector<nixl_query_resp_t> &resp);
    /** The backend's estimate of a prepared request (estimate_xfer_cost); cost is written
     *  only on success. */
    nixl_status_t
    estimateXferCost(nixl_xfer_op_t op,
                     const nixl_be_xfer_list_t &local,
                     const nixl_be_xfer_list_t &remote,
                     const std::string &remote_agent,
                     nixl_be_req_t *req,
                     nixlXferCostEstimate &cost);
    nixl_status_t
    getParams(nixl_b_params_t &params);

private:
    nixlBackendEngineProxy() = default;

    std::shared_ptr<const nixlLoadedPlugin> plugin_;
    /** Destroyed as a member, so after the destructor's body destroyed the engine: a plugin
     *  (its progress thread) may record phases until then. */
    std::unique_ptr<nixl::trace::nixlTracePhaseSink> sink_;
    const nixl_be_ops_t *ops_ = nullptr;
    nixl_be_engine_t *engine_ = nullptr;
    nixl_backend_t type_;
    nixl_b_params_t createParams_;
    uint32_t caps_ = 0;
    uint32_t memMask_ = 0;
};

/** Default options and memory kinds a backend plugin advertises (getPluginParams). */
nixl_status_t
nixlBackendPluginDefaults(const nixlLoadedPlugin &plugin,
                          nixl_mem_list_t &mems,
                          nixl_b_params_t &params);

#endif // NIXL_SRC_CORE_BACKEND_BACKEND_ENGINE_H
