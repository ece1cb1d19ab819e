/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file connector_bench_cpp.h
 * @brief The C++ loop of benchmark/python/connector_bench.py: two agents of one process over
 *        UCX and the connector-shaped READ (make + post + poll + release of k prepared blocks),
 *        made with the C++ API.
 *
 * Used twice: by connector_bench_peer (a process of its own) and by the extension module
 * _connector_bench_cpp, which runs the same loop inside the Python process. The in-process form
 * is the fair baseline for the Python package: the 1 MiB UCX copy that dominates a 64-block
 * READ runs in the same process, over the same allocator and page cache state, as the Python
 * loop it is compared with; a separate process differs by +-10 % from run to run on its own.
 *
 * Thread-safety: one thread at a time per connectorBenchCpp (as the benchmark uses it).
 */

#ifndef NIXL_BENCHMARK_PYTHON_CONNECTOR_BENCH_CPP_H
#define NIXL_BENCHMARK_PYTHON_CONNECTOR_BENCH_CPP_H

#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nixl.h"

namespace nixl_bench {

/** Wall and calling-thread CPU nanoseconds per transfer of one round. */
struct connectorRound {
    double wallNs = 0;
    double cpuNs = 0;
};

class connectorBenchCpp {
public:
    /**
     * Sets up both agents, registers 2 * max_blocks blocks of block_bytes on each side and
     * prepares both descriptor lists. ok() tells whether that worked; error() why not.
     */
    connectorBenchCpp(const std::string &prefix,
                      int max_blocks,
                      size_t block_bytes,
                      bool prog_thread,
                      nixl_thread_sync_t sync)
        : blockBytes_(block_bytes),
          nblocks_(2 * (max_blocks < 1 ? 1 : max_blocks)) {
        const nixlAgentConfig cfg(prog_thread, false, 0, sync);
        init_ = std::make_unique<nixlAgent>(prefix + "-init", cfg);
        target_ = std::make_unique<nixlAgent>(prefix + "-target", cfg);
        nixlBackendH *bi = nullptr, *bt = nullptr;
        if (!check(init_->createBackend("UCX", {}, bi), "createBackend") ||
            !check(target_->createBackend("UCX", {}, bt), "createBackend")) {
            return;
        }
        const size_t bytes = blockBytes_ * static_cast<size_t>(nblocks_);
        src_.assign(bytes, 0x5a);
        dst_.assign(bytes, 0);
        rs_.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(src_.data()), bytes, 0, ""));
        rd_.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(dst_.data()), bytes, 0, ""));
        if (!check(target_->registerMem(rs_), "registerMem")) return;
        srcRegistered_ = true;
        if (!check(init_->registerMem(rd_), "registerMem")) return;
        dstRegistered_ = true;
        nixl_blob_t md;
        if (!check(target_->getLocalMD(md), "getLocalMD") ||
            !check(init_->loadRemoteMD(md, remote_), "loadRemoteMD")) {
            return;
        }
        nixl_xfer_dlist_t ld(DRAM_SEG), rdl(DRAM_SEG);
        for (int b = 0; b < nblocks_; ++b) {
            ld.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(dst_.data()) + b * blockBytes_,
                                     blockBytes_, 0));
            rdl.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(src_.data()) + b * blockBytes_,
                                      blockBytes_, 0));
        }
        if (!check(init_->prepXferDlist(NIXL_INIT_AGENT, ld, lh_), "prepXferDlist") ||
            !check(init_->prepXferDlist(remote_, rdl, rh_), "prepXferDlist")) {
            return;
        }
        ok_ = true;
    }

    ~connectorBenchCpp() {
        if (lh_ != nullptr) init_->releasedDlistH(lh_);
        if (rh_ != nullptr) init_->releasedDlistH(rh_);
        if (!remote_.empty()) init_->invalidateRemoteMD(remote_);
        if (dstRegistered_) init_->deregisterMem(rd_);
        if (srcRegistered_) target_->deregisterMem(rs_);
    }

    connectorBenchCpp(const connectorBenchCpp &) = delete;
    connectorBenchCpp &
    operator=(const connectorBenchCpp &) = delete;

    bool
    ok() const {
        return ok_;
    }

    const std::string &
    error() const {
        return error_;
    }

    /**
     * `iters` READs of k blocks (every other block, so nothing merges into one range, as the
     * KV-cache blocks of a request rarely are adjacent; k == 1 is block 0). False on an error.
     */
    bool
    round(int k, int iters, connectorRound &out) {
        if (!ok_ || k < 1 || 2 * k > nblocks_) {
            if (error_.empty()) error_ = "round: k out of range or setup failed";
            return false;
        }
        std::vector<int> idx;
        for (int i = 0; i < k; ++i) idx.push_back(2 * i);
        const int64_t c0 = threadCpuNs();
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) {
            if (!oneXfer(idx)) return false;
        }
        const double wall =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
                .count();
        const double cpu = static_cast<double>(threadCpuNs() - c0);
        out.wallNs = iters > 0 ? wall / iters : 0;
        out.cpuNs = iters > 0 ? cpu / iters : 0;
        return true;
    }

    /** Whether the first block arrived (the target's pattern in the initiator's buffer). */
    bool
    verify() const {
        return ok_ && std::memcmp(dst_.data(), src_.data(), blockBytes_) == 0;
    }

private:
    bool
    check(nixl_status_t s, const char *what) {
        if (s != NIXL_SUCCESS) {
            error_ = std::string(what) + ": " + nixlEnumStrings::statusStr(s);
            return false;
        }
        return true;
    }

    bool
    oneXfer(const std::vector<int> &idx) {
        nixlXferReqH *req = nullptr;
        if (!check(init_->makeXferReq(NIXL_READ, lh_, idx, rh_, idx, req), "makeXferReq")) {
            return false;
        }
        nixl_status_t s = init_->postXferReq(req);
        while (s == NIXL_IN_PROG) {
            s = init_->getXferStatus(req);
        }
        const bool done = check(s, "postXferReq/getXferStatus");
        return check(init_->releaseXferReq(req), "releaseXferReq") && done;
    }

    static int64_t
    threadCpuNs() {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }

    size_t blockBytes_;
    int nblocks_;
    // Declared before the agents so they outlive the agents' registrations of them.
    std::vector<uint8_t> src_, dst_;
    std::unique_ptr<nixlAgent> init_, target_;
    nixl_reg_dlist_t rs_{DRAM_SEG}, rd_{DRAM_SEG};
    std::string remote_;
    nixlDlistH *lh_ = nullptr;
    nixlDlistH *rh_ = nullptr;
    bool srcRegistered_ = false;
    bool dstRegistered_ = false;
    bool ok_ = false;
    std::string error_;
};

} // namespace nixl_bench

#endif // NIXL_BENCHMARK_PYTHON_CONNECTOR_BENCH_CPP_H
