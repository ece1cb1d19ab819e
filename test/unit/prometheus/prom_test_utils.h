/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prom_test_utils.h
 * @brief Helpers of the prometheus exporter tests: the plugin loaded through its C ABI as core
 *        loads it, a log-capturing core services struct, an event table mirroring NIXL 1.4's 21
 *        types, loopback HTTP scraping and a parser of the text exposition format.
 *
 * Thread safety: the log capture is locked; everything else is used from the test thread or
 * owned by one thread.
 */
#ifndef NIXL_TEST_UNIT_PROMETHEUS_PROM_TEST_UTILS_H
#define NIXL_TEST_UNIT_PROMETHEUS_PROM_TEST_UTILS_H

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nixl_telemetry_exporter_plugin.h"
#include "../../common/scoped_env.h"

namespace nixl_prom_test {

/** Event types of NIXL 1.4 (nixl-api.md 4.1); the table below gives their names. */
enum eventType : uint32_t {
    TX_BYTES = 0,
    RX_BYTES = 1,
    TX_REQUESTS = 2,
    RX_REQUESTS = 3,
    MEMORY_REGISTERED = 4,
    MEMORY_DEREGISTERED = 5,
    XFER_TIME = 6,
    XFER_POST_TIME = 7,
    ERR_NOT_POSTED = 8,
    ERR_INVALID_PARAM = 9,
    ERR_BACKEND = 10,
    ERR_NOT_FOUND = 11,
    ERR_NO_TELEMETRY = 19,
    TRACE_PHASES_DROPPED = 20,
    EVENTS_DROPPED = 21,
    EVENT_TYPE_COUNT = 22,
};

/** The 22-row table core passes (NIXL 1.4's 21 types with issue 12's trace-phase counter at
 *  20). Static storage. */
const std::vector<nixl_telemetry_event_info_t> &
eventTable();

/** The 12 status labels, in event-type order (types 8..19). */
const std::vector<std::string> &
statusLabels();

/** One captured log line. */
struct logLine {
    int32_t level;
    std::string text;
};

/** Core services whose log goes to a process-wide capture. */
const nixl_plugin_core_services_t *
captureServices();
void
clearLog();
std::vector<logLine>
takeLog();

/** The prometheus plugin, dlopen'ed once from NIXL_TEST_PROMETHEUS_PLUGIN. */
const nixl_telemetry_exporter_plugin_t *
plugin();
/** Why plugin() is null. */
std::string
pluginError();

/** Calls ops->create for @p agent; *out set on success. */
nixl_plugin_status_t
createExporter(const std::string &agent,
               nixl_telemetry_exporter_t **out,
               const std::vector<nixl_telemetry_event_info_t> &table = eventTable());

/** Owns one exporter instance; destroys it unless released first. */
class exporterHandle {
public:
    exporterHandle() = default;
    explicit exporterHandle(nixl_telemetry_exporter_t *e) : e_(e) {}
    exporterHandle(const exporterHandle &) = delete;
    exporterHandle &
    operator=(const exporterHandle &) = delete;
    exporterHandle(exporterHandle &&o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
    ~exporterHandle() {
        reset();
    }

    void
    reset();

    nixl_telemetry_exporter_t *
    get() const noexcept {
        return e_;
    }

    /** batch_begin, export_events, batch_end, as one core flush. */
    nixl_plugin_status_t
    flush(const std::vector<nixl_telemetry_event_abi_t> &events) const;

private:
    nixl_telemetry_exporter_t *e_ = nullptr;
};

using nixl_test::scopedEnv;

/** A TCP port that was free on 0.0.0.0 when asked (bind to port 0, read it back, close). */
uint16_t
freePort();

/** True when a TCP connect to ip:port succeeds. */
bool
canConnect(const char *ip, uint16_t port);

/** GET path over HTTP/1.0 from ip:port: the body of a 200 answer, else nullopt. */
std::optional<std::string>
httpGet(const char *ip, uint16_t port, const char *path = "/metrics");

/**
 * @p n TCP connections to 127.0.0.1:@p port that never send a byte; each one the server closes,
 * or that fails, is reopened at once, so the server always has @p n idle clients knocking.
 * Runs on its own thread from construction to destruction (which closes them all).
 */
class idleFlood {
public:
    idleFlood(uint16_t port, size_t n);
    ~idleFlood();
    idleFlood(const idleFlood &) = delete;
    idleFlood &
    operator=(const idleFlood &) = delete;

    /** Connections closed by the server (or failed) and reopened so far. */
    uint64_t
    reconnects() const noexcept {
        return reconnects_.load();
    }

private:
    void
    run() noexcept;

    uint16_t port_;
    size_t n_;
    int wakeFd_ = -1;
    std::atomic<uint64_t> reconnects_{0};
    std::thread thread_;
};

/** One sample line of the exposition format. */
struct sample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
};

/** Parses every sample line; comment lines are skipped. Malformed lines fail the test. */
std::vector<sample>
parseSamples(const std::string &text);

/**
 * The value of the one sample named @p name whose labels are exactly @p labels, where an "le"
 * label is compared as a number. nullopt when absent.
 */
std::optional<double>
findValue(const std::vector<sample> &samples,
          const std::string &name,
          const std::map<std::string, std::string> &labels);

/** This host's name as the hostname label carries it. */
std::string
hostName();

/** Runs promtool check metrics on @p text; returns its exit status and output. */
std::pair<int, std::string>
promtoolCheck(const std::string &promtool, const std::string &text);

/** promtool ($NIXL_TEST_PROMTOOL, else /usr/bin/promtool), or "" when not installed. */
std::string
promtoolPath();

} // namespace nixl_prom_test

#endif // NIXL_TEST_UNIT_PROMETHEUS_PROM_TEST_UTILS_H
