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
#include "common/nixl_text.h"
#include "config/config.h"
#include "nixl_plugin_config_parse.h"

namespace {

// The blank trimming and case-insensitive match of every NIXL_* option (one implementation).
using nixlConfigParse::equalsNoCase;

using nixlText::trim;

[[noreturn]] void
fail(const std::string &agent, const std::string &what) {
    const std::string msg = "agent " + agent + ": " + what;
    NIXL_ERROR << msg;
    // what() reaches the application (and terminals) without the logger: escaped and cut
    // here, once, as the log line is by the logger.
    throw std::invalid_argument(nixl::log::escaped(nixl::log::cut(msg, nixl::log::max_line_bytes)));
}

} // namespace

nixl_telemetry_metric_mask_t
nixlParseEnabledMetrics(std::string_view text, std::vector<std::string> &unmatched) {
    if (trim(text).empty()) {
        return nixlTelemetryConfig::allEnabled();
    }
    nixl_telemetry_metric_mask_t mask{};
    std::vector<std::string> seen;
    for (const std::string_view item : nixlText::splitList(text)) {
        const std::string token(item);
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
    }
    return mask;
}

nixlTelemetryConfig
nixlTelemetryConfig::fromEnvironment(const std::string &agent) {
    nixlTelemetryConfig cfg;
    const std::string who = "agent " + agent + ": ";

    const auto exporter = nixlConfig::lookup(TELEMETRY_EXPORTER_VAR);
    const std::string_view name = exporter ? trim(exporter->text) : std::string_view();
    if (!name.empty()) {
        cfg.exporterOrigin = std::string(TELEMETRY_EXPORTER_VAR) + "=" + exporter->text;
        if (exporter->origin != "environment") {
            cfg.exporterOrigin += " (" + exporter->origin + ")";
        }
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
    } else if (const auto dir = nixlConfig::lookup(TELEMETRY_DIR_VAR)) {
        cfg.exporter = nixl_telemetry_buffer_exporter;
        cfg.exporterOrigin = std::string(TELEMETRY_EXPORTER_VAR) + " unset and " +
            TELEMETRY_DIR_VAR + "=" + dir->text;
    } else {
        cfg.exporter = nixl_telemetry_nop_exporter;
        cfg.exporterOrigin = std::string(TELEMETRY_EXPORTER_VAR) + " and " + TELEMETRY_DIR_VAR +
            " unset";
    }

    if (const auto size = nixlConfig::getUnsigned(
            TELEMETRY_BUFFER_SIZE_VAR, who, 1,
            nixl_telemetry_max_buffer_size)) {
        cfg.bufferSize = static_cast<size_t>(*size);
        // NIXL reserves the buffer at construction, so a size the process cannot allocate fails
        // the agent there. Probe the same way: a large calloc maps fresh zero pages without
        // touching them, so this costs address space for a moment, not memory.
        void *probe = std::calloc(cfg.bufferSize, sizeof(nixl_telemetry_event_abi_t));
        if (probe == nullptr) {
            fail(agent, std::string(TELEMETRY_BUFFER_SIZE_VAR) + "=" + std::to_string(*size) +
                     ": a staging buffer of " + std::to_string(*size) + " events (" +
                     std::to_string(*size * sizeof(nixl_telemetry_event_abi_t)) +
                     " bytes) cannot be allocated in this process");
        }
        std::free(probe);
    }
    // The BUFFER ring indexes with a mask: NIXL's ring refuses other sizes with
    // std::invalid_argument from the agent constructor, and so do we (before the exporter's own
    // check, whose refusal would surface as a failed start).
    if (cfg.exporter == nixl_telemetry_buffer_exporter &&
        (cfg.bufferSize < 2 || (cfg.bufferSize & (cfg.bufferSize - 1)) != 0)) {
        fail(agent, std::string(TELEMETRY_BUFFER_SIZE_VAR) + "=" + std::to_string(cfg.bufferSize) +
                 " is not a power of two >= 2, which the BUFFER exporter (" +
                 cfg.exporterOrigin + ") needs");
    }

    if (const auto interval = nixlConfig::getMilliseconds(
            TELEMETRY_RUN_INTERVAL_VAR, who, 1,
            static_cast<uint64_t>(nixl_telemetry_max_run_interval.count()))) {
        cfg.runInterval = *interval;
    }

    if (const auto metrics = nixlConfig::lookup(TELEMETRY_ENABLED_METRICS_VAR)) {
        std::vector<std::string> unmatched;
        cfg.enabled = nixlParseEnabledMetrics(metrics->text, unmatched);
        // One line for all of them, the value and the list cut: a variable of 8,000 bad
        // names must not write 8,000 copies of itself.
        if (!unmatched.empty()) {
            std::string names;
            for (size_t i = 0; i < unmatched.size() && names.size() < nixl::log::max_value_bytes;
                 ++i) {
                names.append(i == 0 ? "\"" : ", \"").append(unmatched[i]).append("\"");
            }
            NIXL_WARN << who << TELEMETRY_ENABLED_METRICS_VAR << "="
                      << nixl::log::cut(metrics->text) << " (from " << metrics->origin << "): "
                      << unmatched.size() << " name(s) match no telemetry event: "
                      << nixl::log::cut(names);
        }
    }
    return cfg;
}
