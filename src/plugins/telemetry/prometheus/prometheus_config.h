/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prometheus_config.h
 * @brief Configuration of the prometheus exporter: scrape port, bind address and
 *        histogram bounds, read once per exporter at create time.
 *
 * Thread safety: readConfig may run on any thread (core's lookup is thread-safe).
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_CONFIG_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_CONFIG_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "prom_schema.h"

namespace nixlPromConfig {

using nixlProm::kDefaultPort;
using nixlProm::kLocalVar;
using nixlProm::kPortVar;

/** Every option an exporter reads. */
struct config_t {
    uint16_t port = kDefaultPort;
    bool local = false; ///< listen on 127.0.0.1 only, else on 0.0.0.0
    std::vector<double> boundsUs; ///< histogram upper bounds in microseconds, increasing
    nixlProm::nameStyle_t names = nixlProm::nameStyle_t::LIBNIXL; ///< series naming style

    /** "127.0.0.1:<port>" or "0.0.0.0:<port>". */
    std::string
    bindAddress() const;
};

/**
 * Reads NIXL_TELEMETRY_PROMETHEUS_PORT (1..65535, default 9090), NIXL_TELEMETRY_PROMETHEUS_LOCAL
 * (NIXL's boolean words, default false), NIXL_TELEMETRY_HISTOGRAM_BUCKETS_US and
 * NIXL_TELEMETRY_PROMETHEUS_NAMES from the environment, else the NIXL configuration file,
 * through core services. Throws std::invalid_argument naming the variable, value and origin
 * when one is malformed, except NAMES: an unknown style logs one warning and means libnixl.
 */
config_t
readConfig();

/** NIXL_TELEMETRY_PROMETHEUS_NAMES: unset or empty => libnixl; unknown => one warning, libnixl. */
nixlProm::nameStyle_t
readNameStyle();

} // namespace nixlPromConfig

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_CONFIG_H
