/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// backend_bench: WRITE/READ bandwidth and latency through nixlAgent between two processes, for
// any backend plugin (UCX, LIBFABRIC, ...) with any backend parameters.
//
// The initiator (this process) re-executes itself as the target, which registers one buffer,
// hands its metadata over a socketpair and then serves (getNotifs in a loop: backends whose
// target must progress get it). For every operation and block size the initiator posts one
// prepared request of `batch` descriptors of `block` bytes again and again, for at least
// --min-ms, and reports GB/s (10^9 bytes of data per second), and the average, p50, p99, p99.9
// and max of one post-to-completion in microseconds.
//
//   NIXL_PLUGIN_DIR=build/src/plugins backend_bench --backend LIBFABRIC [--param provider=shm]
//       [--label lf-shm] [--ops WRITE,READ] [--blocks 4K,64K,1M,16M,64M] [--batch 1]
//       [--max-total 64M] [--min-ms 300] [--progress-thread 0|1] [--poll-yield 0|1]
//       [--csv | --json]
//   backend_bench --backend ... --pattern nixlbench [--iters 1000] [--rounds 3]
//       [--target-idle yes|no]: nixlbench's first-impression case (../tail_pattern.h): per
//       size, ascending, post-and-poll transfers with no warm-up, tails next to a bare
//       process_vm_writev paired with each transfer, the data verified.
//
// benchmark/backend_bench/backend_bench.sh runs it for LIBFABRIC/shm, LIBFABRIC/tcp and UCX
// next to fi_pingpong and prints the ratios.
//
// --poll-yield 1: both processes call sched_yield() after every poll (getXferStatus, getNotifs)
// that returned without the awaited event. With a backend whose target must progress
// (LIBFABRIC tcp;ofi_rxm without progress threads), two processes that only spin and share one
// CPU hand it to each other only when the scheduler preempts one (a tick, 4 ms here), so every
// operation takes milliseconds; yielding hands it over at once. Default 0 (spin). Not used by
// --pattern nixlbench (its loop is tail_pattern.h's).
//
// --json prints one JSON object per line (JSON Lines), one per op and block, for
// benchmark/plot.py; the raw-provider peer is measured by the script, not here, so "peers" is
// empty.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "nixl.h"
#include "../tail_pattern.h"

namespace {

using steady = std::chrono::steady_clock;

bool
writeAll(int fd, const char *p, size_t len) {
    while (len > 0) {
        ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

bool
readAll(int fd, char *p, size_t len) {
    while (len > 0) {
        ssize_t n = ::read(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

/** A length-prefixed message on the control socket. */
bool
putMsg(int fd, const std::string &s) {
    const uint64_t len = s.size();
    return writeAll(fd, reinterpret_cast<const char *>(&len), sizeof(len)) &&
        writeAll(fd, s.data(), s.size());
}

bool
getMsg(int fd, std::string &s) {
    uint64_t len = 0;
    if (!readAll(fd, reinterpret_cast<char *>(&len), sizeof(len)) || len > (1u << 30)) {
        return false;
    }
    s.resize(len);
    return readAll(fd, s.data(), len);
}

size_t
parseSize(const std::string &s) {
    char *end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    const char unit = end != nullptr ? *end : '\0';
    const unsigned shift = unit == 'K' || unit == 'k' ? 10 : unit == 'M' || unit == 'm' ? 20 :
        unit == 'G' || unit == 'g'                         ? 30 :
                                                             0;
    return static_cast<size_t>(v) << shift;
}

std::vector<std::string>
splitList(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

struct options {
    std::string backend = "LIBFABRIC";
    nixl_b_params_t params;
    std::string label;
    std::vector<std::string> ops{"WRITE", "READ"};
    std::vector<size_t> blocks{4096, 65536, 1 << 20, 16 << 20, 64 << 20};
    size_t batch = 1;
    size_t maxTotal = 64 << 20;
    int minMs = 300;
    bool progThread = false;
    /** sched_yield() after every unsuccessful poll, in both processes (see the top). */
    bool pollYield = false;
    bool csv = false;
    /** One JSON object per point and line (benchmark/plot.py reads it). */
    bool json = false;
    /** --pattern nixlbench (tail_pattern.h): short runs per size, ascending, tails. */
    bool nixlbench = false;
    /** --iters and --rounds of the pattern (the rest is filled in when it runs). */
    nixlBench::patternOptions pattern;
    /** The target blocks on its socket instead of calling getNotifs (nixlbench's target). */
    bool targetIdle = false;
};

void *
mapBuffer(size_t len) {
    void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    ::madvise(p, len, MADV_HUGEPAGE); // as the raw tools' allocators get where THP is on
    std::memset(p, 0x5a, len); // fault the pages in before timing
    return p;
}

bool
makeAgent(nixlAgent &agent, const options &o, void *buf, nixl_reg_dlist_t &reg) {
    nixlBackendH *be = nullptr;
    if (agent.createBackend(o.backend, o.params, be) != NIXL_SUCCESS) {
        std::fprintf(stderr, "backend_bench: cannot create backend %s\n", o.backend.c_str());
        return false;
    }
    reg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf), o.maxTotal, 0, ""));
    if (agent.registerMem(reg) != NIXL_SUCCESS) {
        std::fprintf(stderr, "backend_bench: registerMem failed\n");
        return false;
    }
    return true;
}

int
targetMain(int fd, const options &o) {
    nixlAgent agent("target", nixlAgentConfig(o.progThread));
    void *buf = mapBuffer(o.maxTotal);
    nixl_reg_dlist_t reg(DRAM_SEG);
    if (!makeAgent(agent, o, buf, reg)) {
        putMsg(fd, "err");
        return 1;
    }
    std::string md, peer, name;
    agent.getLocalMD(md);
    if (!putMsg(fd, std::to_string(reinterpret_cast<uintptr_t>(buf))) || !putMsg(fd, md) ||
        !getMsg(fd, peer) || agent.loadRemoteMD(peer, name) != NIXL_SUCCESS ||
        !putMsg(fd, "ready")) {
        return 1;
    }
    if (o.targetIdle) {
        struct pollfd pfd = {fd, POLLIN, 0};
        while (::poll(&pfd, 1, -1) < 0 && errno == EINTR) {
        }
        agent.deregisterMem(reg);
        return 0;
    }
    nixl_notifs_t notifs;
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (::poll(&pfd, 1, 0) != 0) {
            break; // "exit", or the initiator is gone
        }
        agent.getNotifs(notifs);
        if (o.pollYield && notifs.empty()) {
            ::sched_yield();
        }
        notifs.clear();
    }
    agent.deregisterMem(reg);
    return 0;
}

int
initiatorMain(const options &o) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        std::perror("socketpair");
        return 1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::fcntl(sv[1], F_SETFD, 0);
        std::vector<std::string> args = {"backend_bench", "--target", std::to_string(sv[1]),
                                         "--backend", o.backend, "--max-total",
                                         std::to_string(o.maxTotal), "--progress-thread",
                                         o.progThread ? "1" : "0", "--poll-yield",
                                         o.pollYield ? "1" : "0", "--target-idle",
                                         o.targetIdle ? "yes" : "no"};
        for (const auto &[k, v] : o.params) {
            args.push_back("--param");
            args.push_back(k + "=" + v);
        }
        std::vector<char *> argv;
        for (auto &a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        ::execv("/proc/self/exe", argv.data());
        ::_exit(127);
    }
    ::close(sv[1]);
    const int fd = sv[0];

    nixlAgent agent("initiator", nixlAgentConfig(o.progThread));
    void *buf = mapBuffer(o.maxTotal);
    nixl_reg_dlist_t reg(DRAM_SEG);
    if (!makeAgent(agent, o, buf, reg)) {
        return 1;
    }
    std::string md, addr, tmd, ready, name;
    agent.getLocalMD(md);
    if (!getMsg(fd, addr) || addr == "err" || !getMsg(fd, tmd) ||
        agent.loadRemoteMD(tmd, name) != NIXL_SUCCESS || !putMsg(fd, md) ||
        !getMsg(fd, ready) || ready != "ready") {
        std::fprintf(stderr, "backend_bench: the target did not start\n");
        return 1;
    }
    const uintptr_t raddr = std::strtoull(addr.c_str(), nullptr, 10);
    const uintptr_t laddr = reinterpret_cast<uintptr_t>(buf);
    const std::string label = o.label.empty() ? o.backend : o.label;
    if (o.nixlbench) {
        nixlBench::patternOptions po = o.pattern;
        po.prog = "backend_bench";
        po.ops = o.ops;
        po.blocks = o.blocks;
        po.maxTotal = o.maxTotal;
        const std::string title = "backend_bench " + label + " --pattern nixlbench: backend " +
            o.backend + ", two processes, progress thread " + (o.progThread ? "on" : "off") +
            ", target " + (o.targetIdle ? "idle" : "polling");
        const int rc = nixlBench::nixlbenchPattern(po, agent, laddr, raddr, pid, title);
        putMsg(fd, "exit");
        int status = 0;
        ::waitpid(pid, &status, 0);
        agent.deregisterMem(reg);
        return rc;
    }
    if (o.json) {
        // No header: every line is a whole object.
    } else if (o.csv) {
        std::printf("label,op,block,batch,iters,GBps,avg_us,p50_us,p99_us,p999_us,max_us\n");
    } else {
        std::printf("# backend_bench %s: backend %s, two processes, progress thread %s, polls %s\n",
                    label.c_str(), o.backend.c_str(), o.progThread ? "on" : "off",
                    o.pollYield ? "yield" : "spin");
        std::printf("%-6s %10s %6s %8s %10s %10s %10s %10s %10s %10s\n", "op", "block", "batch",
                    "iters", "GB/s", "avg us", "p50 us", "p99 us", "p99.9 us", "max us");
    }
    int rc = 0;
    for (const std::string &op : o.ops) {
        for (size_t block : o.blocks) {
            if (block * o.batch > o.maxTotal) {
                continue;
            }
            nixl_xfer_dlist_t l(DRAM_SEG), r(DRAM_SEG);
            for (size_t i = 0; i < o.batch; ++i) {
                l.addDesc(nixlBasicDesc(laddr + i * block, block, 0));
                r.addDesc(nixlBasicDesc(raddr + i * block, block, 0));
            }
            nixlXferReqH *req = nullptr;
            if (agent.createXferReq(op == "READ" ? NIXL_READ : NIXL_WRITE, l, r, "target", req) !=
                NIXL_SUCCESS) {
                std::fprintf(stderr, "backend_bench: createXferReq failed\n");
                rc = 1;
                break;
            }
            auto once = [&]() {
                nixl_status_t st = agent.postXferReq(req);
                while (st == NIXL_IN_PROG) {
                    st = agent.getXferStatus(req);
                    if (o.pollYield && st == NIXL_IN_PROG) {
                        ::sched_yield();
                    }
                }
                return st == NIXL_SUCCESS;
            };
            bool ok = once() && once() && once(); // warm-up
            std::vector<double> lat;
            const auto start = steady::now();
            const auto minEnd = start + std::chrono::milliseconds(o.minMs);
            while (ok && (lat.size() < 5 || steady::now() < minEnd) && lat.size() < 200000) {
                const auto t0 = steady::now();
                ok = once();
                lat.push_back(std::chrono::duration<double, std::micro>(steady::now() - t0).count());
            }
            const double secs = std::chrono::duration<double>(steady::now() - start).count();
            agent.releaseXferReq(req);
            if (!ok) {
                std::fprintf(stderr, "backend_bench: %s of %zu bytes failed\n", op.c_str(), block);
                rc = 1;
                break;
            }
            double sum = 0;
            for (double v : lat) {
                sum += v;
            }
            const double gbps = double(block * o.batch) * lat.size() / secs / 1e9;
            std::sort(lat.begin(), lat.end());
            const double p50 = lat[lat.size() / 2];
            const double p99 = lat[std::min(lat.size() - 1, lat.size() * 99 / 100)];
            const double p999 = lat[std::min(lat.size() - 1, lat.size() * 999 / 1000)];
            const double max = lat.back();
            const double avg = sum / lat.size();
            if (o.json) {
                std::printf("{\"bench\":\"backend_bench\",\"label\":\"%s\",\"backend\":\"%s\","
                            "\"op\":\"%s\",\"block\":%zu,\"batch\":%zu,\"path\":\"nixl %s\","
                            "\"iters\":%zu,\"GBps\":%.4f,\"avg_us\":%.3f,\"p50_us\":%.3f,"
                            "\"p99_us\":%.3f,\"p999_us\":%.3f,\"max_us\":%.3f,\"peers\":[]}\n",
                            label.c_str(), o.backend.c_str(), op.c_str(), block, o.batch,
                            label.c_str(), lat.size(), gbps, avg, p50, p99, p999, max);
            } else if (o.csv) {
                std::printf("%s,%s,%zu,%zu,%zu,%.4f,%.2f,%.2f,%.2f,%.2f,%.2f\n", label.c_str(),
                            op.c_str(), block, o.batch, lat.size(), gbps, avg, p50, p99, p999,
                            max);
            } else {
                std::printf("%-6s %10zu %6zu %8zu %10.3f %10.2f %10.2f %10.2f %10.2f %10.2f\n",
                            op.c_str(), block, o.batch, lat.size(), gbps, avg, p50, p99, p999,
                            max);
            }
            std::fflush(stdout);
        }
    }
    putMsg(fd, "exit");
    int status = 0;
    ::waitpid(pid, &status, 0);
    agent.deregisterMem(reg);
    return rc;
}

} // namespace

int
main(int argc, char **argv) {
    options o;
    int targetFd = -1;
    bool opsGiven = false;
    bool blocksGiven = false;
    bool idleGiven = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--target") {
            targetFd = std::atoi(next().c_str());
        } else if (a == "--backend") {
            o.backend = next();
        } else if (a == "--param") {
            const std::string kv = next();
            const size_t eq = kv.find('=');
            if (eq == std::string::npos) {
                std::fprintf(stderr, "--param wants key=value, not '%s'\n", kv.c_str());
                return 2;
            }
            o.params[kv.substr(0, eq)] = kv.substr(eq + 1);
        } else if (a == "--label") {
            o.label = next();
        } else if (a == "--ops") {
            o.ops = splitList(next());
            opsGiven = true;
        } else if (a == "--blocks") {
            blocksGiven = true;
            o.blocks.clear();
            for (const auto &s : splitList(next())) {
                o.blocks.push_back(parseSize(s));
            }
        } else if (a == "--batch") {
            o.batch = std::max<size_t>(1, parseSize(next()));
        } else if (a == "--max-total") {
            o.maxTotal = parseSize(next());
        } else if (a == "--min-ms") {
            o.minMs = std::atoi(next().c_str());
        } else if (a == "--progress-thread") {
            o.progThread = next() == "1";
        } else if (a == "--poll-yield") {
            o.pollYield = next() == "1";
        } else if (a == "--csv") {
            o.csv = true;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--target-idle") {
            o.targetIdle = next() == "yes";
            idleGiven = true;
        } else if (const int r = nixlBench::parsePatternFlag(a, next, o.nixlbench, o.pattern);
                   r != 0) {
            if (r < 0) {
                return 2;
            }
        } else {
            std::fprintf(stderr, "backend_bench: unknown option %s (see backend_bench.cpp)\n",
                         a.c_str());
            return 2;
        }
    }
    if (o.nixlbench && o.json) {
        std::fprintf(stderr, "backend_bench: --pattern nixlbench prints text only (no --json)\n");
        return 2;
    }
    if (o.nixlbench && targetFd < 0) {
        // nixlbench's defaults unless given: WRITE, 4 KiB to 64 KiB, one descriptor, the
        // target idle when a progress thread serves it, else polling (a backend whose target
        // must progress would otherwise stall).
        o.ops = opsGiven ? o.ops : std::vector<std::string>{"WRITE"};
        if (!blocksGiven) {
            o.blocks = {4096, 8192, 16384, 32768, 65536};
        }
        o.batch = 1;
        if (!idleGiven) {
            o.targetIdle = o.progThread;
        }
    }
    return targetFd >= 0 ? targetMain(targetFd, o) : initiatorMain(o);
}
