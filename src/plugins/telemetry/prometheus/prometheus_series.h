/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prometheus_series.h
 * @brief The metric state of one agent (cumulative counters, last-operation gauges, duration
 *        histograms, error counts by status) and its conversion to Prometheus metric families.
 *
 * Internal to the prometheus plugin: prometheus-cpp types appear here but never cross the
 * plugin's C ABI.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_SERIES_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_SERIES_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include "nixl_telemetry_exporter_plugin.h"
#include "prom_schema.h"

/**
 * @brief Metric families of one scrape, grouped by name so that each name is written once with
 *        all its samples together, as the exposition format requires.
 *
 * Not thread-safe: one instance per scrape.
 */
class nixlPromFamilySet {
public:
    /**
     * A new sample in family @p name (created with @p help and @p type on first use), or
     * nullptr when the name already exists with another type.
     */
    prometheus::ClientMetric *
    add(const std::string &name, const std::string &help, prometheus::MetricType type);

    /** The families in order of first use; leaves the set empty. */
    std::vector<prometheus::MetricFamily>
    take();

private:
    std::vector<prometheus::MetricFamily> families_;
    std::unordered_map<std::string, size_t> index_;
};

/**
 * @brief One agent's series. Built from the event table core passes at create time; series are
 *        named from each row's name and category (prom_schema.h), never from type numbers.
 *
 * Every series exists from construction (counters at 0), so rate() works from the first
 * scrape. Values arrive in microseconds for durations; histograms are bucketed in microseconds,
 * where the bounds are exact, and exported in seconds.
 *
 * Thread safety: apply() (the agent's flush thread) and collectInto() (HTTP threads) may run
 * concurrently; one mutex guards the values, and the names are immutable after construction.
 * apply() takes it once per call, so a scrape sees each exported batch whole or not at all.
 */
class nixlPromAgentSeries {
public:
    /**
     * @param agentName   the agent's name, any bytes (invalid UTF-8 is replaced in the label)
     * @param hostname    value of the hostname label
     * @param table       the event table; copied, so it need not outlive this object
     * @param boundsUs    histogram upper bounds in microseconds, strictly increasing
     * @param names       naming style (NIXL 1.4's keeps durations in microseconds)
     * Logs one warning per table row it cannot export (bad name, missing status, duplicate).
     */
    nixlPromAgentSeries(std::string_view agentName,
                        std::string_view hostname,
                        std::span<const nixl_telemetry_event_info_t> table,
                        std::vector<double> boundsUs,
                        nixlProm::nameStyle_t names = nixlProm::nameStyle_t::LIBNIXL);

    /** The agent_name label value. */
    const std::string &
    agentLabel() const noexcept {
        return agentLabel_;
    }

    /**
     * Adds events in order. Returns how many had a type outside the table (those are skipped;
     * the others are applied). Throws only std::system_error from locking.
     */
    size_t
    apply(std::span<const nixl_telemetry_event_abi_t> events);

    /** Appends this agent's samples to @p out. May throw std::bad_alloc. */
    void
    collectInto(nixlPromFamilySet &out) const;

private:
    enum class kind_t : uint8_t { none, bytes, count, duration, error, dropped };

    /** Immutable description of one event type. */
    struct typeMeta_t {
        kind_t kind = kind_t::none;
        std::string counter; ///< counter family, "" if none
        std::string gauge; ///< last-value gauge family, "" if none
        std::string histogram; ///< histogram family, "" if none
        std::string help; ///< HELP text, already escaped for the exposition format
        std::string status; ///< status label value of an error type
        bool seconds = false; ///< duration gauge and histogram exported in seconds, else in µs
    };

    /** Mutable values of one event type; guarded by mutex_. */
    struct typeValues_t {
        uint64_t sum = 0; ///< counter value; for durations the histogram sum in microseconds
        uint64_t last = 0; ///< last value seen (bytes or microseconds)
        uint64_t count = 0; ///< histogram sample count
        std::vector<uint64_t> buckets; ///< per-bound counts, not cumulative; last = above all
    };

    std::string agentLabel_;
    std::string hostLabel_;
    std::vector<double> boundsUs_;
    std::vector<double> boundsSeconds_;
    std::vector<typeMeta_t> meta_;
    /** Per-path role of each row (prom_schema.h), by type; NONE for most. */
    std::vector<nixlProm::pathRole_t> pathRole_;

    mutable std::mutex mutex_;
    std::vector<typeValues_t> values_;
    nixlProm::pathTotals paths_; ///< guarded by mutex_
};

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_SERIES_H
