/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Cross-process SPSC ring benchmark: 16-byte events from a producer process to a consumer
// process through files in /dev/shm, each process pinned to its own core.
//
//   (a) ours:  nixlSharedRing (src/utils/common/shared_ring.h): padded positions, cached
//              opposing position and mask;
//   (b) naive: the same algorithm without padding or caching (both positions on one line, the
//              opposing position loaded on every call), i.e. NIXL's layout version 4;
//   (c) boost: boost::lockfree::spsc_queue with a compile-time capacity, placement-new'ed into
//              the shared mapping;
//   and, for information, ours-b: ours with the consumer draining up to 256 events per
//   popBatch (one read_pos store per batch). The ratios compare (a) with (b) and (c).
//
// Throughput: N events one push/pop at a time, M events/s from the producer's first timed push to
// the consumer's last pop, after an untimed warm-up of two passes over the ring; a side that finds
// the ring full or empty backs off exponentially (see waitPolicy). Latency: two rings,
// ping-pong, mean round trip, spin-waiting. Every run checks that all
// events arrived in order with the right checksum; --quick does only that on small counts (a
// meson test). Usage: ring_bench [--quick] [--events N] [--round_trips N] [--runs R]
//   [--batches 1,16,256] [--json]
//
// --batches B,...: the sweep's x axis, events per batch. Throughput: the consumer takes up to B
// events per call (ours: popBatch, boost: pop(T *, n); the naive ring has no batch call, so its
// consumer makes B pop calls). Round trip: each ping carries B events and the pong returns B, and
// every round trip is timed (p50, p99). Default: 1 only, the classic run above. --json prints one
// JSON object per batch on stdout (ours; naive and boost under "peers"), the text goes to stderr;
// benchmark/plot.py draws it. ours-b is not run with --batches: it is ours at B = 256.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/lockfree/spsc_queue.hpp>

#include "common/shared_ring.h"

namespace {

struct benchEvent {
    uint32_t type;
    uint32_t pad;
    uint64_t value;
};
static_assert(sizeof(benchEvent) == 16);

constexpr uint64_t kCapacity = 65536;
constexpr size_t kMaxBatch = 4096;

// The human-readable output: stdout, or stderr when stdout carries --json.
FILE *text = stdout;

uint64_t
nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Maps a /dev/shm file of the given size; create sizes and zeroes it.
void *
mapFile(const std::string &path, size_t bytes, bool create) {
    const int fd = ::open(path.c_str(), create ? (O_CREAT | O_RDWR | O_TRUNC) : O_RDWR, 0600);
    if (fd < 0) {
        std::perror(path.c_str());
        std::exit(3);
    }
    if (create && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        std::perror("ftruncate");
        std::exit(3);
    }
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(3);
    }
    return p;
}

// (a) ours.
class oursRing {
public:
    oursRing(const std::string &path, bool create) {
        std::string error;
        ring_ = create ? nixlSharedRing<benchEvent>::create(path, kCapacity, error, 0600) :
                         nixlSharedRing<benchEvent>::attach(path, error);
        if (!ring_) {
            std::fprintf(stderr, "ring_bench: %s\n", error.c_str());
            std::exit(3);
        }
    }

    bool
    push(const benchEvent &e) {
        return ring_->push(e);
    }

    bool
    pop(benchEvent &e) {
        return ring_->pop(e);
    }

    size_t
    popBatch(benchEvent *out, size_t n) {
        return ring_->popBatch(out, n);
    }

    size_t
    popUpTo(benchEvent *out, size_t n) {
        return ring_->popBatch(out, n);
    }

    static constexpr const char *kName = "ours";

private:
    std::unique_ptr<nixlSharedRing<benchEvent>> ring_;
};

// (a') ours, consumer draining with popBatch (one read_pos store per batch); informational.
class oursBatchRing : public oursRing {
public:
    using oursRing::oursRing;

    bool
    pop(benchEvent &e) {
        if (next_ == count_) {
            count_ = popBatch(buf_, kBatch);
            next_ = 0;
            if (count_ == 0) {
                return false;
            }
        }
        e = buf_[next_++];
        return true;
    }

    static constexpr const char *kName = "ours-b";

private:
    static constexpr size_t kBatch = 256;
    benchEvent buf_[kBatch];
    size_t next_ = 0;
    size_t count_ = 0;
};

// (b) naive: correct SPSC, but write and read share a cache line and every call loads the other
// side's position.
class naiveRing {
    struct layout {
        std::atomic<uint64_t> write;
        std::atomic<uint64_t> read;
        uint64_t mask;
        benchEvent slots[kCapacity];
    };

public:
    naiveRing(const std::string &path, bool create) {
        void *p = mapFile(path, sizeof(layout), create);
        if (create) {
            l_ = new (p) layout;
            l_->write.store(0, std::memory_order_relaxed);
            l_->read.store(0, std::memory_order_relaxed);
            l_->mask = kCapacity - 1;
        } else {
            l_ = static_cast<layout *>(p);
        }
    }

    ~naiveRing() {
        ::munmap(l_, sizeof(layout));
    }

    bool
    push(const benchEvent &e) {
        const uint64_t w = l_->write.load(std::memory_order_relaxed);
        const uint64_t next = (w + 1) & l_->mask;
        if (next == l_->read.load(std::memory_order_acquire)) {
            return false;
        }
        l_->slots[w] = e;
        l_->write.store(next, std::memory_order_release);
        return true;
    }

    bool
    pop(benchEvent &e) {
        const uint64_t r = l_->read.load(std::memory_order_relaxed);
        if (r == l_->write.load(std::memory_order_acquire)) {
            return false;
        }
        e = l_->slots[r];
        l_->read.store((r + 1) & l_->mask, std::memory_order_release);
        return true;
    }

    // No batch call in the naive ring: its consumer pops one event per call.
    size_t
    popUpTo(benchEvent *out, size_t n) {
        size_t got = 0;
        while (got < n && pop(out[got])) {
            ++got;
        }
        return got;
    }

    static constexpr const char *kName = "naive";

private:
    layout *l_ = nullptr;
};

// (c) boost: the compile-time-capacity queue keeps its storage inline (no pointers), so it can
// live in a mapping that sits at different addresses in the two processes.
class boostRing {
    using queue = boost::lockfree::spsc_queue<benchEvent, boost::lockfree::capacity<kCapacity>>;

public:
    boostRing(const std::string &path, bool create) {
        void *p = mapFile(path, sizeof(queue), create);
        q_ = create ? new (p) queue : static_cast<queue *>(p);
    }

    ~boostRing() {
        ::munmap(q_, sizeof(queue));
    }

    bool
    push(const benchEvent &e) {
        return q_->push(e);
    }

    bool
    pop(benchEvent &e) {
        return q_->pop(e);
    }

    size_t
    popUpTo(benchEvent *out, size_t n) {
        return q_->pop(out, n);
    }

    static constexpr const char *kName = "boost";

private:
    queue *q_ = nullptr;
};

// Shared control block (anonymous shared mapping created before fork).
struct control {
    std::atomic<int> consumerReady;
    std::atomic<int> consumerWarm;
    std::atomic<uint64_t> consumerEndNs;
    std::atomic<uint64_t> consumerSum;
    std::atomic<uint64_t> consumerCount;
    std::atomic<int> consumerOrdered;
};

struct cpuPlan {
    int producer = -1;
    int consumer = -1;
};

void
pinTo(int cpu) {
    if (cpu < 0) {
        return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
        std::perror("sched_setaffinity");
    }
}

// Set when producer and consumer must share one core: waiting then yields the core instead of
// spinning out a whole time slice.
bool sharedCore = false;

// How a side waits after a failed push (full) or pop (empty); the same for every variant.
//   THROUGHPUT: exponential backoff, 1, 2, 4 ... 64 PAUSE instructions per failed attempt, back
//     to 1 after a success (the policy of crossbeam's Backoff::spin). With a pure spin, a
//     consumer that has caught up re-reads the producer's position line after every single
//     event, which takes the line away from the producer on each push: every ring then runs at
//     the speed of that ping-pong (measured: ours and naive alike at 15-25 M events/s on our
//     2-vCPU VM, swinging between runs), and the benchmark measures the spin loop, not the ring.
//   LATENCY: one PAUSE per failed attempt, the usual spin-wait: a round trip must not sleep.
// A yield (sharedCore) would measure the scheduler, so it is only used on a single core.
enum class waitPolicy { THROUGHPUT, LATENCY };

inline void
relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

struct waiter {
    waitPolicy policy;
    unsigned step = 0;

    void
    wait() {
        if (sharedCore) {
            ::sched_yield();
            return;
        }
        const unsigned n = policy == waitPolicy::LATENCY ? 1u : 1u << (step < 6 ? step : 6);
        ++step;
        for (unsigned i = 0; i < n; ++i) {
            relax();
        }
    }

    void
    reset() {
        step = 0;
    }
};

uint64_t
checksumOf(const benchEvent &e) {
    return e.value * 0x9E3779B97F4A7C15ull + e.type;
}

control *
newControl() {
    void *p = ::mmap(nullptr, sizeof(control), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap control");
        std::exit(3);
    }
    return new (p) control{};
}

struct throughputResult {
    double meps = 0; // million events per second
    bool intact = false;
};

// Untimed events first: two passes over the ring fault in every page of both mappings.
constexpr uint64_t kWarmup = 2 * kCapacity;

// Forks the consumer process: the child pins itself to cpus.consumer, runs consumer() (which
// attaches its rings and then sets ctl->consumerReady) and exits; the parent pins itself to
// cpus.producer and returns the child's pid once the consumer is ready.
template<typename Consumer>
pid_t
forkConsumer(control *ctl, const cpuPlan &cpus, Consumer &&consumer) {
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::perror("fork");
        std::exit(3);
    }
    if (pid == 0) {
        pinTo(cpus.consumer);
        consumer();
        ::_exit(0);
    }
    pinTo(cpus.producer);
    while (ctl->consumerReady.load(std::memory_order_acquire) == 0) {
        ::sched_yield();
    }
    return pid;
}

template<typename Ring>
throughputResult
runThroughput(const std::string &dir, uint64_t events, size_t batch, const cpuPlan &cpus) {
    const uint64_t total = kWarmup + events;
    const std::string path = dir + "/nixl_ring_bench." + std::to_string(::getpid()) + "." +
        Ring::kName + ".tp";
    control *ctl = newControl();
    auto producer = std::make_unique<Ring>(path, true);
    const pid_t pid = forkConsumer(ctl, cpus, [&] {
        Ring consumer(path, false);
        ctl->consumerReady.store(1, std::memory_order_release);
        uint64_t sum = 0;
        uint64_t n = 0;
        int ordered = 1;
        benchEvent e{};
        std::vector<benchEvent> buf(batch);
        waiter w{waitPolicy::THROUGHPUT};
        const auto take = [&](const benchEvent &ev) {
            ordered &= ev.value == n ? 1 : 0;
            sum += checksumOf(ev);
            if (++n == kWarmup) {
                ctl->consumerWarm.store(1, std::memory_order_release);
            }
        };
        while (n < total) {
            // Batch 1 keeps the single-event pop (the classic run's numbers).
            const size_t got = batch == 1 ? (consumer.pop(e) ? 1 : 0) :
                                            consumer.popUpTo(buf.data(), batch);
            if (got == 0) {
                w.wait();
                continue;
            }
            w.reset();
            if (batch == 1) {
                take(e);
            } else {
                for (size_t k = 0; k < got; ++k) {
                    take(buf[k]);
                }
            }
        }
        ctl->consumerEndNs.store(nowNs(), std::memory_order_relaxed);
        ctl->consumerSum.store(sum, std::memory_order_relaxed);
        ctl->consumerCount.store(n, std::memory_order_relaxed);
        ctl->consumerOrdered.store(ordered, std::memory_order_release);
    });
    uint64_t sum = 0;
    waiter w{waitPolicy::THROUGHPUT};
    uint64_t start = 0;
    for (uint64_t i = 0; i < total;) {
        if (i == kWarmup && start == 0) {
            // Warm-up done (every page of both mappings touched, ring drained): start the clock.
            while (ctl->consumerWarm.load(std::memory_order_acquire) == 0) {
                w.wait();
            }
            w.reset();
            start = nowNs();
        }
        const benchEvent e{uint32_t(i % 21), 0, i};
        if (producer->push(e)) {
            w.reset();
            sum += checksumOf(e);
            ++i;
        } else {
            w.wait();
        }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    throughputResult r;
    r.intact = WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
        ctl->consumerOrdered.load(std::memory_order_acquire) == 1 &&
        ctl->consumerCount.load() == total && ctl->consumerSum.load() == sum;
    const uint64_t end = ctl->consumerEndNs.load();
    r.meps = end > start ? double(events) * 1e3 / double(end - start) : 0;
    producer.reset();
    ::unlink(path.c_str());
    ::munmap(ctl, sizeof(control));
    return r;
}

struct rttResult {
    double ns = 0;
    bool intact = false;
    std::vector<uint32_t> roundNs; // each round trip, when timed one by one
};

// Set by --batches: every round trip is timed on its own (p50, p99), at the price of two clock
// reads per round trip; the classic run times only the whole loop.
bool timeEachRound = false;

template<typename Ring>
rttResult
runRoundTrip(const std::string &dir, uint64_t rounds, size_t batch, const cpuPlan &cpus) {
    const std::string base =
        dir + "/nixl_ring_bench." + std::to_string(::getpid()) + "." + Ring::kName;
    const std::string ping = base + ".ping";
    const std::string pong = base + ".pong";
    control *ctl = newControl();
    auto out = std::make_unique<Ring>(ping, true);
    auto in = std::make_unique<Ring>(pong, true);
    const pid_t pid = forkConsumer(ctl, cpus, [&] {
        Ring rx(ping, false);
        Ring tx(pong, false);
        ctl->consumerReady.store(1, std::memory_order_release);
        std::vector<benchEvent> buf(batch);
        waiter w{waitPolicy::LATENCY};
        for (uint64_t n = 0; n < rounds; ++n) {
            for (size_t got = 0; got < batch;) {
                // Batch 1 keeps the single-event pop (the classic run's numbers).
                const size_t k = batch == 1 ? (rx.pop(buf[0]) ? 1 : 0) :
                                              rx.popUpTo(buf.data() + got, batch - got);
                if (k == 0) {
                    w.wait();
                }
                got += k;
            }
            for (size_t k = 0; k < batch; ++k) {
                while (!tx.push(buf[k])) {
                    w.wait();
                }
            }
        }
    });
    bool intact = true;
    rttResult r;
    if (timeEachRound) {
        r.roundNs.reserve(rounds);
    }
    std::vector<benchEvent> back(batch);
    waiter w{waitPolicy::LATENCY};
    const uint64_t start = nowNs();
    for (uint64_t i = 0; i < rounds; ++i) {
        const uint64_t t0 = timeEachRound ? nowNs() : 0;
        for (size_t k = 0; k < batch; ++k) {
            const benchEvent e{7, uint32_t(k), i};
            while (!out->push(e)) {
                w.wait();
            }
        }
        for (size_t got = 0; got < batch;) {
            const size_t k = batch == 1 ? (in->pop(back[0]) ? 1 : 0) :
                                          in->popUpTo(back.data() + got, batch - got);
            if (k == 0) {
                w.wait();
            }
            got += k;
        }
        if (timeEachRound) {
            r.roundNs.push_back(uint32_t(std::min<uint64_t>(nowNs() - t0, UINT32_MAX)));
        }
        for (size_t k = 0; k < batch; ++k) {
            intact &= back[k].value == i && back[k].type == 7 && back[k].pad == k;
        }
    }
    const uint64_t end = nowNs();
    int status = 0;
    ::waitpid(pid, &status, 0);
    r.intact = intact && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    r.ns = rounds > 0 ? double(end - start) / double(rounds) : 0;
    out.reset();
    in.reset();
    ::unlink(ping.c_str());
    ::unlink(pong.c_str());
    ::munmap(ctl, sizeof(control));
    return r;
}

double
median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct variantResult {
    const char *name;
    double meps; // median over runs
    double rttNs; // median over runs
    double bestMeps;
    double bestRttNs;
    bool intact;
    std::vector<double> runMeps; // per run, in run order
    std::vector<double> runRttNs;
    double rttP50Ns = 0; // over every timed round trip of every run (timeEachRound)
    double rttP99Ns = 0;
};

struct variant {
    const char *name;
    throughputResult (*throughput)(const std::string &, uint64_t, size_t, const cpuPlan &);
    rttResult (*roundTrip)(const std::string &, uint64_t, size_t, const cpuPlan &);
};

template<typename Ring>
variant
makeVariant() {
    return variant{Ring::kName, &runThroughput<Ring>, &runRoundTrip<Ring>};
}

// Runs are interleaved (ours, naive, boost, ours-b, then again), so a change in machine load
// hits every variant alike instead of whichever happened to run at that moment.
std::vector<variantResult>
runAll(const std::vector<variant> &variants,
       const std::string &dir,
       uint64_t events,
       uint64_t rounds,
       int runs,
       size_t batch,
       const cpuPlan &cpus) {
    std::vector<std::vector<double>> tp(variants.size());
    std::vector<std::vector<double>> rtt(variants.size());
    std::vector<std::vector<uint32_t>> each(variants.size());
    std::vector<bool> intact(variants.size(), true);
    for (int run = 0; run < runs; ++run) {
        for (size_t v = 0; v < variants.size(); ++v) {
            const auto t = variants[v].throughput(dir, events, batch, cpus);
            const auto l = variants[v].roundTrip(dir, rounds, batch, cpus);
            each[v].insert(each[v].end(), l.roundNs.begin(), l.roundNs.end());
            intact[v] = intact[v] && t.intact && l.intact;
            tp[v].push_back(t.meps);
            rtt[v].push_back(l.ns);
            std::fprintf(text, "  run %d %-6s batch %zu: %8.2f M events/s  %8.0f ns RTT  %s\n",
                         run + 1, variants[v].name, batch, t.meps, l.ns,
                         t.intact && l.intact ? "intact" : "CORRUPT");
            std::fflush(stdout);
        }
    }
    std::vector<variantResult> res;
    for (size_t v = 0; v < variants.size(); ++v) {
        res.push_back(variantResult{variants[v].name,
                                    median(tp[v]),
                                    median(rtt[v]),
                                    *std::max_element(tp[v].begin(), tp[v].end()),
                                    *std::min_element(rtt[v].begin(), rtt[v].end()),
                                    intact[v],
                                    tp[v],
                                    rtt[v]});
        std::vector<uint32_t> &e = each[v];
        std::sort(e.begin(), e.end());
        if (!e.empty()) {
            // Nearest rank: the smallest sample with at least q of all samples at or below it.
            const auto rank = [&](double q) {
                const size_t i = size_t(q * double(e.size()) + 0.999999);
                return double(e[std::min(e.size(), std::max<size_t>(i, 1)) - 1]);
            };
            res.back().rttP50Ns = rank(0.50);
            res.back().rttP99Ns = rank(0.99);
        }
    }
    return res;
}

cpuPlan
planCpus() {
    cpuPlan plan;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) != 0) {
        std::fprintf(text, "cpus: sched_getaffinity failed; processes are not pinned\n");
        return plan;
    }
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) {
            cpus.push_back(c);
        }
    }
    if (cpus.size() < 2) {
        std::fprintf(text, "cpus: only one core available (cpu %d): producer and consumer share it, "
                    "numbers are not meaningful\n",
                    cpus.empty() ? -1 : cpus[0]);
        plan.producer = plan.consumer = cpus.empty() ? -1 : cpus[0];
        sharedCore = true;
        return plan;
    }
    plan.producer = cpus[0];
    plan.consumer = cpus[1];
    std::fprintf(text, "cpus: producer pinned to cpu %d, consumer to cpu %d (%zu available)\n",
                plan.producer, plan.consumer, cpus.size());
    return plan;
}

// Parses "1,16,256" into batch sizes of 1..kMaxBatch; false on anything else.
bool
parseBatches(const std::string &list, std::vector<size_t> &out) {
    out.clear();
    size_t pos = 0;
    while (pos <= list.size()) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        const std::string item = list.substr(pos, comma - pos);
        char *end = nullptr;
        const unsigned long long v = std::strtoull(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1 || v > kMaxBatch) {
            return false;
        }
        out.push_back(size_t(v));
        pos = comma + 1;
    }
    return !out.empty();
}

// One JSON object (benchmark/plot.py's input) for one batch size: ours, the others as peers.
void
printJson(size_t batch, const std::vector<variantResult> &res) {
    const auto figures = [](const variantResult &r) {
        char buf[320];
        std::snprintf(buf, sizeof(buf),
                      "\"rate\":%.3f,\"rate_unit\":\"M events/s\",\"best_rate\":%.3f,"
                      "\"avg_us\":%.4f,\"p50_us\":%.4f,\"p99_us\":%.4f,\"intact\":%s",
                      r.meps, r.bestMeps, r.rttNs / 1e3, r.rttP50Ns / 1e3, r.rttP99Ns / 1e3,
                      r.intact ? "true" : "false");
        return std::string(buf);
    };
    std::printf("{\"bench\":\"ring_bench\",\"op\":\"16-byte events, cross-process\","
                "\"block\":%zu,\"xlabel\":\"events per batch\",\"batch\":%zu,\"path\":\"%s\",%s,"
                "\"peers\":[",
                batch, batch, res[0].name, figures(res[0]).c_str());
    for (size_t v = 1; v < res.size(); ++v) {
        std::printf("%s{\"name\":\"%s\",%s}", v > 1 ? "," : "", res[v].name,
                    figures(res[v]).c_str());
    }
    std::printf("]}\n");
    std::fflush(stdout);
}

// Prints the table and the ratios of ours to naive and boost; false when a variant lost data.
bool
report(const std::vector<variantResult> &res) {
    bool intact = true;
    std::fprintf(text, "\n%-8s %18s %18s %14s %14s  %s\n", "variant", "M events/s median",
                 "M events/s best", "RTT ns median", "RTT ns best", "data");
    for (const auto &r : res) {
        std::fprintf(text, "%-8s %18.2f %18.2f %14.0f %14.0f  %s\n", r.name, r.meps, r.bestMeps,
                     r.rttNs, r.bestRttNs, r.intact ? "intact" : "CORRUPT");
        intact &= r.intact;
    }
    const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    // Per-run ratios compare variants measured seconds apart: on a shared VM the speed of
    // cross-core traffic changes several-fold between minutes (vCPU placement on the host), and
    // the ratio of medians mixes such phases; the median of per-run ratios does not.
    const auto runRatio = [&](const std::vector<double> &a, const std::vector<double> &b,
                              bool inverse) {
        std::vector<double> r;
        for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
            r.push_back(inverse ? ratio(b[i], a[i]) : ratio(a[i], b[i]));
        }
        return median(r);
    };
    for (int other : {1, 2}) {
        std::fprintf(text,
                     "ours/%s: throughput %.2fx (best %.2fx, median of per-run ratios %.2fx), "
                     "RTT %.2fx faster (best %.2fx, per-run %.2fx)\n",
                     res[other].name, ratio(res[0].meps, res[other].meps),
                     ratio(res[0].bestMeps, res[other].bestMeps),
                     runRatio(res[0].runMeps, res[other].runMeps, false),
                     ratio(res[other].rttNs, res[0].rttNs),
                     ratio(res[other].bestRttNs, res[0].bestRttNs),
                     runRatio(res[0].runRttNs, res[other].runRttNs, true));
    }
    return intact;
}

} // namespace

int
main(int argc, char **argv) {
    bool quick = false;
    bool json = false;
    uint64_t events = 50'000'000;
    uint64_t rounds = 1'000'000;
    int runs = 5;
    std::string dir = "/dev/shm";
    std::vector<size_t> batches;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            quick = true;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--events" && i + 1 < argc) {
            events = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--round_trips" && i + 1 < argc) {
            rounds = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--runs" && i + 1 < argc) {
            runs = std::atoi(argv[++i]);
        } else if (a == "--dir" && i + 1 < argc) {
            dir = argv[++i];
        } else if (a == "--batches" && i + 1 < argc) {
            if (!parseBatches(argv[++i], batches)) {
                std::fprintf(stderr, "ring_bench: --batches '%s': want sizes 1..%zu, e.g. 1,16,256\n",
                             argv[i], kMaxBatch);
                return 2;
            }
        } else {
            std::fprintf(stderr,
                         "usage: %s [--quick] [--events N] [--round_trips N] [--runs R] "
                         "[--dir /dev/shm] [--batches 1,16,256] [--json]\n",
                         argv[0]);
            return 2;
        }
    }
    if (runs < 1) {
        std::fprintf(stderr, "ring_bench: --runs must be at least 1\n");
        return 2;
    }
    if (json) {
        text = stderr;
        if (batches.empty()) {
            batches = {1, 16, 256};
        }
    }
    if (quick) {
        // Enough to wrap a 65536-slot ring a few times; checks integrity, not speed.
        events = 300'000;
        rounds = 2'000;
        runs = 1;
    }
    std::fprintf(text, "ring_bench: 16-byte events, capacity %" PRIu64 ", %" PRIu64
                 " events, %" PRIu64 " round trips, %d run(s), files in %s%s\n"
                 "waiting: throughput 1..64 PAUSEs exponential backoff, round trip 1 PAUSE\n",
                 kCapacity, events, rounds, runs, dir.c_str(), quick ? " (quick)" : "");
    const cpuPlan cpus = planCpus();

    if (batches.empty()) {
        const std::vector<variant> variants = {makeVariant<oursRing>(), makeVariant<naiveRing>(),
                                               makeVariant<boostRing>(),
                                               makeVariant<oursBatchRing>()};
        if (!report(runAll(variants, dir, events, rounds, runs, 1, cpus))) {
            std::fprintf(text, "FAILED: a variant lost, reordered or corrupted events\n");
            return 1;
        }
        return 0;
    }
    timeEachRound = true;
    const std::vector<variant> variants = {makeVariant<oursRing>(), makeVariant<naiveRing>(),
                                           makeVariant<boostRing>()};
    bool intact = true;
    for (size_t batch : batches) {
        std::fprintf(text, "\n== batch %zu\n", batch);
        const std::vector<variantResult> res = runAll(variants, dir, events, rounds, runs, batch,
                                                      cpus);
        intact &= report(res);
        std::fprintf(text, "round trip p50/p99 ns: ours %.0f/%.0f, naive %.0f/%.0f, boost "
                     "%.0f/%.0f\n", res[0].rttP50Ns, res[0].rttP99Ns, res[1].rttP50Ns,
                     res[1].rttP99Ns, res[2].rttP50Ns, res[2].rttP99Ns);
        if (json) {
            printJson(batch, res);
        }
    }
    if (!intact) {
        std::fprintf(text, "FAILED: a variant lost, reordered or corrupted events\n");
        return 1;
    }
    return 0;
}
