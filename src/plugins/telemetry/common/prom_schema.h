/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prom_schema.h
 * @brief Metric names, help texts and histogram bounds shared by the prometheus and
 *        prometheus_mp exporter plugins, so both expose exactly the same series.
 *
 * Names follow Prometheus conventions (base units, `_total` on counters, no abbreviated units),
 * so `promtool check metrics` passes; the `agent_` family prefix of NIXL 1.4 stays. They are
 * derived from the event table core passes at create time (name + category), never from event
 * numbers, so a newer core with more event types still gets sensible names:
 *
 *   category      NIXL 1.4 base name          series here
 *   BYTES         agent_tx_bytes              agent_tx_bytes_total (counter),
 *                                             agent_tx_last_bytes (gauge)
 *   BYTES         agent_memory_registered     agent_memory_registered_bytes_total,
 *                                             agent_memory_registered_last_bytes
 *   COUNT         agent_tx_requests_num       agent_tx_requests_total
 *   DURATION_US   agent_xfer_time             agent_xfer_time_seconds (histogram; its _sum and
 *                                             _count replace NIXL's agent_xfer_time_total),
 *                                             agent_xfer_time_last_seconds (gauge)
 *   ERROR         agent_err_<status>          agent_errors_total{status="<status>"}
 *   DROPPED       agent_telemetry_events_dropped  agent_telemetry_events_dropped_total
 *
 * NIXL_TELEMETRY_PROMETHEUS_NAMES=nixl selects NIXL 1.4's names instead (nameStyle_t::NIXL), for
 * dashboards written against NIXL: <base>_total counters (durations: sum in microseconds),
 * <base> last-value gauges of durations in microseconds, <base>_us histograms with microsecond
 * bounds, and no series for rows NIXL 1.4 does not have. The exporters choose once, at create.
 *
 * Not thread-affine: pure functions.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_COMMON_PROM_SCHEMA_H
#define NIXL_PLUGINS_TELEMETRY_COMMON_PROM_SCHEMA_H

#include <charconv>
#include <cstdint>
#include <cmath>
#include <map>
#include <utility>
#include <system_error>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nixl_telemetry_exporter_plugin.h"
#include "nixl_xfer_path.h"

namespace nixlProm {

/** Names of the series one event type feeds; empty strings mean "no such series". */
struct metricNames {
    std::string counter; ///< counter name including _total
    std::string gauge; ///< last-value gauge
    std::string histogram; ///< histogram base name (without _bucket/_sum/_count)
    std::string help; ///< HELP text
    bool seconds = false; ///< values arrive in microseconds and are exported in seconds
    bool omitted = false; ///< the row has no series in this naming style (skip it silently)
};

/** Which series names the exporters emit: libnixl's (promtool-clean) or NIXL 1.4's. */
enum class nameStyle_t { LIBNIXL, NIXL };

inline constexpr const char *kNamesVar = "NIXL_TELEMETRY_PROMETHEUS_NAMES";

/** "libnixl" or "nixl" (any case); nullopt for anything else. Unset is the caller's default. */
inline std::optional<nameStyle_t>
parseNameStyle(std::string_view v) {
    auto eq = [&](std::string_view word) {
        if (v.size() != word.size()) {
            return false;
        }
        for (size_t i = 0; i < v.size(); ++i) {
            const char c =
                (v[i] >= 'A' && v[i] <= 'Z') ? static_cast<char>(v[i] - 'A' + 'a') : v[i];
            if (c != word[i]) {
                return false;
            }
        }
        return true;
    };
    if (eq("libnixl")) {
        return nameStyle_t::LIBNIXL;
    }
    if (eq("nixl")) {
        return nameStyle_t::NIXL;
    }
    return std::nullopt;
}

/** Base names of NIXL 1.4's non-error event rows; NIXL style omits any other non-error row. */
inline bool
isNixl14BaseName(std::string_view base) {
    static constexpr std::string_view known[] = {
        "agent_tx_bytes",          "agent_rx_bytes",
        "agent_tx_requests_num",   "agent_rx_requests_num",
        "agent_memory_registered", "agent_memory_deregistered",
        "agent_xfer_time",         "agent_xfer_post_time",
        "agent_telemetry_events_dropped"};
    for (const std::string_view k : known) {
        if (k == base) {
            return true;
        }
    }
    return false;
}

/** The family every error event feeds, with label status=<status_label>. */
inline constexpr std::string_view kErrorsTotal = "agent_errors_total";
inline constexpr std::string_view kErrorsHelp = "Errors returned by the agent, by status";

inline std::string
stripSuffix(std::string_view s, std::string_view suffix) {
    if (s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
        s.remove_suffix(suffix.size());
    }
    return std::string(s);
}

/** NIXL 1.4's names for one row (see namesFor); @p n carries the help text already. */
inline metricNames
nixlNamesFor(const nixl_telemetry_event_info_t &info, const std::string &base, metricNames n) {
    if (info.category == NIXL_TELEMETRY_CAT_ERROR) {
        n.counter = std::string(kErrorsTotal);
        n.help = std::string(kErrorsHelp);
        return n;
    }
    if (!isNixl14BaseName(base)) {
        n.omitted = true;
        return n;
    }
    switch (info.category) {
    case NIXL_TELEMETRY_CAT_BYTES:
        n.counter = base + "_total";
        n.gauge = stripSuffix(base, "_bytes") + "_last_bytes";
        break;
    case NIXL_TELEMETRY_CAT_COUNT:
    case NIXL_TELEMETRY_CAT_DROPPED:
        n.counter = base + "_total";
        break;
    case NIXL_TELEMETRY_CAT_DURATION_US:
        n.counter = base + "_total";
        n.gauge = base;
        n.histogram = base + "_us";
        break;
    default:
        break;
    }
    return n;
}

/**
 * Series names for one row of the event table. ERROR rows map to kErrorsTotal (use
 * info.status_label as the label); rows of a category this code does not know get all-empty
 * names and are skipped by exporters.
 */
inline metricNames
namesFor(const nixl_telemetry_event_info_t &info, nameStyle_t style = nameStyle_t::LIBNIXL) {
    metricNames n;
    const std::string base = info.name == nullptr ? std::string() : std::string(info.name);
    n.help = info.help == nullptr ? base : std::string(info.help);
    if (base.empty()) {
        return n;
    }
    if (style == nameStyle_t::NIXL) {
        return nixlNamesFor(info, base, std::move(n));
    }
    switch (info.category) {
    case NIXL_TELEMETRY_CAT_BYTES: {
        const std::string stem = stripSuffix(base, "_bytes");
        n.counter = stem + "_bytes_total";
        n.gauge = stem + "_last_bytes";
        break;
    }
    case NIXL_TELEMETRY_CAT_COUNT:
        n.counter = stripSuffix(base, "_num") + "_total";
        break;
    case NIXL_TELEMETRY_CAT_DURATION_US:
        n.histogram = base + "_seconds";
        n.gauge = base + "_last_seconds";
        n.seconds = true;
        break;
    case NIXL_TELEMETRY_CAT_ERROR:
        n.counter = std::string(kErrorsTotal);
        n.help = std::string(kErrorsHelp);
        break;
    case NIXL_TELEMETRY_CAT_DROPPED:
        n.counter = stripSuffix(base, "_total") + "_total";
        break;
    default:
        break;
    }
    return n;
}

/**
 * Per-path series (issue 34, beyond NIXL 1.4, emitted in both naming styles): the transfer
 * bytes and request events carry the data path and, for a fallback, its reason in their
 * reserved word (nixl_xfer_path.h). The role of a row is found by its base name, never by its
 * number. Labels are {backend, path} and {backend, reason}, from closed enums: bounded.
 */
enum class pathRole_t : uint8_t { NONE, TX_BYTES, RX_BYTES, TX_REQUESTS, RX_REQUESTS };
inline constexpr size_t kPathRoles = 4; ///< TX_BYTES..RX_REQUESTS, as indices 0..3

inline pathRole_t
pathRoleOf(const nixl_telemetry_event_info_t &info) {
    const std::string_view base = info.name == nullptr ? std::string_view() : info.name;
    if (base == "agent_tx_bytes") {
        return pathRole_t::TX_BYTES;
    }
    if (base == "agent_rx_bytes") {
        return pathRole_t::RX_BYTES;
    }
    if (base == "agent_tx_requests_num") {
        return pathRole_t::TX_REQUESTS;
    }
    if (base == "agent_rx_requests_num") {
        return pathRole_t::RX_REQUESTS;
    }
    return pathRole_t::NONE;
}

/** The backends that have paths, in a fixed order (the prometheus_mp store indexes by it). */
inline constexpr std::string_view kPathBackends[] = {"UCX", "LIBFABRIC", "POSIX"};
inline constexpr size_t kPathBackendCount = 3;

/** Index of path's backend in kPathBackends; kPathBackendCount for unknown paths. */
inline size_t
pathBackendIndex(uint32_t path) {
    const std::string_view b = nixl_xfer_path_backend(path);
    for (size_t i = 0; i < kPathBackendCount; ++i) {
        if (kPathBackends[i] == b) {
            return i;
        }
    }
    return kPathBackendCount;
}

/** Counter family and help of each role (index role - 1). */
inline constexpr std::string_view kPathSeries[kPathRoles] = {
    "agent_path_tx_bytes_total", "agent_path_rx_bytes_total", "agent_path_tx_requests_total",
    "agent_path_rx_requests_total"};
inline constexpr std::string_view kPathHelp[kPathRoles] = {
    "Bytes of completed WRITE transfers, by backend and data path",
    "Bytes of completed READ transfers, by backend and data path",
    "Completed WRITE transfers, by backend and data path",
    "Completed READ transfers, by backend and data path"};
inline constexpr std::string_view kFallbacksTotal = "agent_path_fallbacks_total";
inline constexpr std::string_view kFallbacksHelp =
    "Connections a backend moves on a fallback data path, by backend and reason";

/**
 * Sums of the per-path series of one agent. Not thread-safe: guarded by its owner's lock.
 * Only paths and reasons seen are exported (an agent without UCX has no UCX series).
 */
struct pathTotals {
    uint64_t value[kPathRoles][NIXL_XFER_PATH_COUNT] = {};
    bool seen[kPathRoles][NIXL_XFER_PATH_COUNT] = {};
    uint64_t fallbacks[NIXL_XFER_PATH_COUNT][NIXL_PATH_FALLBACK_COUNT] = {};

    /** Adds one event of a row of role r (not NONE). */
    void
    add(pathRole_t r, uint32_t reserved, uint64_t v) noexcept {
        const uint32_t path = NIXL_TELEMETRY_PATH_OF(reserved);
        if (path == NIXL_XFER_PATH_UNKNOWN || path >= NIXL_XFER_PATH_COUNT) {
            return; // unknown or newer than this exporter: only in the totals
        }
        uint32_t reason = NIXL_TELEMETRY_FALLBACK_OF(reserved);
        if (reason != NIXL_PATH_FALLBACK_NONE) {
            if (v == 0 && (r == pathRole_t::TX_REQUESTS || r == pathRole_t::RX_REQUESTS)) {
                if (reason >= NIXL_PATH_FALLBACK_COUNT) {
                    reason = NIXL_PATH_FALLBACK_OTHER;
                }
                ++fallbacks[path][reason];
            }
            return;
        }
        const size_t i = static_cast<size_t>(r) - 1;
        value[i][path] += v;
        seen[i][path] = true;
    }

    /** Fallbacks by {backend, reason}: paths of one backend summed, so no label set repeats. */
    std::map<std::pair<std::string, uint32_t>, uint64_t>
    fallbacksByBackend() const {
        std::map<std::pair<std::string, uint32_t>, uint64_t> out;
        for (uint32_t p = 1; p < NIXL_XFER_PATH_COUNT; ++p) {
            for (uint32_t why = 1; why < NIXL_PATH_FALLBACK_COUNT; ++why) {
                if (fallbacks[p][why] != 0) {
                    out[{nixl_xfer_path_backend(p), why}] += fallbacks[p][why];
                }
            }
        }
        return out;
    }
};

/** NIXL 1.4's default duration bounds, in microseconds. */
inline const std::vector<double> &
defaultBucketBoundsUs() {
    static const std::vector<double> bounds = {10,     25,     50,      100,     250,    500,
                                               1000,   2500,   5000,    10000,   25000,  50000,
                                               100000, 250000, 500000,  1000000, 5000000, 10000000};
    return bounds;
}

inline constexpr const char *kBucketsVar = "NIXL_TELEMETRY_HISTOGRAM_BUCKETS_US";

/** Where both exporters serve /metrics: the port variable (1..65535), its default, and the
 *  loopback-only switch (NIXL's boolean words). */
inline constexpr const char *kPortVar = "NIXL_TELEMETRY_PROMETHEUS_PORT";
inline constexpr const char *kLocalVar = "NIXL_TELEMETRY_PROMETHEUS_LOCAL";
inline constexpr uint16_t kDefaultPort = 9090;

/**
 * Parses NIXL_TELEMETRY_HISTOGRAM_BUCKETS_US: comma-separated, strictly increasing, finite,
 * positive microsecond bounds. nullopt => malformed, with *why set to a message naming the
 * variable, the value and the offending token. Unset or empty => the defaults.
 */
inline std::optional<std::vector<double>>
parseBucketBoundsUs(const char *value, std::string *why) {
    if (value == nullptr || *value == '\0') {
        return defaultBucketBoundsUs();
    }
    std::vector<double> out;
    std::string_view rest(value);
    auto fail = [&](std::string_view token, const char *reason) {
        if (why != nullptr) {
            *why = std::string(kBucketsVar) + "='" + value + "': token '" + std::string(token) +
                "' " + reason;
        }
        return std::nullopt;
    };
    while (true) {
        const size_t comma = rest.find(',');
        std::string_view tok = rest.substr(0, comma);
        while (!tok.empty() && (tok.front() == ' ' || tok.front() == '\t')) {
            tok.remove_prefix(1);
        }
        while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\t')) {
            tok.remove_suffix(1);
        }
        // from_chars, not strtod: the decimal point must not depend on LC_NUMERIC.
        double v = 0;
        const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
        if (tok.empty() || ec != std::errc() || end != tok.data() + tok.size()) {
            return fail(tok, "is not a number");
        }
        if (!std::isfinite(v) || v <= 0) {
            return fail(tok, "is not a finite positive number");
        }
        if (!out.empty() && v <= out.back()) {
            return fail(tok, "is not greater than the bound before it");
        }
        out.push_back(v);
        if (comma == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(comma + 1);
    }
    return out;
}

} // namespace nixlProm

#endif // NIXL_PLUGINS_TELEMETRY_COMMON_PROM_SCHEMA_H
