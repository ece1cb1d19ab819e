/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "prometheus_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "prom_schema.h"

namespace nixlPromConfig {

std::string
config_t::bindAddress() const {
    return std::string(local ? "127.0.0.1:" : "0.0.0.0:") + std::to_string(port);
}

std::optional<uint16_t>
parsePort(const char *value, std::string *why) {
    if (value == nullptr || *value == '\0') {
        return kDefaultPort;
    }
    const std::string_view v(value);
    // from_chars alone would accept a leading '-' for signed types and stop at the first
    // non-digit, so insist on digits only before converting.
    const bool digits =
        std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    uint32_t port = 0;
    if (digits && v.size() <= 5) {
        const auto res = std::from_chars(v.data(), v.data() + v.size(), port);
        if (res.ec == std::errc() && res.ptr == v.data() + v.size() && port >= 1 &&
            port <= 65535) {
            return static_cast<uint16_t>(port);
        }
    }
    if (why != nullptr) {
        *why = std::string(kPortVar) + "='" + std::string(v) +
            "' is not a TCP port number (decimal 1-65535)";
    }
    return std::nullopt;
}

std::optional<bool>
parseLocal(const char *value, std::string *why) {
    if (value == nullptr || *value == '\0') {
        return false;
    }
    std::string v(value);
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    if (v == "1" || v == "true" || v == "yes" || v == "on") {
        return true;
    }
    if (v == "0" || v == "false" || v == "no" || v == "off") {
        return false;
    }
    if (why != nullptr) {
        *why = std::string(kLocalVar) + "='" + value +
            "' is not a boolean (1/true/yes/on or 0/false/no/off)";
    }
    return std::nullopt;
}

config_t
readFromEnvironment() {
    config_t cfg;
    std::string why;
    const auto port = parsePort(std::getenv(kPortVar), &why);
    if (!port) {
        throw std::invalid_argument(why);
    }
    cfg.port = *port;
    const auto local = parseLocal(std::getenv(kLocalVar), &why);
    if (!local) {
        throw std::invalid_argument(why);
    }
    cfg.local = *local;
    auto bounds = nixlProm::parseBucketBoundsUs(std::getenv(nixlProm::kBucketsVar), &why);
    if (!bounds) {
        throw std::invalid_argument(why);
    }
    cfg.boundsUs = std::move(*bounds);
    return cfg;
}

} // namespace nixlPromConfig
