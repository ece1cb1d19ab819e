/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * telemetry_cost: what agent telemetry costs on the transfer path.
 *
 * Two UCX agents in this process; the initiator repeatedly posts one prepared NIXL_WRITE of
 * --descs descriptors of --size bytes (default one of 4 KiB) to the target and polls it to
 * completion. The same loop runs with the initiator's telemetry off, on with the NOP exporter,
 * and on with the BUFFER exporter (shared-memory ring in a temporary NIXL_TELEMETRY_DIR;
 * skipped with a note when this build's BUFFER exporter cannot start). All variants move the
 * same page-aligned buffers. Within each round the variants take turns in blocks of --block
 * transfers (256 by default), so load that changes within milliseconds hits all of them
 * alike. Reported per variant: the median, min and max of the rounds' ops/s, and the median
 * of the per-round ratios (a round's ops/s over the "off" variant's in the same round) and of
 * the per-round nanoseconds added per request (1/ops/s minus the "off" variant's, in the same
 * round), and the same from the calling thread's CPU time ("cpu ns", "cpu added": what the
 * transfer path itself spends, without the time the thread waited for a core on a loaded
 * machine or what background threads such as a trace plugin's writer do). "best ns" is the
 * fastest block of the whole run (wall-clock ns per request) and "best added" its excess over
 * the "off" variant's fastest block: on a shared machine a block of tens of microseconds often
 * runs undisturbed, so the minimum is the steadiest estimate of the undisturbed cost (use a
 * smaller --block when a request takes microseconds).
 * The variant "2 reads" has telemetry off and reads nixlFastClock::now() in the loop where
 * telemetry reads it, at the post's entry and at its return (the benchmark does it around
 * postXferReq): its "added" columns are what telemetry's two clock reads alone cost amid this
 * transfer path, so that "nop" minus "2 reads" is telemetry's own work. (A read amid real work
 * costs more than printClockCost's figure on some CPUs: the read is microcoded, and there the
 * front end stalls behind it whatever else is in flight.)
 * Per-request latency: every --lat-every'th turn (8 by default) each variant also runs one
 * block of the same size whose requests are timed one by one with nixlFastClock (one read per
 * request, back to back: a request's time runs from the previous one's completion to its own,
 * post and polls included). These timed blocks are not part of any figure above, so the means
 * are measured as before; "p50 ns", "p99 ns", "p99.9 ns" and "max ns" are the nearest-rank
 * quantiles of all of a variant's timed requests, and "/off" their ratio to the "off" variant's
 * (whose timed blocks ran interleaved with them). At most 4 Mi samples are kept per variant.
 * --trace NAME adds two variants with the initiator tracing to trace plugin NAME (e.g.
 * chrome, into a temporary NIXL_TRACE_DIR), UCX's trace phases included: "trace" (telemetry
 * off) and "tel+trace" (telemetry on, NOP exporter).
 *
 *   telemetry_cost [--rounds N] [--round-ms MS] [--block N] [--size BYTES] [--descs N]
 *                  [--lat-every N] [--trace NAME] [--quick]
 *
 * Exit status is non-zero when a transfer fails or the data did not arrive.
 */
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/fast_clock.h"
#include "nixl.h"

namespace {

struct options {
    int rounds = 20;
    int roundMs = 250;
    int block = 256; ///< transfers per turn of a variant
    size_t size = 4096; ///< bytes per descriptor
    size_t descs = 1; ///< descriptors per request
    std::string trace; ///< trace plugin of the tracing variants; empty: none
    int latEvery = 8; ///< every this many turns, one timed block per variant
};

/** Samples of per-request latency kept per variant (uint32 ticks: 16 MiB). */
constexpr size_t kMaxLatSamples = size_t{4} << 20;

/** Sets or unsets an environment variable. */
void
setVar(const char *name, const char *value) {
    if (value != nullptr) {
        ::setenv(name, value, 1);
    } else {
        ::unsetenv(name);
    }
}

/** One initiator/target pair with a prepared WRITE between them. */
struct pairRun {
    std::string variant;
    std::unique_ptr<nixlAgent> initiator;
    std::unique_ptr<nixlAgent> target;
    uint8_t *src = nullptr; ///< shared by all variants (same addresses, same page offsets)
    uint8_t *dst = nullptr;
    nixlXferReqH *req = nullptr;
    std::vector<double> opsPerSec;
    std::vector<double> ratios; ///< per cycle: this round / the "off" round of the cycle
    std::vector<double> addedNs; ///< per cycle: ns per request over the "off" round's
    double cpuSecs = 0; ///< the calling thread's CPU time in the current round's blocks
    std::vector<double> cpuNs; ///< per cycle: the calling thread's CPU ns per request
    std::vector<double> cpuAddedNs; ///< per cycle: cpuNs over the "off" round's
    double bestNs = 1e30; ///< the fastest block's wall-clock ns per request (all rounds)
    uint64_t ops = 0;
    bool failed = false;
    bool clockReads = false; ///< the "2 reads" variant: read the clock where telemetry does
    uint64_t clockSink = 0; ///< what those reads summed to, so they are not optimised away
    /** Per-request fast-clock ticks of the timed blocks: sized (and its pages touched) before
     *  the rounds, so no timed request pays for a reallocation or a page fault. */
    std::vector<uint32_t> latTicks;
    size_t latCount = 0; ///< samples written to latTicks

    ~pairRun() {
        if (req != nullptr) {
            initiator->releaseXferReq(req);
        }
    }
};

/** Builds a pair; telemetry is configured through the environment the initiator sees. */
std::unique_ptr<pairRun>
makePair(const std::string &variant,
         uint8_t *src,
         uint8_t *dst,
         size_t size,
         size_t descs,
         bool telemetry,
         std::string &why) {
    auto p = std::make_unique<pairRun>();
    p->variant = variant;
    p->src = src;
    p->dst = dst;
    nixlAgentConfig icfg(false, false);
    icfg.captureTelemetry = telemetry;
    try {
        p->initiator = std::make_unique<nixlAgent>("init-" + variant, icfg);
    }
    catch (const std::exception &e) {
        why = e.what();
        return nullptr;
    }
    // The target never has telemetry nor tracing: only the initiator's path is measured.
    setVar("NIXL_TELEMETRY_ENABLE", "false");
    const char *traceVar = ::getenv("NIXL_TRACE_BACKENDS");
    const std::string initTrace = traceVar != nullptr ? traceVar : "";
    setVar("NIXL_TRACE_BACKENDS", "");
    nixlAgentConfig tcfg(false, false);
    p->target = std::make_unique<nixlAgent>("target-" + variant, tcfg);
    setVar("NIXL_TELEMETRY_ENABLE", nullptr);
    setVar("NIXL_TRACE_BACKENDS", initTrace.c_str());

    nixlBackendH *bi = nullptr;
    nixlBackendH *bt = nullptr;
    if (p->initiator->createBackend("UCX", {}, bi) != NIXL_SUCCESS ||
        p->target->createBackend("UCX", {}, bt) != NIXL_SUCCESS) {
        why = "cannot create the UCX backend (is libplugin_UCX.so in NIXL_PLUGIN_DIR?)";
        return nullptr;
    }
    nixl_reg_dlist_t ri(DRAM_SEG);
    ri.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(p->src), size * descs, 0, ""));
    nixl_reg_dlist_t rt(DRAM_SEG);
    rt.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(p->dst), size * descs, 0, ""));
    if (p->initiator->registerMem(ri) != NIXL_SUCCESS ||
        p->target->registerMem(rt) != NIXL_SUCCESS) {
        why = "registerMem failed";
        return nullptr;
    }
    std::string md;
    std::string name;
    if (p->target->getLocalMD(md) != NIXL_SUCCESS ||
        p->initiator->loadRemoteMD(md, name) != NIXL_SUCCESS) {
        why = "metadata exchange failed";
        return nullptr;
    }
    nixl_xfer_dlist_t l(DRAM_SEG);
    nixl_xfer_dlist_t r(DRAM_SEG);
    for (size_t i = 0; i < descs; ++i) {
        l.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(p->src + i * size), size, 0));
        r.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(p->dst + i * size), size, 0));
    }
    if (p->initiator->createXferReq(NIXL_WRITE, l, r, name, p->req) != NIXL_SUCCESS) {
        why = "createXferReq failed";
        return nullptr;
    }
    return p;
}

/** Posts and polls one request; false (and a line) on failure. */
bool
oneTransfer(pairRun &p) {
    nixlFastClock::ticks_t entry = 0;
    if (p.clockReads) {
        entry = nixlFastClock::now();
    }
    nixl_status_t st = p.initiator->postXferReq(p.req);
    if (p.clockReads) {
        p.clockSink += nixlFastClock::now() - entry;
    }
    while (st == NIXL_IN_PROG) {
        st = p.initiator->getXferStatus(p.req);
    }
    if (st != NIXL_SUCCESS) {
        std::fprintf(stderr, "%s: transfer failed: %s\n", p.variant.c_str(),
                     nixlEnumStrings::statusStr(st).c_str());
        p.failed = true;
        return false;
    }
    return true;
}

/** CPU time of the calling thread, in seconds. */
double
threadCpuSecs() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/** Runs n transfers; returns the seconds they took, or a negative value on failure. Adds the
 *  calling thread's CPU time to p.cpuSecs. */
double
runBlock(pairRun &p, int n) {
    using clock = std::chrono::steady_clock;
    const double cpu0 = threadCpuSecs();
    const auto start = clock::now();
    for (int k = 0; k < n; ++k) {
        if (!oneTransfer(p)) {
            return -1;
        }
    }
    p.ops += static_cast<uint64_t>(n);
    const double wall = std::chrono::duration<double>(clock::now() - start).count();
    p.cpuSecs += threadCpuSecs() - cpu0;
    p.bestNs = std::min(p.bestNs, wall * 1e9 / n);
    return wall;
}

/** Runs n transfers, each timed with the fast clock (one read per request), into
 *  p.latTicks; counts toward no other figure. False on failure. */
bool
runTimedBlock(pairRun &p, int n) {
    nixlFastClock::ticks_t prev = nixlFastClock::now();
    for (int k = 0; k < n; ++k) {
        if (!oneTransfer(p)) {
            return false;
        }
        const nixlFastClock::ticks_t t = nixlFastClock::now();
        if (p.latCount < p.latTicks.size()) {
            const uint64_t d = t - prev;
            p.latTicks[p.latCount++] = d > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(d);
        }
        prev = t;
    }
    return true;
}

/** Nearest-rank quantiles of a variant's timed requests, in nanoseconds. */
struct latencyTails {
    double p50 = 0;
    double p99 = 0;
    double p999 = 0;
    double max = 0;
};

latencyTails
tailsOf(const pairRun &p) {
    std::vector<uint32_t> v(p.latTicks.begin(),
                            p.latTicks.begin() + static_cast<std::ptrdiff_t>(p.latCount));
    latencyTails t;
    if (v.empty()) {
        return t;
    }
    std::sort(v.begin(), v.end());
    // Ticks to ns with the clock's current (refined) rate: ps per tick in 32.32 fixed point.
    const double nsPerTick =
        static_cast<double>(nixlFastClock::psPerTickQ32()) / 4294967296.0 / 1000.0;
    const auto at = [&](double q) {
        const size_t rank = static_cast<size_t>(q * static_cast<double>(v.size()));
        return static_cast<double>(v[std::min(v.size() - 1, rank)]) * nsPerTick;
    };
    t.p50 = at(0.50);
    t.p99 = at(0.99);
    t.p999 = at(0.999);
    t.max = static_cast<double>(v.back()) * nsPerTick;
    return t;
}

/** Runs transfers for about ms milliseconds (the warm-up); returns ops/s, or a negative value
 *  on failure. */
double
runRound(pairRun &p, int ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    uint64_t n = 0;
    double secs = 0;
    while (std::chrono::steady_clock::now() < end) {
        const double t = runBlock(p, 64);
        if (t < 0) {
            return -1;
        }
        secs += t;
        n += 64;
    }
    return secs > 0 ? static_cast<double>(n) / secs : 0;
}

// A fixed chain of dependent multiply-adds (~150 ns), standing in for the transfer path's own
// work, so that the clock reads below are measured amid other instructions, not back to back.
uint64_t
busyWork(uint64_t x) {
    for (int i = 0; i < 100; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        asm volatile("" : "+r"(x));
    }
    return x;
}

/**
 * What one timestamp costs on this machine: ns per read of nixlFastClock::now() and of
 * steady_clock::now(), each interleaved with busyWork and taken as the best of 15 passes over
 * the cost of busyWork alone. Telemetry takes three per transfer (post entry, post return,
 * completion seen).
 */
void
printClockCost() {
    nixlFastClock::init();
    using clock = std::chrono::steady_clock;
    constexpr int n = 200000;
    double bare = 1e30, fast = 1e30, steady = 1e30;
    uint64_t x = 1, acc = 0;
    const auto pass = [&](auto &&body) {
        const auto t0 = clock::now();
        for (int i = 0; i < n; ++i) {
            body();
        }
        return std::chrono::duration<double, std::nano>(clock::now() - t0).count() / n;
    };
    for (int rep = 0; rep < 15; ++rep) {
        bare = std::min(bare, pass([&] { x = busyWork(x); }));
        fast = std::min(fast, pass([&] {
                            x = busyWork(x);
                            acc += nixlFastClock::now();
                        }));
        steady = std::min(steady, pass([&] {
                              x = busyWork(x);
                              acc += static_cast<uint64_t>(clock::now().time_since_epoch().count());
                          }));
    }
    std::printf("timestamp cost: nixlFastClock::now() %.1f ns (%s), steady_clock::now() %.1f ns "
                "[%llu]\n",
                fast - bare,
                nixlFastClock::source() == nixlFastClock::source_t::TSC ? "TSC" : "steady_clock",
                steady - bare, static_cast<unsigned long long>((acc ^ x) & 1));
}

double
median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.empty()) {
        return 0;
    }
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

} // namespace

int
main(int argc, char **argv) {
    options opt;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            opt.rounds = 2;
            opt.roundMs = 30;
        } else if (a == "--rounds" && i + 1 < argc) {
            opt.rounds = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--round-ms" && i + 1 < argc) {
            opt.roundMs = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--block" && i + 1 < argc) {
            opt.block = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--size" && i + 1 < argc) {
            opt.size = static_cast<size_t>(std::max(1L, std::atol(argv[++i])));
        } else if (a == "--descs" && i + 1 < argc) {
            opt.descs = static_cast<size_t>(std::max(1L, std::atol(argv[++i])));
        } else if (a == "--lat-every" && i + 1 < argc) {
            opt.latEvery = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--trace" && i + 1 < argc) {
            opt.trace = argv[++i];
        } else {
            std::fprintf(stderr,
                         "usage: %s [--rounds N] [--round-ms MS] [--block N] [--size BYTES] "
                         "[--descs N] [--lat-every N] [--trace NAME] [--quick]\n",
                         argv[0]);
            return 2;
        }
    }
    for (const char *v : {"NIXL_TELEMETRY_ENABLE", "NIXL_TELEMETRY_EXPORTER", "NIXL_TELEMETRY_DIR",
                          "NIXL_TELEMETRY_ENABLED_METRICS"}) {
        setVar(v, nullptr);
    }
    setVar("NIXL_TRACE_BACKENDS", ""); // set but empty: off, also under Nsight Systems
    nixlFastClock::init(); // the "2 reads" variant reads the clock before any agent exists

    // One page-aligned source and destination for every variant: buffers of their own would sit
    // at different page offsets and cost differently to copy, which is a bigger difference than
    // the one measured here.
    const size_t total = opt.size * opt.descs;
    const size_t bytes = (total + 4095) / 4096 * 4096;
    std::unique_ptr<uint8_t, decltype(&std::free)> src(
        static_cast<uint8_t *>(std::aligned_alloc(4096, bytes)), &std::free);
    std::unique_ptr<uint8_t, decltype(&std::free)> dst(
        static_cast<uint8_t *>(std::aligned_alloc(4096, bytes)), &std::free);
    if (!src || !dst) {
        std::fprintf(stderr, "cannot allocate %zu bytes\n", bytes);
        return 1;
    }
    for (size_t i = 0; i < total; ++i) {
        src.get()[i] = static_cast<uint8_t>(i * 131 + 7);
    }

    std::vector<std::unique_ptr<pairRun>> pairs;
    std::string why;
    auto off = makePair("off", src.get(), dst.get(), opt.size, opt.descs, false, why);
    if (!off) {
        std::fprintf(stderr, "telemetry off: %s\n", why.c_str());
        return 1;
    }
    pairs.push_back(std::move(off));

    auto reads = makePair("2 reads", src.get(), dst.get(), opt.size, opt.descs, false, why);
    if (!reads) {
        std::fprintf(stderr, "telemetry off, two clock reads: %s\n", why.c_str());
        return 1;
    }
    reads->clockReads = true;
    pairs.push_back(std::move(reads));

    setVar("NIXL_TELEMETRY_EXPORTER", "nop");
    auto nop = makePair("nop", src.get(), dst.get(), opt.size, opt.descs, true, why);
    if (!nop) {
        std::fprintf(stderr, "telemetry nop: %s\n", why.c_str());
        return 1;
    }
    pairs.push_back(std::move(nop));

    char dir_tmpl[] = "/tmp/nixl-telemetry-cost-XXXXXX";
    const char *dir = ::mkdtemp(dir_tmpl);
    if (dir != nullptr) {
        setVar("NIXL_TELEMETRY_EXPORTER", "BUFFER");
        setVar("NIXL_TELEMETRY_DIR", dir);
        auto buffer = makePair("buffer", src.get(), dst.get(), opt.size, opt.descs, true, why);
        if (buffer) {
            pairs.push_back(std::move(buffer));
        } else {
            std::printf("note: BUFFER variant skipped: %s\n", why.c_str());
        }
    }
    setVar("NIXL_TELEMETRY_EXPORTER", nullptr);
    setVar("NIXL_TELEMETRY_DIR", nullptr);

    char trace_tmpl[] = "/tmp/nixl-trace-cost-XXXXXX";
    const char *traceDir = nullptr;
    if (!opt.trace.empty()) {
        traceDir = ::mkdtemp(trace_tmpl);
        if (traceDir == nullptr) {
            std::fprintf(stderr, "cannot create a trace directory\n");
            return 1;
        }
        setVar("NIXL_TRACE_DIR", traceDir);
        setVar("NIXL_TRACE_BACKENDS", opt.trace.c_str());
        auto trace = makePair("trace", src.get(), dst.get(), opt.size, opt.descs, false, why);
        setVar("NIXL_TELEMETRY_EXPORTER", "nop");
        auto both = trace ? makePair("tel+trace", src.get(), dst.get(), opt.size, opt.descs, true,
                                     why) :
                            nullptr;
        setVar("NIXL_TELEMETRY_EXPORTER", nullptr);
        setVar("NIXL_TRACE_BACKENDS", "");
        if (!trace || !both) {
            std::fprintf(stderr, "tracing to %s: %s\n", opt.trace.c_str(), why.c_str());
            return 1;
        }
        pairs.push_back(std::move(trace));
        pairs.push_back(std::move(both));
    }

    // Warm-up round for each (connection setup, caches), not counted.
    for (auto &p : pairs) {
        if (runRound(*p, std::max(10, opt.roundMs / 5)) < 0) {
            return 1;
        }
        p->ops = 0;
        p->bestNs = 1e30;
        p->latTicks.assign(kMaxLatSamples, 0);
    }
    // A round lasts about round-ms per variant. Within it the variants take turns in blocks of
    // opt.block transfers (tens of microseconds to a millisecond), rotating which goes first, so
    // that load changing on the scale of milliseconds (our shared VM's does) hits every variant
    // alike; a round's ops/s for a variant is its transfers over its own time in that round.
    const int kBlock = opt.block;
    for (int r = 0; r < opt.rounds; ++r) {
        std::vector<double> secs(pairs.size(), 0.0);
        std::vector<uint64_t> ops(pairs.size(), 0);
        for (auto &p : pairs) {
            p->cpuSecs = 0;
        }
        const auto roundEnd = std::chrono::steady_clock::now() +
            std::chrono::milliseconds(opt.roundMs * static_cast<int>(pairs.size()));
        for (size_t turn = 0; std::chrono::steady_clock::now() < roundEnd; ++turn) {
            for (size_t k = 0; k < pairs.size(); ++k) {
                const size_t v = (turn + k) % pairs.size();
                const double t = runBlock(*pairs[v], kBlock);
                if (t < 0) {
                    return 1;
                }
                secs[v] += t;
                ops[v] += kBlock;
            }
            // The timed blocks, in the same rotation, after the measured ones of this turn.
            if (turn % static_cast<size_t>(opt.latEvery) == 0) {
                for (size_t k = 0; k < pairs.size(); ++k) {
                    if (!runTimedBlock(*pairs[(turn + k) % pairs.size()], kBlock)) {
                        return 1;
                    }
                }
            }
        }
        for (size_t v = 0; v < pairs.size(); ++v) {
            pairs[v]->opsPerSec.push_back(static_cast<double>(ops[v]) / secs[v]);
        }
        const double base_round = pairs[0]->opsPerSec.back();
        for (size_t v = 0; v < pairs.size(); ++v) {
            pairs[v]->cpuNs.push_back(pairs[v]->cpuSecs * 1e9 / static_cast<double>(ops[v]));
        }
        for (auto &p : pairs) {
            p->ratios.push_back(p->opsPerSec.back() / base_round);
            p->addedNs.push_back(1e9 / p->opsPerSec.back() - 1e9 / base_round);
            p->cpuAddedNs.push_back(p->cpuNs.back() - pairs[0]->cpuNs.back());
        }
    }

    printClockCost();
    int rc = 0;
    const double base = median(pairs[0]->opsPerSec);
    std::printf("UCX WRITE of %zu x %zu bytes per request, %d rounds x %d ms per variant\n",
                opt.descs, opt.size, opt.rounds, opt.roundMs);
    std::printf("%-9s %14s %14s %14s %12s %12s %10s %10s %10s %10s %10s\n", "variant",
                "median ops/s", "min ops/s", "max ops/s", "median/off", "round ratio", "ns added",
                "cpu ns", "cpu added", "best ns", "best added");
    for (auto &p : pairs) {
        const auto [mn, mx] = std::minmax_element(p->opsPerSec.begin(), p->opsPerSec.end());
        const double med = median(p->opsPerSec);
        std::printf("%-9s %14.0f %14.0f %14.0f %12.3f %12.3f %10.1f %10.1f %10.1f %10.1f %10.1f\n",
                    p->variant.c_str(), med, *mn, *mx, base > 0 ? med / base : 0.0,
                    median(p->ratios), median(p->addedNs), median(p->cpuNs),
                    median(p->cpuAddedNs), p->bestNs, p->bestNs - pairs[0]->bestNs);
        // Each variant proves its own delivery: clear the shared target, one more transfer.
        std::memset(p->dst, 0, total);
        nixl_status_t st = p->initiator->postXferReq(p->req);
        while (st == NIXL_IN_PROG) {
            st = p->initiator->getXferStatus(p->req);
        }
        if (p->clockReads && p->clockSink == 0) {
            std::fprintf(stderr, "%s: the clock did not advance over a post\n",
                         p->variant.c_str());
            rc = 1;
        }
        if (st != NIXL_SUCCESS || std::memcmp(p->src, p->dst, total) != 0) {
            std::fprintf(stderr, "%s: the target does not hold the source bytes\n",
                         p->variant.c_str());
            rc = 1;
        }
    }
    const latencyTails offTails = tailsOf(*pairs[0]);
    std::printf("per-request latency, every request of one block in %d per variant (%s clock)\n",
                opt.latEvery,
                nixlFastClock::source() == nixlFastClock::source_t::TSC ? "TSC" : "steady_clock");
    std::printf("%-9s %10s %10s %10s %10s %10s %9s %9s %9s %9s\n", "variant", "samples",
                "p50 ns", "p99 ns", "p99.9 ns", "max ns", "p50/off", "p99/off", "p99.9/off",
                "max/off");
    const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    for (auto &p : pairs) {
        const latencyTails t = tailsOf(*p);
        std::printf("%-9s %10zu %10.1f %10.1f %10.1f %10.1f %9.3f %9.3f %9.3f %9.3f\n",
                    p->variant.c_str(), p->latCount, t.p50, t.p99, t.p999, t.max,
                    ratio(t.p50, offTails.p50), ratio(t.p99, offTails.p99),
                    ratio(t.p999, offTails.p999), ratio(t.max, offTails.max));
        if (p->latCount == 0) {
            std::fprintf(stderr, "%s: no request was timed\n", p->variant.c_str());
            rc = 1;
        }
    }
    pairs.clear(); // agents go (final flushes) before the ring directory
    for (const char *d : {dir, traceDir}) {
        if (d != nullptr) {
            std::error_code ec;
            std::filesystem::remove_all(d, ec);
        }
    }
    return rc;
}
