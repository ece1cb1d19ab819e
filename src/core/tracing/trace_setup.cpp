/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The cold half of the tracing facade: which backends an agent wants (NIXL_TRACE_BACKENDS,
// Nsight Systems detection), loading them through the plugin loader, the core services they
// get, and creating one instance of each per agent.

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <system_error>
#include <utility>

#include "common/nixl_log.h"
#include "common/nixl_text.h"
#include "config/config.h"
#include "nixl_plugin_names.h"
#include "plugin/core_services.h"
#include "plugin/plugin_loader.h"
#include "tracing/trace_clock.h"
#include "tracing/trace_setup.h"

namespace nixl::trace {

namespace {

    /**
     * Set on the creating thread while a plugin's create() runs, so that core knows whether
     * the plugin already logged why it failed (its SDK does) and does not add a second line.
     */
    struct createWatch {
        const std::string *agent;
        bool loggedError = false;
    };

    thread_local createWatch *tlsWatch = nullptr;

    /**
     * The trace plugins' log hook: notes an error logged during create (see createWatch) and
     * names the agent being created, as every core line does.
     */
    std::string_view
    createAgent(nixl::log::level lvl) noexcept {
        createWatch *watch = tlsWatch;
        if (watch == nullptr) {
            return {};
        }
        if (lvl >= nixl::log::level::ERROR) {
            watch->loggedError = true;
        }
        return *watch->agent;
    }

    /** Empty when ops is usable, else why not. */
    std::string
    checkOps(const nixl_trace_backend_ops_t *ops) {
        if (ops == nullptr) {
            return "it has no operations table";
        }
        // Core calls every member up to mark, so the table must reach that far.
        if (ops->size < sizeof(nixl_trace_backend_ops_t)) {
            return "its operations table is " + std::to_string(ops->size) +
                " bytes, expected at least " + std::to_string(sizeof(nixl_trace_backend_ops_t));
        }
        if (ops->create == nullptr || ops->destroy == nullptr) {
            return "its operations table lacks create or destroy";
        }
        return {};
    }


    constexpr char kBackendsVar[] = "NIXL_TRACE_BACKENDS";
    constexpr char kNvtxInjectionVar[] = "NVTX_INJECTION64_PATH";

} // namespace

std::unique_ptr<Tracer>
Tracer::create(const std::string &agent, const std::vector<TraceBackendRef> &backends) {
    // Before any span can read the clock (a 2 ms calibration, once per process).
    TraceClock::init();
    std::unique_ptr<Tracer> t(new Tracer());
    t->agent_ = agent;
    t->instances_.reserve(backends.size());
    const std::span<const nixl_trace_name_t> names = nameTable();
    const std::span<const nixl_trace_key_t> keys = keyTable();
    for (const TraceBackendRef &ref : backends) {
        const std::string bad = checkOps(ref.ops);
        if (!bad.empty()) {
            NIXL_ERROR << "agent " << agent << ": trace backend " << ref.name << " ("
                       << ref.origin << ") is unusable: " << bad
                       << "; the agent runs without it";
            continue;
        }
        nixl_trace_backend_init_params_t params{};
        params.size = sizeof(params);
        // Lines read "trace backend <name>: ..." and name the plugin's file.
        params.core = nixlPluginCoreServices(
            nixlPluginServicesSpec{"trace backend", ref.name, ref.origin, createAgent});
        params.agent_name = nixl_plugin_str_t{t->agent_.data(), t->agent_.size()};
        params.names = names.data();
        params.name_count = static_cast<uint32_t>(names.size());
        params.keys = keys.data();
        params.key_count = static_cast<uint32_t>(keys.size());

        createWatch watch{&agent};
        nixl_trace_backend_t *backend = nullptr;
        nixl_plugin_status_t st = NIXL_PLUGIN_ERR_UNKNOWN;
        std::string thrown;
        tlsWatch = &watch;
        try {
            st = ref.ops->create(&params, &backend);
        }
        catch (const std::exception &e) {
            thrown = e.what();
            st = NIXL_PLUGIN_ERR_UNKNOWN;
        }
        catch (...) {
            thrown = "an unknown exception";
            st = NIXL_PLUGIN_ERR_UNKNOWN;
        }
        tlsWatch = nullptr;
        if (!thrown.empty()) {
            NIXL_ERROR << "agent " << agent << ": trace backend " << ref.name << " ("
                       << ref.origin << "): create threw across the plugin ABI: " << thrown
                       << "; the agent runs without it";
            continue;
        }
        if (st == NIXL_PLUGIN_ERR_NOT_ALLOWED && !watch.loggedError) {
            // Declined, not failed: the plugin has nothing to do here (e.g. NVTX with no tool
            // attached), and a permanent NIXL_TRACE_BACKENDS must not log an error every run.
            NIXL_INFO << "agent " << agent << ": trace backend " << ref.name
                      << " declined to trace this agent; the agent runs without it";
            continue;
        }
        if (st != NIXL_PLUGIN_SUCCESS || backend == nullptr) {
            const char *why = st != NIXL_PLUGIN_SUCCESS ? nixl_plugin_status_name(st) :
                                                          "success without an instance";
            if (watch.loggedError) {
                // The plugin said why (its contract, and the SDK's); this only adds the outcome.
                NIXL_DEBUG << "agent " << agent << ": trace backend " << ref.name
                           << " failed to create (" << why << "); the agent runs without it";
            } else {
                NIXL_ERROR << "agent " << agent << ": trace backend " << ref.name << " ("
                           << ref.origin << ") failed to create: " << why
                           << "; the agent runs without it";
            }
            continue;
        }
        t->instances_.push_back(instance{ref.name, backend, ref.ops->destroy});
        // A NULL operation is one the plugin does not implement: never called.
        if (ref.ops->span_begin != nullptr) {
            t->spanBegin_.push_back(target{ref.ops->span_begin, backend});
        }
        if (ref.ops->span_end != nullptr) {
            t->spanEnd_.push_back(target{ref.ops->span_end, backend});
        }
        if (ref.ops->mark != nullptr) {
            t->mark_.push_back(target{ref.ops->mark, backend});
            if (ref.ops->span_end == nullptr) {
                t->markNoEnd_.push_back(target{ref.ops->mark, backend});
            }
        }
    }
    if (t->instances_.empty()) {
        return nullptr;
    }
    if (nixl::log::enabled(nixl::log::level::INFO)) {
        std::string list;
        for (const instance &i : t->instances_) {
            list += list.empty() ? "" : ", ";
            list += i.name;
        }
        NIXL_INFO << "agent " << agent << ": tracing to " << list;
    }
    return t;
}

Tracer::~Tracer() {
    // Reverse order of creation, as for every other per-agent object.
    for (auto it = instances_.rbegin(); it != instances_.rend(); ++it) {
        try {
            it->destroy(it->backend);
        }
        catch (...) {
            NIXL_ERROR << "agent " << agent_ << ": trace backend " << it->name
                       << ": destroy threw across the plugin ABI";
        }
    }
}

std::vector<std::string>
parseBackendList(std::string_view text) {
    std::vector<std::string> out;
    for (const std::string_view item : nixlText::splitList(text)) {
        if (!item.empty() && std::find(out.begin(), out.end(), item) == out.end()) {
            out.emplace_back(item);
        }
    }
    return out;
}

TracerConfig
tracerConfigFromEnvironment() {
    TracerConfig cfg;
    // getenv first, not nixlConfig::lookup: that treats an empty variable as unset, and here
    // set-but-empty means "tracing off", even under Nsight Systems.
    if (const char *env = std::getenv(kBackendsVar)) {
        cfg.backends = parseBackendList(env);
        cfg.origin = std::string(kBackendsVar) + "=" + env;
        return cfg;
    }
    if (const auto value = nixlConfig::file()->find(kBackendsVar)) {
        cfg.backends = parseBackendList(value->text);
        cfg.origin = std::string(kBackendsVar) + "=" + value->text + " (" + value->origin + ")";
        return cfg;
    }
    const char *nvtx = std::getenv(kNvtxInjectionVar);
    if (nvtx != nullptr && *nvtx != '\0') {
        cfg.backends = {"nvtx"};
        cfg.origin = std::string(kNvtxInjectionVar) + " is set (Nsight Systems) and " +
            kBackendsVar + " is not";
    }
    return cfg;
}

std::unique_ptr<Tracer>
makeTracer(const std::string &agent, const TracerConfig &cfg, const std::string &dir) {
    if (cfg.backends.empty()) {
        return nullptr;
    }
    nixlPluginLoader &loader = nixlPluginLoader::instance();
    const std::string d = dir.empty() ? loader.defaultDirectory() : dir;
    std::vector<TraceBackendRef> refs;
    std::vector<const std::string *> missing;
    for (const std::string &name : cfg.backends) {
        const bool valid_name =
            name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
        if (valid_name) {
            // Checked here, not left to the loader: a name with no plugin is a setting, not a
            // broken installation, so it is one warning rather than the loader's error.
            const std::filesystem::path file =
                std::filesystem::path(d) / (NIXL_TRACE_BACKEND_PLUGIN_PREFIX + name + ".so");
            std::error_code ec;
            if (!std::filesystem::exists(file, ec)) {
                missing.push_back(&name); // one line for all of them, below
                continue;
            }
        }
        std::shared_ptr<const nixlLoadedPlugin> plugin;
        if (loader.load(nixl_plugin_kind_t::TRACE_BACKEND, name, plugin, d) != NIXL_SUCCESS) {
            continue; // the loader logged the file and the cause (versions, kind, entry)
        }
        refs.push_back(TraceBackendRef{
            name, plugin->path(), plugin->as<nixl_trace_backend_plugin_t>()->ops, plugin});
    }
    if (!missing.empty()) {
        // One line however many names (8,000 once gave 16,006 lines), each value cut.
        std::string names;
        for (size_t i = 0; i < missing.size() && names.size() < nixl::log::max_value_bytes; ++i) {
            const std::string n = nixl::log::cut(*missing[i], 48);
            names.append(i == 0 ? "\"" : ", \"").append(n).append("\" (");
            names.append(NIXL_TRACE_BACKEND_PLUGIN_PREFIX).append(n).append(".so)");
        }
        NIXL_WARN << "agent " << agent << ": " << nixl::log::cut(cfg.origin) << ": "
                  << missing.size() << " trace backend name(s) with no plugin file in "
                  << nixl::log::cut(d) << ": " << nixl::log::cut(names)
                  << "; the agent runs without them";
    }
    return Tracer::create(agent, refs);
}

} // namespace nixl::trace
