/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_collector.h
 * @brief Scrape-time side of prometheus_mp: reads every store in the shared directory, decides
 *        which to publish and which to reap, and writes the scrape's text (mp_text.h).
 *
 * Publication and cleanup rules (also in the README):
 *  - a live store (its writer holds the lock) is always published and never reaped;
 *  - a departed store (lock free) is published until its last update is older than the TTL,
 *    or at once replaced when a live store of the same hostname + agent_name + local_rank
 *    exists; the scrape that decides to drop it publishes it one last time and unlinks it;
 *  - stores of another schema, layout or size are refused, counted once per file, and reaped
 *    like other departed files once their mtime is older than the TTL;
 *  - files not owned by this user, or not regular files, are ignored (one warning per file);
 *    nothing in the directory is opened in a way that can block (FIFOs are never opened);
 *  - the read work of a scrape is bounded (nixlMpReadBudget); a slot its departed writer left
 *    mid-update is not published for that store;
 *  - a departed store's age counts from its last update, or from when this collector first saw
 *    it departed if that update lies in the future.
 *
 * Thread-safety: scrape()/scrapeInto()/gather() may be called from any thread; calls are
 * serialised.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_COLLECTOR_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_COLLECTOR_H

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/metric_type.h>

#include "mp_store.h"

namespace nixlPromMp {

/** Own-metric names (promtool clean). */
inline constexpr const char *kStoresMetric = "nixl_mp_stores";
inline constexpr const char *kReapedMetric = "nixl_mp_stores_reaped_total";
inline constexpr const char *kRefusedMetric = "nixl_mp_stores_refused_total";
inline constexpr const char *kScrapeDurationMetric = "nixl_mp_scrape_duration_seconds";
inline constexpr const char *kOwnerPidMetric = "nixl_mp_owner_pid";

class nixlMpCollector {
public:
    /** The stores one scrape publishes, sorted, after reaping. */
    struct gathered {
        std::vector<nixlMpStoreSnapshot> stores;
        uint64_t live = 0;
        uint64_t departed = 0;
    };

    /** One of the exporter's own families: values with their labels. */
    struct ownFamily {
        const char *name;
        const char *help;
        prometheus::MetricType type;
        std::vector<std::pair<std::vector<prometheus::ClientMetric::Label>, double>> values;
    };

    /** What one scrape publishes, as data: NIXL's stores, then the own metrics. */
    struct scrapeData {
        gathered published;
        std::vector<ownFamily> own;
    };

    nixlMpCollector(std::string dir, std::shared_ptr<const nixlMpSchema> schema, double ttlSeconds);

    /**
     * One scrape (reading and reaping as scrape() does) without the text: for tests that hold
     * the text against prometheus-cpp's serializer (test/unit/prometheus_mp/mp_families.h).
     * Throws on failure, unlike scrape().
     */
    scrapeData
    gather();

    /**
     * The scrape in the Prometheus text format 0.0.4, written directly (mp_text.h) rather than
     * through prometheus-cpp's families and serializer. Never throws: failure gives "".
     */
    std::string
    scrape() noexcept;

    /**
     * scrape() into out (cleared first), reusing its capacity: the HTTP server passes the same
     * buffer every time. On failure out is left empty.
     */
    void
    scrapeInto(std::string &out) noexcept;

    const std::string &
    dir() const noexcept {
        return dir_;
    }

    /** The read work of the last scrape (its bound is in nixlMpReadBudget). */
    nixlMpReadBudget
    lastReadBudget() {
        std::lock_guard<std::mutex> lk(mu_);
        return lastBudget_;
    }

private:
    gathered
    gatherLocked();
    /** Own metrics, scrape duration (since @p t0) last. */
    std::vector<ownFamily>
    ownFamilies(const gathered &g, uint64_t t0) const;

    const std::string dir_;
    const std::shared_ptr<const nixlMpSchema> schema_;
    const uint64_t ttlNs_;
    std::mutex mu_;
    uint64_t reaped_ = 0;
    uint64_t refused_ = 0;
    size_t lastScrapeBytes_ = 0; ///< size of the previous scrape's text, to reserve for the next
    std::set<std::string> refusedSeen_; ///< refused files already counted and warned about
    std::set<std::string> warned_; ///< foreign/unreadable files already warned about
    /** Departed stores by path: when this collector first saw them departed (monotonic ns). */
    std::map<std::string, uint64_t> departedSince_;
    nixlMpReadBudget lastBudget_;
};

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_COLLECTOR_H
