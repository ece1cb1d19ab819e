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

#include <cstdint>
#include <exception>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "nixl_plugin_sdk_common.h"
#include "nixl_telemetry_exporter_plugin.h"

/** Thrown by an exporter's constructor when it cannot run here (e.g. port taken). */
class nixlTelemetryExporterUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/** What an exporter learns at construction. Borrowed views valid for the exporter's life. */
struct nixlTelemetryExporterContext {
    std::string_view agentName;
    size_t maxEventsBuffered = 0;
    /** Event table: eventTypes[i].type == i. Name metrics from name/category, not numbers. */
    std::span<const nixl_telemetry_event_info_t> eventTypes;
    const nixl_plugin_core_services_t *core = nullptr;

    /** The row for a type, or nullptr when the type is outside the table. */
    const nixl_telemetry_event_info_t *
    info(uint32_t type) const noexcept {
        return type < eventTypes.size() ? &eventTypes[type] : nullptr;
    }
};

/** Base of an exporter instance; one per agent. */
class nixlTelemetryExporterBase {
public:
    nixlTelemetryExporterBase() = default;
    nixlTelemetryExporterBase(const nixlTelemetryExporterBase &) = delete;
    nixlTelemetryExporterBase &
    operator=(const nixlTelemetryExporterBase &) = delete;
    virtual ~nixlTelemetryExporterBase() = default;

    /** Start of one flush. */
    virtual void
    batchBegin() noexcept {}

    /** Events of the flush in order; may be called several times per flush. */
    virtual nixl_plugin_status_t
    exportEvents(std::span<const nixl_telemetry_event_abi_t> events) noexcept = 0;

    /** End of one flush. */
    virtual void
    batchEnd() noexcept {}
};

namespace nixlSdk {
namespace detail {

    template<typename Exporter> struct exporterOps {
        static nixl_plugin_status_t
        create(const nixl_telemetry_exporter_init_params_t *p,
               nixl_telemetry_exporter_t **out) noexcept {
            if (p == nullptr || out == nullptr ||
                p->size < sizeof(nixl_telemetry_exporter_init_params_t)) {
                return NIXL_PLUGIN_ERR_INVALID_PARAM;
            }
            if (p->core != nullptr) {
                coreServices().store(p->core, std::memory_order_release);
            }
            nixlTelemetryExporterContext ctx;
            ctx.agentName = toView(p->agent_name);
            ctx.maxEventsBuffered = p->max_events_buffered;
            ctx.eventTypes = std::span<const nixl_telemetry_event_info_t>(
                p->event_types, p->event_types == nullptr ? 0 : p->event_type_count);
            ctx.core = p->core;
            try {
                auto *e = new Exporter(ctx);
                *out = reinterpret_cast<nixl_telemetry_exporter_t *>(
                    static_cast<nixlTelemetryExporterBase *>(e));
                return NIXL_PLUGIN_SUCCESS;
            }
            catch (const nixlTelemetryExporterUnavailable &e) {
                NIXL_SDK_WARN(e.what());
                return NIXL_PLUGIN_ERR_NOT_ALLOWED;
            }
            catch (const std::exception &e) {
                NIXL_SDK_ERROR(e.what());
                return NIXL_PLUGIN_ERR_INVALID_PARAM;
            }
            catch (...) {
                NIXL_SDK_ERROR("exporter constructor threw a non-standard exception");
                return NIXL_PLUGIN_ERR_UNKNOWN;
            }
        }

        static nixlTelemetryExporterBase *
        self(nixl_telemetry_exporter_t *e) noexcept {
            return reinterpret_cast<nixlTelemetryExporterBase *>(e);
        }

        static void
        destroy(nixl_telemetry_exporter_t *e) noexcept {
            try {
                delete self(e);
            }
            catch (...) {
                NIXL_SDK_ERROR("exporter destructor threw");
            }
        }

        static void
        batchBegin(nixl_telemetry_exporter_t *e) noexcept {
            self(e)->batchBegin();
        }

        static nixl_plugin_status_t
        exportEvents(nixl_telemetry_exporter_t *e,
                     const nixl_telemetry_event_abi_t *ev,
                     size_t n) noexcept {
            if (ev == nullptr && n != 0) {
                return NIXL_PLUGIN_ERR_INVALID_PARAM;
            }
            return self(e)->exportEvents(std::span<const nixl_telemetry_event_abi_t>(ev, n));
        }

        static void
        batchEnd(nixl_telemetry_exporter_t *e) noexcept {
            self(e)->batchEnd();
        }

        static constexpr nixl_telemetry_exporter_ops_t table = {
            sizeof(nixl_telemetry_exporter_ops_t),
            &create,
            &destroy,
            &batchBegin,
            &exportEvents,
            &batchEnd,
        };
    };

} // namespace detail
} // namespace nixlSdk

/**
 * Exports Exporter as the telemetry exporter NAME (a string literal matching
 * libtelemetry_exporter_NAME.so) of release VERSION. Use once, at namespace scope.
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
