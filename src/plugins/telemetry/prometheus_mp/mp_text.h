/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_text.h
 * @brief Direct writer of the Prometheus text format 0.0.4 for prometheus_mp scrapes.
 *
 * A 64-process scrape holds about 4,300 samples; building prometheus::MetricFamily objects
 * (one label vector of strings per sample) and running them through an ostream cost several
 * times the reading of the stores. This writer appends straight into one std::string: each
 * store's label set is escaped once and reused for all of its samples, numbers go through
 * std::to_chars (locale-independent), HELP/TYPE are written once per family.
 *
 * The output is the same text prometheus-cpp's TextSerializer gives for the families of the
 * same stores (same family order, histogram lines _count, _sum, then cumulative _bucket{le}
 * ending with le="+Inf", values with 16 significant digits), except where that serializer is
 * wrong: HELP is escaped here and NaN is written "NaN".
 *
 * Thread-safety: free functions on caller-owned data; nixlMpTextWriter is not thread-safe, one
 * instance per scrape.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_TEXT_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_TEXT_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mp_store.h"

namespace nixlPromMp {

/** Appends a label value escaped per the text format: backslash, double quote, newline. */
void
appendEscapedLabelValue(std::string &out, std::string_view value);

/** Appends a double as TextSerializer does (16 significant digits), "+Inf"/"-Inf"/"NaN". */
void
appendDouble(std::string &out, double v);

/** Appends `name="escaped value"`, preceded by a comma when @p out is not empty. */
void
appendLabel(std::string &out, std::string_view name, std::string_view value);

/** Appends samples to one std::string; the caller keeps each family's samples together. */
class nixlMpTextWriter {
public:
    explicit nixlMpTextWriter(std::string &out) noexcept : out_(out) {}

    /** `# HELP` (escaped) and `# TYPE` lines; @p type is "counter", "gauge" or "histogram". */
    void
    family(std::string_view name, std::string_view help, std::string_view type);

    /**
     * One sample line. @p labels is a pre-rendered label list (appendLabel) or empty;
     * @p extra, if not empty, is one more pre-rendered label appended after it.
     */
    void
    sample(std::string_view name,
           std::string_view suffix,
           std::string_view labels,
           std::string_view extra,
           double v);
    void
    sample(std::string_view name,
           std::string_view suffix,
           std::string_view labels,
           std::string_view extra,
           uint64_t v);

private:
    void
    head(std::string_view name,
         std::string_view suffix,
         std::string_view labels,
         std::string_view extra);

    std::string &out_;
};

/**
 * Appends NIXL's series for @p stores (one series per store and metric, never summed) in the
 * order and shape of prometheus-cpp families (test/unit/prometheus_mp/mp_families.h).
 * Throws only std::bad_alloc.
 */
void
writeStoresText(const nixlMpSchema &schema,
                const std::vector<nixlMpStoreSnapshot> &stores,
                std::string &out);

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_TEXT_H
