/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The agent's own overhead on the transfer path, measured against its peer in the same run.
 *
 * Two agents in one process ("bench_initiator", "bench_target") with TEST backends WRITE n
 * descriptors of 8 bytes each (n = 1, 16, 256; the descriptors are 16 bytes apart, so nothing is
 * merged):
 *   agent_create/n   createXferReq + postXferReq + getXferStatus + releaseXferReq
 *   agent_prepped/n  postXferReq + getXferStatus of a request made once by
 *                    prepXferDlist + makeXferReq
 *   agent_prepped_telemetry/n  the same with the initiator's telemetry on
 *                    (captureTelemetry, NIXL_TELEMETRY_EXPORTER=nop): what the staging queue
 *                    adds to the hot path; it must not allocate either
 *   agent_prepped_clock2/1  agent_prepped/1 with two reads of nixlFastClock (the counter the
 *                    trace clock and telemetry read) per transfer, taken by the loop where a
 *                    traced post takes its span's begin and end (around postXferReq): what
 *                    those two reads alone cost amid this path, the part of every traced
 *                    case's "added" that no plugin and no bookkeeping can remove
 *   agent_prepped_trace_off/1  agent_prepped/1 of a second pair of agents made with
 *                    NIXL_TRACE_BACKENDS="" (the baseline of the next line; every other pair
 *                    is made that way too, so a user's setting does not leak in)
 *   agent_prepped_trace_<plugin>/1  the same with NIXL_TRACE_BACKENDS=<plugin>, for every
 *                    libtrace_backend_<plugin>.so in $NIXL_PLUGIN_DIR (none: no case), the
 *                    TEST backends made with trace_phases=false: the agent's own spans only;
 *                    NIXL_TRACE_DIR is pointed at a fresh temporary directory when unset
 *   agent_prepped_trace_<plugin>_phases/1  the same with the TEST backends' trace phases
 *                    (submit, wire_submitted, wire_completed: three marks per transfer)
 *   agent_prepped_trace_chrome_paced/1  agent_prepped_trace_chrome/1 with the timing paused
 *                    for pace_sleep after every pace_every transfers, so that the plugin's
 *                    writer thread drains its ring and the events are written, not dropped
 *   agent_prepped_trace_off_paced/1, agent_prepped_trace_nopend_paced/1  tracing off and the
 *                    do-nothing test plugin paced the same way: the baselines of the paced
 *                    chrome case, which is compared with off_paced, not with off. On the VMs
 *                    measured, the work that follows a pause runs slower, traced or not (the
 *                    off case paced took twice as long per transfer as unpaced, whether the
 *                    pause slept or spun), so a paced case minus an unpaced one is not what
 *                    tracing adds.
 * The chrome plugin's writer wakes every NIXL_TRACE_CHROME_FLUSH_MS (set to 1 here when unset;
 * the plugin's default, 100 ms, lets a 1 MiB ring fill in a few milliseconds of this loop).
 * What the chrome cases wrote is read back from the closed trace files and printed: per case
 * the transfers run, the events they emitted (2 per transfer, 5 with phases) and the share
 * written; a dropped event costs the calling thread less than a written one.
 * The same work driven directly through the TEST plugin's C ABI (agent_direct.cpp; dlopen of
 * $NIXL_PLUGIN_DIR/libplugin_TEST.so, nixl_backend_plugin_get), with two engines of its own:
 *   direct_create/n  prep_xfer + post_xfer + check_xfer + release_req
 *   direct_prepped/n post_xfer + check_xfer of a request prepared once
 * Time is per transfer (one iteration = one transfer of n descriptors). The counter
 * allocs_per_iter is the number of global operator new calls per iteration made by the thread
 * running the benchmarks, counted by the replacement operator new below (it sees libnixl's and
 * the plugin's allocations on that thread as well). Background threads (telemetry flush, a
 * trace plugin's writer) are not the transfer path and are not counted: their allocations land
 * at moments the scheduler picks, so counting them made the check fail now and then.
 * At the end the ratios agent/direct are printed.
 * Registration of many descriptors (agent_register.cpp):
 *   agent_register/n   registerMem + deregisterMem of n DRAM descriptors in one call each
 *   direct_register/n  the same work on the TEST plugin's C ABI
 * (n = 10,000, 100,000, 1,000,000), printed as a second table.
 *
 * Extra flag (removed before Google Benchmark sees the arguments):
 *   --nixl_check  exit non-zero if a benchmark failed or agent_prepped (with or without
 *                 telemetry, or with tracing off) allocated on the hot path. Allocations
 *                 of trace plugins are printed, not checked: they are the plugin's.
 */
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "agent_direct.h"
#include "agent_overhead.h"
#include "agent_register.h"
#include "agent_trace_files.h"
#include "common/fast_clock.h"
#include "nixl.h"
#include "nixl_backend_plugin.h"
#include "scoped_env.h"

// ---- allocation counting ----------------------------------------------------------------------
//
// Replaces the global allocation functions. They are exported (default visibility, although the
// project compiles with -fvisibility=hidden) so that libnixl and the plugin use them too.

namespace {

std::atomic<uint64_t> alloc_count{0};
// Set by main() on the thread that runs the benchmarks. Trivially constructible, so reading it
// inside operator new allocates nothing and needs no guard.
thread_local bool counting_thread __attribute__((tls_model("initial-exec"))) = false;

inline void
countAlloc() noexcept {
    if (counting_thread) {
        alloc_count.fetch_add(1, std::memory_order_relaxed);
    }
}

void *
countedAlloc(std::size_t size) {
    countAlloc();
    return std::malloc(size == 0 ? 1 : size);
}

void *
countedAlignedAlloc(std::size_t size, std::align_val_t align) {
    countAlloc();
    void *p = nullptr;
    std::size_t a = static_cast<std::size_t>(align);
    if (a < sizeof(void *)) {
        a = sizeof(void *);
    }
    if (posix_memalign(&p, a, size == 0 ? 1 : size) != 0) {
        return nullptr;
    }
    return p;
}

/*
 * Out of line, so that the compiler does not pair an inlined free() with the operator new of the
 * caller and warn about a mismatch (-Wmismatched-new-delete): both ends here are malloc/free.
 */
__attribute__((noinline)) void
countedFree(void *p) noexcept {
    std::free(p);
}

} // namespace

#define NIXL_BENCH_EXPORT __attribute__((visibility("default")))

NIXL_BENCH_EXPORT void *
operator new(std::size_t size) {
    void *p = countedAlloc(size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

NIXL_BENCH_EXPORT void *
operator new[](std::size_t size) {
    void *p = countedAlloc(size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

NIXL_BENCH_EXPORT void *
operator new(std::size_t size, const std::nothrow_t &) noexcept {
    return countedAlloc(size);
}

NIXL_BENCH_EXPORT void *
operator new[](std::size_t size, const std::nothrow_t &) noexcept {
    return countedAlloc(size);
}

NIXL_BENCH_EXPORT void *
operator new(std::size_t size, std::align_val_t align) {
    void *p = countedAlignedAlloc(size, align);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

NIXL_BENCH_EXPORT void *
operator new[](std::size_t size, std::align_val_t align) {
    void *p = countedAlignedAlloc(size, align);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

NIXL_BENCH_EXPORT void *
operator new(std::size_t size, std::align_val_t align, const std::nothrow_t &) noexcept {
    return countedAlignedAlloc(size, align);
}

NIXL_BENCH_EXPORT void *
operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t &) noexcept {
    return countedAlignedAlloc(size, align);
}

NIXL_BENCH_EXPORT void
operator delete(void *p) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete[](void *p) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete(void *p, std::size_t) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete[](void *p, std::size_t) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete(void *p, const std::nothrow_t &) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete[](void *p, const std::nothrow_t &) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete(void *p, std::align_val_t) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete[](void *p, std::align_val_t) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete(void *p, std::size_t, std::align_val_t) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete[](void *p, std::size_t, std::align_val_t) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept {
    countedFree(p);
}

NIXL_BENCH_EXPORT void
operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept {
    countedFree(p);
}

uint64_t
allocCount() noexcept {
    return alloc_count.load(std::memory_order_relaxed);
}

uint8_t
patternByte(size_t i) {
    return static_cast<uint8_t>(i % 251 + 1);
}

/** Checks that the first n descriptors of dst hold src's bytes; the gaps are not written. */
bool
verify(const std::vector<uint8_t> &src, const std::vector<uint8_t> &dst, size_t n) {
    for (size_t d = 0; d < n; ++d) {
        if (std::memcmp(src.data() + d * desc_stride, dst.data() + d * desc_stride, desc_len) !=
            0) {
            return false;
        }
    }
    return true;
}

void
setAllocCounter(benchmark::State &state, uint64_t allocs) {
    state.counters["allocs_per_iter"] = benchmark::Counter(
        state.iterations() == 0 ? 0.0 :
                                  static_cast<double>(allocs) /
                static_cast<double>(state.iterations()));
}

namespace {

const int desc_counts[] = {1, 16, 256};

const std::string initiator_name = "bench_initiator";
const std::string target_name = "bench_target";
const std::string telemetry_initiator_name = "bench_telemetry_initiator";
const std::string telemetry_target_name = "bench_telemetry_target";

nixl_xfer_dlist_t
descList(std::vector<uint8_t> &buf, size_t n) {
    nixl_xfer_dlist_t list(DRAM_SEG);
    for (size_t i = 0; i < n; ++i) {
        list.addDesc(nixlBasicDesc(
            reinterpret_cast<uintptr_t>(buf.data() + i * desc_stride), desc_len, 0));
    }
    return list;
}


// ---- the agent side ---------------------------------------------------------------------------

/** Two agents with TEST backends, registered buffers and each other's metadata. */
class agentPair {
public:
    agentPair(const std::string &initiator_agent = initiator_name,
              const std::string &target_agent = target_name,
              const nixlAgentConfig &initiator_cfg = nixlAgentConfig(false))
        : targetName(target_agent),
          initiator(initiator_agent, initiator_cfg),
          target(target_agent, nixlAgentConfig(false)),
          src(buffer_size),
          dst(buffer_size, 0),
          srcReg(DRAM_SEG),
          dstReg(DRAM_SEG) {
        for (size_t i = 0; i < buffer_size; ++i) {
            src[i] = patternByte(i);
        }
        srcReg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(src.data()), src.size(), 0, ""));
        dstReg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(dst.data()), dst.size(), 0, ""));
    }

    bool
    setup() {
        nixlBackendH *ib = nullptr;
        nixlBackendH *tb = nullptr;
        nixl_blob_t md;
        std::string name;
        if (!step(initiator.createBackend("TEST", backendParams, ib), "initiator createBackend") ||
            !step(target.createBackend("TEST", backendParams, tb), "target createBackend") ||
            !step(initiator.registerMem(srcReg), "initiator registerMem")) {
            return false;
        }
        registered_ = true;
        if (!step(target.registerMem(dstReg), "target registerMem")) {
            return false;
        }
        targetRegistered_ = true;
        return step(target.getLocalMD(md), "target getLocalMD") &&
            step(initiator.loadRemoteMD(md, name), "initiator loadRemoteMD");
    }

    ~agentPair() {
        initiator.invalidateRemoteMD(targetName);
        if (targetRegistered_) {
            target.deregisterMem(dstReg);
        }
        if (registered_) {
            initiator.deregisterMem(srcReg);
        }
    }

    static bool
    step(nixl_status_t st, const char *what) {
        if (st != NIXL_SUCCESS) {
            std::cerr << "agent_overhead: " << what << ": " << nixlEnumStrings::statusStr(st)
                      << std::endl;
            return false;
        }
        return true;
    }

    const std::string targetName;
    /** The TEST backends' parameters (set before setup()). */
    nixl_b_params_t backendParams;
    nixlAgent initiator;
    nixlAgent target;
    std::vector<uint8_t> src;
    std::vector<uint8_t> dst;

private:
    nixl_reg_dlist_t srcReg;
    nixl_reg_dlist_t dstReg;
    bool registered_ = false;
    bool targetRegistered_ = false;
};

using nixl_test::scopedEnv; // test/common: sets or unsets a variable for a scope

agentPair *agents = nullptr;
agentPair *telemetryAgents = nullptr; ///< initiator with telemetry on (NOP exporter)


/** A pair of agents made with NIXL_TRACE_BACKENDS=backends ("" = off). */
struct tracePair {
    std::string label; ///< "off" or the plugin's name
    std::unique_ptr<agentPair> pair;
    bool paced = false; ///< pause after every pace_every transfers (see the file comment)
    int eventsPerTransfer = 2; ///< the post span and its completion; + 3 with phases
    uint64_t transfers = 0; ///< every transfer posted, warm-up and Google Benchmark's trials too
};

/** Pacing of the paced cases: long enough for the writer (1 ms interval) to drain. */
constexpr uint64_t pace_every = 1024;
constexpr std::chrono::milliseconds pace_sleep{4};

std::vector<tracePair> tracePairs;

/** Names of the trace plugins in $NIXL_PLUGIN_DIR (libtrace_backend_<name>.so), sorted. */
std::vector<std::string>
tracePluginsPresent() {
    std::vector<std::string> names;
    const char *dir = std::getenv("NIXL_PLUGIN_DIR");
    if (dir == nullptr) {
        return names;
    }
    const std::string prefix = "libtrace_backend_";
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string f = e.path().filename().string();
        if (f.size() > prefix.size() + 3 && f.compare(0, prefix.size(), prefix) == 0 &&
            f.compare(f.size() - 3, 3, ".so") == 0) {
            names.push_back(f.substr(prefix.size(), f.size() - prefix.size() - 3));
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

void
agentCreate(benchmark::State &state) {
    const size_t n = static_cast<size_t>(state.range(0));
    nixl_xfer_dlist_t local = descList(agents->src, n);
    nixl_xfer_dlist_t remote = descList(agents->dst, n);
    std::memset(agents->dst.data(), 0, buffer_size);
    nixlAgent &a = agents->initiator;
    // Steady state: released handles are reused only after 1,024 later releases (the
    // agent's quarantine), so the pool is cycled past it once per size before the timing,
    // and every timed create then takes a pooled request grown to this size.
    static std::set<size_t> warmed;
    if (warmed.insert(n).second) {
        for (int i = 0; i < 1100; ++i) {
            nixlXferReqH *req = nullptr;
            if (a.createXferReq(NIXL_WRITE, local, remote, target_name, req) != NIXL_SUCCESS ||
                a.releaseXferReq(req) != NIXL_SUCCESS) {
                state.SkipWithError("createXferReq/releaseXferReq failed in the warm-up");
                return;
            }
        }
    }

    const uint64_t before = alloc_count.load(std::memory_order_relaxed);
    for (auto _ : state) {
        nixlXferReqH *req = nullptr;
        nixl_status_t st = a.createXferReq(NIXL_WRITE, local, remote, target_name, req);
        if (st != NIXL_SUCCESS) {
            state.SkipWithError("createXferReq failed");
            break;
        }
        st = a.postXferReq(req);
        if (st >= 0) {
            do {
                st = a.getXferStatus(req);
            } while (st == NIXL_IN_PROG);
        }
        nixl_status_t rst = a.releaseXferReq(req);
        if (st != NIXL_SUCCESS || rst != NIXL_SUCCESS) {
            state.SkipWithError("transfer or releaseXferReq failed");
            break;
        }
    }
    setAllocCounter(state, alloc_count.load(std::memory_order_relaxed) - before);
    if (!verify(agents->src, agents->dst, n)) {
        state.SkipWithError("destination does not hold the written data");
    }
}

/** What the agent_prepped_clock2 loop's clock reads summed to (kept, so they stay reads). */
std::atomic<uint64_t> clockSink{0};

// ClockReads is a template parameter so that every other case times the loop it always timed,
// without even a test of it.
template<bool ClockReads = false>
void
preppedOn(benchmark::State &state, agentPair *agents, tracePair *traced = nullptr) {
    const size_t n = static_cast<size_t>(state.range(0));
    nixl_xfer_dlist_t local = descList(agents->src, n);
    nixl_xfer_dlist_t remote = descList(agents->dst, n);
    std::memset(agents->dst.data(), 0, buffer_size);
    nixlAgent &a = agents->initiator;

    nixlDlistH *local_h = nullptr;
    nixlDlistH *remote_h = nullptr;
    nixlXferReqH *req = nullptr;
    std::vector<int> indices;
    for (size_t i = 0; i < n; ++i) {
        indices.push_back(static_cast<int>(i));
    }
    if (a.prepXferDlist(NIXL_INIT_AGENT, local, local_h) != NIXL_SUCCESS ||
        a.prepXferDlist(agents->targetName, remote, remote_h) != NIXL_SUCCESS ||
        a.makeXferReq(NIXL_WRITE, local_h, indices, remote_h, indices, req) != NIXL_SUCCESS) {
        state.SkipWithError("prepXferDlist or makeXferReq failed");
    } else {
        // Warm-up outside the count: first-use allocations (a trace plugin's per-thread buffer)
        // are not per-transfer costs.
        for (int i = 0; i < 8; ++i) {
            nixl_status_t st = a.postXferReq(req);
            while (st == NIXL_IN_PROG) {
                st = a.getXferStatus(req);
            }
        }
        const bool paced = traced != nullptr && traced->paced;
        uint64_t n_done = 0;
        const uint64_t before = alloc_count.load(std::memory_order_relaxed);
        uint64_t clockSum = 0;
        for (auto _ : state) {
            nixlFastClock::ticks_t entry = 0;
            if constexpr (ClockReads) {
                entry = nixlFastClock::now();
            }
            nixl_status_t st = a.postXferReq(req);
            if constexpr (ClockReads) {
                clockSum += nixlFastClock::now() - entry;
            }
            if (st >= 0) {
                do {
                    st = a.getXferStatus(req);
                } while (st == NIXL_IN_PROG);
            }
            if (st != NIXL_SUCCESS) {
                state.SkipWithError("transfer failed");
                break;
            }
            if (paced && ++n_done % pace_every == 0) [[unlikely]] {
                state.PauseTiming();
                std::this_thread::sleep_for(pace_sleep); // pacing, not synchronisation
                state.ResumeTiming();
            }
        }
        setAllocCounter(state, alloc_count.load(std::memory_order_relaxed) - before);
        clockSink.fetch_add(clockSum, std::memory_order_relaxed);
        if (traced != nullptr) {
            traced->transfers += 8 + state.iterations();
        }
        if (!verify(agents->src, agents->dst, n)) {
            state.SkipWithError("destination does not hold the written data");
        }
    }
    if (req != nullptr) {
        a.releaseXferReq(req);
    }
    if (local_h != nullptr) {
        a.releasedDlistH(local_h);
    }
    if (remote_h != nullptr) {
        a.releasedDlistH(remote_h);
    }
}

void
agentPrepped(benchmark::State &state) {
    preppedOn(state, agents);
}

void
agentPreppedClock2(benchmark::State &state) {
    preppedOn<true>(state, agents);
}

void
agentPreppedTelemetry(benchmark::State &state) {
    preppedOn(state, telemetryAgents);
}

// ---- reporting ----------------------------------------------------------------------------------

struct result_t {
    double nsSum = 0;
    double allocsSum = 0;
    int runs = 0;
    bool failed = false;
};

/** The console reporter, also keeping every run's time and allocation count for the ratios. */
class collectingReporter : public benchmark::ConsoleReporter {
public:
    explicit collectingReporter(OutputOptions opts) : benchmark::ConsoleReporter(opts) {}

    void
    ReportRuns(const std::vector<Run> &runs) override {
        for (const Run &run : runs) {
            if (run.run_type != Run::RT_Iteration) {
                continue;
            }
            result_t &r = results[run.benchmark_name()];
            if (run.error_occurred) {
                r.failed = true;
                continue;
            }
            r.nsSum += run.GetAdjustedRealTime();
            auto it = run.counters.find("allocs_per_iter");
            if (it != run.counters.end()) {
                r.allocsSum += it->second.value;
            }
            r.runs++;
        }
        benchmark::ConsoleReporter::ReportRuns(runs);
    }

    std::map<std::string, result_t> results;
};

enum class lookup_t { FOUND, MISSING, FAILED };

lookup_t
lookup(const collectingReporter &rep, const std::string &name, double &ns, double &allocs) {
    auto it = rep.results.find(name);
    if (it == rep.results.end()) {
        return lookup_t::MISSING;
    }
    if (it->second.failed || it->second.runs == 0) {
        return lookup_t::FAILED;
    }
    ns = it->second.nsSum / it->second.runs;
    allocs = it->second.allocsSum / it->second.runs;
    return lookup_t::FOUND;
}

void
printCell(bool found, double ns) {
    if (found) {
        std::printf("%14.1f ", ns);
    } else {
        std::printf("%14s ", "-");
    }
}

/** Prints the ratio table; returns false when a benchmark failed or the prepped path allocated. */
bool
printRatios(const collectingReporter &rep) {
    bool good = true;
    std::printf("\nagent overhead vs. the same calls made directly on the TEST plugin "
                "(real ns per transfer, mean of runs)\n");
    std::printf("%-6s %14s %14s %8s   %14s %14s %8s %14s\n",
                "descs",
                "agent_create",
                "direct_create",
                "ratio",
                "agent_prepped",
                "direct_prepped",
                "ratio",
                "prepped allocs");
    for (const auto &[name, r] : rep.results) {
        if (r.failed) {
            std::printf("%s failed\n", name.c_str());
            good = false;
        }
    }
    for (int n : desc_counts) {
        // Appended, not "/" + to_string(n): g++ 12 -O3 reports a false -Wrestrict there.
        std::string arg = "/";
        arg += std::to_string(n);
        double ns[4] = {0, 0, 0, 0};
        double allocs[4] = {0, 0, 0, 0};
        const char *names[4] = {"agent_create", "direct_create", "agent_prepped", "direct_prepped"};
        bool found[4];
        for (int i = 0; i < 4; ++i) {
            found[i] = lookup(rep, names[i] + arg, ns[i], allocs[i]) == lookup_t::FOUND;
        }
        std::printf("%-6d", n);
        for (int pair = 0; pair < 2; ++pair) {
            const int a = 2 * pair;
            const int d = a + 1;
            std::printf(pair == 0 ? " " : "   ");
            printCell(found[a], ns[a]);
            printCell(found[d], ns[d]);
            if (found[a] && found[d] && ns[d] > 0) {
                std::printf("%8.2f", ns[a] / ns[d]);
            } else {
                std::printf("%8s", "-");
            }
        }
        if (found[2]) {
            std::printf(" %14.3f\n", allocs[2]);
            if (allocs[2] != 0.0) {
                std::printf("       agent_prepped/%d allocates on the hot path (%.3f per "
                            "transfer)\n",
                            n,
                            allocs[2]);
                good = false;
            }
        } else {
            std::printf(" %14s\n", "-");
        }
        // The agent's create path adds no allocation of its own to the plugin's (the handle
        // pool, the registry and the scratch keep their memory once warmed up).
        if (found[0] && found[1] && allocs[0] > allocs[1]) {
            std::printf("       agent_create/%d allocates %.3f per transfer, the plugin alone "
                        "%.3f\n",
                        n, allocs[0], allocs[1]);
            good = false;
        }
    }
    // Telemetry on: the staging queue must keep the prepped path free of allocations too.
    for (int n : desc_counts) {
        const std::string name = "agent_prepped_telemetry/" + std::to_string(n);
        double ns = 0;
        double allocs = 0;
        double base_ns = 0;
        double base_allocs = 0;
        if (lookup(rep, name, ns, allocs) != lookup_t::FOUND) {
            continue;
        }
        const bool base = lookup(rep, "agent_prepped/" + std::to_string(n), base_ns,
                                 base_allocs) == lookup_t::FOUND;
        std::printf("%s: %.1f ns per transfer (%.3f x agent_prepped), %.3f allocs\n",
                    name.c_str(), ns, base && base_ns > 0 ? ns / base_ns : 0.0, allocs);
        if (allocs != 0.0) {
            std::printf("       %s allocates on the hot path\n", name.c_str());
            good = false;
        }
    }
    // Tracing: each plugin against tracing off, measured in the same run.
    double off_ns = 0;
    double off_allocs = 0;
    const bool off = lookup(rep, "agent_prepped_trace_off/1", off_ns, off_allocs) ==
        lookup_t::FOUND;
    if (off) {
        std::printf("\ntracing, prepped path, 1 descriptor (real ns per transfer, mean of runs)\n");
        std::printf("%-36s %10s %10s %10s %10s\n", "case", "ns", "vs off", "added ns",
                    "allocs");
        std::printf("%-36s %10.1f %10.3f %10.1f %10.3f\n", "agent_prepped_trace_off/1", off_ns,
                    1.0, 0.0, off_allocs);
        if (off_allocs != 0.0) {
            std::printf("       agent_prepped_trace_off/1 allocates on the hot path\n");
            good = false;
        }
    }
    // A paced case is compared with tracing off paced the same way: on a VM the transfers after
    // a pause run slower with or without a trace plugin (see the file comment).
    double off_paced_ns = 0;
    double off_paced_allocs = 0;
    const bool off_paced = lookup(rep, "agent_prepped_trace_off_paced/1", off_paced_ns,
                                  off_paced_allocs) == lookup_t::FOUND;
    for (const tracePair &tp : tracePairs) {
        if (tp.label == "off") {
            continue;
        }
        const std::string name = "agent_prepped_trace_" + tp.label + "/1";
        const bool paced = tp.label.ends_with("_paced");
        const double base_ns = paced ? off_paced_ns : off_ns;
        double ns = 0;
        double allocs = 0;
        if (!(paced ? off_paced : off) || lookup(rep, name, ns, allocs) != lookup_t::FOUND) {
            continue;
        }
        std::printf("%-36s %10.1f %10.3f %10.1f %10.3f\n", name.c_str(), ns,
                    base_ns > 0 ? ns / base_ns : 0.0, ns - base_ns, allocs);
    }
    return good;
}

} // namespace

int
main(int argc, char **argv) {
    counting_thread = true; // Google Benchmark runs every case here (none uses ->Threads())
    nixlFastClock::init(); // agent_prepped_clock2 reads it, whatever the agents enable
    bool check = false;
    std::vector<char *> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--nixl_check") == 0) {
            check = true;
        } else {
            args.push_back(argv[i]);
        }
    }
    int bargc = static_cast<int>(args.size());
    args.push_back(nullptr);
    benchmark::Initialize(&bargc, args.data());
    if (benchmark::ReportUnrecognizedArguments(bargc, args.data())) {
        return 2;
    }

    // Tracing is off for every pair but the traced ones, whatever the environment says.
    auto trace_off = std::make_unique<scopedEnv>("NIXL_TRACE_BACKENDS", "");
    auto agent_pair = std::make_unique<agentPair>();
    if (!agent_pair->setup()) {
        return 1;
    }
    // Telemetry is configured when an agent is constructed; the variables are put back after.
    const char *old_exporter = std::getenv("NIXL_TELEMETRY_EXPORTER");
    const std::string saved_exporter = old_exporter != nullptr ? old_exporter : "";
    ::setenv("NIXL_TELEMETRY_EXPORTER", "nop", 1);
    nixlAgentConfig telemetry_cfg(false);
    telemetry_cfg.captureTelemetry = true;
    auto telemetry_pair =
        std::make_unique<agentPair>(telemetry_initiator_name, telemetry_target_name, telemetry_cfg);
    if (old_exporter != nullptr) {
        ::setenv("NIXL_TELEMETRY_EXPORTER", saved_exporter.c_str(), 1);
    } else {
        ::unsetenv("NIXL_TELEMETRY_EXPORTER");
    }
    if (!telemetry_pair->setup()) {
        return 1;
    }
    // The JSON trace plugin needs a directory; a fresh one, removed at the end, unless set.
    std::string trace_dir;
    if (std::getenv("NIXL_TRACE_DIR") == nullptr) {
        char tmpl[] = "/tmp/nixl_bench_trace_XXXXXX";
        if (::mkdtemp(tmpl) != nullptr) {
            trace_dir = tmpl;
            ::setenv("NIXL_TRACE_DIR", tmpl, 1);
        }
    }
    // The chrome plugin's writer: every millisecond (read once per process, by the first agent).
    std::unique_ptr<scopedEnv> chrome_flush;
    if (std::getenv("NIXL_TRACE_CHROME_FLUSH_MS") == nullptr) {
        chrome_flush = std::make_unique<scopedEnv>("NIXL_TRACE_CHROME_FLUSH_MS", "1");
    }
    // Per plugin two pairs: the agent's own spans (the TEST backends record no phases), and
    // the same with the TEST backends' trace phases (three marks per transfer); chrome has a
    // third, paced so that its events are written.
    // Tracing off and the do-nothing test plugin (core's share) are paced too, as the
    // baselines of chrome's paced case.
    std::vector<std::pair<std::string, std::string>> trace_labels = {{"off", ""},
                                                                      {"off_paced", ""}};
    for (const std::string &p : tracePluginsPresent()) {
        trace_labels.emplace_back(p, p);
        trace_labels.emplace_back(p + "_phases", p);
        if (p == "chrome" || p == "nopend") {
            trace_labels.emplace_back(p + "_paced", p);
        }
    }
    for (const auto &[label, plugin] : trace_labels) {
        // Tracing is chosen when an agent is constructed.
        scopedEnv backends("NIXL_TRACE_BACKENDS", plugin.c_str());
        tracePair tp{label,
                     std::make_unique<agentPair>("bench_trace_" + label + "_initiator",
                                                 "bench_trace_" + label + "_target")};
        const bool phases = label.size() > 7 && label.ends_with("_phases");
        tp.pair->backendParams["trace_phases"] = phases ? "true" : "false";
        tp.paced = label.ends_with("_paced");
        tp.eventsPerTransfer = phases ? 5 : 2;
        if (!tp.pair->setup()) {
            return 1;
        }
        tracePairs.push_back(std::move(tp));
    }
    if (!setupDirectPair()) {
        return 1;
    }
    agents = agent_pair.get();
    telemetryAgents = telemetry_pair.get();

    struct entry_t {
        const char *name;
        void (*fn)(benchmark::State &);
    };
    const entry_t entries[] = {
        {"agent_create", agentCreate},
        {"direct_create", directCreate},
        {"agent_prepped", agentPrepped},
        {"direct_prepped", directPrepped},
        {"agent_prepped_telemetry", agentPreppedTelemetry},
    };
    for (const entry_t &e : entries) {
        benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(e.name, e.fn);
        for (int n : desc_counts) {
            b->Arg(n);
        }
        b->Unit(benchmark::kNanosecond);
    }
    benchmark::RegisterBenchmark("agent_prepped_clock2", agentPreppedClock2)
        ->Arg(1)
        ->Unit(benchmark::kNanosecond);
    for (tracePair &tp : tracePairs) {
        agentPair *pair = tp.pair.get();
        tracePair *traced = &tp;
        benchmark::RegisterBenchmark(
            ("agent_prepped_trace_" + tp.label).c_str(),
            [pair, traced](benchmark::State &state) { preppedOn(state, pair, traced); })
            ->Arg(1)
            ->Unit(benchmark::kNanosecond);
    }

    setRegisterDirectEngine(directOps(), directEngine());
    for (const entry_t &e : {entry_t{"agent_register", agentRegisterMany},
                             entry_t{"direct_register", directRegisterMany}}) {
        benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(e.name, e.fn);
        for (int n : register_counts) {
            b->Arg(n);
        }
        b->Unit(benchmark::kMillisecond);
    }

    collectingReporter reporter(isatty(STDOUT_FILENO) ?
                                    benchmark::ConsoleReporter::OO_ColorTabular :
                                    benchmark::ConsoleReporter::OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    const bool good = printRatios(reporter);
    printRegisterTable([&reporter](const std::string &name, double &ms) {
        double allocs = 0; // the registration runs report in milliseconds (their unit)
        return lookup(reporter, name, ms, allocs) == lookup_t::FOUND;
    });
    benchmark::Shutdown();

    agents = nullptr;
    telemetryAgents = nullptr;
    releaseRegisterAgent();
    setRegisterDirectEngine(nullptr, nullptr);
    releaseDirectPair();
    // What each pair emitted, before the pairs go.
    std::vector<std::tuple<std::string, std::string, uint64_t>> emitted; // label, agent, events
    for (const tracePair &tp : tracePairs) {
        if (tp.label.starts_with("chrome")) {
            emitted.emplace_back(tp.label, "bench_trace_" + tp.label + "_initiator",
                                 tp.transfers * static_cast<uint64_t>(tp.eventsPerTransfer));
        }
    }
    tracePairs.clear(); // trace plugins flush and close their files here
    telemetry_pair.reset();
    agent_pair.reset();
    trace_off.reset();
    chrome_flush.reset();
    const char *dir_now = std::getenv("NIXL_TRACE_DIR");
    if (!emitted.empty() && dir_now != nullptr) {
        const traceFileCounts files = countTraceFiles(dir_now);
        std::printf("\nchrome trace files (%s): transfer events written of those emitted "
                    "(the rest were dropped: the writer fell behind)\n", dir_now);
        std::printf("%-36s %14s %14s %9s\n", "case", "emitted", "written", "written%");
        for (const auto &[label, agent, n] : emitted) {
            const auto it = files.transferEvents.find(agent);
            const uint64_t w = it == files.transferEvents.end() ? 0 : it->second;
            std::printf("%-36s %14llu %14llu %8.1f%%\n",
                        ("agent_prepped_trace_" + label + "/1").c_str(),
                        static_cast<unsigned long long>(n), static_cast<unsigned long long>(w),
                        n != 0 ? 100.0 * static_cast<double>(w) / static_cast<double>(n) : 0.0);
        }
        std::printf("%-36s %14s %14llu (plugin records: one per span or mark call)\n",
                    "dropped (nixl.dropped_events)", "",
                    static_cast<unsigned long long>(files.dropped));
    }
    if (!trace_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(trace_dir, ec);
        ::unsetenv("NIXL_TRACE_DIR");
    }
    if (check && !good) {
        std::printf("agent_overhead: --nixl_check failed\n");
        return 1;
    }
    return 0;
}
