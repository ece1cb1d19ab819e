/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_telemetry_exporter_sdk_adapter.h
 * @brief Internal to the telemetry exporter SDK: the operations table of
 *        nixl_telemetry_exporter_plugin.h implemented over nixlTelemetryExporterBase. Plugin
 *        authors never include or call this; nixl_telemetry_exporter_sdk.h includes it, and
 *        NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE uses nixlSdk::detail::exporterOps.
 *
 * create() turns the C init parameters into a nixlTelemetryExporterContext and constructs the
 * exporter, mapping its exceptions to statuses with one log line each; no exception crosses
 * into core. Nothing here is API.
 */
#ifndef NIXL_TELEMETRY_EXPORTER_SDK_ADAPTER_H
#define NIXL_TELEMETRY_EXPORTER_SDK_ADAPTER_H

#ifndef NIXL_TELEMETRY_EXPORTER_SDK_H
#error "include nixl_telemetry_exporter_sdk.h, not internal/nixl_telemetry_exporter_sdk_adapter.h"
#endif

#include <exception>
#include <new>
#include <span>

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

#endif // NIXL_TELEMETRY_EXPORTER_SDK_ADAPTER_H
