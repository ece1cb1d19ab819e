/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

namespace nixlPromMp {

namespace {

    constexpr double kUsPerSecond = 1e6;
    // Below this every integral double has at most 16 digits, which "%.16g" prints in full.
    constexpr double kExactIntegerLimit = 1e16;

    void
    appendUnsigned(std::string &out, uint64_t v) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof(buf), v);
        out.append(buf, r.ptr);
    }

    /** What one schema row contributes to a family; a family may gather several rows. */
    enum class entryKind { COUNTER, GAUGE, GAUGE_SECONDS, HISTOGRAM };

    struct planEntry {
        uint32_t row;
        entryKind kind;
        std::string extra; ///< pre-rendered status label of error rows, else empty
    };

    struct planFamily {
        std::string_view name;
        std::string help;
        std::string_view type;
        std::vector<planEntry> entries;
    };

    /** Families in order of first use, as prometheus-cpp families group them. */
    class familyPlan {
    public:
        planFamily &
        get(std::string_view name, std::string help, std::string_view type) {
            for (planFamily &f : families_) {
                if (f.name == name) {
                    return f;
                }
            }
            families_.push_back(planFamily{name, std::move(help), type, {}});
            return families_.back();
        }

        std::vector<planFamily> families_;
    };

    familyPlan
    planFor(const nixlMpSchema &schema) {
        familyPlan plan;
        plan.families_.reserve(schema.slotCount() * 2);
        for (uint32_t i = 0; i < schema.slotCount(); ++i) {
            const nixlMpSchema::row &row = schema.rows[i];
            const nixlProm::metricNames &n = row.names;
            if (n.omitted) {
                continue; // no series in this naming style
            }
            switch (row.category) {
            case NIXL_TELEMETRY_CAT_BYTES:
                plan.get(n.counter, n.help, "counter").entries.push_back({i, entryKind::COUNTER, {}});
                plan.get(n.gauge, n.help + " (last operation)", "gauge")
                    .entries.push_back({i, entryKind::GAUGE, {}});
                break;
            case NIXL_TELEMETRY_CAT_COUNT:
            case NIXL_TELEMETRY_CAT_DROPPED:
            case NIXL_TELEMETRY_CAT_ERROR: {
                if (n.counter.empty()) {
                    break;
                }
                std::string extra;
                if (row.category == NIXL_TELEMETRY_CAT_ERROR) {
                    appendLabel(extra, "status", sanitizeLabel(row.statusLabel));
                }
                plan.get(n.counter, n.help, "counter")
                    .entries.push_back({i, entryKind::COUNTER, std::move(extra)});
                break;
            }
            case NIXL_TELEMETRY_CAT_DURATION_US:
                if (!n.counter.empty()) {
                    // NIXL 1.4's <base>_total: the histogram's sum, in microseconds.
                    plan.get(n.counter, n.help, "counter")
                        .entries.push_back({i, entryKind::COUNTER, {}});
                }
                plan.get(n.histogram, n.help, "histogram")
                    .entries.push_back({i, entryKind::HISTOGRAM, {}});
                plan.get(n.gauge, n.help + " (last operation)", "gauge")
                    .entries.push_back(
                        {i, n.seconds ? entryKind::GAUGE_SECONDS : entryKind::GAUGE, {}});
                break;
            default:
                break; // a category this build does not know: skipped, as the ABI asks
            }
        }
        return plan;
    }

    /** Per-store strings shared by all of the store's samples. */
    struct storeText {
        std::string labels;
        std::vector<std::string> le; ///< `le="<bound in seconds>"` per bound, then `le="+Inf"`
    };

    storeText
    textOf(const nixlMpStoreSnapshot &s, double leDivisor) {
        storeText t;
        t.labels.reserve(128);
        appendLabel(t.labels, "hostname", s.id.hostname);
        appendLabel(t.labels, "agent_name", s.id.agentName);
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<long long>(s.id.pid));
        appendLabel(t.labels, "pid", std::string_view(buf, r.ptr));
        r = std::to_chars(buf, buf + sizeof(buf), s.id.instance);
        appendLabel(t.labels, "agent_instance", std::string_view(buf, r.ptr));
        if (s.id.hasLocalRank) {
            appendLabel(t.labels, "local_rank", s.id.localRank);
        }
        t.le.reserve(s.boundsUs.size() + 1);
        for (double b : s.boundsUs) {
            std::string le = "le=\"";
            appendDouble(le, b / leDivisor);
            le.push_back('"');
            t.le.push_back(std::move(le));
        }
        t.le.emplace_back("le=\"+Inf\"");
        return t;
    }

} // namespace

void
appendEscapedLabelValue(std::string &out, std::string_view value) {
    size_t from = 0;
    for (size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        if (c != '\\' && c != '"' && c != '\n') {
            continue;
        }
        out.append(value.substr(from, i - from));
        out.push_back('\\');
        out.push_back(c == '\n' ? 'n' : c);
        from = i + 1;
    }
    out.append(value.substr(from));
}

void
appendDouble(std::string &out, double v) {
    if (std::isnan(v)) {
        out.append("NaN");
        return;
    }
    if (std::isinf(v)) {
        out.append(v < 0 ? "-Inf" : "+Inf");
        return;
    }
    if (!std::signbit(v) && v < kExactIntegerLimit && v == std::floor(v)) {
        appendUnsigned(out, static_cast<uint64_t>(v)); // the common case: counters
        return;
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 16);
    out.append(buf, r.ptr);
}

void
appendLabel(std::string &out, std::string_view name, std::string_view value) {
    if (!out.empty()) {
        out.push_back(',');
    }
    out.append(name);
    out.append("=\"");
    appendEscapedLabelValue(out, value);
    out.push_back('"');
}

void
nixlMpTextWriter::family(std::string_view name, std::string_view help, std::string_view type) {
    out_.append("# HELP ");
    out_.append(name);
    out_.push_back(' ');
    for (const char c : help) {
        if (c == '\\') {
            out_.append("\\\\");
        } else if (c == '\n') {
            out_.append("\\n");
        } else {
            out_.push_back(c);
        }
    }
    out_.append("\n# TYPE ");
    out_.append(name);
    out_.push_back(' ');
    out_.append(type);
    out_.push_back('\n');
}

void
nixlMpTextWriter::head(std::string_view name,
                       std::string_view suffix,
                       std::string_view labels,
                       std::string_view extra) {
    out_.append(name);
    out_.append(suffix);
    if (!labels.empty() || !extra.empty()) {
        out_.push_back('{');
        out_.append(labels);
        if (!extra.empty()) {
            if (!labels.empty()) {
                out_.push_back(',');
            }
            out_.append(extra);
        }
        out_.push_back('}');
    }
    out_.push_back(' ');
}

void
nixlMpTextWriter::sample(std::string_view name,
                         std::string_view suffix,
                         std::string_view labels,
                         std::string_view extra,
                         double v) {
    head(name, suffix, labels, extra);
    appendDouble(out_, v);
    out_.push_back('\n');
}

void
nixlMpTextWriter::sample(std::string_view name,
                         std::string_view suffix,
                         std::string_view labels,
                         std::string_view extra,
                         uint64_t v) {
    head(name, suffix, labels, extra);
    appendUnsigned(out_, v);
    out_.push_back('\n');
}

namespace {

/**
 * The per-path families (issue 34) from the buckets of the transfer rows (mp_store_layout.h):
 * a path's series appear once a transfer on it was counted in its direction's request row,
 * fallbacks once non-zero. Bounded: labels from closed enums.
 */
template<typename Text>
void
writePathFamilies(const nixlMpSchema &schema,
                  const std::vector<nixlMpStoreSnapshot> &stores,
                  const std::vector<Text> &text,
                  nixlMpTextWriter &w) {
    using nixlProm::pathRole_t;
    constexpr size_t kNone = ~size_t{0};
    size_t rowOf[nixlProm::kPathRoles] = {kNone, kNone, kNone, kNone};
    for (size_t i = 0; i < schema.rows.size(); ++i) {
        if (schema.rows[i].pathRole != pathRole_t::NONE && !schema.rows[i].names.omitted) {
            rowOf[static_cast<size_t>(schema.rows[i].pathRole) - 1] = i;
        }
    }
    auto slotOf = [&](size_t s, size_t row) -> const nixlMpSlotSnapshot * {
        if (row == kNone || row >= stores[s].slots.size() || stores[s].slots[row].torn) {
            return nullptr;
        }
        return &stores[s].slots[row];
    };
    // Role r's "seen" row: the request row of its direction (TX_REQUESTS for TX_BYTES, ...).
    constexpr size_t seenRole[nixlProm::kPathRoles] = {2, 3, 2, 3};
    for (size_t r = 0; r < nixlProm::kPathRoles; ++r) {
        bool header = false;
        for (size_t s = 0; s < stores.size(); ++s) {
            const nixlMpSlotSnapshot *v = slotOf(s, rowOf[r]);
            const nixlMpSlotSnapshot *seen = slotOf(s, rowOf[seenRole[r]]);
            if (v == nullptr || seen == nullptr) {
                continue;
            }
            for (uint32_t p = 1; p < NIXL_XFER_PATH_COUNT; ++p) {
                if (seen->words[p] == 0) {
                    continue;
                }
                if (!header) {
                    w.family(nixlProm::kPathSeries[r], nixlProm::kPathHelp[r], "counter");
                    header = true;
                }
                std::string extra;
                appendLabel(extra, "backend", nixl_xfer_path_backend(p));
                appendLabel(extra, "path", nixl_xfer_path_name(p));
                w.sample(nixlProm::kPathSeries[r], {}, text[s].labels, extra, v->words[p]);
            }
        }
    }
    bool header = false;
    for (size_t s = 0; s < stores.size(); ++s) {
        const nixlMpSlotSnapshot *tx = slotOf(s, rowOf[2]);
        const nixlMpSlotSnapshot *rx = slotOf(s, rowOf[3]);
        for (size_t b = 0; b < nixlProm::kPathBackendCount; ++b) {
            for (uint32_t why = 1; why < NIXL_PATH_FALLBACK_COUNT; ++why) {
                const size_t word = kFallbackWord(b, why);
                const uint64_t n =
                    (tx != nullptr ? tx->words[word] : 0) + (rx != nullptr ? rx->words[word] : 0);
                if (n == 0) {
                    continue;
                }
                if (!header) {
                    w.family(nixlProm::kFallbacksTotal, nixlProm::kFallbacksHelp, "counter");
                    header = true;
                }
                std::string extra;
                appendLabel(extra, "backend", nixlProm::kPathBackends[b]);
                appendLabel(extra, "reason", nixl_path_fallback_name(why));
                w.sample(nixlProm::kFallbacksTotal, {}, text[s].labels, extra, n);
            }
        }
    }
}

} // namespace

void
writeStoresText(const nixlMpSchema &schema,
                const std::vector<nixlMpStoreSnapshot> &stores,
                std::string &out) {
    const familyPlan plan = planFor(schema);
    // Histogram le and _sum: seconds for libnixl's names, NIXL 1.4's microseconds otherwise.
    const double usPerUnit = schema.seconds ? kUsPerSecond : 1.0;
    std::vector<storeText> text;
    text.reserve(stores.size());
    for (const nixlMpStoreSnapshot &s : stores) {
        text.push_back(textOf(s, usPerUnit));
    }
    nixlMpTextWriter w(out);
    for (const planFamily &f : plan.families_) {
        w.family(f.name, f.help, f.type);
        for (const planEntry &e : f.entries) {
            for (size_t s = 0; s < stores.size(); ++s) {
                if (e.row >= stores[s].slots.size()) {
                    continue; // readStore() sizes slots to the schema; never index past it
                }
                const nixlMpSlotSnapshot &v = stores[s].slots[e.row];
                if (v.torn) {
                    continue; // its departed writer died mid-update: no consistent value
                }
                const std::string &labels = text[s].labels;
                switch (e.kind) {
                case entryKind::COUNTER:
                    w.sample(f.name, {}, labels, e.extra, static_cast<double>(v.counter));
                    break;
                case entryKind::GAUGE:
                    w.sample(f.name, {}, labels, {}, static_cast<double>(v.gauge));
                    break;
                case entryKind::GAUGE_SECONDS:
                    w.sample(f.name, {}, labels, {}, static_cast<double>(v.gauge) / kUsPerSecond);
                    break;
                case entryKind::HISTOGRAM: {
                    uint64_t count = 0;
                    for (const uint64_t b : v.buckets) {
                        count += b;
                    }
                    // Count from the same read as the buckets, so +Inf == _count by construction.
                    w.sample(f.name, "_count", labels, {}, count);
                    w.sample(f.name, "_sum", labels, {},
                             static_cast<double>(v.counter) / usPerUnit);
                    const std::vector<std::string> &le = text[s].le;
                    const size_t bounds = le.size() - 1;
                    uint64_t cumulative = 0;
                    bool infWritten = false;
                    for (size_t b = 0; b < v.buckets.size(); ++b) {
                        cumulative += v.buckets[b];
                        infWritten = b >= bounds;
                        w.sample(f.name, "_bucket", labels, le[std::min(b, bounds)], cumulative);
                    }
                    if (!infWritten) {
                        w.sample(f.name, "_bucket", labels, le[bounds], count);
                    }
                    break;
                }
                }
            }
        }
    }
    writePathFamilies(schema, stores, text, w);
}

} // namespace nixlPromMp
