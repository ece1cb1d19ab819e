/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file telemetry_config.h
 * @brief The NIXL_TELEMETRY_* settings of an agent's telemetry pipeline, read and validated
 *        once at agent construction. Whether telemetry is on at all (NIXL_TELEMETRY_ENABLE vs
 *        nixlAgentConfig::captureTelemetry) is decided by the agent before this is read.
 *
 * Every option goes through nixlConfig (environment, then the configuration file); thread-safe
 * as nixlConfig is.
 */
#ifndef NIXL_SRC_CORE_TELEMETRY_TELEMETRY_CONFIG_H
#define NIXL_SRC_CORE_TELEMETRY_TELEMETRY_CONFIG_H

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/telemetry_event.h"

/** Built-in exporter names (NIXL_TELEMETRY_EXPORTER, case-insensitive). */
inline constexpr char nixl_telemetry_buffer_exporter[] = "BUFFER";
inline constexpr char nixl_telemetry_nop_exporter[] = "NOP";

inline constexpr size_t nixl_telemetry_default_buffer_size = 4096;
/**
 * Upper bound of NIXL_TELEMETRY_BUFFER_SIZE (2^32 events, 64 GiB of 16-byte events per
 * recording thread). NIXL has no explicit bound: it reserves the buffer at construction and
 * fails with the allocation; below this bound we likewise refuse a size whose buffer cannot be
 * allocated. Memory is reserved, not touched: pages are used as events arrive.
 */
inline constexpr size_t nixl_telemetry_max_buffer_size = size_t{1} << 32;
inline constexpr std::chrono::milliseconds nixl_telemetry_default_run_interval{100};
/** Upper bound of NIXL_TELEMETRY_RUN_INTERVAL (one hour). */
inline constexpr std::chrono::milliseconds nixl_telemetry_max_run_interval{3600 * 1000};

struct nixlTelemetryConfig {
    /** "BUFFER", "NOP" (built in) or the name of a plugin libtelemetry_exporter_<name>.so. */
    std::string exporter = nixl_telemetry_nop_exporter;
    /** How exporter was chosen, for messages: "NIXL_TELEMETRY_EXPORTER=x", ... */
    std::string exporterOrigin = "default";
    size_t bufferSize = nixl_telemetry_default_buffer_size;
    std::chrono::milliseconds runInterval = nixl_telemetry_default_run_interval;
    /** Types that are recorded; others are dropped before the staging queue. */
    nixl_telemetry_metric_mask_t enabled = allEnabled();

    static constexpr nixl_telemetry_metric_mask_t
    allEnabled() noexcept {
        nixl_telemetry_metric_mask_t m{};
        for (auto &b : m) {
            b = true;
        }
        return m;
    }

    /**
     * Reads NIXL_TELEMETRY_EXPORTER, _DIR, _BUFFER_SIZE, _RUN_INTERVAL and _ENABLED_METRICS
     * (environment, else configuration file). A bad value writes one ERROR line naming the
     * agent, variable, value, origin and accepted values and throws std::invalid_argument with
     * the same text. Unmatched metric names are one WARN line each.
     */
    static nixlTelemetryConfig
    fromEnvironment(const std::string &agent);
};

/**
 * Parses a NIXL_TELEMETRY_ENABLED_METRICS value: comma-separated fnmatch(3) globs over the base
 * names ("agent_tx_*"), each trimmed of blanks; duplicates and empty items are ignored. An empty
 * or all-blank text enables everything. Tokens that match no type are appended to unmatched.
 */
nixl_telemetry_metric_mask_t
nixlParseEnabledMetrics(std::string_view text, std::vector<std::string> &unmatched);

#endif // NIXL_SRC_CORE_TELEMETRY_TELEMETRY_CONFIG_H
