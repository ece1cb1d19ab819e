/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prometheus_config.h
 * @brief Environment configuration of the prometheus exporter: scrape port, bind address and
 *        histogram bounds, read once per exporter at create time.
 *
 * Not thread-affine: pure functions over the strings they are given.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_CONFIG_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_CONFIG_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nixlPromConfig {

inline constexpr const char *kPortVar = "NIXL_TELEMETRY_PROMETHEUS_PORT";
inline constexpr const char *kLocalVar = "NIXL_TELEMETRY_PROMETHEUS_LOCAL";
inline constexpr uint16_t kDefaultPort = 9090;

/** Everything an exporter reads from the environment. */
struct config_t {
    uint16_t port = kDefaultPort;
    bool local = false; ///< listen on 127.0.0.1 only, else on 0.0.0.0
    std::vector<double> boundsUs; ///< histogram upper bounds in microseconds, increasing

    /** "127.0.0.1:<port>" or "0.0.0.0:<port>". */
    std::string
    bindAddress() const;
};

/**
 * NIXL_TELEMETRY_PROMETHEUS_PORT: unset or empty => 9090; otherwise decimal digits only, 1..65535.
 * nullopt => malformed, with *why naming the variable and the value.
 */
std::optional<uint16_t>
parsePort(const char *value, std::string *why);

/**
 * NIXL_TELEMETRY_PROMETHEUS_LOCAL: unset or empty => false; 1/true/yes/on and 0/false/no/off in
 * any case. nullopt => anything else, with *why naming the variable and the value.
 */
std::optional<bool>
parseLocal(const char *value, std::string *why);

/**
 * Reads the three variables from the process environment. Throws std::invalid_argument with
 * the offending variable and value when one is malformed.
 */
config_t
readFromEnvironment();

} // namespace nixlPromConfig

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_CONFIG_H
