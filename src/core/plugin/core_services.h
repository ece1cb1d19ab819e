/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file core_services.h
 * @brief The core services table (nixl_plugin_core_services_t) libnixl hands to a plugin of any
 *        kind at create: logging into libnixl's log, the configuration lookup and, for backends,
 *        the batched trace-phase recorder. One implementation for the three plugin kinds.
 *
 * A plugin's log line reads "[agent A: ]<kind> <name>: <message>" and names the plugin's origin
 * (its file, or "built-in") as its source. A level outside the log's range is logged at ERROR,
 * and log_enabled answers 1 for it.
 *
 * Tables live until the process exits: a plugin SDK keeps the pointer of its latest create in
 * plugin-global state, so a table owned by one agent would dangle once that agent is gone. One
 * table per (kind, name, origin); asking again returns the same table.
 *
 * Thread safety: nixlPluginCoreServices may be called from any thread; the tables it returns are
 * immutable and their functions may be called from any thread.
 */
#ifndef NIXL_SRC_CORE_PLUGIN_CORE_SERVICES_H
#define NIXL_SRC_CORE_PLUGIN_CORE_SERVICES_H

#include <string>
#include <string_view>

#include "common/nixl_log.h"
#include "nixl_plugin_common.h"

/**
 * Called for every line a plugin logs, whatever its level and before the level is checked, on
 * the logging thread. Returns the agent the line concerns when the caller knows it (then the
 * line starts with "agent <name>: "), else an empty view. Lets a creator observe what a plugin
 * logs while one of its calls runs (the trace backends' create).
 */
using nixl_plugin_log_agent_fn = std::string_view (*)(nixl::log::level lvl) noexcept;

/** What a plugin's core services say about it, and the optional parts of the table. */
struct nixlPluginServicesSpec {
    const char *kind; ///< the lines' prefix: "plugin", "trace backend", "telemetry exporter"
    std::string name; ///< the plugin's name, e.g. "UCX"
    std::string origin; ///< the plugin's file, or "built-in": the lines' source
    nixl_plugin_log_agent_fn agent = nullptr; ///< see nixl_plugin_log_agent_fn; null: none
    /** The table's record_phases (backend plugins); null for the other kinds. */
    decltype(nixl_plugin_core_services_t::record_phases) recordPhases = nullptr;
};

/**
 * The core services of the plugin spec describes, made on first use and kept for the process.
 * The agent hook and record_phases of the first request for a (kind, name, origin) are kept.
 */
const nixl_plugin_core_services_t *
nixlPluginCoreServices(const nixlPluginServicesSpec &spec);

#endif // NIXL_SRC_CORE_PLUGIN_CORE_SERVICES_H
