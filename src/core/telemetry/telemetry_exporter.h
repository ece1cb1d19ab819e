/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file telemetry_exporter.h
 * @brief Which exporter an agent's telemetry hands its events to: the built-in BUFFER or NOP, or
 *        a plugin libtelemetry_exporter_<name>.so found through nixlPluginLoader, with its
 *        operations table checked before use.
 *
 * Thread safety: nixlFindTelemetryExporter may be called from any thread (the loader is
 * thread-safe); a nixlTelemetryExporterRef is a value, its ops table immutable and process-long.
 */
#ifndef NIXL_SRC_CORE_TELEMETRY_TELEMETRY_EXPORTER_H
#define NIXL_SRC_CORE_TELEMETRY_TELEMETRY_EXPORTER_H

#include <string>

#include "nixl_telemetry_exporter_plugin.h"
#include "telemetry/telemetry_config.h"

/** An exporter implementation: its name, where it came from, and its operations. */
struct nixlTelemetryExporterRef {
    std::string name;
    std::string origin; ///< "built-in" or the plugin's path
    const nixl_telemetry_exporter_ops_t *ops = nullptr;
};

/**
 * Finds the exporter cfg names: the built-in BUFFER or NOP, else the plugin loaded through
 * nixlPluginLoader. A plugin that cannot be loaded, or whose operations table is missing, too
 * small or lacks create/destroy/export_events, is one ERROR line (the loader's, or this one's)
 * and std::runtime_error naming the agent, cfg.exporterOrigin and the cause.
 */
nixlTelemetryExporterRef
nixlFindTelemetryExporter(const std::string &agent, const nixlTelemetryConfig &cfg);

#endif // NIXL_SRC_CORE_TELEMETRY_TELEMETRY_EXPORTER_H
