/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "plugin/core_services.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "config/config.h"

namespace {

/** One plugin's table and what its log lines say; ctx of the table points here. */
struct servicesEntry {
    nixlPluginServicesSpec spec;
    std::string prefix; ///< "<kind> <name>: "
    nixl_plugin_core_services_t services{};
};

/** A level a plugin passes, made one of the log's (out of range: ERROR). */
nixl::log::level
clampLevel(int32_t level) noexcept {
    if (level < 0 || level > static_cast<int32_t>(nixl::log::level::FATAL)) {
        return nixl::log::level::ERROR;
    }
    return static_cast<nixl::log::level>(level);
}

void
pluginLog(void *ctx, int32_t level, const char *msg, size_t len) noexcept {
    const auto *self = static_cast<const servicesEntry *>(ctx);
    const nixl::log::level lvl = clampLevel(level);
    const std::string_view agent =
        self->spec.agent != nullptr ? self->spec.agent(lvl) : std::string_view();
    if (!nixl::log::enabled(lvl)) {
        return;
    }
    try {
        std::string line;
        if (!agent.empty()) {
            line.append("agent ").append(agent).append(": ");
        }
        line += self->prefix;
        line.append(msg != nullptr ? msg : "", msg != nullptr ? len : 0);
        nixl::log::write(lvl, self->spec.origin.c_str(), 0, line);
    }
    catch (...) {
        // Out of memory while logging: the line is lost, the plugin's call is not.
    }
}

int32_t
pluginLogEnabled(void *, int32_t level) noexcept {
    return nixl::log::enabled(clampLevel(level)) ? 1 : 0;
}

} // namespace

const nixl_plugin_core_services_t *
nixlPluginCoreServices(const nixlPluginServicesSpec &spec) {
    static std::mutex mutex;
    static std::map<std::tuple<std::string, std::string, std::string>,
                    std::unique_ptr<servicesEntry>>
        all;
    std::lock_guard<std::mutex> lock(mutex);
    auto &slot = all[{spec.kind, spec.name, spec.origin}];
    if (!slot) {
        slot = std::make_unique<servicesEntry>();
        slot->spec = spec;
        slot->prefix = std::string(spec.kind) + " " + spec.name + ": ";
        slot->services.size = sizeof(nixl_plugin_core_services_t);
        slot->services.ctx = slot.get();
        slot->services.log = pluginLog;
        slot->services.log_enabled = pluginLogEnabled;
        slot->services.get_config = nixlConfig::serviceLookup;
        slot->services.record_phases = spec.recordPhases;
    }
    return &slot->services;
}
