/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file connector_bench_peer.cpp
 * @brief The C++ side of benchmark/python/connector_bench.py: the connector-shaped flow made
 *        with the C++ API, so the Python package's added cost is measured against it in the
 *        same run.
 *
 * Two agents of one process over UCX (as the Python side), the loop of connector_bench_cpp.h:
 * the target registers BLOCKS blocks of BLOCK bytes, the initiator prepares both descriptor
 * lists once, then each transfer is makeXferReq(READ, k block indices) + postXferReq +
 * getXferStatus until done + releaseXferReq, the same calls nixl_agent.make_prepped_xfer /
 * transfer / check_xfer_state / release_xfer_handle make. The same loop also runs inside the
 * Python process (module _connector_bench_cpp), which is the baseline connector_bench.py
 * computes its ratios against. Prints one line per round: "cpp <k> <wall ns per transfer> <CPU ns
 * of the calling thread per transfer>" (the CPU time does not count time spent waiting for a
 * core, so it is the steadier figure on a loaded machine).
 *
 * Usage: connector_bench_peer --blocks 1,64 --iters N --rounds R [--block-bytes B]
 *        [--prog-thread 0|1] [--warmup N] [--sync none|rw|strict]
 */

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "connector_bench_cpp.h"

namespace {

struct options {
    std::vector<int> blocks{1, 64};
    int iters = 20000;
    int rounds = 5;
    int warmup = 2000;
    size_t blockBytes = 16 * 1024;
    bool progThread = true;
    /** The Python bindings run a NONE agent as RW: --sync rw measures C++ in that mode. */
    nixl_thread_sync_t sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE;
};

bool
parse(int argc, char **argv, options &o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        const char *v = argv[i + 1];
        if (k == "--blocks") {
            o.blocks.clear();
            std::stringstream ss(v);
            for (std::string part; std::getline(ss, part, ',');) {
                o.blocks.push_back(std::atoi(part.c_str()));
            }
        } else if (k == "--iters") {
            o.iters = std::atoi(v);
        } else if (k == "--rounds") {
            o.rounds = std::atoi(v);
        } else if (k == "--warmup") {
            o.warmup = std::atoi(v);
        } else if (k == "--block-bytes") {
            o.blockBytes = std::strtoull(v, nullptr, 10);
        } else if (k == "--sync") {
            const std::string m = v;
            if (m == "none") {
                o.sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE;
            } else if (m == "rw") {
                o.sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_RW;
            } else if (m == "strict") {
                o.sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT;
            } else {
                return false;
            }
        } else if (k == "--prog-thread") {
            o.progThread = std::atoi(v) != 0;
        } else {
            return false;
        }
    }
    return (argc % 2) == 1;
}

} // namespace

int
main(int argc, char **argv) {
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: %s --blocks 1,64 --iters N --rounds R [--block-bytes B] "
                             "[--prog-thread 0|1] [--warmup N] [--sync none|rw|strict]\n", argv[0]);
        return 2;
    }
    int max_blocks = 1;
    for (int k : o.blocks) max_blocks = std::max(max_blocks, k);
    nixl_bench::connectorBenchCpp bench("bench-cpp", max_blocks, o.blockBytes, o.progThread, o.sync);
    if (!bench.ok()) {
        std::fprintf(stderr, "connector_bench_peer: %s\n", bench.error().c_str());
        return 1;
    }
    for (int k : o.blocks) {
        nixl_bench::connectorRound r;
        if (!bench.round(k, o.warmup, r)) {
            std::fprintf(stderr, "connector_bench_peer: %s\n", bench.error().c_str());
            return 1;
        }
        for (int i = 0; i < o.rounds; ++i) {
            if (!bench.round(k, o.iters, r)) {
                std::fprintf(stderr, "connector_bench_peer: %s\n", bench.error().c_str());
                return 1;
            }
            std::printf("cpp %d %.1f %.1f\n", k, r.wallNs, r.cpuNs);
            std::fflush(stdout);
        }
    }
    if (!bench.verify()) {
        std::fprintf(stderr, "connector_bench_peer: data mismatch\n");
        return 1;
    }
    return 0;
}
