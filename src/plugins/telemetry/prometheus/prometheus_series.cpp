/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "prometheus_series.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "nixl_plugin_sdk_common.h"
#include "prom_schema.h"

namespace {

constexpr double us_per_second = 1e6;

/** [a-zA-Z_:][a-zA-Z0-9_:]*, the exposition format's metric-name rule. */
bool
validMetricName(std::string_view name) {
    if (name.empty()) {
        return false;
    }
    auto alpha = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    };
    if (!alpha(name.front())) {
        return false;
    }
    return std::all_of(name.begin(), name.end(),
                       [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

/** HELP text escaping; prometheus-cpp 1.0.1 writes HELP verbatim, so escape here. */
std::string
escapeHelp(std::string_view help) {
    std::string out;
    out.reserve(help.size());
    for (const char c : help) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

/**
 * Label values must be UTF-8; an agent name is any bytes. Each byte that does not start a
 * well-formed sequence (and NUL) becomes U+FFFD. Escaping of quotes, backslashes and newlines
 * is the serializer's job.
 */
std::string
utf8Label(std::string_view in, bool *changed) {
    static constexpr const char *replacement = "\xEF\xBF\xBD";
    std::string out;
    out.reserve(in.size());
    *changed = false;
    size_t i = 0;
    while (i < in.size()) {
        const auto c = static_cast<unsigned char>(in[i]);
        size_t len = 0;
        uint32_t cp = 0;
        if (c >= 0x01 && c < 0x80) {
            len = 1;
            cp = c;
        } else if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1Fu;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0Fu;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07u;
        }
        bool ok = len != 0 && i + len <= in.size();
        for (size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(in[i + k]);
            ok = (cc & 0xC0u) == 0x80u;
            cp = (cp << 6) | (cc & 0x3Fu);
        }
        // Overlong forms, surrogates and code points above U+10FFFF are not UTF-8.
        if (ok && ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
                   (cp >= 0xD800 && cp <= 0xDFFF))) {
            ok = false;
        }
        if (ok) {
            out.append(in.substr(i, len));
            i += len;
        } else {
            out += replacement;
            *changed = true;
            ++i;
        }
    }
    return out;
}

} // namespace

prometheus::ClientMetric *
nixlPromFamilySet::add(const std::string &name,
                       const std::string &help,
                       prometheus::MetricType type) {
    auto it = index_.find(name);
    if (it == index_.end()) {
        prometheus::MetricFamily family;
        family.name = name;
        family.help = help;
        family.type = type;
        families_.push_back(std::move(family));
        it = index_.emplace(name, families_.size() - 1).first;
    }
    prometheus::MetricFamily &family = families_[it->second];
    if (family.type != type) {
        return nullptr;
    }
    family.metric.emplace_back();
    return &family.metric.back();
}

std::vector<prometheus::MetricFamily>
nixlPromFamilySet::take() {
    index_.clear();
    return std::move(families_);
}

nixlPromAgentSeries::nixlPromAgentSeries(std::string_view agentName,
                                         std::string_view hostname,
                                         std::span<const nixl_telemetry_event_info_t> table,
                                         std::vector<double> boundsUs,
                                         nixlProm::nameStyle_t style)
    : boundsUs_(std::move(boundsUs)) {
    bool changed = false;
    agentLabel_ = utf8Label(agentName, &changed);
    if (changed) {
        NIXL_SDK_WARN("prometheus: agent name '"
                      << agentLabel_
                      << "' is not valid UTF-8; its agent_name label has U+FFFD in place of the "
                         "invalid bytes");
    }
    hostLabel_ = utf8Label(hostname, &changed);
    for (const double b : boundsUs_) {
        boundsSeconds_.push_back(b / us_per_second);
    }

    // Names this agent already exports, so that a table with two rows mapping to one series
    // (same name, or same error status) does not produce a duplicate series.
    std::set<std::string> used;
    meta_.resize(table.size());
    values_.resize(table.size());
    pathRole_.assign(table.size(), nixlProm::pathRole_t::NONE);
    for (size_t i = 0; i < table.size(); ++i) {
        const nixl_telemetry_event_info_t &row = table[i];
        const std::string rowName = row.name == nullptr ? std::string("(null)") : row.name;
        const nixlProm::metricNames names = nixlProm::namesFor(row, style);
        if (names.omitted) {
            continue; // no such series in this naming style (NIXL 1.4 lacks the row)
        }
        typeMeta_t m;
        switch (row.category) {
        case NIXL_TELEMETRY_CAT_BYTES:
            m.kind = kind_t::bytes;
            break;
        case NIXL_TELEMETRY_CAT_COUNT:
            m.kind = kind_t::count;
            break;
        case NIXL_TELEMETRY_CAT_DURATION_US:
            m.kind = kind_t::duration;
            break;
        case NIXL_TELEMETRY_CAT_ERROR:
            m.kind = kind_t::error;
            break;
        case NIXL_TELEMETRY_CAT_DROPPED:
            m.kind = kind_t::dropped;
            break;
        default:
            // A category newer than this plugin: ignored by design (see the exporter ABI).
            continue;
        }
        if (row.type != i) {
            NIXL_SDK_WARN("prometheus: agent '" << agentLabel_ << "': event table row " << i
                                                << " ('" << rowName << "') claims type "
                                                << row.type << "; row not exported");
            continue;
        }
        std::vector<std::string> keys;
        bool namesOk = true;
        for (const std::string *n : {&names.counter, &names.gauge, &names.histogram}) {
            if (n->empty()) {
                continue;
            }
            namesOk = namesOk && validMetricName(*n);
            keys.push_back(*n);
        }
        if (keys.empty() || !namesOk) {
            NIXL_SDK_WARN("prometheus: agent '"
                          << agentLabel_ << "': event type " << i << " name '" << rowName
                          << "' gives no valid Prometheus metric name; type not exported");
            continue;
        }
        if (m.kind == kind_t::error) {
            if (row.status_label == nullptr || *row.status_label == '\0') {
                NIXL_SDK_WARN("prometheus: agent '" << agentLabel_ << "': error event type " << i
                                                    << " ('" << rowName
                                                    << "') has no status label; not exported");
                continue;
            }
            bool statusChanged = false;
            m.status = utf8Label(row.status_label, &statusChanged);
            keys = {names.counter + "{status=" + m.status + "}"};
        }
        const bool duplicate =
            std::any_of(keys.begin(), keys.end(), [&](const std::string &k) {
                return used.count(k) != 0;
            });
        if (duplicate) {
            NIXL_SDK_WARN("prometheus: agent '"
                          << agentLabel_ << "': event type " << i << " ('" << rowName
                          << "') maps to a series an earlier type already exports; not exported");
            continue;
        }
        used.insert(keys.begin(), keys.end());
        m.counter = names.counter;
        m.gauge = names.gauge;
        m.histogram = names.histogram;
        m.help = escapeHelp(names.help);
        m.seconds = names.seconds;
        meta_[i] = std::move(m);
        pathRole_[i] = nixlProm::pathRoleOf(row);
        if (meta_[i].kind == kind_t::duration) {
            values_[i].buckets.assign(boundsUs_.size() + 1, 0);
        }
    }
}

size_t
nixlPromAgentSeries::apply(std::span<const nixl_telemetry_event_abi_t> events) {
    size_t outside = 0;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const nixl_telemetry_event_abi_t &ev : events) {
        if (ev.type >= meta_.size()) {
            ++outside;
            continue;
        }
        typeValues_t &v = values_[ev.type];
        if (ev.reserved != 0 && pathRole_[ev.type] != nixlProm::pathRole_t::NONE) {
            paths_.add(pathRole_[ev.type], ev.reserved, ev.value);
        }
        switch (meta_[ev.type].kind) {
        case kind_t::bytes:
            v.sum += ev.value;
            v.last = ev.value;
            break;
        case kind_t::count:
        case kind_t::error:
        case kind_t::dropped:
            v.sum += ev.value;
            break;
        case kind_t::duration: {
            // First bound >= value: a value equal to a bound counts in that bucket (le is
            // inclusive). Compared in microseconds, where bounds and values are exact.
            const auto value = static_cast<double>(ev.value);
            const auto it = std::lower_bound(boundsUs_.begin(), boundsUs_.end(), value);
            ++v.buckets[static_cast<size_t>(it - boundsUs_.begin())];
            ++v.count;
            v.sum += ev.value;
            v.last = ev.value;
            break;
        }
        case kind_t::none:
            break;
        }
    }
    return outside;
}

void
nixlPromAgentSeries::collectInto(nixlPromFamilySet &out) const {
    std::vector<typeValues_t> snapshot;
    nixlProm::pathTotals paths;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        snapshot = values_;
        paths = paths_;
    }
    const std::vector<prometheus::ClientMetric::Label> labels = {
        {"hostname", hostLabel_},
        {"agent_name", agentLabel_},
    };
    using prometheus::MetricType;
    for (size_t i = 0; i < meta_.size(); ++i) {
        const typeMeta_t &m = meta_[i];
        const typeValues_t &v = snapshot[i];
        if (m.kind == kind_t::none) {
            continue;
        }
        if (!m.counter.empty()) {
            // For error types namesFor() already gives the shared errors help.
            if (auto *s = out.add(m.counter, m.help, MetricType::Counter)) {
                s->label = labels;
                if (m.kind == kind_t::error) {
                    s->label.push_back({"status", m.status});
                }
                s->counter.value = static_cast<double>(v.sum);
            }
        }
        if (!m.gauge.empty()) {
            if (auto *s = out.add(m.gauge, m.help, MetricType::Gauge)) {
                s->label = labels;
                s->gauge.value = m.seconds ?
                    static_cast<double>(v.last) / us_per_second :
                    static_cast<double>(v.last);
            }
        }
        if (!m.histogram.empty()) {
            if (auto *s = out.add(m.histogram, m.help, MetricType::Histogram)) {
                s->label = labels;
                s->histogram.sample_count = v.count;
                s->histogram.sample_sum = m.seconds ?
                    static_cast<double>(v.sum) / us_per_second :
                    static_cast<double>(v.sum);
                const std::vector<double> &le = m.seconds ? boundsSeconds_ : boundsUs_;
                uint64_t cumulative = 0;
                for (size_t b = 0; b < le.size(); ++b) {
                    cumulative += v.buckets[b];
                    s->histogram.bucket.push_back({cumulative, le[b]});
                }
                cumulative += v.buckets.back();
                s->histogram.bucket.push_back(
                    {cumulative, std::numeric_limits<double>::infinity()});
            }
        }
    }
    for (size_t r = 0; r < nixlProm::kPathRoles; ++r) {
        for (uint32_t p = 1; p < NIXL_XFER_PATH_COUNT; ++p) {
            if (!paths.seen[r][p]) {
                continue;
            }
            if (auto *s = out.add(std::string(nixlProm::kPathSeries[r]),
                                  std::string(nixlProm::kPathHelp[r]), MetricType::Counter)) {
                s->label = labels;
                s->label.push_back({"backend", nixl_xfer_path_backend(p)});
                s->label.push_back({"path", nixl_xfer_path_name(p)});
                s->counter.value = static_cast<double>(paths.value[r][p]);
            }
        }
    }
    for (const auto &[key, n] : paths.fallbacksByBackend()) {
        if (auto *s = out.add(std::string(nixlProm::kFallbacksTotal),
                              std::string(nixlProm::kFallbacksHelp), MetricType::Counter)) {
            s->label = labels;
            s->label.push_back({"backend", key.first});
            s->label.push_back({"reason", nixl_path_fallback_name(key.second)});
            s->counter.value = static_cast<double>(n);
        }
    }
}
