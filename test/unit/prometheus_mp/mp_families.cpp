/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_families.h"

#include <deque>
#include <iterator>
#include <limits>
#include <map>
#include <string>

namespace mpTest {

namespace {

    using nixlPromMp::nixlMpIdentity;
    using nixlPromMp::nixlMpSchema;
    using nixlPromMp::nixlMpSlotSnapshot;
    using nixlPromMp::nixlMpStoreSnapshot;
    using prometheus::ClientMetric;
    using prometheus::MetricFamily;
    using prometheus::MetricType;
    using labelSet = std::vector<ClientMetric::Label>;

    constexpr double kUsPerSecond = 1e6;

    /**
     * Families in order of first use; a name maps to one family so its samples stay together.
     * A deque, so references handed out stay valid while later families are added.
     */
    class familySet {
    public:
        MetricFamily &
        get(const std::string &name, const std::string &help, MetricType type) {
            auto it = index_.find(name);
            if (it != index_.end()) {
                return families_[it->second];
            }
            index_.emplace(name, families_.size());
            MetricFamily f;
            f.name = name;
            f.help = help;
            f.type = type;
            families_.push_back(std::move(f));
            return families_.back();
        }

        std::vector<MetricFamily>
        take() {
            return std::vector<MetricFamily>(std::make_move_iterator(families_.begin()),
                                             std::make_move_iterator(families_.end()));
        }

    private:
        std::deque<MetricFamily> families_;
        std::map<std::string, size_t> index_;
    };

    labelSet
    labelsOf(const nixlMpIdentity &id) {
        labelSet l = {
            {"hostname", id.hostname},
            {"agent_name", id.agentName},
            {"pid", std::to_string(static_cast<long long>(id.pid))},
            {"agent_instance", std::to_string(id.instance)},
        };
        if (id.hasLocalRank) {
            l.push_back({"local_rank", id.localRank});
        }
        return l;
    }

    ClientMetric
    scalar(const labelSet &labels, double v, MetricType type) {
        ClientMetric m;
        m.label = labels;
        if (type == MetricType::Counter) {
            m.counter.value = v;
        } else {
            m.gauge.value = v;
        }
        return m;
    }

    ClientMetric
    histogram(const labelSet &labels,
              const nixlMpSlotSnapshot &v,
              const std::vector<double> &boundsUs) {
        ClientMetric m;
        m.label = labels;
        uint64_t cumulative = 0;
        for (size_t b = 0; b < v.buckets.size(); ++b) {
            cumulative += v.buckets[b];
            ClientMetric::Bucket bucket;
            bucket.cumulative_count = cumulative;
            bucket.upper_bound = b < boundsUs.size() ? boundsUs[b] / kUsPerSecond :
                                                       std::numeric_limits<double>::infinity();
            m.histogram.bucket.push_back(bucket);
        }
        // Count from the same read as the buckets, so +Inf == _count by construction.
        m.histogram.sample_count = cumulative;
        m.histogram.sample_sum = static_cast<double>(v.counter) / kUsPerSecond;
        return m;
    }

} // namespace

std::vector<MetricFamily>
buildFamilies(const nixlMpSchema &schema, const std::vector<nixlMpStoreSnapshot> &stores) {
    familySet fams;
    std::vector<labelSet> labels;
    labels.reserve(stores.size());
    for (const auto &s : stores) {
        labels.push_back(labelsOf(s.id));
    }
    // One sample per store whose slot i has a consistent value (a torn one is not published).
    auto addEach = [&](MetricFamily &f, uint32_t i, auto &&sample) {
        for (size_t s = 0; s < stores.size(); ++s) {
            if (!stores[s].slots[i].torn) {
                f.metric.push_back(sample(labels[s], stores[s].slots[i], stores[s]));
            }
        }
    };
    for (uint32_t i = 0; i < schema.slotCount(); ++i) {
        const nixlMpSchema::row &row = schema.rows[i];
        const nixlProm::metricNames &n = row.names;
        switch (row.category) {
        case NIXL_TELEMETRY_CAT_BYTES:
            addEach(fams.get(n.counter, n.help, MetricType::Counter), i,
                    [](const labelSet &l, const nixlMpSlotSnapshot &v, const auto &) {
                        return scalar(l, static_cast<double>(v.counter), MetricType::Counter);
                    });
            addEach(fams.get(n.gauge, n.help + " (last operation)", MetricType::Gauge), i,
                    [](const labelSet &l, const nixlMpSlotSnapshot &v, const auto &) {
                        return scalar(l, static_cast<double>(v.gauge), MetricType::Gauge);
                    });
            break;
        case NIXL_TELEMETRY_CAT_COUNT:
        case NIXL_TELEMETRY_CAT_DROPPED:
        case NIXL_TELEMETRY_CAT_ERROR:
            if (n.counter.empty()) {
                break;
            }
            addEach(fams.get(n.counter, n.help, MetricType::Counter), i,
                    [&row](const labelSet &l, const nixlMpSlotSnapshot &v, const auto &) {
                        labelSet withStatus = l;
                        if (row.category == NIXL_TELEMETRY_CAT_ERROR) {
                            withStatus.push_back(
                                {"status", nixlPromMp::sanitizeLabel(row.statusLabel)});
                        }
                        return scalar(
                            withStatus, static_cast<double>(v.counter), MetricType::Counter);
                    });
            break;
        case NIXL_TELEMETRY_CAT_DURATION_US:
            addEach(fams.get(n.histogram, n.help, MetricType::Histogram), i,
                    [](const labelSet &l, const nixlMpSlotSnapshot &v,
                       const nixlMpStoreSnapshot &s) { return histogram(l, v, s.boundsUs); });
            addEach(fams.get(n.gauge, n.help + " (last operation)", MetricType::Gauge), i,
                    [](const labelSet &l, const nixlMpSlotSnapshot &v, const auto &) {
                        return scalar(
                            l, static_cast<double>(v.gauge) / kUsPerSecond, MetricType::Gauge);
                    });
            break;
        default:
            break; // a category this build does not know: skipped, as the ABI asks
        }
    }
    return fams.take();
}

std::vector<MetricFamily>
collectFamilies(nixlPromMp::nixlMpCollector &c, const nixlMpSchema &schema) {
    const nixlPromMp::nixlMpCollector::scrapeData d = c.gather();
    std::vector<MetricFamily> fams = buildFamilies(schema, d.published.stores);
    for (const auto &o : d.own) {
        MetricFamily f;
        f.name = o.name;
        f.help = o.help;
        f.type = o.type;
        for (const auto &[labels, v] : o.values) {
            f.metric.push_back(scalar(labels, v, o.type));
        }
        fams.push_back(std::move(f));
    }
    return fams;
}

} // namespace mpTest
