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
 * Two agents of one process over UCX (as the Python side): the target registers BLOCKS blocks of
 * BLOCK bytes, the initiator prepares both descriptor lists once, then each transfer is
 * makeXferReq(READ, k block indices) + postXferReq + getXferStatus until done + releaseXferReq,
 * the same calls nixl_agent.make_prepped_xfer / transfer / check_xfer_state /
 * release_xfer_handle make. Prints one line per round: "cpp <k> <wall ns per transfer> <CPU ns
 * of the calling thread per transfer>" (the CPU time does not count time spent waiting for a
 * core, so it is the steadier figure on a loaded machine).
 *
 * Usage: connector_bench_peer --blocks 1,64 --iters N --rounds R [--block-bytes B]
 *        [--prog-thread 0|1] [--warmup N] [--sync none|rw|strict]
 */

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nixl.h"

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
ok(nixl_status_t s, const char *what) {
    if (s != NIXL_SUCCESS) {
        std::fprintf(stderr, "connector_bench_peer: %s: %s\n", what,
                     nixlEnumStrings::statusStr(s).c_str());
        return false;
    }
    return true;
}

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

/** make + post + poll + release of one READ of `k` blocks; false on any error. */
bool
oneXfer(nixlAgent &a, nixlDlistH *lh, nixlDlistH *rh, const std::vector<int> &idx) {
    nixlXferReqH *req = nullptr;
    if (!ok(a.makeXferReq(NIXL_READ, lh, idx, rh, idx, req), "makeXferReq")) return false;
    nixl_status_t s = a.postXferReq(req);
    while (s == NIXL_IN_PROG) {
        s = a.getXferStatus(req);
    }
    if (!ok(s, "postXferReq/getXferStatus")) return false;
    return ok(a.releaseXferReq(req), "releaseXferReq");
}

int64_t
threadCpuNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
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

    nixlAgentConfig cfg(o.progThread, false, 0, o.sync);
    nixlAgent init("bench-cpp-init", cfg);
    nixlAgent target("bench-cpp-target", cfg);
    nixlBackendH *bi = nullptr, *bt = nullptr;
    if (!ok(init.createBackend("UCX", {}, bi), "createBackend") ||
        !ok(target.createBackend("UCX", {}, bt), "createBackend")) {
        return 1;
    }
    const int nblocks = 2 * max_blocks;
    const size_t bytes = o.blockBytes * nblocks;
    std::vector<uint8_t> src(bytes, 0x5a), dst(bytes, 0);
    nixl_reg_dlist_t rs(DRAM_SEG), rd(DRAM_SEG);
    rs.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(src.data()), bytes, 0, ""));
    rd.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(dst.data()), bytes, 0, ""));
    if (!ok(target.registerMem(rs), "registerMem") || !ok(init.registerMem(rd), "registerMem")) {
        return 1;
    }
    nixl_blob_t md;
    std::string name;
    if (!ok(target.getLocalMD(md), "getLocalMD") || !ok(init.loadRemoteMD(md, name), "loadRemoteMD")) {
        return 1;
    }
    nixl_xfer_dlist_t ld(DRAM_SEG), remote(DRAM_SEG);
    for (int b = 0; b < nblocks; ++b) {
        ld.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(dst.data()) + b * o.blockBytes,
                                 o.blockBytes, 0));
        remote.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(src.data()) + b * o.blockBytes,
                                     o.blockBytes, 0));
    }
    nixlDlistH *lh = nullptr, *rh = nullptr;
    if (!ok(init.prepXferDlist(NIXL_INIT_AGENT, ld, lh), "prepXferDlist") ||
        !ok(init.prepXferDlist(name, remote, rh), "prepXferDlist")) {
        return 1;
    }
    for (int k : o.blocks) {
        // Every other block, so the request cannot be merged into one range (as the KV-cache
        // blocks of a request, which are rarely adjacent); k == 1 is block 0.
        std::vector<int> idx;
        for (int i = 0; i < k; ++i) idx.push_back(2 * i);
        for (int i = 0; i < o.warmup; ++i) {
            if (!oneXfer(init, lh, rh, idx)) return 1;
        }
        for (int r = 0; r < o.rounds; ++r) {
            const int64_t c0 = threadCpuNs();
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < o.iters; ++i) {
                if (!oneXfer(init, lh, rh, idx)) return 1;
            }
            const auto ns = std::chrono::duration<double, std::nano>(
                                std::chrono::steady_clock::now() - t0)
                                .count();
            const double cpu = static_cast<double>(threadCpuNs() - c0);
            std::printf("cpp %d %.1f %.1f\n", k, ns / o.iters, cpu / o.iters);
            std::fflush(stdout);
        }
    }
    if (std::memcmp(dst.data(), src.data(), o.blockBytes) != 0) {
        std::fprintf(stderr, "connector_bench_peer: data mismatch\n");
        return 1;
    }
    init.releasedDlistH(lh);
    init.releasedDlistH(rh);
    init.invalidateRemoteMD(name);
    init.deregisterMem(rd);
    target.deregisterMem(rs);
    return 0;
}
