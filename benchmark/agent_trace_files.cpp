/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "agent_trace_files.h"

#include <filesystem>
#include <fstream>
#include <string_view>

namespace {

/** The string value of "key":"..." in line (no escapes: the benchmark's names have none). */
std::string_view
stringField(std::string_view line, std::string_view key) {
    const std::string pat = "\"" + std::string(key) + "\":\"";
    const size_t at = line.find(pat);
    if (at == std::string_view::npos) {
        return {};
    }
    const size_t from = at + pat.size();
    const size_t to = line.find('"', from);
    return to == std::string_view::npos ? std::string_view() : line.substr(from, to - from);
}

bool
transferEvent(std::string_view name) {
    return name == "nixl::postXferReq.write" || name == "nixl::postXferReq.read" ||
        name == "nixl::xfer.complete" || name.starts_with("nixl::backend.");
}

} // namespace

traceFileCounts
countTraceFiles(const std::string &dir) {
    traceFileCounts c;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".json") {
            continue;
        }
        std::ifstream in(e.path());
        c.found = true;
        std::string line;
        while (std::getline(in, line)) {
            const std::string_view l(line);
            if (l.find("\"name\":\"nixl.dropped_events\"") != std::string_view::npos) {
                const size_t at = l.find("\"dropped\":");
                if (at != std::string_view::npos) {
                    c.dropped = std::stoull(line.substr(at + 10));
                }
                continue;
            }
            const bool event = l.starts_with("{\"ph\":\"X\"") || l.starts_with("{\"ph\":\"i\"");
            if (event && transferEvent(stringField(l, "name"))) {
                ++c.transferEvents[std::string(stringField(l, "agent"))];
            }
        }
    }
    return c;
}
