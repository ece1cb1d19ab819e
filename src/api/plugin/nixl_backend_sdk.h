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
 */
#ifndef NIXL_BACKEND_SDK_H
#define NIXL_BACKEND_SDK_H

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nixl_backend_plugin.h"
#include "nixl_plugin_sdk_common.h"
#include "nixl_descriptors.h"
#include "nixl_types.h"

/** (sender agent, message) pairs returned by getNotifs. */
using notif_list_t = std::vector<std::pair<std::string, std::string>>;

/** Per-transfer options an engine sees. */
struct nixlBackendOptionalArgs {
    nixl_blob_t notifMsg;
    bool hasNotif = false;
    nixl_blob_t customParam;
};
using nixl_opt_b_args_t = nixlBackendOptionalArgs;

/** What the engine constructor receives. customParams is valid during construction only. */
class nixlBackendInitParams {
public:
    std::string localAgent;
    nixl_backend_t type;
    nixl_b_params_t *customParams = nullptr;
    bool enableProgTh = false;
    uint64_t pthrDelay = 0;
    nixl_thread_sync_t syncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_DEFAULT;
    bool enableTelemetry_ = false;
};

/** Base of an engine's per-request state. Freed by the engine in releaseReqH. */
class nixlBackendReqH {
public:
    nixlBackendReqH() = default;
    virtual ~nixlBackendReqH() = default;
};

/** Base of an engine's per-registration (or per-remote-registration) metadata. */
class nixlBackendMD {
protected:
    bool isPrivateMD;

public:
    explicit nixlBackendMD(bool is_private) : isPrivateMD(is_private) {}
    virtual ~nixlBackendMD() = default;
};

/** A transfer descriptor with the metadata of the registration that covers it. */
class nixlMetaDesc : public nixlBasicDesc {
public:
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

    nixl_mem_t
    getType() const noexcept {
        return type_;
    }

    int
    descCount() const noexcept {
        return static_cast<int>(count_);
    }

    size_t
    size() const noexcept {
        return count_;
    }

    bool
    isEmpty() const noexcept {
        return count_ == 0;
    }

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
 * Thread safety: core serialises control calls (registration, metadata, connections). Transfer
 * calls (postXfer, checkXfer, releaseReqH, genNotif, getNotifs) may run concurrently from
 * several threads when the agent's sync mode is NIXL_THREAD_SYNC_RW; an engine that cannot
 * allow that must lock itself.
 */
class nixlBackendEngine {
private:
    nixl_backend_t backendType_;
    nixl_b_params_t customParams_;

protected:
    /** Set by a constructor that failed; creation then reports NIXL_ERR_BACKEND. */
    bool initErr = false;
    const std::string localAgent;
    const bool enableTelemetry_;

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
    explicit nixlBackendEngine(const nixlBackendInitParams *init_params)
        : backendType_(init_params->type),
          customParams_(init_params->customParams != nullptr ? *init_params->customParams :
                                                               nixl_b_params_t()),
          localAgent(init_params->localAgent),
          enableTelemetry_(init_params->enableTelemetry_) {}

    nixlBackendEngine(const nixlBackendEngine &) = delete;
    nixlBackendEngine &
    operator=(const nixlBackendEngine &) = delete;
    virtual ~nixlBackendEngine() = default;

    bool
    getInitErr() const noexcept {
        return initErr;
    }

    const nixl_backend_t &
    getType() const noexcept {
        return backendType_;
    }

    const nixl_b_params_t &
    getCustomParams() const noexcept {
        return customParams_;
    }

    virtual bool
    supportsRemote() const = 0;
    virtual bool
    supportsLocal() const = 0;
    virtual bool
    supportsNotif() const = 0;
    virtual nixl_mem_list_t
    getSupportedMems() const = 0;

    virtual nixl_status_t
    registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem, nixlBackendMD *&out) = 0;
    virtual nixl_status_t
    deregisterMem(nixlBackendMD *meta) = 0;
    virtual nixl_status_t
    connect(const std::string &remote_agent) = 0;
    virtual nixl_status_t
    disconnect(const std::string &remote_agent) = 0;
    virtual nixl_status_t
    unloadMD(nixlBackendMD *input) = 0;

    virtual nixl_status_t
    prepXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const = 0;
    virtual nixl_status_t
    postXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const = 0;
    virtual nixl_status_t
    checkXfer(nixlBackendReqH *handle) const = 0;
    /** Frees handle, aborting the transfer if it runs; an error keeps the request alive. */
    virtual nixl_status_t
    releaseReqH(nixlBackendReqH *handle) const = 0;

    virtual nixl_status_t
    getPublicData(const nixlBackendMD *meta, std::string &str) const {
        (void)meta;
        (void)str;
        return NIXL_ERR_BACKEND;
    }

    virtual nixl_status_t
    getConnInfo(std::string &str) const {
        (void)str;
        return NIXL_ERR_BACKEND;
    }

    virtual nixl_status_t
    loadRemoteConnInfo(const std::string &remote_agent, const std::string &remote_conn_info) {
        (void)remote_agent;
        (void)remote_conn_info;
        return NIXL_ERR_BACKEND;
    }

    /** input.metaInfo holds the remote side's getPublicData bytes. */
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

    virtual nixl_status_t
    genNotif(const std::string &remote_agent, const std::string &msg) const {
        (void)remote_agent;
        (void)msg;
        return NIXL_ERR_BACKEND;
    }

    virtual nixl_status_t
    queryMem(const std::vector<nixlBlobDesc> &descs, std::vector<nixl_query_resp_t> &resp) const {
        (void)descs;
        (void)resp;
        return NIXL_ERR_NOT_SUPPORTED;
    }

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

namespace nixlSdk {
namespace detail {

    /** What the SDK hands core as a request: the engine's handle plus state reused per post. */
    struct reqBox {
        nixlBackendReqH *handle = nullptr;
        std::string remoteAgent;
        nixl_opt_b_args_t opt;
    };

    inline nixlBackendEngine *
    engineOf(nixl_be_engine_t *e) noexcept {
        return reinterpret_cast<nixlBackendEngine *>(e);
    }

    inline nixlBackendMD *
    mdOf(nixl_be_md_t *m) noexcept {
        return reinterpret_cast<nixlBackendMD *>(m);
    }

    inline nixl_be_md_t *
    toC(nixlBackendMD *m) noexcept {
        return reinterpret_cast<nixl_be_md_t *>(m);
    }

    /** Copies C options into a reused C++ struct; returns it, or nullptr when opt is null. */
    inline const nixl_opt_b_args_t *
    fillOpt(nixl_opt_b_args_t &dst, const nixl_be_opt_args_t *opt) {
        if (opt == nullptr) {
            return nullptr;
        }
        dst.hasNotif = opt->has_notif != 0;
        if (dst.hasNotif) {
            dst.notifMsg.assign(opt->notif.data == nullptr ? "" : opt->notif.data, opt->notif.len);
        } else {
            dst.notifMsg.clear();
        }
        dst.customParam.assign(opt->custom_param.data == nullptr ? "" : opt->custom_param.data,
                               opt->custom_param.len);
        return &dst;
    }

    /** Runs body, turning any exception into a status and one log line naming the call. */
    template<typename Body>
    nixl_plugin_status_t
    guard(const char *what, Body &&body) noexcept {
        try {
            return static_cast<nixl_plugin_status_t>(body());
        }
        catch (const std::bad_alloc &) {
            NIXL_SDK_ERROR(what << ": out of memory");
            return NIXL_ERR_BACKEND;
        }
        catch (const std::exception &e) {
            NIXL_SDK_ERROR(what << ": exception: " << e.what());
            return NIXL_ERR_BACKEND;
        }
        catch (...) {
            NIXL_SDK_ERROR(what << ": unknown exception");
            return NIXL_ERR_UNKNOWN;
        }
    }

    inline nixl_plugin_status_t
    putAll(const nixl_plugin_kv_sink_t *out, const nixl_b_params_t &params) {
        for (const auto &[k, v] : params) {
            nixl_plugin_status_t st = out->put(out->ctx, toStr(k), toStr(v));
            if (st != NIXL_SUCCESS) {
                return st;
            }
        }
        return NIXL_SUCCESS;
    }

    inline uint32_t
    memMask(const nixl_mem_list_t &mems) {
        uint32_t mask = 0;
        for (nixl_mem_t m : mems) {
            mask |= NIXL_BE_MEM_BIT(static_cast<uint32_t>(m));
        }
        return mask;
    }

    inline void
    destroyEngine(nixl_be_engine_t *e) noexcept {
        try {
            delete engineOf(e);
        }
        catch (...) {
            NIXL_SDK_ERROR("engine destructor threw; continuing");
        }
    }

    inline nixl_plugin_status_t
    registerMem(nixl_be_engine_t *e, const nixl_be_desc_t *d, uint32_t mem, nixl_be_md_t **out) {
        return guard("registerMem", [&] {
            nixlBlobDesc desc(d->addr, d->len, d->dev_id, std::string(toView(d->meta_info)));
            nixlBackendMD *md = nullptr;
            nixl_status_t st = engineOf(e)->registerMem(desc, static_cast<nixl_mem_t>(mem), md);
            if (st == NIXL_SUCCESS) {
                *out = toC(md);
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    deregisterMem(nixl_be_engine_t *e, nixl_be_md_t *md) {
        return guard("deregisterMem", [&] { return engineOf(e)->deregisterMem(mdOf(md)); });
    }

    inline nixl_plugin_status_t
    connect(nixl_be_engine_t *e, nixl_plugin_str_t remote) {
        return guard("connect",
                     [&] { return engineOf(e)->connect(std::string(toView(remote))); });
    }

    inline nixl_plugin_status_t
    disconnect(nixl_be_engine_t *e, nixl_plugin_str_t remote) {
        return guard("disconnect",
                     [&] { return engineOf(e)->disconnect(std::string(toView(remote))); });
    }

    inline nixl_plugin_status_t
    unloadMD(nixl_be_engine_t *e, nixl_be_md_t *md) {
        return guard("unloadMD", [&] { return engineOf(e)->unloadMD(mdOf(md)); });
    }

    inline nixl_plugin_status_t
    getPublicData(nixl_be_engine_t *e, const nixl_be_md_t *md, const nixl_plugin_bytes_sink_t *out) {
        return guard("getPublicData", [&] {
            std::string s;
            nixl_status_t st = engineOf(e)->getPublicData(
                reinterpret_cast<const nixlBackendMD *>(md), s);
            if (st == NIXL_SUCCESS) {
                return static_cast<nixl_status_t>(out->append(out->ctx, s.data(), s.size()));
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    getConnInfo(nixl_be_engine_t *e, const nixl_plugin_bytes_sink_t *out) {
        return guard("getConnInfo", [&] {
            std::string s;
            nixl_status_t st = engineOf(e)->getConnInfo(s);
            if (st == NIXL_SUCCESS) {
                return static_cast<nixl_status_t>(out->append(out->ctx, s.data(), s.size()));
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    loadRemoteConnInfo(nixl_be_engine_t *e, nixl_plugin_str_t remote, nixl_plugin_str_t conn) {
        return guard("loadRemoteConnInfo", [&] {
            return engineOf(e)->loadRemoteConnInfo(std::string(toView(remote)),
                                                   std::string(toView(conn)));
        });
    }

    inline nixl_plugin_status_t
    loadRemoteMD(nixl_be_engine_t *e,
                 const nixl_be_desc_t *d,
                 uint32_t mem,
                 nixl_plugin_str_t remote,
                 nixl_be_md_t **out) {
        return guard("loadRemoteMD", [&] {
            nixlBlobDesc desc(d->addr, d->len, d->dev_id, std::string(toView(d->meta_info)));
            nixlBackendMD *md = nullptr;
            nixl_status_t st = engineOf(e)->loadRemoteMD(
                desc, static_cast<nixl_mem_t>(mem), std::string(toView(remote)), md);
            if (st == NIXL_SUCCESS) {
                *out = toC(md);
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    loadLocalMD(nixl_be_engine_t *e, nixl_be_md_t *in, nixl_be_md_t **out) {
        return guard("loadLocalMD", [&] {
            nixlBackendMD *md = nullptr;
            nixl_status_t st = engineOf(e)->loadLocalMD(mdOf(in), md);
            if (st == NIXL_SUCCESS) {
                *out = toC(md);
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    prepXfer(nixl_be_engine_t *e,
             uint32_t op,
             const nixl_be_xfer_list_t *local,
             const nixl_be_xfer_list_t *remote,
             nixl_plugin_str_t remote_agent,
             const nixl_be_opt_args_t *opt,
             nixl_be_req_t **out) {
        return guard("prepXfer", [&] {
            auto box = std::make_unique<reqBox>();
            box->remoteAgent.assign(toView(remote_agent));
            const nixl_opt_b_args_t *o = fillOpt(box->opt, opt);
            nixl_status_t st = engineOf(e)->prepXfer(static_cast<nixl_xfer_op_t>(op),
                                                     nixlMetaDlist(local),
                                                     nixlMetaDlist(remote),
                                                     box->remoteAgent,
                                                     box->handle,
                                                     o);
            if (st == NIXL_SUCCESS) {
                *out = reinterpret_cast<nixl_be_req_t *>(box.release());
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    postXfer(nixl_be_engine_t *e,
             uint32_t op,
             const nixl_be_xfer_list_t *local,
             const nixl_be_xfer_list_t *remote,
             nixl_plugin_str_t remote_agent,
             nixl_be_req_t *req,
             const nixl_be_opt_args_t *opt) {
        (void)remote_agent; // the box kept it at prep time
        return guard("postXfer", [&] {
            auto *box = reinterpret_cast<reqBox *>(req);
            const nixl_opt_b_args_t *o = fillOpt(box->opt, opt);
            return engineOf(e)->postXfer(static_cast<nixl_xfer_op_t>(op),
                                         nixlMetaDlist(local),
                                         nixlMetaDlist(remote),
                                         box->remoteAgent,
                                         box->handle,
                                         o);
        });
    }

    inline nixl_plugin_status_t
    checkXfer(nixl_be_engine_t *e, nixl_be_req_t *req) {
        return guard("checkXfer", [&] {
            return engineOf(e)->checkXfer(reinterpret_cast<reqBox *>(req)->handle);
        });
    }

    inline nixl_plugin_status_t
    releaseReq(nixl_be_engine_t *e, nixl_be_req_t *req) {
        return guard("releaseReqH", [&] {
            auto *box = reinterpret_cast<reqBox *>(req);
            nixl_status_t st = NIXL_SUCCESS;
            if (box->handle != nullptr) {
                st = engineOf(e)->releaseReqH(box->handle);
            }
            if (st == NIXL_SUCCESS) {
                delete box;
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    getNotifs(nixl_be_engine_t *e, const nixl_be_notif_sink_t *out) {
        return guard("getNotifs", [&] {
            notif_list_t list;
            nixl_status_t st = engineOf(e)->getNotifs(list);
            for (const auto &[sender, msg] : list) {
                out->push(out->ctx, toStr(sender), toStr(msg));
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    genNotif(nixl_be_engine_t *e, nixl_plugin_str_t remote, nixl_plugin_str_t msg) {
        return guard("genNotif", [&] {
            return engineOf(e)->genNotif(std::string(toView(remote)), std::string(toView(msg)));
        });
    }

    inline nixl_plugin_status_t
    queryMem(nixl_be_engine_t *e,
             const nixl_be_desc_t *descs,
             size_t count,
             uint32_t mem,
             const nixl_be_query_sink_t *out) {
        (void)mem;
        return guard("queryMem", [&] {
            std::vector<nixlBlobDesc> list;
            list.reserve(count);
            for (size_t i = 0; i < count; ++i) {
                list.emplace_back(descs[i].addr,
                                  descs[i].len,
                                  descs[i].dev_id,
                                  std::string(toView(descs[i].meta_info)));
            }
            std::vector<nixl_query_resp_t> resp;
            nixl_status_t st = engineOf(e)->queryMem(list, resp);
            if (st != NIXL_SUCCESS) {
                return st;
            }
            for (size_t i = 0; i < resp.size() && i < count; ++i) {
                if (!resp[i]) {
                    continue;
                }
                out->put(out->ctx, i, nixl_plugin_str_t{nullptr, 0}, nixl_plugin_str_t{nullptr, 0});
                for (const auto &[k, v] : *resp[i]) {
                    out->put(out->ctx, i, toStr(k), toStr(v));
                }
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    estimateXferCost(nixl_be_engine_t *e,
                     uint32_t op,
                     const nixl_be_xfer_list_t *local,
                     const nixl_be_xfer_list_t *remote,
                     nixl_plugin_str_t remote_agent,
                     nixl_be_req_t *req,
                     int64_t *duration_us,
                     int64_t *err_margin_us,
                     uint32_t *method) {
        return guard("estimateXferCost", [&] {
            auto *box = reinterpret_cast<reqBox *>(req);
            std::chrono::microseconds duration{0};
            std::chrono::microseconds margin{0};
            nixl_cost_t cost_method = nixl_cost_t::ANALYTICAL_BACKEND;
            nixlBackendReqH *handle = box != nullptr ? box->handle : nullptr;
            nixl_status_t st =
                engineOf(e)->estimateXferCost(static_cast<nixl_xfer_op_t>(op),
                                              nixlMetaDlist(local),
                                              nixlMetaDlist(remote),
                                              std::string(toView(remote_agent)),
                                              handle,
                                              duration,
                                              margin,
                                              cost_method);
            if (st == NIXL_SUCCESS) {
                *duration_us = duration.count();
                *err_margin_us = margin.count();
                *method = static_cast<uint32_t>(cost_method);
            }
            return st;
        });
    }

    inline nixl_plugin_status_t
    getParams(nixl_be_engine_t *e, const nixl_plugin_kv_sink_t *out) {
        return guard("getBackendParams",
                     [&] { return static_cast<nixl_status_t>(putAll(out, engineOf(e)->getCustomParams())); });
    }

    inline const nixl_be_ops_t *
    ops() noexcept {
        static const nixl_be_ops_t table = {
            sizeof(nixl_be_ops_t),
            destroyEngine,
            registerMem,
            deregisterMem,
            connect,
            disconnect,
            unloadMD,
            getPublicData,
            getConnInfo,
            loadRemoteConnInfo,
            loadRemoteMD,
            loadLocalMD,
            prepXfer,
            postXfer,
            checkXfer,
            releaseReq,
            getNotifs,
            genNotif,
            queryMem,
            estimateXferCost,
            getParams,
        };
        return &table;
    }

    template<typename Engine>
    nixl_plugin_status_t
    createEngine(const nixl_be_init_params_t *p,
                 nixl_be_engine_t **out,
                 nixl_be_engine_info_t *info) noexcept {
        if (p == nullptr || out == nullptr || info == nullptr) {
            return NIXL_ERR_INVALID_PARAM;
        }
        if (p->core != nullptr && p->core->size >= sizeof(nixl_plugin_core_services_t)) {
            coreServices().store(p->core, std::memory_order_release);
        }
        return guard("createEngine", [&] {
            nixl_b_params_t params;
            for (size_t i = 0; i < p->num_params; ++i) {
                params.emplace(std::string(toView(p->params[i].key)),
                               std::string(toView(p->params[i].value)));
            }
            nixlBackendInitParams ip;
            ip.localAgent.assign(toView(p->agent_name));
            ip.type.assign(toView(p->backend_type));
            ip.customParams = &params;
            ip.enableProgTh = p->enable_prog_thread != 0;
            ip.pthrDelay = p->pthr_delay_us;
            ip.syncMode = static_cast<nixl_thread_sync_t>(p->sync_mode);
            ip.enableTelemetry_ = p->enable_telemetry != 0;
            auto engine = std::make_unique<Engine>(&ip);
            if (engine->getInitErr()) {
                // The engine logged the cause when it set initErr; one ERROR line per event.
                NIXL_SDK_DEBUG("backend " << ip.type << " of agent " << ip.localAgent
                                          << " failed to initialise");
                return NIXL_ERR_BACKEND;
            }
            info->caps = (engine->supportsRemote() ? NIXL_BE_CAP_REMOTE : 0u) |
                (engine->supportsLocal() ? NIXL_BE_CAP_LOCAL : 0u) |
                (engine->supportsNotif() ? NIXL_BE_CAP_NOTIF : 0u);
            info->mem_mask = memMask(engine->getSupportedMems());
            *out = reinterpret_cast<nixl_be_engine_t *>(
                static_cast<nixlBackendEngine *>(engine.release()));
            return NIXL_SUCCESS;
        });
    }

    template<typename Engine>
    nixl_plugin_status_t
    getOptions(const nixl_plugin_kv_sink_t *out) noexcept {
        return guard("getOptions", [&] { return static_cast<nixl_status_t>(putAll(out, Engine::pluginOptions())); });
    }

    template<typename Engine>
    nixl_backend_plugin_t
    makePlugin(const char *name, const char *version) noexcept {
        nixl_backend_plugin_t plugin{};
        plugin.hdr.abi_version = NIXL_BACKEND_ABI_VERSION;
        plugin.hdr.kind = NIXL_PLUGIN_KIND_BACKEND;
        plugin.hdr.size = sizeof(nixl_backend_plugin_t);
        plugin.hdr.name = name;
        plugin.hdr.version = version;
        try {
            plugin.mem_mask = memMask(Engine::pluginMems());
        }
        catch (...) {
            plugin.mem_mask = 0;
        }
        plugin.get_options = getOptions<Engine>;
        plugin.create_engine = createEngine<Engine>;
        plugin.ops = ops();
        return plugin;
    }

} // namespace detail
} // namespace nixlSdk

/**
 * Exports Engine as the plugin NAME (a string literal matching libplugin_NAME.so) of release
 * VERSION. Use once, at namespace scope, in one source file of the plugin.
 */
#define NIXL_BACKEND_PLUGIN_DEFINE(Engine, NAME, VERSION)                                    \
    extern "C" __attribute__((visibility("default"))) const nixl_backend_plugin_t *         \
    nixl_backend_plugin_get(void) {                                                         \
        static const nixl_backend_plugin_t plugin =                                          \
            ::nixlSdk::detail::makePlugin<Engine>(NAME, VERSION);                            \
        return &plugin;                                                                      \
    }

#endif // NIXL_BACKEND_SDK_H
