/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * What the JSON (chrome) trace plugin wrote during agent_overhead: the benchmark's traced
 * loops can outrun the plugin's writer thread, and an event that does not fit its thread's
 * ring is dropped (counted, never waited for). A dropped event costs the calling thread less
 * than a written one, so each chrome figure is printed with the share of its events that were
 * written (read back from the files once they are closed).
 */
#ifndef NIXL_BENCHMARK_AGENT_TRACE_FILES_H
#define NIXL_BENCHMARK_AGENT_TRACE_FILES_H

#include <cstdint>
#include <map>
#include <string>

/** Per agent name, the trace events (spans and marks) of a transfer in the files of dir. */
struct traceFileCounts {
    std::map<std::string, uint64_t> transferEvents; ///< post spans, completions, backend phases
    uint64_t dropped = 0; ///< the last nixl.dropped_events counter of the files (process total)
    bool found = false; ///< any trace file was read
};

/** Reads every *.json file in dir (closed trace files of the chrome plugin). */
traceFileCounts
countTraceFiles(const std::string &dir);

#endif // NIXL_BENCHMARK_AGENT_TRACE_FILES_H
