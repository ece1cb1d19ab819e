/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_telemetry_exporter_sdk.h
 * @brief Header-only C++ SDK for writing a telemetry exporter plugin.
 *
 * Derive from nixlTelemetryExporterBase, give it a constructor taking the context, and export it:
 * @code
 *   class myExporter : public nixlTelemetryExporterBase {
 *   public:
 *       explicit myExporter(const nixlTelemetryExporterContext &ctx);  // may throw
 *       nixl_plugin_status_t exportEvents(std::span<const nixl_telemetry_event_abi_t> ev)
 *           noexcept override;
 *   };
 *   NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE(myExporter, "mine", "1.0.0")
 * @endcode
 * and build it as libtelemetry_exporter_mine.so; agents use it with
 * NIXL_TELEMETRY_EXPORTER=mine.
 *
 * Construction errors: throw nixlTelemetryExporterUnavailable when the exporter cannot run but
 * the agent should go on without it (core warns); throw any other std::exception to fail agent
 * construction. Either way the SDK logs what() once, so make it name the variable and value.
 * No exception crosses into core.
 *
 * Thread safety: core calls batchBegin/exportEvents/batchEnd of one instance from one thread
 * (the agent's flush thread). Instances of different agents run concurrently; state they share
 * must be locked by the plugin.
 */
#ifndef NIXL_TELEMETRY_EXPORTER_SDK_H
#define NIXL_TELEMETRY_EXPORTER_SDK_H

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "nixl_plugin_sdk_common.h"
#include "nixl_telemetry_exporter_plugin.h"

/**
 * Throw from an exporter's constructor when it cannot run in this process but the agent
 * should go on without telemetry export (e.g. its port is taken): core warns with what() and
 * continues. For a configuration the operator must fix, throw std::invalid_argument instead.
 */
class nixlTelemetryExporterUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/**
 * What an exporter's constructor receives. The views borrow core's memory and stay valid for
 * the exporter's life, so the exporter may keep them instead of copying.
 */
struct nixlTelemetryExporterContext {
    /** Name of the agent whose events this instance exports (e.g. a metric label). */
    std::string_view agentName;
    /** The agent's NIXL_TELEMETRY_BUFFER_SIZE (events pending per producer thread). */
    size_t maxEventsBuffered = 0;
    /** Event table: eventTypes[i].type == i. Name metrics from name/category, not numbers. */
    std::span<const nixl_telemetry_event_info_t> eventTypes;
    /** Core services (logging, options); the SDK's NIXL_SDK_* macros already use them. */
    const nixl_plugin_core_services_t *core = nullptr;

    /** The row for a type, or nullptr when the type is outside the table. */
    const nixl_telemetry_event_info_t *
    info(uint32_t type) const noexcept {
        return type < eventTypes.size() ? &eventTypes[type] : nullptr;
    }
};

/**
 * Base class of a telemetry exporter: derive from it, give the class a constructor taking
 * const nixlTelemetryExporterContext &, implement exportEvents, and export it with
 * NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE. One instance per agent that uses it.
 */
class nixlTelemetryExporterBase {
public:
    nixlTelemetryExporterBase() = default;
    nixlTelemetryExporterBase(const nixlTelemetryExporterBase &) = delete;
    nixlTelemetryExporterBase &
    operator=(const nixlTelemetryExporterBase &) = delete;
    virtual ~nixlTelemetryExporterBase() = default;

    /** Called at the start of each flush, before its exportEvents calls (even if none). */
    virtual void
    batchBegin() noexcept {}

    /**
     * Takes events of the current flush (borrowed for the call only), each producer thread's in
     * the order they happened; may be called several times per flush. Return
     * NIXL_PLUGIN_SUCCESS, or an error to have core count the events as refused.
     */
    virtual nixl_plugin_status_t
    exportEvents(std::span<const nixl_telemetry_event_abi_t> events) noexcept = 0;

    /** Called at the end of each flush: publish what the flush's exportEvents gathered. */
    virtual void
    batchEnd() noexcept {}
};

// The C-table adapter (nixlSdk::detail), used by NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE
// below; not API.
#include "internal/nixl_telemetry_exporter_sdk_adapter.h"

/**
 * Exports Exporter as the telemetry exporter NAME (a string literal matching
 * libtelemetry_exporter_NAME.so) of release VERSION: defines the plugin's one exported
 * symbol, nixl_telemetry_exporter_plugin_get. Use once, at namespace scope.
 */
#define NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE(Exporter, NAME, VERSION)                         \
    extern "C" __attribute__((visibility("default"))) const nixl_telemetry_exporter_plugin_t * \
    nixl_telemetry_exporter_plugin_get(void) {                                                 \
        static const nixl_telemetry_exporter_plugin_t plugin = {                               \
            {NIXL_TELEMETRY_EXPORTER_ABI_VERSION,                                              \
             NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER,                                              \
             sizeof(nixl_telemetry_exporter_plugin_t),                                         \
             NAME,                                                                             \
             VERSION},                                                                         \
            &::nixlSdk::detail::exporterOps<Exporter>::table};                                 \
        return &plugin;                                                                        \
    }

#endif // NIXL_TELEMETRY_EXPORTER_SDK_H
