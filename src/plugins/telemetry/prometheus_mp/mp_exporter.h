/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_exporter.h
 * @brief The prometheus_mp exporter (NIXL_TELEMETRY_EXPORTER=prometheus_mp): every agent writes
 *        its own store in NIXL_TELEMETRY_MULTIPROC_DIR; one process per scrape address, elected
 *        by flock, serves all stores of the directory.
 *
 * Thread-safety: one instance per agent, driven by that agent's flush thread only (SDK
 * contract). Instances of one process share the endpoint of their address, which locks itself.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_EXPORTER_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_EXPORTER_H

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mp_election.h"
#include "mp_store.h"
#include "nixl_telemetry_exporter_sdk.h"

namespace nixlPromMp {

inline constexpr const char *kDirVar = "NIXL_TELEMETRY_MULTIPROC_DIR";
using nixlProm::kLocalVar;
using nixlProm::kPortVar;
inline constexpr const char *kRankEnvVar = "NIXL_TELEMETRY_RANK_ENV";
inline constexpr const char *kTtlVar = "NIXL_TELEMETRY_MP_STALE_TTL";
inline constexpr const char *kDefaultRankEnv = "LOCAL_RANK";
using nixlProm::kDefaultPort;
inline constexpr double kDefaultTtlSeconds = 30;

/** Every option (environment, else the NIXL configuration file, through core); parseConfig()
 *  throws std::runtime_error naming the variable, value and origin at fault. */
struct nixlMpConfig {
    std::string dir;
    std::string addr; ///< 0.0.0.0, or 127.0.0.1 when NIXL_TELEMETRY_PROMETHEUS_LOCAL is true
    uint16_t port = kDefaultPort;
    double ttlSeconds = kDefaultTtlSeconds;
    std::vector<double> boundsUs;
    std::optional<std::string> localRank;
    /** NIXL_TELEMETRY_PROMETHEUS_NAMES; an unknown value warns and keeps this default. */
    nixlProm::nameStyle_t names = nixlProm::nameStyle_t::LIBNIXL;
};

nixlMpConfig
parseConfig();

/**
 * Creates the directory 0700 when missing; warns (one line, once per process and directory,
 * however many agents use it) when an existing one is group- or world-writable or owned by
 * another user. Throws when it is not a directory or cannot be made.
 */
void
prepareDir(const std::string &dir);

/** The endpoint of (dir, addr, port) in this process, shared by its agents. */
std::shared_ptr<nixlMpEndpoint>
acquireEndpoint(const nixlMpConfig &cfg, const std::shared_ptr<const nixlMpSchema> &schema);

class nixlPrometheusMpExporter : public nixlTelemetryExporterBase {
public:
    /** Throws std::runtime_error (agent construction fails) on bad configuration. */
    explicit nixlPrometheusMpExporter(const nixlTelemetryExporterContext &ctx);
    ~nixlPrometheusMpExporter() override;

    nixl_plugin_status_t
    exportEvents(std::span<const nixl_telemetry_event_abi_t> events) noexcept override;

    void
    batchEnd() noexcept override;

    nixlMpEndpoint &
    endpoint() noexcept {
        return *endpoint_;
    }

    const std::string &
    storePath() const noexcept {
        return store_->path();
    }

private:
    std::shared_ptr<const nixlMpSchema> schema_;
    std::unique_ptr<nixlMpStoreWriter> store_;
    std::shared_ptr<nixlMpEndpoint> endpoint_;
    bool warnedUnknown_ = false;
};

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_EXPORTER_H
