/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Prints the telemetry events a libnixl agent writes to its BUFFER ring
// ($NIXL_TELEMETRY_DIR/<agent name>, format docs/telemetry-ring.md) as "<type> <name> <value>".
//
//   telemetry_reader [--telemetry_path] PATH [--count N] [--timeout S] [--poll_interval S]
//
// It is the ring's consumer: it stores its read position in the file, so a reader started later
// resumes where this one stopped. One reader per ring at a time. Exit status: 0 done, 1 the file
// is not a version-6 ring or stops being one while it reads (truncated, resized or its header
// rewritten; the message says why), 2 --timeout expired before --count events. The file is read
// with pread/pwrite, never mapped, so nothing another process does to it can kill the reader.
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "common/shared_ring_io.h"
#include "nixl_xfer_path.h"

namespace {

// Same bytes as nixl_telemetry_event_abi_t and NIXL's nixlTelemetryEvent.
struct ringEvent {
    uint32_t type;
    uint32_t reserved;
    uint64_t value;
};
static_assert(sizeof(ringEvent) == 16);

// libnixl's names by type for ring layout 6 (the ring does not carry the table): NIXL 1.4's
// 0..19, then agent_trace_phases_dropped (20) and events dropped, always last (21). A type outside
// the table prints as type_<n>.
constexpr const char *kNames[] = {
    "agent_tx_bytes",          "agent_rx_bytes",
    "agent_tx_requests_num",   "agent_rx_requests_num",
    "agent_memory_registered", "agent_memory_deregistered",
    "agent_xfer_time",         "agent_xfer_post_time",
    "agent_err_not_posted",    "agent_err_invalid_param",
    "agent_err_backend",       "agent_err_not_found",
    "agent_err_mismatch",      "agent_err_not_allowed",
    "agent_err_repost_active", "agent_err_unknown",
    "agent_err_not_supported", "agent_err_remote_disconnect",
    "agent_err_canceled",      "agent_err_no_telemetry",
    "agent_trace_phases_dropped", "agent_telemetry_events_dropped",
};

// The word after the type: for the transfer bytes and request events the data path and, in a
// request event of value 0, a fallback's reason (nixl_xfer_path.h); zero otherwise. Printed as
// " path=UCX/ucp" or " fallback=UCX/ucp reason=disabled_by_config"; nothing for zero.
void
printPathWord(uint32_t word) {
    if (word == 0) {
        return;
    }
    const uint32_t path = NIXL_TELEMETRY_PATH_OF(word);
    const uint32_t reason = NIXL_TELEMETRY_FALLBACK_OF(word);
    const char *backend = nixl_xfer_path_backend(path);
    if (*backend == '\0') {
        std::printf(reason != 0 ? " fallback=path_%u" : " path=path_%u", path);
    } else {
        std::printf(reason != 0 ? " fallback=%s/%s" : " path=%s/%s", backend,
                    nixl_xfer_path_name(path));
    }
    if (reason != 0) {
        std::printf(" reason=%s", nixl_path_fallback_name(reason));
    }
}

volatile std::sig_atomic_t stopRequested = 0;

void
onSignal(int) {
    stopRequested = 1;
}

int
usage(const char *argv0) {
    std::fprintf(stderr,
                 "usage: %s [--telemetry_path] PATH [--count N] [--timeout SECONDS] "
                 "[--poll_interval SECONDS]\n",
                 argv0);
    return 1;
}

} // namespace

int
main(int argc, char **argv) {
    std::string path;
    uint64_t count = 0;
    double timeout = 0;
    double poll = 0.01;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "--telemetry_path" || a == "--count" || a == "--timeout" ||
             a == "--poll_interval") &&
            i + 1 < argc) {
            const char *v = argv[++i];
            if (a == "--telemetry_path") {
                path = v;
            } else if (a == "--count") {
                count = std::strtoull(v, nullptr, 10);
            } else if (a == "--timeout") {
                timeout = std::strtod(v, nullptr);
            } else {
                poll = std::strtod(v, nullptr);
            }
        } else if (!a.empty() && a[0] != '-' && path.empty()) {
            path = a;
        } else {
            return usage(argv[0]);
        }
    }
    if (path.empty()) {
        return usage(argv[0]);
    }

    std::string error;
    auto ring = nixlSharedRingIo<ringEvent>::attach(path, error);
    if (!ring) {
        std::fprintf(stderr, "telemetry_reader: %s\n", error.c_str());
        return 1;
    }
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    std::printf("# ring %s version %d capacity %llu lost_events %llu\n", path.c_str(),
                NIXL_SHARED_RING_VERSION, static_cast<unsigned long long>(ring->capacity()),
                static_cast<unsigned long long>(ring->lost()));
    std::fflush(stdout);

    const auto deadline = std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout));
    uint64_t seen = 0;
    int status = 0;
    ringEvent batch[256];
    while (!stopRequested && (count == 0 || seen < count)) {
        size_t want = sizeof(batch) / sizeof(batch[0]);
        if (count > 0 && count - seen < want) {
            want = static_cast<size_t>(count - seen);
        }
        size_t n = 0;
        if (!ring->popBatch(batch, want, n, error)) {
            std::fflush(stdout);
            std::fprintf(stderr, "telemetry_reader: %s\n", error.c_str());
            status = 1;
            break;
        }
        for (size_t i = 0; i < n; ++i) {
            const uint32_t t = batch[i].type;
            if (t < sizeof(kNames) / sizeof(kNames[0])) {
                std::printf("%u %s %llu", t, kNames[t],
                            static_cast<unsigned long long>(batch[i].value));
            } else {
                std::printf("%u type_%u %llu", t, t,
                            static_cast<unsigned long long>(batch[i].value));
            }
            printPathWord(batch[i].reserved);
            std::printf("\n");
        }
        seen += n;
        if (n > 0) {
            std::fflush(stdout);
            continue;
        }
        if (timeout > 0 && std::chrono::steady_clock::now() >= deadline) {
            status = count > 0 ? 2 : 0;
            break;
        }
        // The producer flushes every NIXL_TELEMETRY_RUN_INTERVAL (100 ms by default).
        std::this_thread::sleep_for(std::chrono::duration<double>(poll));
    }
    std::printf("# read %llu events, lost_events %llu\n", static_cast<unsigned long long>(seen),
                static_cast<unsigned long long>(ring->lost()));
    return status;
}
