/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_backend_sdk_adapter.h
 * @brief Internal to the backend SDK: the adapter between nixl_backend_plugin.h's C tables and
 *        nixlBackendEngine. Plugin authors never include or call this; nixl_backend_sdk.h
 *        includes it, and NIXL_BACKEND_PLUGIN_DEFINE uses nixlSdk::detail::makePlugin.
 *
 * Each C entry point converts its arguments to the SDK's C++ types, calls the engine's virtual
 * inside guard() (an exception becomes a status plus one log line; none crosses into core), and
 * converts results back through core's sinks. A request core holds is a reqBox: the engine's
 * handle plus the remote agent name and optional arguments kept from prep time, so a re-post
 * allocates nothing beyond what a longer notification needs.
 *
 * Nothing here is API: names and signatures may change in any release without an ABI bump,
 * since the tables they fill are what core sees.
 */
#ifndef NIXL_BACKEND_SDK_ADAPTER_H
#define NIXL_BACKEND_SDK_ADAPTER_H

#ifndef NIXL_BACKEND_SDK_H
#error "include nixl_backend_sdk.h, not internal/nixl_backend_sdk_adapter.h"
#endif

#include <atomic>
#include <cstddef>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

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
        dst.traceCtx =
            opt->size >= offsetof(nixl_be_opt_args_t, trace_ctx) + sizeof(opt->trace_ctx) ?
            opt->trace_ctx :
            nullptr;
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

    /** Runs get(s) for a string s and, when it succeeds, hands s to core's sink out. */
    template<class Get>
    nixl_status_t
    bytesToSink(const nixl_plugin_bytes_sink_t *out, Get &&get) {
        std::string s;
        const nixl_status_t st = get(s);
        if (st == NIXL_SUCCESS) {
            return static_cast<nixl_status_t>(out->append(out->ctx, s.data(), s.size()));
        }
        return st;
    }

    /** Runs make(md) for a metadata pointer md and, when it succeeds, hands md to core (*out). */
    template<class Make>
    nixl_status_t
    mdToCore(nixl_be_md_t **out, Make &&make) {
        nixlBackendMD *md = nullptr;
        const nixl_status_t st = make(md);
        if (st == NIXL_SUCCESS) {
            *out = toC(md);
        }
        return st;
    }

    /**
     * prepXfer or postXfer (Method: the two share one signature) of the request in box, with
     * the remote agent kept at prep time and the optional arguments filled into box's copy.
     */
    template<auto Method>
    nixl_status_t
    xferCall(nixl_be_engine_t *e,
             reqBox &box,
             uint32_t op,
             const nixl_be_xfer_list_t *local,
             const nixl_be_xfer_list_t *remote,
             const nixl_be_opt_args_t *opt) {
        const nixl_opt_b_args_t *o = fillOpt(box.opt, opt);
        return (engineOf(e)->*Method)(static_cast<nixl_xfer_op_t>(op),
                                      nixlMetaDlist(local),
                                      nixlMetaDlist(remote),
                                      box.remoteAgent,
                                      box.handle,
                                      o);
    }

    inline nixl_plugin_status_t
    getPublicData(nixl_be_engine_t *e, const nixl_be_md_t *md, const nixl_plugin_bytes_sink_t *out) {
        return guard("getPublicData", [&] {
            return bytesToSink(out, [&](std::string &s) {
                return engineOf(e)->getPublicData(reinterpret_cast<const nixlBackendMD *>(md), s);
            });
        });
    }

    inline nixl_plugin_status_t
    getConnInfo(nixl_be_engine_t *e, const nixl_plugin_bytes_sink_t *out) {
        return guard("getConnInfo", [&] {
            return bytesToSink(out, [&](std::string &s) { return engineOf(e)->getConnInfo(s); });
        });
    }

    inline nixl_plugin_status_t
    getConnInfoNixl(nixl_be_engine_t *e, const nixl_plugin_bytes_sink_t *out) {
        return guard("getConnInfoNixl", [&] {
            return bytesToSink(out,
                               [&](std::string &s) { return engineOf(e)->getConnInfoNixl(s); });
        });
    }

    inline nixl_plugin_status_t
    getXferPath(nixl_be_engine_t *e, const nixl_be_req_t *req, nixl_xfer_path_info_t *out) {
        if (out == nullptr) {
            return NIXL_ERR_INVALID_PARAM;
        }
        return guard("getXferPath", [&] {
            const auto *box = reinterpret_cast<const reqBox *>(req);
            return engineOf(e)->getXferPath(box == nullptr ? nullptr : box->handle, *out);
        });
    }

    inline nixl_plugin_status_t
    getPublicDataNixl(nixl_be_engine_t *e,
                      const nixl_be_md_t *md,
                      const nixl_plugin_bytes_sink_t *out) {
        return guard("getPublicDataNixl", [&] {
            return bytesToSink(out, [&](std::string &s) {
                return engineOf(e)->getPublicDataNixl(reinterpret_cast<const nixlBackendMD *>(md),
                                                      s);
            });
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
            return mdToCore(out, [&](nixlBackendMD *&md) {
                return engineOf(e)->loadRemoteMD(
                    desc, static_cast<nixl_mem_t>(mem), std::string(toView(remote)), md);
            });
        });
    }

    inline nixl_plugin_status_t
    loadLocalMD(nixl_be_engine_t *e, nixl_be_md_t *in, nixl_be_md_t **out) {
        return guard("loadLocalMD", [&] {
            return mdToCore(
                out, [&](nixlBackendMD *&md) { return engineOf(e)->loadLocalMD(mdOf(in), md); });
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
            const nixl_status_t st =
                xferCall<&nixlBackendEngine::prepXfer>(e, *box, op, local, remote, opt);
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
            return xferCall<&nixlBackendEngine::postXfer>(
                e, *reinterpret_cast<reqBox *>(req), op, local, remote, opt);
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
            getConnInfoNixl,
            getPublicDataNixl,
            getXferPath,
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
        // The services grow by appending: an older core's are smaller than this header's and
        // still usable (each appended field is size-checked where it is read).
        if (p->core != nullptr && p->core->size >= offsetof(nixl_plugin_core_services_t,
                                                           log_enabled) +
                                                      sizeof(p->core->log_enabled)) {
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
            // A core older than this field never builds a v2 table (exact ABI match), but
            // the size check keeps the read inside what core built.
            if (p->size >= offsetof(nixl_be_init_params_t, trace_sink) + sizeof(p->trace_sink)) {
                ip.traceSink = p->trace_sink;
            }
            auto engine = std::make_unique<Engine>(&ip);
            if (engine->getInitErr()) {
                // The engine logged the cause when it set initErr; one ERROR line per event.
                NIXL_SDK_DEBUG("backend " << ip.type << " of agent " << ip.localAgent
                                          << " failed to initialise");
                return engine->getInitErrStatus();
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

#endif // NIXL_BACKEND_SDK_ADAPTER_H
