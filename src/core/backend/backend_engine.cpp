/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "backend/backend_engine.h"

#include <cstddef>
#include <exception>

#include "common/nixl_log.h"
#include "plugin/core_services.h"

namespace {

nixl_plugin_str_t
toStr(const std::string &s) noexcept {
    return nixl_plugin_str_t{s.data(), s.size()};
}

std::string
fromStr(nixl_plugin_str_t s) {
    return s.data == nullptr ? std::string() : std::string(s.data, s.len);
}

nixl_plugin_status_t
appendBytes(void *ctx, const void *data, size_t len) noexcept {
    try {
        static_cast<std::string *>(ctx)->append(static_cast<const char *>(data), len);
        return NIXL_SUCCESS;
    }
    catch (...) {
        return NIXL_ERR_UNKNOWN;
    }
}

nixl_plugin_status_t
putKv(void *ctx, nixl_plugin_str_t key, nixl_plugin_str_t value) noexcept {
    try {
        (*static_cast<nixl_b_params_t *>(ctx))[fromStr(key)] = fromStr(value);
        return NIXL_SUCCESS;
    }
    catch (...) {
        // Detected here, so logged here; the plugin only passes the status on.
        NIXL_ERROR << "out of memory while collecting a backend's parameters";
        return NIXL_ERR_UNKNOWN;
    }
}

void
pushNotif(void *ctx, nixl_plugin_str_t sender, nixl_plugin_str_t msg) noexcept {
    try {
        (*static_cast<nixl_notifs_t *>(ctx))[fromStr(sender)].push_back(fromStr(msg));
    }
    catch (...) {
        NIXL_ERROR << "out of memory while collecting notifications; one notification lost";
    }
}

struct queryCtx {
    std::vector<nixl_query_resp_t> *resp;
};

nixl_plugin_status_t
putQuery(void *ctx, size_t index, nixl_plugin_str_t key, nixl_plugin_str_t value) noexcept {
    try {
        auto &resp = *static_cast<queryCtx *>(ctx)->resp;
        if (index >= resp.size()) {
            return NIXL_ERR_INVALID_PARAM;
        }
        if (!resp[index]) {
            resp[index].emplace();
        }
        if (key.data != nullptr) {
            (*resp[index])[fromStr(key)] = fromStr(value);
        }
        return NIXL_SUCCESS;
    }
    catch (...) {
        return NIXL_ERR_UNKNOWN;
    }
}

// Exceptions are not supposed to cross the C boundary, but a plugin written without the SDK
// may let one through; it must not take the application down. Nor may a status that is not a
// nixl_status_t reach the application: core detects that one, so core logs it.
template<typename Fn>
nixl_status_t
guarded(const nixl_backend_t &type, const char *what, Fn &&fn) noexcept {
    try {
        const nixl_plugin_status_t raw = fn();
        if (raw < NIXL_ERR_NO_TELEMETRY || raw > NIXL_IN_PROG) {
            NIXL_ERROR << "backend " << type << ": " << what << " returned " << raw
                       << ", which is not a nixl_status_t; treated as NIXL_ERR_BACKEND";
            return NIXL_ERR_BACKEND;
        }
        return static_cast<nixl_status_t>(raw);
    }
    catch (const std::exception &e) {
        NIXL_ERROR << "backend " << type << ": " << what << " threw across the plugin ABI: "
                   << e.what();
    }
    catch (...) {
        NIXL_ERROR << "backend " << type << ": " << what << " threw across the plugin ABI";
    }
    return NIXL_ERR_BACKEND;
}

} // namespace

nixl_status_t
nixlBackendEngineProxy::create(const std::shared_ptr<const nixlLoadedPlugin> &plugin,
                               const std::string &agent_name,
                               const nixl_b_params_t &params,
                               const nixlAgentConfig &cfg,
                               bool telemetry,
                               std::unique_ptr<nixlBackendEngineProxy> &out,
                               const nixl::trace::Tracer *tracer,
                               nixlTelemetry *events) {
    const auto *table = plugin->as<nixl_backend_plugin_t>();
    std::vector<nixl_plugin_kv_t> kvs;
    kvs.reserve(params.size());
    for (const auto &[k, v] : params) {
        kvs.push_back(nixl_plugin_kv_t{toStr(k), toStr(v)});
    }
    nixl_be_init_params_t ip{};
    ip.size = sizeof(ip);
    ip.agent_name = toStr(agent_name);
    ip.backend_type = toStr(plugin->name());
    ip.params = kvs.data();
    ip.num_params = kvs.size();
    ip.enable_prog_thread = cfg.useProgThread ? 1 : 0;
    ip.sync_mode = static_cast<uint32_t>(cfg.syncMode);
    ip.pthr_delay_us = cfg.pthrDelay;
    ip.enable_telemetry = telemetry ? 1 : 0;
    // Lines read "plugin <name>: ..." and name the plugin's file.
    ip.core = nixlPluginCoreServices(nixlPluginServicesSpec{
        "plugin", plugin->name(), plugin->path(), nullptr,
        nixl::trace::nixlTracePhaseSink::recordPhases});
    // Made before the engine and handed to the proxy, which destroys it after the engine.
    std::unique_ptr<nixl::trace::nixlTracePhaseSink> sink;
    if (tracer != nullptr) {
        sink = std::make_unique<nixl::trace::nixlTracePhaseSink>(*tracer, agent_name,
                                                                 plugin->name(), events);
        ip.trace_sink = sink->sink();
    }

    nixl_be_engine_t *engine = nullptr;
    nixl_be_engine_info_t info{};
    info.size = sizeof(info);
    // The plugin logs its own creation failures (its contract); the proxy logs only what the
    // plugin cannot, naming the agent since no later line will.
    nixl_status_t st = NIXL_ERR_BACKEND;
    try {
        st = static_cast<nixl_status_t>(table->create_engine(&ip, &engine, &info));
    }
    catch (const std::exception &e) {
        NIXL_ERROR << "agent " << agent_name << ": backend " << plugin->name() << " ("
                   << plugin->path() << "): create_engine threw across the plugin ABI: "
                   << e.what();
        return NIXL_ERR_BACKEND;
    }
    catch (...) {
        NIXL_ERROR << "agent " << agent_name << ": backend " << plugin->name() << " ("
                   << plugin->path() << "): create_engine threw across the plugin ABI";
        return NIXL_ERR_BACKEND;
    }
    if (!nixlStatusKnown(st)) {
        NIXL_ERROR << "agent " << agent_name << ": backend " << plugin->name() << " ("
                   << plugin->path() << "): create_engine returned a status that is not a "
                   << "nixl_status_t; treated as NIXL_ERR_BACKEND";
        return NIXL_ERR_BACKEND;
    }
    if (st != NIXL_SUCCESS) {
        if (engine != nullptr) {
            NIXL_WARN << "agent " << agent_name << ": backend " << plugin->name() << " ("
                      << plugin->path()
                      << "): create_engine failed yet returned an engine; leaking it rather "
                         "than guessing its state";
            (void)sink.release(); // the leaked engine may still hold it
        }
        return st == NIXL_IN_PROG ? NIXL_ERR_BACKEND : st;
    }
    if (engine == nullptr) {
        NIXL_ERROR << "agent " << agent_name << ": backend " << plugin->name() << " ("
                   << plugin->path() << "): create_engine reported success but returned no "
                   << "engine";
        return NIXL_ERR_BACKEND;
    }
    auto proxy = std::unique_ptr<nixlBackendEngineProxy>(new nixlBackendEngineProxy());
    proxy->plugin_ = plugin;
    proxy->sink_ = std::move(sink);
    proxy->ops_ = table->ops;
    proxy->engine_ = engine;
    proxy->type_ = plugin->name();
    proxy->createParams_ = params;
    proxy->caps_ = info.caps;
    proxy->memMask_ = info.mem_mask;
    out = std::move(proxy);
    return NIXL_SUCCESS;
}

nixlBackendEngineProxy::~nixlBackendEngineProxy() {
    if (engine_ != nullptr) {
        guarded(type_, "destroy_engine", [&] {
            ops_->destroy_engine(engine_);
            return NIXL_SUCCESS;
        });
    }
}

nixl_mem_list_t
nixlBackendEngineProxy::supportedMems() const {
    nixl_mem_list_t mems;
    for (uint32_t m = DRAM_SEG; m <= FILE_SEG; ++m) {
        if ((memMask_ & NIXL_BE_MEM_BIT(m)) != 0) {
            mems.push_back(static_cast<nixl_mem_t>(m));
        }
    }
    return mems;
}

nixl_status_t
nixlBackendEngineProxy::registerMem(const nixlBlobDesc &desc, nixl_mem_t mem, nixl_be_md_t *&out) {
    nixl_be_desc_t d{desc.addr, desc.len, desc.devId, toStr(desc.metaInfo)};
    nixl_be_md_t *md = nullptr;
    nixl_status_t st = guarded(type_, "register_mem", [&] {
        return ops_->register_mem(engine_, &d, static_cast<uint32_t>(mem), &md);
    });
    if (st == NIXL_SUCCESS) {
        out = md;
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::deregisterMem(nixl_be_md_t *md) {
    return guarded(type_, "deregister_mem", [&] { return ops_->deregister_mem(engine_, md); });
}

nixl_status_t
nixlBackendEngineProxy::connect(const std::string &remote) {
    return guarded(type_, "connect", [&] { return ops_->connect(engine_, toStr(remote)); });
}

nixl_status_t
nixlBackendEngineProxy::disconnect(const std::string &remote) {
    return guarded(type_, "disconnect", [&] { return ops_->disconnect(engine_, toStr(remote)); });
}

nixl_status_t
nixlBackendEngineProxy::unloadMD(nixl_be_md_t *md) {
    return guarded(type_, "unload_md", [&] { return ops_->unload_md(engine_, md); });
}

nixl_status_t
nixlBackendEngineProxy::getPublicData(const nixl_be_md_t *md, std::string &out) {
    if (ops_->get_public_data == nullptr) {
        return NIXL_ERR_BACKEND;
    }
    std::string data;
    nixl_plugin_bytes_sink_t sink{&data, appendBytes};
    nixl_status_t st = guarded(
        type_, "get_public_data", [&] { return ops_->get_public_data(engine_, md, &sink); });
    if (st == NIXL_SUCCESS) {
        out = std::move(data);
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::getConnInfo(std::string &out) {
    if (ops_->get_conn_info == nullptr) {
        return NIXL_ERR_BACKEND;
    }
    std::string data;
    nixl_plugin_bytes_sink_t sink{&data, appendBytes};
    nixl_status_t st =
        guarded(type_, "get_conn_info", [&] { return ops_->get_conn_info(engine_, &sink); });
    if (st == NIXL_SUCCESS) {
        out = std::move(data);
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::getConnInfoNixl(std::string &out) {
    if (ops_->size < offsetof(nixl_be_ops_t, get_conn_info_nixl) + sizeof(void *) ||
        ops_->get_conn_info_nixl == nullptr) {
        return NIXL_ERR_NOT_SUPPORTED;
    }
    std::string data;
    nixl_plugin_bytes_sink_t sink{&data, appendBytes};
    const nixl_status_t st = guarded(
        type_, "get_conn_info_nixl", [&] { return ops_->get_conn_info_nixl(engine_, &sink); });
    if (st == NIXL_SUCCESS) {
        out = std::move(data);
    }
    return st;
}

nixl_xfer_path_info_t
nixlBackendEngineProxy::xferPath(const nixl_be_req_t *req) {
    nixl_xfer_path_info_t info{};
    if (ops_->size < offsetof(nixl_be_ops_t, get_xfer_path) + sizeof(void *) ||
        ops_->get_xfer_path == nullptr) {
        return info;
    }
    const nixl_status_t st =
        guarded(type_, "get_xfer_path", [&] { return ops_->get_xfer_path(engine_, req, &info); });
    if (st != NIXL_SUCCESS) {
        return nixl_xfer_path_info_t{};
    }
    return info;
}

nixl_status_t
nixlBackendEngineProxy::getPublicDataNixl(const nixl_be_md_t *md, std::string &out) {
    if (ops_->size < offsetof(nixl_be_ops_t, get_public_data_nixl) + sizeof(void *) ||
        ops_->get_public_data_nixl == nullptr) {
        return NIXL_ERR_NOT_SUPPORTED;
    }
    std::string data;
    nixl_plugin_bytes_sink_t sink{&data, appendBytes};
    const nixl_status_t st = guarded(type_, "get_public_data_nixl", [&] {
        return ops_->get_public_data_nixl(engine_, md, &sink);
    });
    if (st == NIXL_SUCCESS) {
        out = std::move(data);
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::loadRemoteConnInfo(const std::string &remote, const std::string &conn) {
    if (ops_->load_remote_conn_info == nullptr) {
        return NIXL_ERR_BACKEND;
    }
    return guarded(type_, "load_remote_conn_info", [&] {
        return ops_->load_remote_conn_info(engine_, toStr(remote), toStr(conn));
    });
}

nixl_status_t
nixlBackendEngineProxy::loadRemoteMD(const nixlBasicDesc &desc,
                                     const std::string &public_data,
                                     nixl_mem_t mem,
                                     const std::string &remote,
                                     nixl_be_md_t *&out) {
    if (ops_->load_remote_md == nullptr) {
        return NIXL_ERR_BACKEND;
    }
    nixl_be_desc_t d{desc.addr, desc.len, desc.devId, toStr(public_data)};
    nixl_be_md_t *md = nullptr;
    nixl_status_t st = guarded(type_, "load_remote_md", [&] {
        return ops_->load_remote_md(engine_, &d, static_cast<uint32_t>(mem), toStr(remote), &md);
    });
    if (st == NIXL_SUCCESS) {
        out = md;
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::loadLocalMD(nixl_be_md_t *in, nixl_be_md_t *&out) {
    if (ops_->load_local_md == nullptr) {
        return NIXL_ERR_BACKEND;
    }
    nixl_be_md_t *md = nullptr;
    nixl_status_t st =
        guarded(type_, "load_local_md", [&] { return ops_->load_local_md(engine_, in, &md); });
    if (st == NIXL_SUCCESS) {
        out = md;
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::prepXfer(nixl_xfer_op_t op,
                                 const nixl_be_xfer_list_t &local,
                                 const nixl_be_xfer_list_t &remote,
                                 const std::string &remote_agent,
                                 const nixl_be_opt_args_t *opt,
                                 nixl_be_req_t *&out) {
    nixl_be_req_t *req = nullptr;
    nixl_status_t st = guarded(type_, "prep_xfer", [&] {
        return ops_->prep_xfer(engine_,
                               static_cast<uint32_t>(op),
                               &local,
                               &remote,
                               toStr(remote_agent),
                               opt,
                               &req);
    });
    if (st == NIXL_SUCCESS) {
        out = req;
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::getNotifs(nixl_notifs_t &notifs) {
    if (ops_->get_notifs == nullptr) {
        return NIXL_ERR_BACKEND;
    }
    nixl_be_notif_sink_t sink{&notifs, pushNotif};
    return guarded(type_, "get_notifs", [&] { return ops_->get_notifs(engine_, &sink); });
}

nixl_status_t
nixlBackendEngineProxy::genNotif(const std::string &remote, const nixl_blob_t &msg) {
    if (ops_->gen_notif == nullptr) {
        return NIXL_ERR_BACKEND;
    }
    return guarded(
        type_, "gen_notif", [&] { return ops_->gen_notif(engine_, toStr(remote), toStr(msg)); });
}

nixl_status_t
nixlBackendEngineProxy::queryMem(const nixl_reg_dlist_t &descs,
                                 std::vector<nixl_query_resp_t> &resp) {
    if (ops_->query_mem == nullptr) {
        return NIXL_ERR_NOT_SUPPORTED;
    }
    std::vector<nixl_be_desc_t> cdescs;
    cdescs.reserve(descs.descCount());
    for (const auto &d : descs) {
        cdescs.push_back(nixl_be_desc_t{d.addr, d.len, d.devId, toStr(d.metaInfo)});
    }
    std::vector<nixl_query_resp_t> answers(cdescs.size());
    queryCtx ctx{&answers};
    nixl_be_query_sink_t sink{&ctx, putQuery};
    nixl_status_t st = guarded(type_, "query_mem", [&] {
        return ops_->query_mem(engine_,
                               cdescs.data(),
                               cdescs.size(),
                               static_cast<uint32_t>(descs.getType()),
                               &sink);
    });
    if (st == NIXL_SUCCESS) {
        resp = std::move(answers);
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::estimateXferCost(nixl_xfer_op_t op,
                                         const nixl_be_xfer_list_t &local,
                                         const nixl_be_xfer_list_t &remote,
                                         const std::string &remote_agent,
                                         nixl_be_req_t *req,
                                         nixlXferCostEstimate &cost) {
    if (ops_->estimate_xfer_cost == nullptr) {
        return NIXL_ERR_NOT_SUPPORTED;
    }
    int64_t d = 0;
    int64_t m = 0;
    uint32_t how = 0;
    nixl_status_t st = guarded(type_, "estimate_xfer_cost", [&] {
        return ops_->estimate_xfer_cost(engine_,
                                        static_cast<uint32_t>(op),
                                        &local,
                                        &remote,
                                        toStr(remote_agent),
                                        req,
                                        &d,
                                        &m,
                                        &how);
    });
    if (st == NIXL_SUCCESS) {
        cost.duration = std::chrono::microseconds(d);
        cost.errMargin = std::chrono::microseconds(m);
        cost.method = static_cast<nixl_cost_t>(how);
    }
    return st;
}

nixl_status_t
nixlBackendEngineProxy::getParams(nixl_b_params_t &params) {
    if (ops_->get_params == nullptr) {
        params = createParams_;
        return NIXL_SUCCESS;
    }
    nixl_b_params_t out;
    nixl_plugin_kv_sink_t sink{&out, putKv};
    nixl_status_t st =
        guarded(type_, "get_params", [&] { return ops_->get_params(engine_, &sink); });
    if (st == NIXL_SUCCESS) {
        params = std::move(out);
    }
    return st;
}

nixl_status_t
nixlBackendPluginDefaults(const nixlLoadedPlugin &plugin,
                          nixl_mem_list_t &mems,
                          nixl_b_params_t &params) {
    const auto *table = plugin.as<nixl_backend_plugin_t>();
    nixl_b_params_t out;
    if (table->get_options != nullptr) {
        nixl_plugin_kv_sink_t sink{&out, putKv};
        nixl_status_t st =
            guarded(plugin.name(), "get_options", [&] { return table->get_options(&sink); });
        if (st != NIXL_SUCCESS) {
            // The plugin (or guarded, or putKv) logged the cause.
            NIXL_DEBUG << "backend plugin " << plugin.name() << " (" << plugin.path()
                       << "): get_options failed: " << nixlEnumStrings::statusStr(st);
            return st;
        }
    }
    nixl_mem_list_t m;
    for (uint32_t k = DRAM_SEG; k <= FILE_SEG; ++k) {
        if ((table->mem_mask & NIXL_BE_MEM_BIT(k)) != 0) {
            m.push_back(static_cast<nixl_mem_t>(k));
        }
    }
    mems = std::move(m);
    params = std::move(out);
    return NIXL_SUCCESS;
}
