/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_exporter.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <stdexcept>

#include "prom_host.h"

namespace nixlPromMp {

namespace {

    // NIXL_* options come from the environment, else the NIXL configuration file (through
    // core); the SDK's refusals are std::invalid_argument, this file's contract runtime_error.
    template<typename Fn>
    auto
    option(Fn &&read) {
        try {
            return read();
        }
        catch (const std::invalid_argument &e) {
            throw std::runtime_error(std::string("prometheus_mp: ") + e.what());
        }
    }

    [[noreturn]] void
    badVar(const char *var, const std::string &value, const std::string &why) {
        throw std::runtime_error(std::string("prometheus_mp: ") + var + "='" +
                                 nixlSdk::cutValue(value) + "' " + why);
    }

    /**
     * True the first time this process asks about directory dir (its path without trailing
     * slashes and its dev/inode, so a directory removed and re-created elsewhere with a reused
     * inode is reported again).
     */
    bool
    firstWarningFor(std::string dir, const struct stat &st) {
        static std::mutex mu;
        static std::set<std::tuple<std::string, dev_t, ino_t>> warned;
        while (dir.size() > 1 && dir.back() == '/') {
            dir.pop_back();
        }
        std::lock_guard<std::mutex> lk(mu);
        return warned.emplace(std::move(dir), st.st_dev, st.st_ino).second;
    }

    std::atomic<uint64_t> &
    instanceCounter() {
        static std::atomic<uint64_t> counter{0};
        return counter;
    }

} // namespace

nixlMpConfig
parseConfig() {
    nixlMpConfig c;
    c.dir = option([] { return nixlSdk::configString(kDirVar); }).value_or("");
    if (c.dir.empty()) {
        badVar(kDirVar,
               c.dir,
               "is not set: prometheus_mp needs a local directory shared by every rank");
    }
    while (c.dir.size() > 1 && c.dir.back() == '/') {
        c.dir.pop_back();
    }

    c.port = option([] { return nixlSdk::configPort(kPortVar); }).value_or(kDefaultPort);
    const bool isLocal = option([] { return nixlSdk::configBool(kLocalVar); }).value_or(false);
    c.addr = isLocal ? "127.0.0.1" : "0.0.0.0";

    if (const auto ttl = option([] { return nixlSdk::configLookup(kTtlVar); })) {
        char *end = nullptr;
        errno = 0;
        const double t = std::strtod(ttl->text.c_str(), &end);
        if (errno != 0 || end == ttl->text.c_str() || *end != '\0' || !std::isfinite(t) ||
            t < 0) {
            throw std::runtime_error(
                "prometheus_mp: " +
                nixlSdk::configRejection(kTtlVar, *ttl, "a non-negative number of seconds"));
        }
        c.ttlSeconds = t;
    }

    const auto bucketsValue = option([] { return nixlSdk::configString(nixlProm::kBucketsVar); });
    const char *buckets = bucketsValue ? bucketsValue->c_str() : nullptr;
    std::string why;
    auto bounds = nixlProm::parseBucketBoundsUs(buckets, &why);
    if (!bounds) {
        throw std::runtime_error("prometheus_mp: " + why);
    }
    if (bounds->size() > kMaxBuckets) {
        badVar(nixlProm::kBucketsVar,
               buckets,
               "has " + std::to_string(bounds->size()) + " bounds; prometheus_mp stores at most " +
                   std::to_string(kMaxBuckets));
    }
    c.boundsUs = std::move(*bounds);

    if (const auto names = option([] { return nixlSdk::configLookup(nixlProm::kNamesVar); });
        names && !names->text.empty()) {
        if (const auto style = nixlProm::parseNameStyle(names->text)) {
            c.names = *style;
        } else {
            // A naming typo must not cost the agent its telemetry: one line, default names.
            NIXL_SDK_WARN("prometheus_mp: " << nixlSdk::configRejection(nixlProm::kNamesVar,
                                                                        *names,
                                                                        "'nixl' or 'libnixl'")
                                            << "; using libnixl's names");
        }
    }

    const std::string rankEnv =
        option([] { return nixlSdk::configString(kRankEnvVar); }).value_or(kDefaultRankEnv);
    if (!rankEnv.empty()) {
        // The variable it names (LOCAL_RANK, ...) is the launcher's, not a NIXL option.
        const char *rank = std::getenv(rankEnv.c_str());
        if (rank != nullptr && *rank != '\0') {
            std::string r(rank);
            if (r.size() >= kLocalRankLen) {
                NIXL_SDK_WARN("prometheus_mp: " << rankEnv << "='" << nixlSdk::cutValue(r)
                                                << "' (named by "
                                                << kRankEnvVar << ") is longer than "
                                                << kLocalRankLen - 1
                                                << " bytes; local_rank is truncated");
                r.resize(kLocalRankLen - 1);
            }
            c.localRank = std::move(r);
        }
    }
    return c;
}

void
prepareDir(const std::string &dir) {
    std::error_code ec;
    const bool created = std::filesystem::create_directories(dir, ec);
    if (ec) {
        badVar(kDirVar, dir, "cannot be created: " + ec.message());
    }
    if (created && chmod(dir.c_str(), 0700) != 0) {
        badVar(kDirVar, dir, std::string("cannot be made private: ") + std::strerror(errno));
    }
    struct stat st{};
    if (stat(dir.c_str(), &st) != 0) {
        badVar(kDirVar, dir, std::string("cannot be read: ") + std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        badVar(kDirVar, dir, "is not a directory");
    }
    const bool foreign = st.st_uid != geteuid();
    const bool loose = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if ((foreign || loose) && firstWarningFor(dir, st)) {
        char mode[8];
        std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
        NIXL_SDK_WARN("prometheus_mp: " << kDirVar << "='" << dir << "' is "
                                        << (loose ? "group- or world-writable (mode " : "")
                                        << (loose ? mode : "") << (loose ? ")" : "")
                                        << (loose && foreign ? " and " : "")
                                        << (foreign ? "owned by uid " : "")
                                        << (foreign ? std::to_string(st.st_uid) : "")
                                        << "; other users may plant or remove files there (store "
                                           "files of other users are ignored)");
    }
}

std::shared_ptr<nixlMpEndpoint>
acquireEndpoint(const nixlMpConfig &cfg, const std::shared_ptr<const nixlMpSchema> &schema) {
    static std::mutex mu;
    static std::map<std::string, std::weak_ptr<nixlMpEndpoint>> endpoints;
    const std::string key = cfg.dir + '\0' + cfg.addr + '\0' + std::to_string(cfg.port);
    std::lock_guard<std::mutex> lk(mu);
    std::erase_if(endpoints, [](const auto &kv) { return kv.second.expired(); });
    if (auto ep = endpoints[key].lock()) {
        return ep;
    }
    auto collector = std::make_shared<nixlMpCollector>(cfg.dir, schema, cfg.ttlSeconds);
    auto ep = std::make_shared<nixlMpEndpoint>(cfg.dir, cfg.addr, cfg.port, std::move(collector));
    endpoints[key] = ep;
    return ep;
}

nixlPrometheusMpExporter::nixlPrometheusMpExporter(const nixlTelemetryExporterContext &ctx) {
    const nixlMpConfig cfg = parseConfig();
    prepareDir(cfg.dir);
    schema_ = std::make_shared<const nixlMpSchema>(ctx.eventTypes, cfg.names);
    nixlMpIdentity id;
    id.agentName = std::string(ctx.agentName);
    if (id.agentName.size() >= kAgentNameLen) {
        NIXL_SDK_WARN("prometheus_mp: agent name of " << id.agentName.size()
                                                      << " bytes is truncated to "
                                                      << kAgentNameLen - 1
                                                      << " in its agent_name label");
    }
    id.hostname = nixlPromHostName();
    id.hasLocalRank = cfg.localRank.has_value();
    id.localRank = cfg.localRank.value_or("");
    id.pid = getpid();
    id.instance = instanceCounter().fetch_add(1, std::memory_order_relaxed);
    store_ = std::make_unique<nixlMpStoreWriter>(cfg.dir, *schema_, cfg.boundsUs, id);
    endpoint_ = acquireEndpoint(cfg, schema_);
    endpoint_->elect();
}

nixlPrometheusMpExporter::~nixlPrometheusMpExporter() = default;

nixl_plugin_status_t
nixlPrometheusMpExporter::exportEvents(std::span<const nixl_telemetry_event_abi_t> events) noexcept {
    size_t unknown = 0;
    uint32_t firstUnknown = 0;
    for (const nixl_telemetry_event_abi_t &ev : events) {
        if (!store_->record(ev.type, ev.value, ev.reserved) && unknown++ == 0) {
            firstUnknown = ev.type;
        }
    }
    if (unknown != 0 && !warnedUnknown_) {
        warnedUnknown_ = true;
        NIXL_SDK_WARN("prometheus_mp: ignoring " << unknown << " event(s) of type " << firstUnknown
                                                 << " outside the event table of "
                                                 << schema_->slotCount() << " rows");
    }
    store_->touch();
    endpoint_->maybeElect();
    return NIXL_PLUGIN_SUCCESS;
}

void
nixlPrometheusMpExporter::batchEnd() noexcept {
    store_->touch();
    endpoint_->maybeElect();
}

} // namespace nixlPromMp
