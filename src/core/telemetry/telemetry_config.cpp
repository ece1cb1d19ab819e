/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "telemetry/telemetry_config.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "common/nixl_log.h"

namespace {

std::string_view
trim(std::string_view s) noexcept {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.remove_suffix(1);
    }
    return s;
}

bool
equalsNoCase(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() &&
        std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::toupper(static_cast<unsigned char>(x)) ==
                   std::toupper(static_cast<unsigned char>(y));
           });
}

/** Strict unsigned decimal (surrounding blanks allowed); false on anything else or overflow. */
bool
parseUnsigned(std::string_view text, uint64_t &out) noexcept {
    text = trim(text);
    if (text.empty()) {
        return false;
    }
    uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
        const uint64_t d = static_cast<uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    out = v;
    return true;
}

[[noreturn]] void
fail(const std::string &agent, const std::string &what) {
    const std::string msg = "agent " + agent + ": " + what;
    NIXL_ERROR << msg;
    throw std::invalid_argument(msg);
}

const char *
env(const char *name) noexcept {
    const char *v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
}

} // namespace

nixl_telemetry_metric_mask_t
nixlParseEnabledMetrics(std::string_view text, std::vector<std::string> &unmatched) {
    if (trim(text).empty()) {
        return nixlTelemetryConfig::allEnabled();
    }
    nixl_telemetry_metric_mask_t mask{};
    std::vector<std::string> seen;
    while (true) {
        const size_t comma = text.find(',');
        const std::string token(trim(text.substr(0, comma)));
        if (!token.empty() && std::find(seen.begin(), seen.end(), token) == seen.end()) {
            seen.push_back(token);
            bool any = false;
            for (size_t i = 0; i < nixl_telemetry_event_type_count; ++i) {
                const std::string name(
                    telemetryEventTypeStr(static_cast<nixl_telemetry_event_type_t>(i)));
                if (fnmatch(token.c_str(), name.c_str(), 0) == 0) {
                    mask[i] = true;
                    any = true;
                }
            }
            if (!any) {
                unmatched.push_back(token);
            }
        }
        if (comma == std::string_view::npos) {
            break;
        }
        text.remove_prefix(comma + 1);
    }
    return mask;
}

nixlTelemetryConfig
nixlTelemetryConfig::fromEnvironment(const std::string &agent) {
    nixlTelemetryConfig cfg;

    const char *exporter = std::getenv(TELEMETRY_EXPORTER_VAR);
    const std::string_view name = exporter != nullptr ? trim(exporter) : std::string_view();
    if (!name.empty()) {
        cfg.exporterOrigin = std::string(TELEMETRY_EXPORTER_VAR) + "=" + exporter;
        if (equalsNoCase(name, nixl_telemetry_buffer_exporter)) {
            cfg.exporter = nixl_telemetry_buffer_exporter;
        } else if (equalsNoCase(name, nixl_telemetry_nop_exporter)) {
            cfg.exporter = nixl_telemetry_nop_exporter;
        } else if (name.find('/') != std::string_view::npos || name == "." || name == "..") {
            fail(agent,
                 cfg.exporterOrigin + " is not an exporter name (BUFFER, NOP or the <name> of a "
                                      "plugin libtelemetry_exporter_<name>.so)");
        } else {
            cfg.exporter = std::string(name);
        }
    } else if (const char *dir = env(TELEMETRY_DIR_VAR)) {
        cfg.exporter = nixl_telemetry_buffer_exporter;
        cfg.exporterOrigin = std::string(TELEMETRY_EXPORTER_VAR) + " unset and " +
            TELEMETRY_DIR_VAR + "=" + dir;
    } else {
        cfg.exporter = nixl_telemetry_nop_exporter;
        cfg.exporterOrigin = std::string(TELEMETRY_EXPORTER_VAR) + " and " + TELEMETRY_DIR_VAR +
            " unset";
    }

    if (const char *size = env(TELEMETRY_BUFFER_SIZE_VAR)) {
        uint64_t v = 0;
        if (!parseUnsigned(size, v) || v == 0 || v > nixl_telemetry_max_buffer_size) {
            fail(agent, std::string(TELEMETRY_BUFFER_SIZE_VAR) + "=" + size +
                     " is not a number of events between 1 and " +
                     std::to_string(nixl_telemetry_max_buffer_size));
        }
        cfg.bufferSize = static_cast<size_t>(v);
    }

    if (const char *interval = env(TELEMETRY_RUN_INTERVAL_VAR)) {
        uint64_t v = 0;
        if (!parseUnsigned(interval, v) || v == 0 ||
            v > static_cast<uint64_t>(nixl_telemetry_max_run_interval.count())) {
            fail(agent, std::string(TELEMETRY_RUN_INTERVAL_VAR) + "=" + interval +
                     " is not a number of milliseconds between 1 and " +
                     std::to_string(nixl_telemetry_max_run_interval.count()));
        }
        cfg.runInterval = std::chrono::milliseconds(v);
    }

    if (const char *metrics = std::getenv(TELEMETRY_ENABLED_METRICS_VAR)) {
        std::vector<std::string> unmatched;
        cfg.enabled = nixlParseEnabledMetrics(metrics, unmatched);
        for (const auto &token : unmatched) {
            NIXL_WARN << "agent " << agent << ": " << TELEMETRY_ENABLED_METRICS_VAR << "="
                      << metrics << ": \"" << token << "\" matches no telemetry event";
        }
    }
    return cfg;
}
