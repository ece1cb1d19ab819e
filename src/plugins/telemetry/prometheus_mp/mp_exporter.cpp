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
#include <strings.h>

namespace nixlPromMp {

namespace {

    std::string
    envOr(const char *var, const char *fallback) {
        const char *v = std::getenv(var);
        return v == nullptr ? std::string(fallback) : std::string(v);
    }

    [[noreturn]] void
    badVar(const char *var, const std::string &value, const std::string &why) {
        throw std::runtime_error(std::string("prometheus_mp: ") + var + "='" + value + "' " + why);
    }

    std::string
    hostName() {
        char buf[256] = {};
        if (gethostname(buf, sizeof(buf) - 1) != 0) {
            return "unknown";
        }
        return buf;
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
    c.dir = envOr(kDirVar, "");
    if (c.dir.empty()) {
        badVar(kDirVar,
               c.dir,
               "is not set: prometheus_mp needs a local directory shared by every rank");
    }
    while (c.dir.size() > 1 && c.dir.back() == '/') {
        c.dir.pop_back();
    }

    const std::string port = envOr(kPortVar, "");
    if (!port.empty()) {
        char *end = nullptr;
        errno = 0;
        const long p = std::strtol(port.c_str(), &end, 10);
        if (errno != 0 || end == port.c_str() || *end != '\0' || p < 0 || p > 65535) {
            badVar(kPortVar, port, "is not a port number (0-65535)");
        }
        c.port = static_cast<uint16_t>(p);
    }

    const std::string local = envOr(kLocalVar, "");
    bool isLocal = false;
    if (local.empty() || strcasecmp(local.c_str(), "false") == 0 || local == "0" ||
        strcasecmp(local.c_str(), "no") == 0 || strcasecmp(local.c_str(), "off") == 0) {
        isLocal = false;
    } else if (strcasecmp(local.c_str(), "true") == 0 || local == "1" ||
               strcasecmp(local.c_str(), "yes") == 0 || strcasecmp(local.c_str(), "on") == 0) {
        isLocal = true;
    } else {
        badVar(kLocalVar, local, "is not a boolean (true/false, 1/0, yes/no, on/off)");
    }
    c.addr = isLocal ? "127.0.0.1" : "0.0.0.0";

    const std::string ttl = envOr(kTtlVar, "");
    if (!ttl.empty()) {
        char *end = nullptr;
        errno = 0;
        const double t = std::strtod(ttl.c_str(), &end);
        if (errno != 0 || end == ttl.c_str() || *end != '\0' || !std::isfinite(t) || t < 0) {
            badVar(kTtlVar, ttl, "is not a non-negative number of seconds");
        }
        c.ttlSeconds = t;
    }

    const char *buckets = std::getenv(nixlProm::kBucketsVar);
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

    const std::string rankEnv = envOr(kRankEnvVar, kDefaultRankEnv);
    if (!rankEnv.empty()) {
        const char *rank = std::getenv(rankEnv.c_str());
        if (rank != nullptr && *rank != '\0') {
            std::string r(rank);
            if (r.size() >= kLocalRankLen) {
                NIXL_SDK_WARN("prometheus_mp: " << rankEnv << "='" << r << "' (named by "
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
    schema_ = std::make_shared<const nixlMpSchema>(ctx.eventTypes);
    nixlMpIdentity id;
    id.agentName = std::string(ctx.agentName);
    if (id.agentName.size() >= kAgentNameLen) {
        NIXL_SDK_WARN("prometheus_mp: agent name of " << id.agentName.size()
                                                      << " bytes is truncated to "
                                                      << kAgentNameLen - 1
                                                      << " in its agent_name label");
    }
    id.hostname = hostName();
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
        if (!store_->record(ev.type, ev.value) && unknown++ == 0) {
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
