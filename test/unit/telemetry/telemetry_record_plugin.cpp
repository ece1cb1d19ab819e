/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtelemetry_exporter_record.so: a test exporter, written with the SDK, that records every
 * batch boundary and event per agent so tests can check what core exported and in which order.
 *
 * Behaviour is chosen at create from the environment:
 *   NIXL_TEST_RECORD_CREATE  "ok" (default), "unavailable" (declines: NIXL_PLUGIN_ERR_NOT_ALLOWED),
 *                            "fail" (fails agent construction)
 *   NIXL_TEST_RECORD_REFUSE  N: the first N export_events calls of the instance are refused
 *
 * Tests read the records through the extern "C" functions below (dlsym on this library).
 * Thread-safe: one mutex around the process-wide record.
 */
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "nixl_telemetry_exporter_sdk.h"

namespace {

struct recordEntry {
    uint32_t kind; // 0 = batch begin, 1 = event, 2 = batch end, 3 = created, 4 = destroyed
    uint32_t type;
    uint64_t value;
};

struct recordState {
    std::mutex mutex;
    std::map<std::string, std::vector<recordEntry>> byAgent;
    std::map<std::string, std::string> tableCheck; // agent -> "" if the table was right, else why
};

recordState &
state() {
    static recordState *s = new recordState(); // never destroyed: used until process exit
    return *s;
}

void
append(const std::string &agent, recordEntry e) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().byAgent[agent].push_back(e);
}

std::string
checkTable(const nixlTelemetryExporterContext &ctx) {
    if (ctx.eventTypes.empty()) {
        return "empty event table";
    }
    for (size_t i = 0; i < ctx.eventTypes.size(); ++i) {
        const auto &row = ctx.eventTypes[i];
        if (row.type != i || row.name == nullptr || row.help == nullptr) {
            return "row " + std::to_string(i) + " is malformed";
        }
        if ((row.category == NIXL_TELEMETRY_CAT_ERROR) != (row.status_label != nullptr)) {
            return "row " + std::to_string(i) + " has a wrong status label";
        }
    }
    if (ctx.eventTypes.back().category != NIXL_TELEMETRY_CAT_DROPPED) {
        return "the last row is not the DROPPED type";
    }
    return "";
}

class recordExporter : public nixlTelemetryExporterBase {
public:
    explicit recordExporter(const nixlTelemetryExporterContext &ctx)
        : agent_(ctx.agentName) {
        const char *mode = std::getenv("NIXL_TEST_RECORD_CREATE");
        const std::string m = mode != nullptr ? mode : "ok";
        if (m == "unavailable") {
            throw nixlTelemetryExporterUnavailable(
                "NIXL_TEST_RECORD_CREATE=unavailable: declining on request");
        }
        if (m == "fail") {
            throw std::runtime_error("NIXL_TEST_RECORD_CREATE=fail: failing on request");
        }
        if (const char *refuse = std::getenv("NIXL_TEST_RECORD_REFUSE")) {
            refuse_ = std::strtoull(refuse, nullptr, 10);
        }
        {
            std::lock_guard<std::mutex> lock(state().mutex);
            state().tableCheck[agent_] = checkTable(ctx);
        }
        append(agent_, {3, static_cast<uint32_t>(ctx.eventTypes.size()), ctx.maxEventsBuffered});
    }

    ~recordExporter() override {
        append(agent_, {4, 0, 0});
    }

    void
    batchBegin() noexcept override {
        append(agent_, {0, 0, 0});
    }

    nixl_plugin_status_t
    exportEvents(std::span<const nixl_telemetry_event_abi_t> events) noexcept override {
        if (refuse_ > 0) {
            --refuse_;
            return NIXL_PLUGIN_ERR_BACKEND;
        }
        std::lock_guard<std::mutex> lock(state().mutex);
        auto &log = state().byAgent[agent_];
        for (const auto &e : events) {
            log.push_back({1, e.type, e.value});
        }
        return NIXL_PLUGIN_SUCCESS;
    }

    void
    batchEnd() noexcept override {
        append(agent_, {2, 0, 0});
    }

private:
    std::string agent_;
    uint64_t refuse_ = 0;
};

} // namespace

NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE(recordExporter, "record", "0.0.1")

extern "C" {

/** Number of records of an agent. */
__attribute__((visibility("default"))) size_t
nixl_test_record_count(const char *agent) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().byAgent.find(agent);
    return it == state().byAgent.end() ? 0 : it->second.size();
}

/** Record i of an agent; 0 on success, -1 when out of range. */
__attribute__((visibility("default"))) int
nixl_test_record_get(const char *agent, size_t i, uint32_t *kind, uint32_t *type, uint64_t *value) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().byAgent.find(agent);
    if (it == state().byAgent.end() || i >= it->second.size()) {
        return -1;
    }
    *kind = it->second[i].kind;
    *type = it->second[i].type;
    *value = it->second[i].value;
    return 0;
}

/** Problem found in the event table given to the agent's exporter ("" = none); copies. */
__attribute__((visibility("default"))) int
nixl_test_record_table_check(const char *agent, char *out, size_t len) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().tableCheck.find(agent);
    if (it == state().tableCheck.end() || len == 0) {
        return -1;
    }
    const std::string &s = it->second;
    const size_t n = s.size() < len - 1 ? s.size() : len - 1;
    s.copy(out, n);
    out[n] = '\0';
    return 0;
}

/** Forgets everything recorded. */
__attribute__((visibility("default"))) void
nixl_test_record_clear(void) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().byAgent.clear();
    state().tableCheck.clear();
}
}
