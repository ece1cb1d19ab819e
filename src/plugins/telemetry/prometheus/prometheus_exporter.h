/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prometheus_exporter.h
 * @brief The "prometheus" telemetry exporter: each agent's telemetry as Prometheus series on a
 *        /metrics HTTP endpoint shared by all agents of the process
 *        (libtelemetry_exporter_prometheus.so, NIXL_TELEMETRY_EXPORTER=prometheus).
 *
 * Configuration (read at create time): NIXL_TELEMETRY_PROMETHEUS_PORT (9090),
 * NIXL_TELEMETRY_PROMETHEUS_LOCAL (false: 0.0.0.0; true: 127.0.0.1),
 * NIXL_TELEMETRY_HISTOGRAM_BUCKETS_US (NIXL 1.4's 18 bounds). See README.md.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_EXPORTER_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_EXPORTER_H

#include <cstdint>
#include <memory>
#include <span>

#include "nixl_telemetry_exporter_sdk.h"
#include "prometheus_series.h"

/**
 * @brief One agent's exporter. Construction publishes the agent's series (all at zero) on the
 *        process's endpoint for the configured port; destruction removes them.
 *
 * Construction fails (std::invalid_argument, agent construction fails) on a malformed variable
 * or when an agent of the same name already exports on the port, and reports
 * nixlTelemetryExporterUnavailable (the agent runs without exporting) when the port cannot be
 * bound.
 *
 * Thread safety: as the SDK states, one flush thread drives exportEvents of an instance;
 * instances of different agents run concurrently with each other and with scrapes, which
 * nixlPromAgentSeries and the endpoint registry lock for.
 */
class nixlPrometheusExporter : public nixlTelemetryExporterBase {
public:
    explicit nixlPrometheusExporter(const nixlTelemetryExporterContext &ctx);
    ~nixlPrometheusExporter() override;

    /**
     * Applies the events. Events whose type is outside the event table are skipped and make the
     * call return NIXL_PLUGIN_ERR_INVALID_PARAM (the other events of the call are applied); the
     * first such call of an agent logs a warning.
     */
    nixl_plugin_status_t
    exportEvents(std::span<const nixl_telemetry_event_abi_t> events) noexcept override;

private:
    std::shared_ptr<nixlPromAgentSeries> series_;
    uint16_t port_ = 0;
    bool warnedOutside_ = false; ///< touched only by the flush thread
};

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_EXPORTER_H
