/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_schema.h
 * @brief What core's event table means for a prometheus_mp store (one slot per row, the series
 *        names, a hash of both), and who a store belongs to (its labels).
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_SCHEMA_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_SCHEMA_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nixl_telemetry_exporter_plugin.h"
#include "prom_schema.h"

namespace nixlPromMp {

/**
 * What core's event table means for the store: one slot per row, the series names of each row,
 * and a hash that changes whenever the table (types, categories, names, status labels) or the
 * layout changes. Immutable after construction, so shareable between threads.
 */
struct nixlMpSchema {
    struct row {
        uint32_t category = 0;
        nixlProm::metricNames names;
        std::string statusLabel;
        nixlProm::pathRole_t pathRole = nixlProm::pathRole_t::NONE; ///< per-path sums (issue 34)
    };
    std::vector<row> rows;
    uint64_t hash = 0;
    /** Durations exported in seconds (libnixl names) or microseconds (NIXL 1.4's). */
    bool seconds = true;

    /**
     * Throws std::runtime_error when a row's type is not its index. The naming style is not in
     * the hash: it changes only the text a scrape writes, not what a store holds, so writers
     * of either style feed one collector (the serving process's style names the series).
     */
    explicit nixlMpSchema(std::span<const nixl_telemetry_event_info_t> table,
                          nixlProm::nameStyle_t names = nixlProm::nameStyle_t::LIBNIXL);

    uint32_t
    slotCount() const noexcept {
        return static_cast<uint32_t>(rows.size());
    }
};

/** Who a store belongs to: the labels of its series. */
struct nixlMpIdentity {
    std::string agentName;
    std::string hostname;
    std::string localRank;
    bool hasLocalRank = false;
    int64_t pid = 0;
    uint64_t instance = 0;
};

/** Replaces invalid UTF-8 and control bytes with '?', so a label value always parses. */
std::string
sanitizeLabel(std::string_view s);

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_SCHEMA_H
