/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "prometheus_exporter.h"

#include <unistd.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "prom_host.h"
#include "prometheus_config.h"
#include "prometheus_endpoint.h"

nixlPrometheusExporter::nixlPrometheusExporter(const nixlTelemetryExporterContext &ctx) {
    nixlPromConfig::config_t cfg;
    try {
        cfg = nixlPromConfig::readConfig();
    }
    catch (const std::invalid_argument &e) {
        // Name the agent too: the SDK logs what() as the one line for this failure.
        throw std::invalid_argument("prometheus: agent '" + std::string(ctx.agentName) +
                                    "': " + e.what());
    }
    series_ = std::make_shared<nixlPromAgentSeries>(ctx.agentName, nixlPromHostName(), ctx.eventTypes,
                                                    std::move(cfg.boundsUs), cfg.names);
    nixlPromEndpoints::attach(cfg.bindAddress(), cfg.port, series_);
    port_ = cfg.port;
}

nixlPrometheusExporter::~nixlPrometheusExporter() {
    nixlPromEndpoints::detach(port_, series_.get());
}

nixl_plugin_status_t
nixlPrometheusExporter::exportEvents(std::span<const nixl_telemetry_event_abi_t> events) noexcept {
    try {
        const size_t outside = series_->apply(events);
        if (outside == 0) {
            return NIXL_PLUGIN_SUCCESS;
        }
        if (!warnedOutside_) {
            warnedOutside_ = true;
            NIXL_SDK_WARN("prometheus: agent '"
                          << series_->agentLabel() << "': " << outside << " of " << events.size()
                          << " events have a type outside the event table given at create time;"
                             " those are not exported (further occurrences are not logged)");
        }
        // Success: the known events were exported, and a failure would make core count the
        // whole batch as lost (the exporter ABI); prometheus_mp answers the same.
        return NIXL_PLUGIN_SUCCESS;
    }
    catch (const std::exception &e) {
        NIXL_SDK_ERROR("prometheus: agent '" << series_->agentLabel()
                                             << "': exporting events failed: " << e.what());
    }
    catch (...) {
        NIXL_SDK_ERROR("prometheus: agent '" << series_->agentLabel()
                                             << "': exporting events failed");
    }
    return NIXL_PLUGIN_ERR_UNKNOWN;
}

NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE(nixlPrometheusExporter, "prometheus", "1.0.0")
