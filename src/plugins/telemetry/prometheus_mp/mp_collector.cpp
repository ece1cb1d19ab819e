/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_collector.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>

#include "mp_text.h"
#include "nixl_plugin_sdk_common.h"

namespace nixlPromMp {

namespace {

    using prometheus::ClientMetric;
    using prometheus::MetricType;

    /** Identity used by the cardinality policy: a restarted rank replaces its departed self. */
    std::string
    rankKey(const nixlMpIdentity &id) {
        std::string k = id.hostname;
        k.push_back('\0');
        k += id.agentName;
        k.push_back('\0');
        k += id.hasLocalRank ? "1" + id.localRank : "0";
        return k;
    }

    bool
    olderThan(const struct stat &st, uint64_t ttlNs) noexcept {
        timespec now{};
        clock_gettime(CLOCK_REALTIME, &now);
        const double age = static_cast<double>(now.tv_sec - st.st_mtim.tv_sec) +
            static_cast<double>(now.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
        return age * 1e9 >= static_cast<double>(ttlNs);
    }

    /**
     * A departed file (lock free) whose mtime is past the TTL; for files we cannot parse. Opened
     * like a store (openStoreFile: never blocks, never follows a link, regular files of this
     * user only); *why is set when the file is not one we may touch at all.
     */
    bool
    departedAndOld(const std::string &path, uint64_t ttlNs, std::string *why) noexcept {
        nixlMpReadStatus status = nixlMpReadStatus::OK;
        const int fd = openStoreFile(path, &status, why);
        if (fd < 0) {
            if (status == nixlMpReadStatus::VANISHED) {
                why->clear();
            }
            return false;
        }
        struct stat st{};
        const bool ok =
            fstat(fd, &st) == 0 && flock(fd, LOCK_SH | LOCK_NB) == 0 && olderThan(st, ttlNs);
        close(fd);
        return ok;
    }

} // namespace

nixlMpCollector::nixlMpCollector(std::string dir, std::shared_ptr<const nixlMpSchema> schema, double ttl)
    : dir_(std::move(dir)),
      schema_(std::move(schema)),
      ttlNs_(static_cast<uint64_t>(std::max(0.0, ttl) * 1e9)) {}

nixlMpCollector::gathered
nixlMpCollector::gatherLocked() {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir_.c_str())) {
        while (dirent *e = readdir(d)) {
            names.emplace_back(e->d_name);
        }
        closedir(d);
    } else {
        NIXL_SDK_WARN("prometheus_mp: cannot list NIXL_TELEMETRY_MULTIPROC_DIR '"
                      << dir_ << "': " << std::strerror(errno));
    }
    std::sort(names.begin(), names.end());

    gathered g;
    std::vector<nixlMpStoreSnapshot> &stores = g.stores;
    std::set<std::string> present;
    nixlMpReadBudget budget;
    for (const std::string &name : names) {
        const std::string path = dir_ + "/" + name;
        std::string why;
        if (isStagingName(name)) {
            present.insert(path);
            // A writer killed between creating and renaming its staged store.
            if (departedAndOld(path, ttlNs_, &why) && unlink(path.c_str()) == 0) {
                ++reaped_;
            } else if (!why.empty() && warned_.insert(path).second) {
                NIXL_SDK_WARN("prometheus_mp: ignoring '" << path << "': " << why);
            }
            continue;
        }
        if (!isStoreName(name)) {
            continue;
        }
        present.insert(path);
        nixlMpStoreSnapshot snap;
        switch (readStore(path, *schema_, &snap, &why, &budget)) {
        case nixlMpReadStatus::OK:
            stores.push_back(std::move(snap));
            break;
        case nixlMpReadStatus::VANISHED:
            break;
        case nixlMpReadStatus::REFUSED:
            if (refusedSeen_.insert(path).second) {
                ++refused_;
                NIXL_SDK_WARN("prometheus_mp: refusing store '" << path << "': " << why);
            }
            if (snap.departed && departedAndOld(path, ttlNs_, &why) &&
                unlink(path.c_str()) == 0) {
                ++reaped_;
                refusedSeen_.erase(path);
            }
            break;
        case nixlMpReadStatus::FOREIGN:
        case nixlMpReadStatus::UNREADABLE:
            if (warned_.insert(path).second) {
                NIXL_SDK_WARN("prometheus_mp: ignoring '" << path << "': " << why);
            }
            break;
        }
    }
    // Forget files that are gone, so the sets stay as small as the directory.
    std::erase_if(refusedSeen_, [&](const std::string &p) { return present.count(p) == 0; });
    std::erase_if(warned_, [&](const std::string &p) { return present.count(p) == 0; });
    std::erase_if(departedSince_, [&](const auto &kv) { return present.count(kv.first) == 0; });
    lastBudget_ = budget;

    std::set<std::string> liveRanks;
    for (const auto &s : stores) {
        if (!s.departed) {
            liveRanks.insert(rankKey(s.id));
        }
    }
    const uint64_t now = monotonicNs();
    for (const auto &s : stores) {
        if (!s.departed) {
            ++g.live;
            continue;
        }
        ++g.departed;
        // Age from the last update, but never from a time in the future (a clock of another
        // boot, a corrupted header): then from when this collector first saw it departed.
        const uint64_t firstSeen = departedSince_.try_emplace(s.path, now).first->second;
        const uint64_t since = std::min(s.lastUpdateNs, firstSeen);
        const bool expired = now - since >= ttlNs_;
        const bool replaced = liveRanks.count(rankKey(s.id)) != 0;
        // This scrape still publishes it: the final values are seen once more.
        if ((expired || replaced) && unlink(s.path.c_str()) == 0) {
            ++reaped_;
        }
    }
    std::sort(stores.begin(), stores.end(), [](const auto &a, const auto &b) {
        return std::tie(a.id.agentName, a.id.localRank, a.id.pid, a.id.instance) <
            std::tie(b.id.agentName, b.id.localRank, b.id.pid, b.id.instance);
    });

    return g;
}

std::vector<nixlMpCollector::ownFamily>
nixlMpCollector::ownFamilies(const gathered &g, uint64_t t0) const {
    std::vector<ownFamily> f;
    f.reserve(5);
    f.push_back({kStoresMetric,
                 "Store files published by this scrape, by writer state",
                 MetricType::Gauge,
                 {{{{"state", "live"}}, static_cast<double>(g.live)},
                  {{{"state", "departed"}}, static_cast<double>(g.departed)}}});
    f.push_back({kReapedMetric,
                 "Store files removed after their writer departed",
                 MetricType::Counter,
                 {{{}, static_cast<double>(reaped_)}}});
    f.push_back({kRefusedMetric,
                 "Store files refused for a layout, schema or size mismatch",
                 MetricType::Counter,
                 {{{}, static_cast<double>(refused_)}}});
    f.push_back({kOwnerPidMetric,
                 "Process id of the exporter serving this endpoint",
                 MetricType::Gauge,
                 {{{}, static_cast<double>(getpid())}}});
    // Last, so that it covers the work of building the rest of the scrape.
    f.push_back({kScrapeDurationMetric,
                 "Time this scrape spent reading the store files",
                 MetricType::Gauge,
                 {{{}, static_cast<double>(monotonicNs() - t0) / 1e9}}});
    return f;
}

nixlMpCollector::scrapeData
nixlMpCollector::gather() {
    std::lock_guard<std::mutex> lk(mu_);
    const uint64_t t0 = monotonicNs();
    scrapeData d;
    d.published = gatherLocked();
    d.own = ownFamilies(d.published, t0);
    return d;
}

std::string
nixlMpCollector::scrape() noexcept {
    std::string out;
    scrapeInto(out);
    return out;
}

void
nixlMpCollector::scrapeInto(std::string &out) noexcept {
    out.clear();
    try {
        std::lock_guard<std::mutex> lk(mu_);
        const uint64_t t0 = monotonicNs();
        const gathered g = gatherLocked();
        // No allocation in the steady state: out keeps its capacity between scrapes, and the
        // text is about as long as last time.
        out.reserve(lastScrapeBytes_ + lastScrapeBytes_ / 8 + 4096);
        writeStoresText(*schema_, g.stores, out);
        nixlMpTextWriter w(out);
        for (const ownFamily &o : ownFamilies(g, t0)) {
            w.family(o.name, o.help, o.type == MetricType::Counter ? "counter" : "gauge");
            for (const auto &[labels, v] : o.values) {
                std::string l;
                for (const ClientMetric::Label &lp : labels) {
                    appendLabel(l, lp.name, lp.value);
                }
                w.sample(o.name, {}, l, {}, v);
            }
        }
        lastScrapeBytes_ = out.size();
        return;
    }
    catch (const std::exception &e) {
        NIXL_SDK_ERROR("prometheus_mp: scrape of '" << dir_ << "' failed: " << e.what());
    }
    catch (...) {
        NIXL_SDK_ERROR("prometheus_mp: scrape of '" << dir_ << "' failed");
    }
    out.clear();
}

} // namespace nixlPromMp
