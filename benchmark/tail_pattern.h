/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file tail_pattern.h
 * @brief nixlbench's first-impression pattern, shared by ucx_bench and backend_bench.
 *
 * Per block size, ascending, `iters` post-and-poll transfers of one descriptor through an agent
 * whose target is another process, no warm-up; each paired with one bare process_vm_writev/readv
 * of the same bytes (the floor of a same-host copy; the machine's preemptions hit both sides).
 * Prints p50, p99, p99.9 and max of both per size and round, and verifies the moved bytes.
 */
#ifndef NIXL_BENCHMARK_TAIL_PATTERN_H
#define NIXL_BENCHMARK_TAIL_PATTERN_H

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/types.h>
#include <sys/uio.h>
#include <vector>

#include "nixl.h"

namespace nixlBench {

using steady = std::chrono::steady_clock;

/** What the pattern runs: the caller's parsed options. */
struct patternOptions {
    const char *prog = "bench"; ///< for error lines
    std::vector<std::string> ops{"WRITE"};
    std::vector<size_t> blocks{4096, 8192, 16384, 32768, 65536};
    size_t iters = 1000;
    int rounds = 3;
    /** The target's buffer size: the agent uses the first half, the bare call the second. */
    size_t maxTotal = 0;
};

/**
 * The pattern's own flags, shared by the benchmarks that run it: --pattern nixlbench (sets on),
 * --iters N, --rounds N. next() returns the flag's value. 1: a was one of them; 0: not ours;
 * -1: a bad value (the line is printed).
 */
template<typename Next>
int
parsePatternFlag(const std::string &a, Next &&next, bool &on, patternOptions &po) {
    if (a == "--pattern") {
        const std::string m = next();
        if (m != "nixlbench") {
            std::fprintf(stderr, "--pattern is nixlbench, not '%s'\n", m.c_str());
            return -1;
        }
        on = true;
        return 1;
    }
    if (a == "--iters") {
        po.iters = std::max<size_t>(1, std::strtoull(next().c_str(), nullptr, 10));
        return 1;
    }
    if (a == "--rounds") {
        po.rounds = std::max(1, std::atoi(next().c_str()));
        return 1;
    }
    return 0;
}

inline std::string
patternSizeName(size_t n) {
    if (n >= (1u << 20) && n % (1u << 20) == 0) {
        return std::to_string(n >> 20) + "M";
    }
    if (n >= 1024 && n % 1024 == 0) {
        return std::to_string(n >> 10) + "K";
    }
    return std::to_string(n);
}

/** Latencies (microseconds) sorted in place; the q-quantile by the nearest rank. */
inline double
quantile(std::vector<double> &v, double q) {
    if (v.empty()) {
        return 0;
    }
    const size_t rank = static_cast<size_t>(q * static_cast<double>(v.size()));
    return v[std::min(v.size() - 1, rank)];
}

struct tails {
    double p50 = 0;
    double p99 = 0;
    double p999 = 0;
    double max = 0;
};

inline tails
tailsOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    tails t;
    t.p50 = quantile(v, 0.50);
    t.p99 = quantile(v, 0.99);
    t.p999 = quantile(v, 0.999);
    t.max = v.empty() ? 0 : v.back();
    return t;
}

/**
 * nixlbench's first-impression pattern: for each size (ascending), one request of one
 * descriptor, posted and polled to completion `iters` times with no warm-up, the target idle,
 * the same registered buffers for every size; `rounds` times over. Each agent transfer is
 * paired with one bare process_vm_writev/readv of the same bytes (alternating which goes
 * first), so both see the same preemptions of this machine; the ratios compare their tails.
 * The data is verified after each size: a mismatch fails the run (exit 1, one line).
 */
inline int
nixlbenchPattern(const patternOptions &o,
                 nixlAgent &agent,
                 uintptr_t laddr,
                 uintptr_t raddr,
                 pid_t pid,
                 const std::string &title) {
    std::printf("# %s, %zu iterations per size, %d round(s)\n", title.c_str(), o.iters,
                o.rounds);
    std::printf("# latency of one post-to-completion in us; cma = bare process_vm_%s of the "
                "same bytes, paired; target: p99 <= max(2 p50, 20 us), p99 and max <= 2x cma\n",
                "writev/readv");
    std::printf("%-5s %-5s %6s %6s | %8s %8s %8s %9s | %8s %8s %8s %9s | %7s %7s %6s %6s\n",
                "round", "op", "block", "iters", "p50", "p99", "p99.9", "max", "cma p50",
                "cma p99", "cma p99.9", "cma max", "p99/cma", "max/cma", "target", "max@");
    int misses = 0;
    uint32_t seed = 1;
    for (int round = 1; round <= o.rounds; ++round) {
        for (const std::string &op : o.ops) {
            const bool rd = op == "READ";
            for (size_t block : o.blocks) {
                if (block > o.maxTotal / 2) {
                    continue;
                }
                nixl_xfer_dlist_t l(DRAM_SEG);
                nixl_xfer_dlist_t r(DRAM_SEG);
                l.addDesc(nixlBasicDesc(laddr, block, 0));
                r.addDesc(nixlBasicDesc(raddr, block, 0));
                nixlXferReqH *req = nullptr;
                if (agent.createXferReq(rd ? NIXL_READ : NIXL_WRITE, l, r, "target", req) !=
                    NIXL_SUCCESS) {
                    std::fprintf(stderr, "%s: createXferReq of %zu bytes failed\n", o.prog, block);
                    return 1;
                }
                // The source holds this size's pattern; the agent's copy is what is checked
                // (the bare copy of the pair moves the same bytes, so it cannot spoil it).
                std::vector<uint8_t> want(block);
                for (size_t i = 0; i < block; ++i) {
                    want[i] = static_cast<uint8_t>((i * 131 + seed * 7) >> 3);
                }
                ++seed;
                struct iovec riov{reinterpret_cast<void *>(raddr), block};
                // The bare copy of the pair uses the second half of the target's buffer, so
                // that each side meets its own first touch of the target's pages.
                struct iovec briov{reinterpret_cast<void *>(raddr + o.maxTotal / 2), block};
                struct iovec wiov{want.data(), block};
                if (rd) {
                    if (::process_vm_writev(pid, &wiov, 1, &riov, 1, 0) !=
                        static_cast<ssize_t>(block)) {
                        std::perror("process_vm_writev (seeding the target)");
                        return 1;
                    }
                    std::memset(reinterpret_cast<void *>(laddr), 0, block);
                } else {
                    std::memcpy(reinterpret_cast<void *>(laddr), want.data(), block);
                }
                std::vector<double> lat;
                std::vector<double> clat;
                lat.reserve(o.iters);
                clat.reserve(o.iters);
                // The bare copy of the pair goes into (or comes from) a scratch buffer, so that
                // it never overwrites what the agent moved.
                std::vector<uint8_t> scratch(block);
                struct iovec siov{scratch.data(), block};
                for (size_t i = 0; i < o.iters; ++i) {
                    auto agentOnce = [&] {
                        const auto t0 = steady::now();
                        nixl_status_t st = agent.postXferReq(req);
                        while (st == NIXL_IN_PROG) {
                            st = agent.getXferStatus(req);
                        }
                        lat.push_back(
                            std::chrono::duration<double, std::micro>(steady::now() - t0).count());
                        return st == NIXL_SUCCESS;
                    };
                    auto bareOnce = [&] {
                        const auto t0 = steady::now();
                        // READ: the target's bytes into scratch; WRITE: scratch (a copy of
                        // the pattern) would change nothing, so it writes the pattern itself.
                        const ssize_t n = rd ?
                            ::process_vm_readv(pid, &siov, 1, &briov, 1, 0) :
                            ::process_vm_writev(pid, &wiov, 1, &briov, 1, 0);
                        clat.push_back(
                            std::chrono::duration<double, std::micro>(steady::now() - t0).count());
                        return n == static_cast<ssize_t>(block);
                    };
                    const bool ok = (i % 2 == 0) ? (agentOnce() && bareOnce()) :
                                                   (bareOnce() && agentOnce());
                    if (!ok) {
                        std::fprintf(stderr, "%s: %s of %zu bytes, iteration %zu failed\n",
                                     o.prog, op.c_str(), block, i);
                        return 1;
                    }
                }
                agent.releaseXferReq(req);
                // Verify what the agent moved: the target's bytes (WRITE) or ours (READ).
                std::vector<uint8_t> got(block);
                if (rd) {
                    std::memcpy(got.data(), reinterpret_cast<void *>(laddr), block);
                } else {
                    struct iovec giov{got.data(), block};
                    if (::process_vm_readv(pid, &giov, 1, &riov, 1, 0) !=
                        static_cast<ssize_t>(block)) {
                        std::perror("process_vm_readv (verifying)");
                        return 1;
                    }
                }
                if (got != want) {
                    const size_t at = static_cast<size_t>(
                        std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin());
                    std::fprintf(stderr,
                                 "ucx_bench: %s of %zu bytes did not verify: first bad byte at "
                                 "offset %zu\n",
                                 op.c_str(), block, at);
                    return 1;
                }
                // Where the slowest transfer fell: the first iterations of a size point at
                // lazy set-up, scattered ones at preemption.
                const size_t worst = static_cast<size_t>(
                    std::max_element(lat.begin(), lat.end()) - lat.begin());
                const tails a = tailsOf(lat);
                const tails c = tailsOf(clat);
                const bool met = a.p99 <= std::max(2 * a.p50, 20.0) && a.p99 <= 2 * c.p99 &&
                    a.max <= 2 * c.max;
                misses += met ? 0 : 1;
                std::printf("%-5d %-5s %6s %6zu | %8.2f %8.2f %8.2f %9.2f | %8.2f %8.2f %8.2f "
                            "%9.2f | %7.2f %7.2f %6s %6zu\n",
                            round, op.c_str(), patternSizeName(block).c_str(), lat.size(),
                            a.p50, a.p99,
                            a.p999, a.max, c.p50, c.p99, c.p999, c.max,
                            c.p99 > 0 ? a.p99 / c.p99 : 0, c.max > 0 ? a.max / c.max : 0,
                            met ? "met" : "MISSED", worst);
                std::fflush(stdout);
            }
        }
    }
    std::printf("# %d row(s) missed the target\n", misses);
    return 0;
}


} // namespace nixlBench

#endif // NIXL_BENCHMARK_TAIL_PATTERN_H
