/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "telemetry/telemetry_exporter.h"

#include <memory>
#include <stdexcept>

#include "common/nixl_log.h"
#include "plugin/plugin_loader.h"
#include "telemetry/buffer_exporter.h"
#include "telemetry/nop_exporter.h"

using nixlEnumStrings::statusStr;

namespace {

/** Empty when ops is usable, else why not. */
std::string
checkOps(const nixl_telemetry_exporter_ops_t *ops) {
    if (ops == nullptr) {
        return "it has no operations table";
    }
    if (ops->size < sizeof(nixl_telemetry_exporter_ops_t)) {
        return "its operations table is " + std::to_string(ops->size) + " bytes, expected " +
            std::to_string(sizeof(nixl_telemetry_exporter_ops_t));
    }
    if (ops->create == nullptr || ops->destroy == nullptr || ops->export_events == nullptr) {
        return "its operations table lacks create, destroy or export_events";
    }
    return {};
}

} // namespace

nixlTelemetryExporterRef
nixlFindTelemetryExporter(const std::string &agent, const nixlTelemetryConfig &cfg) {
    nixlTelemetryExporterRef ref;
    ref.name = cfg.exporter;
    if (cfg.exporter == nixl_telemetry_buffer_exporter) {
        ref.origin = "built-in";
        ref.ops = nixlBufferExporterOps();
    } else if (cfg.exporter == nixl_telemetry_nop_exporter) {
        ref.origin = "built-in";
        ref.ops = nixlNopExporterOps();
    } else {
        std::shared_ptr<const nixlLoadedPlugin> plugin;
        auto &loader = nixlPluginLoader::instance();
        nixl_status_t st =
            loader.load(nixl_plugin_kind_t::TELEMETRY_EXPORTER, cfg.exporter, plugin);
        if (st != NIXL_SUCCESS) {
            // The loader logged the file and the cause.
            throw std::runtime_error("agent " + agent + ": " + cfg.exporterOrigin +
                                     ": cannot load telemetry exporter " +
                                     NIXL_TELEMETRY_EXPORTER_PLUGIN_PREFIX + cfg.exporter +
                                     ".so from " + loader.defaultDirectory() + " (" +
                                     statusStr(st) + ")");
        }
        ref.origin = plugin->path();
        ref.ops = plugin->as<nixl_telemetry_exporter_plugin_t>()->ops;
    }
    const std::string bad = checkOps(ref.ops);
    if (!bad.empty()) {
        const std::string msg = "agent " + agent + ": " + cfg.exporterOrigin +
            ": telemetry exporter " + ref.name + " (" + ref.origin + ") is unusable: " + bad;
        NIXL_ERROR << msg;
        throw std::runtime_error(msg);
    }
    return ref;
}
