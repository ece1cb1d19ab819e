/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file telemetry_test_utils.h
 * @brief Shared pieces of the telemetry tests: a scope with every NIXL_TELEMETRY_* variable
 *        unset, log-line filters, and waiting for a condition with a deadline.
 */
#ifndef NIXL_TEST_UNIT_TELEMETRY_TELEMETRY_TEST_UTILS_H
#define NIXL_TEST_UNIT_TELEMETRY_TELEMETRY_TEST_UTILS_H

#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent_test_utils.h"

namespace nixl_telemetry_test {

using nixl_agent_test::scopedEnv;
using nixl_agent_test::stderrCapture;

/** Every variable the telemetry pipeline (and the record test exporter) reads, unset. */
class cleanTelemetryEnv {
public:
    cleanTelemetryEnv() = default;

private:
    scopedEnv enable_{"NIXL_TELEMETRY_ENABLE", nullptr};
    scopedEnv exporter_{"NIXL_TELEMETRY_EXPORTER", nullptr};
    scopedEnv dir_{"NIXL_TELEMETRY_DIR", nullptr};
    scopedEnv size_{"NIXL_TELEMETRY_BUFFER_SIZE", nullptr};
    scopedEnv interval_{"NIXL_TELEMETRY_RUN_INTERVAL", nullptr};
    scopedEnv metrics_{"NIXL_TELEMETRY_ENABLED_METRICS", nullptr};
    scopedEnv create_{"NIXL_TEST_RECORD_CREATE", nullptr};
    scopedEnv refuse_{"NIXL_TEST_RECORD_REFUSE", nullptr};
};

/** Log lines of one level ('E', 'W', ...): lines starting "[nixl <level> ". */
inline std::vector<std::string>
logLines(const std::string &log, char level) {
    std::vector<std::string> out;
    std::istringstream in(log);
    std::string line;
    const std::string prefix = std::string("[nixl ") + level + " ";
    while (std::getline(in, line)) {
        if (line.rfind(prefix, 0) == 0) {
            out.push_back(line);
        }
    }
    return out;
}

/** Polls cond until it holds or a generous deadline passes; returns its last value. */
inline bool
waitFor(const std::function<bool()> &cond,
        std::chrono::milliseconds deadline = std::chrono::seconds(20)) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > end) {
            return cond();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

} // namespace nixl_telemetry_test

#endif // NIXL_TEST_UNIT_TELEMETRY_TELEMETRY_TEST_UTILS_H
