/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// ucx_bench: WRITE/READ bandwidth and latency through nixlAgent and the UCX backend, between
// two processes (default) or two agents of one process (--mode inproc).
//
// Two processes: the initiator (this process) re-executes itself as the target and hands
// metadata over a socketpair. In both modes, for every operation, block size and batch size
// it posts one prepared request of `batch` descriptors of `block` bytes again and again, for
// at least --min-ms per point. Reported: GB/s (10^9 bytes per second of data moved), the
// latency of one post-to-completion, and, measured the same way in the same run, memcpy of
// the same descriptors between two buffers of this process (the floor of any copy), and, with
// two processes, bare process_vm_writev/readv of the same descriptors to the target's buffer
// (one system call per post, no agent: the floor of the direct cma path).
//
//   NIXL_PLUGIN_DIR=build/src/plugins ucx_bench [--mode twoproc|inproc] [--ops WRITE,READ]
//       [--blocks 4K,...,64M] [--batches 1,4,16,64,256] [--max-total 256M] [--min-ms 300]
//       [--direct yes|no] [--progress-thread 0|1] [--huge-pages yes|no] [--csv | --json]
//   ucx_bench --pattern nixlbench [--ops WRITE] [--blocks 4K,8K,16K,32K,64K] [--iters 1000]
//       [--rounds 3] [--target-idle yes|no] [--direct ...] [--progress-thread ...]
//
// --pattern nixlbench is the first-impression case of NIXL's nixlbench: per size, ascending,
// ~1,000 post-and-poll transfers with no warm-up and the target idle, reported as p50, p99,
// p99.9 and max next to the bare system call paired with each transfer.
//
// benchmark/ucx_bench.sh runs it next to ucx_perftest and prints the ratios.
//
// --json prints one JSON object per line (JSON Lines), one per op/block/batch: the agent's
// figures and, under "peers", memcpy's and the bare system call's from the same run;
// benchmark/plot.py draws them.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <poll.h>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "nixl.h"
#include "tail_pattern.h"

namespace {

using steady = std::chrono::steady_clock;

bool
sendFrame(int fd, const std::string &s) {
    uint64_t len = s.size();
    std::string buf(reinterpret_cast<const char *>(&len), sizeof(len));
    buf += s;
    size_t off = 0;
    while (off < buf.size()) {
        ssize_t n = ::send(fd, buf.data() + off, buf.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        off += static_cast<size_t>(n);
    }
    return true;
}

bool
readFull(int fd, char *p, size_t len) {
    size_t off = 0;
    while (off < len) {
        ssize_t n = ::read(fd, p + off, len - off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        off += static_cast<size_t>(n);
    }
    return true;
}

bool
recvFrame(int fd, std::string &out) {
    uint64_t len = 0;
    if (!readFull(fd, reinterpret_cast<char *>(&len), sizeof(len))) {
        return false;
    }
    out.assign(len, '\0');
    return readFull(fd, out.data(), len);
}

size_t
parseSize(const std::string &s) {
    char *end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    switch (end != nullptr ? *end : '\0') {
    case 'k':
    case 'K':
        v *= 1024;
        break;
    case 'm':
    case 'M':
        v *= 1024 * 1024;
        break;
    case 'g':
    case 'G':
        v *= 1024.0 * 1024 * 1024;
        break;
    default:
        break;
    }
    return static_cast<size_t>(v);
}

std::vector<std::string>
split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

using nixlBench::patternSizeName;

struct options {
    std::vector<std::string> ops{"WRITE", "READ"};
    std::vector<size_t> blocks{4096, 65536, 1 << 20, 16 << 20, 64 << 20};
    std::vector<size_t> batches{1, 4, 16, 64, 256};
    size_t maxTotal = 256 << 20;
    int minMs = 300;
    std::string direct = "yes";
    bool progThread = false;
    bool csv = false;
    /** One JSON object per point and line (benchmark/plot.py reads it). */
    bool json = false;
    bool hugePages = true;
    bool inproc = false;
    /** --pattern nixlbench: short runs per size, ascending, target idle (tails, not rates). */
    bool nixlbench = false;
    /** --iters and --rounds of the pattern (the rest is filled in when it runs). */
    nixlBench::patternOptions pattern;
    /** The target blocks on its socket instead of polling its agent (nixlbench's target). */
    bool targetIdle = false;
    /** Touch every page of the buffers before timing (no: as malloc'ed memory arrives). */
    bool prefault = true;
};

nixl_b_params_t
backendParams(const options &o) {
    return {{"ucx_direct_cma", o.direct}};
}

void *
mapBuffer(size_t len, bool hugePages, bool prefault = true) {
    void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    // Transparent huge pages where the kernel offers them (THP "madvise" mode is Debian's
    // default), as ucx_perftest's UCX-allocated buffers get: large copies through
    // process_vm_writev pin pages one by one, and 4 KiB pages make that the bottleneck.
    if (hugePages) {
        ::madvise(p, len, MADV_HUGEPAGE);
    }
    if (prefault) {
        std::memset(p, 0x5a, len); // fault the pages in before timing
    }
    return p;
}

/** The target: registers its buffer, answers with metadata, serves until told to stop. */
int
targetMain(int fd, const options &o) {
    nixlAgent agent("target", nixlAgentConfig(o.progThread));
    nixlBackendH *be = nullptr;
    if (agent.createBackend("UCX", backendParams(o), be) != NIXL_SUCCESS) {
        sendFrame(fd, "err");
        return 1;
    }
    void *buf = mapBuffer(o.maxTotal, o.hugePages, o.prefault);
    nixl_reg_dlist_t reg(DRAM_SEG);
    reg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf), o.maxTotal, 0, ""));
    if (agent.registerMem(reg) != NIXL_SUCCESS) {
        sendFrame(fd, "err");
        return 1;
    }
    std::string md;
    agent.getLocalMD(md);
    sendFrame(fd, std::to_string(reinterpret_cast<uintptr_t>(buf)));
    sendFrame(fd, md);
    std::string peer_md;
    std::string name;
    if (!recvFrame(fd, peer_md) || agent.loadRemoteMD(peer_md, name) != NIXL_SUCCESS) {
        return 1;
    }
    sendFrame(fd, "ready");
    if (o.targetIdle) {
        // As nixlbench's target: no progress thread of ours, no call into the agent.
        struct pollfd pfd = {fd, POLLIN, 0};
        while (::poll(&pfd, 1, -1) < 0 && errno == EINTR) {
        }
        agent.deregisterMem(reg);
        return 0;
    }
    // Serve: UCX's software RMA (the UCX path) needs the target to progress.
    nixl_notifs_t notifs;
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (::poll(&pfd, 1, 0) > 0) {
            break;
        }
        agent.getNotifs(notifs);
        notifs.clear();
    }
    agent.deregisterMem(reg);
    return 0;
}

/** One measured point of the sweep. */
/** p50, p99, p99.9 and max of sorted latencies, as JSON members. */
std::string
tailJson(const std::vector<double> &sorted) {
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "\"p50_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,\"max_us\":%.3f",
                  sorted[sorted.size() / 2],
                  sorted[std::min(sorted.size() - 1, sorted.size() * 99 / 100)],
                  sorted[std::min(sorted.size() - 1, sorted.size() * 999 / 1000)], sorted.back());
    return buf;
}

struct point {
    std::string op;
    size_t block;
    size_t batch;
    size_t iters;
    double gbps;
    double avgUs;
    double p50Us;
    double p99Us;
    double p999Us;
    double maxUs;
};

/** Times fn for at least min_ms (and 5 runs): latencies in microseconds, and seconds. */
template<typename F>
bool
timeLoop(const options &o, F &&fn, std::vector<double> &lat, double &secs) {
    lat.clear();
    const auto start = steady::now();
    const auto min_end = start + std::chrono::milliseconds(o.minMs);
    while ((lat.size() < 5 || steady::now() < min_end) && lat.size() < 200000) {
        const auto t0 = steady::now();
        if (!fn()) {
            return false;
        }
        lat.push_back(std::chrono::duration<double, std::micro>(steady::now() - t0).count());
    }
    secs = std::chrono::duration<double>(steady::now() - start).count();
    return true;
}

int
initiatorMain(const options &o, const char *self) {
    int fd = -1;
    pid_t pid = -1;
    if (!o.inproc) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            std::perror("socketpair");
            return 1;
        }
        pid = ::fork();
        if (pid == 0) {
            ::fcntl(sv[1], F_SETFD, 0);
            std::vector<std::string> args = {self, "--target", std::to_string(sv[1]),
                                             "--max-total", std::to_string(o.maxTotal),
                                             "--direct", o.direct, "--progress-thread",
                                             o.progThread ? "1" : "0", "--huge-pages",
                                             o.hugePages ? "yes" : "no", "--target-idle",
                                             o.targetIdle ? "yes" : "no", "--prefault",
                                             o.prefault ? "yes" : "no"};
            std::vector<char *> argv;
            for (auto &a : args) {
                argv.push_back(a.data());
            }
            argv.push_back(nullptr);
            ::execv("/proc/self/exe", argv.data());
            ::_exit(127);
        }
        ::close(sv[1]);
        fd = sv[0];
    }

    nixlAgent agent("initiator", nixlAgentConfig(o.progThread));
    nixlBackendH *be = nullptr;
    if (agent.createBackend("UCX", backendParams(o), be) != NIXL_SUCCESS) {
        std::fprintf(stderr, "cannot create the UCX backend\n");
        return 1;
    }
    void *buf = mapBuffer(o.maxTotal, o.hugePages, o.prefault);
    nixl_reg_dlist_t reg(DRAM_SEG);
    reg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf), o.maxTotal, 0, ""));
    if (agent.registerMem(reg) != NIXL_SUCCESS) {
        std::fprintf(stderr, "registerMem failed\n");
        return 1;
    }
    std::string name;
    std::string md;
    agent.getLocalMD(md);
    uintptr_t raddr = 0;
    // In-process mode: the target is a second agent here, with its own buffer.
    std::unique_ptr<nixlAgent> target;
    void *tbuf = nullptr;
    nixl_reg_dlist_t treg(DRAM_SEG);
    if (o.inproc) {
        target = std::make_unique<nixlAgent>("target", nixlAgentConfig(o.progThread));
        nixlBackendH *tbe = nullptr;
        tbuf = mapBuffer(o.maxTotal, o.hugePages);
        treg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(tbuf), o.maxTotal, 0, ""));
        std::string tmd;
        if (target->createBackend("UCX", backendParams(o), tbe) != NIXL_SUCCESS ||
            target->registerMem(treg) != NIXL_SUCCESS || target->getLocalMD(tmd) != NIXL_SUCCESS ||
            agent.loadRemoteMD(tmd, name) != NIXL_SUCCESS ||
            target->loadRemoteMD(md, name) != NIXL_SUCCESS) {
            std::fprintf(stderr, "in-process target did not start\n");
            return 1;
        }
        raddr = reinterpret_cast<uintptr_t>(tbuf);
    } else {
        std::string addr_str;
        std::string target_md;
        std::string ready;
        if (!recvFrame(fd, addr_str) || addr_str == "err" || !recvFrame(fd, target_md) ||
            agent.loadRemoteMD(target_md, name) != NIXL_SUCCESS || !sendFrame(fd, md) ||
            !recvFrame(fd, ready) || ready != "ready") {
            std::fprintf(stderr, "target did not start\n");
            return 1;
        }
        raddr = std::strtoull(addr_str.c_str(), nullptr, 10);
    }
    const uintptr_t laddr = reinterpret_cast<uintptr_t>(buf);
    // The memcpy column copies between two buffers of this process, of the same layout.
    void *mbuf = mapBuffer(o.maxTotal, o.hugePages);
    nixl_notifs_t tnotifs;

    if (o.nixlbench) {
        nixlBench::patternOptions po = o.pattern;
        po.prog = "ucx_bench";
        po.ops = o.ops;
        po.blocks = o.blocks;
        po.maxTotal = o.maxTotal;
        const std::string title = std::string("ucx_bench --pattern nixlbench: two processes, ") +
            "UCX backend, direct " + o.direct + ", progress thread " +
            (o.progThread ? "on" : "off") + ", target " + (o.targetIdle ? "idle" : "polling");
        const int rc = nixlBench::nixlbenchPattern(po, agent, laddr, raddr, pid, title);
        sendFrame(fd, "exit");
        int status = 0;
        ::waitpid(pid, &status, 0);
        agent.deregisterMem(reg);
        return rc;
    }
    if (o.json) {
        // No header: every line is a whole object.
    } else if (o.csv) {
        std::printf("op,block,batch,iters,GBps,avg_us,p99_us,p50_us,memcpy_GBps,memcpy_p50_us,"
                    "cma_GBps,cma_p50_us,agent_minus_cma_p50_us,p999_us,max_us\n");
    } else {
        std::printf("# ucx_bench: %s, UCX backend, direct %s, progress thread %s\n",
                    o.inproc ? "two agents of one process" : "two processes", o.direct.c_str(),
                    o.progThread ? "on" : "off");
        std::printf("%-6s %8s %6s %8s %10s %12s %12s %12s %10s %10s %12s %12s %10s %10s %10s\n",
                    "op", "block", "batch", "iters", "GB/s", "avg lat us", "p50 lat us",
                    "p99 lat us", "p99.9 us", "max us", "memcpy GB/s", "memcpy p50", "cma GB/s",
                    "cma p50", "agent-cma");
    }
    for (const std::string &op : o.ops) {
        for (size_t block : o.blocks) {
            for (size_t batch : o.batches) {
                const size_t total = block * batch;
                if (total > o.maxTotal) {
                    continue;
                }
                nixl_xfer_dlist_t l(DRAM_SEG);
                nixl_xfer_dlist_t r(DRAM_SEG);
                for (size_t i = 0; i < batch; ++i) {
                    l.addDesc(nixlBasicDesc(laddr + i * block, block, 0));
                    r.addDesc(nixlBasicDesc(raddr + i * block, block, 0));
                }
                nixlXferReqH *req = nullptr;
                if (agent.createXferReq(op == "READ" ? NIXL_READ : NIXL_WRITE, l, r, "target",
                                        req) != NIXL_SUCCESS) {
                    std::fprintf(stderr, "createXferReq failed\n");
                    return 1;
                }
                // In one process, a UCX-path target must be progressed by this thread.
                const bool poll_target = target && o.direct == "no" && !o.progThread;
                auto run_once = [&]() {
                    nixl_status_t st = agent.postXferReq(req);
                    while (st == NIXL_IN_PROG) {
                        if (poll_target) {
                            target->getNotifs(tnotifs);
                            tnotifs.clear();
                        }
                        st = agent.getXferStatus(req);
                    }
                    return st;
                };
                for (int w = 0; w < 3; ++w) {
                    if (run_once() != NIXL_SUCCESS) {
                        std::fprintf(stderr, "transfer failed\n");
                        return 1;
                    }
                }
                std::vector<double> lat;
                double secs = 0;
                if (!timeLoop(o, [&] { return run_once() == NIXL_SUCCESS; }, lat, secs)) {
                    std::fprintf(stderr, "transfer failed\n");
                    return 1;
                }
                point p{op, block, batch, lat.size(), 0, 0, 0, 0, 0, 0};
                p.gbps = static_cast<double>(total) * lat.size() / secs / 1e9;
                double sum = 0;
                for (double v : lat) {
                    sum += v;
                }
                p.avgUs = sum / lat.size();
                std::sort(lat.begin(), lat.end());
                p.p99Us = lat[std::min(lat.size() - 1, lat.size() * 99 / 100)];
                p.p50Us = lat[lat.size() / 2];
                p.p999Us = lat[std::min(lat.size() - 1, lat.size() * 999 / 1000)];
                p.maxUs = lat.back();
                // The same descriptors with memcpy, same loop, same run.
                char *const src = static_cast<char *>(op == "READ" ? mbuf : buf);
                char *const dst = static_cast<char *>(op == "READ" ? buf : mbuf);
                std::vector<double> mlat;
                double msecs = 0;
                timeLoop(o,
                         [&] {
                             for (size_t i = 0; i < batch; ++i) {
                                 std::memcpy(dst + i * block, src + i * block, block);
                             }
                             // Keep the copies: the compiler may not drop them.
                             asm volatile("" ::: "memory");
                             return true;
                         },
                         mlat, msecs);
                const double mgbps = static_cast<double>(total) * mlat.size() / msecs / 1e9;
                std::sort(mlat.begin(), mlat.end());
                const double mp50 = mlat[mlat.size() / 2];
                // Two processes: the same descriptors with one bare process_vm_writev/readv per
                // post into the target's buffer (batches are at most IOV_MAX = 1024 here),
                // alternating with posts through the agent, so that both see the machine in
                // the same state (the syscall's own cost varies by 2x here with the load of the
                // other core). Reported: the syscall's p50 and GB/s, and the median over the
                // pairs of (agent - syscall), the agent path's cost beyond the copy.
                // The syscall's own tail, kept for --json (clat is sorted below).
                std::string ctail;
                double cgbps = -1;
                double cp50 = -1;
                double dp50 = -1;
                if (!o.inproc && batch <= 1024) {
                    std::vector<struct iovec> liov(batch);
                    std::vector<struct iovec> riov(batch);
                    for (size_t i = 0; i < batch; ++i) {
                        liov[i] = {reinterpret_cast<void *>(laddr + i * block), block};
                        riov[i] = {reinterpret_cast<void *>(raddr + i * block), block};
                    }
                    const bool rd = op == "READ";
                    std::vector<double> clat;
                    std::vector<double> diff;
                    double csum = 0;
                    const auto end = steady::now() + std::chrono::milliseconds(o.minMs);
                    bool ok = true;
                    while (ok && (clat.size() < 5 || steady::now() < end) &&
                           clat.size() < 200000) {
                        const auto t0 = steady::now();
                        ok = run_once() == NIXL_SUCCESS;
                        const auto t1 = steady::now();
                        const ssize_t n = rd ?
                            ::process_vm_readv(pid, liov.data(), batch, riov.data(), batch, 0) :
                            ::process_vm_writev(pid, liov.data(), batch, riov.data(), batch, 0);
                        const auto t2 = steady::now();
                        ok = ok && n == static_cast<ssize_t>(total);
                        const double a = std::chrono::duration<double, std::micro>(t1 - t0).count();
                        const double c = std::chrono::duration<double, std::micro>(t2 - t1).count();
                        clat.push_back(c);
                        diff.push_back(a - c);
                        csum += c;
                    }
                    if (ok) {
                        cgbps = static_cast<double>(total) * clat.size() / (csum * 1e-6) / 1e9;
                        std::sort(clat.begin(), clat.end());
                        std::sort(diff.begin(), diff.end());
                        cp50 = clat[clat.size() / 2];
                        dp50 = diff[diff.size() / 2];
                        ctail = tailJson(clat);
                    }
                }
                agent.releaseXferReq(req);
                if (o.json) {
                    std::printf("{\"bench\":\"ucx_bench\",\"mode\":\"%s\",\"direct\":\"%s\","
                                "\"op\":\"%s\",\"block\":%zu,\"batch\":%zu,"
                                "\"path\":\"nixl UCX\",\"iters\":%zu,\"GBps\":%.4f,"
                                "\"avg_us\":%.3f,\"p50_us\":%.3f,\"p99_us\":%.3f,"
                                "\"p999_us\":%.3f,\"max_us\":%.3f,\"peers\":["
                                "{\"name\":\"memcpy\",\"iters\":%zu,\"GBps\":%.4f,%s}",
                                o.inproc ? "inproc" : "twoproc", o.direct.c_str(), op.c_str(),
                                block, batch, p.iters, p.gbps, p.avgUs, p.p50Us, p.p99Us,
                                p.p999Us, p.maxUs, mlat.size(), mgbps, tailJson(mlat).c_str());
                    if (cp50 >= 0) {
                        std::printf(",{\"name\":\"%s\",\"GBps\":%.4f,%s,"
                                    "\"agent_minus_peer_p50_us\":%.3f}",
                                    op == "READ" ? "process_vm_readv" : "process_vm_writev",
                                    cgbps, ctail.c_str(), dp50);
                    }
                    std::printf("]}\n");
                } else if (o.csv) {
                    std::printf("%s,%zu,%zu,%zu,%.3f,%.2f,%.2f,%.2f,%.3f,%.2f,%.3f,%.2f,%.2f,%.2f,"
                                "%.2f\n",
                                op.c_str(), block, batch, p.iters, p.gbps, p.avgUs, p.p99Us,
                                p.p50Us, mgbps, mp50, cgbps, cp50, dp50, p.p999Us, p.maxUs);
                } else if (cp50 < 0) {
                    std::printf("%-6s %8s %6zu %8zu %10.3f %12.2f %12.2f %12.2f %10.2f %10.2f "
                                "%12.3f %12.2f %10s %10s %10s\n",
                                op.c_str(), patternSizeName(block).c_str(), batch, p.iters, p.gbps,
                                p.avgUs, p.p50Us, p.p99Us, p.p999Us, p.maxUs, mgbps, mp50, "-",
                                "-", "-");
                } else {
                    std::printf("%-6s %8s %6zu %8zu %10.3f %12.2f %12.2f %12.2f %10.2f %10.2f "
                                "%12.3f %12.2f %10.3f %10.2f %10.2f\n",
                                op.c_str(), patternSizeName(block).c_str(), batch, p.iters, p.gbps,
                                p.avgUs, p.p50Us, p.p99Us, p.p999Us, p.maxUs, mgbps, mp50, cgbps,
                                cp50, dp50);
                }
                std::fflush(stdout);
            }
        }
    }
    if (target) {
        target->deregisterMem(treg);
        target.reset();
    } else {
        sendFrame(fd, "exit");
        int status = 0;
        ::waitpid(pid, &status, 0);
    }
    agent.deregisterMem(reg);
    return 0;
}

} // namespace

int
main(int argc, char **argv) {
    options o;
    int target_fd = -1;
    bool opsGiven = false;
    bool blocksGiven = false;
    bool idleGiven = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--target") {
            target_fd = std::atoi(next().c_str());
        } else if (a == "--ops") {
            o.ops = split(next());
            opsGiven = true;
        } else if (a == "--blocks") {
            blocksGiven = true;
            o.blocks.clear();
            for (auto &s : split(next())) {
                o.blocks.push_back(parseSize(s));
            }
        } else if (a == "--batches") {
            o.batches.clear();
            for (auto &s : split(next())) {
                o.batches.push_back(parseSize(s));
            }
        } else if (a == "--max-total") {
            o.maxTotal = parseSize(next());
        } else if (a == "--min-ms") {
            o.minMs = std::atoi(next().c_str());
        } else if (a == "--direct") {
            o.direct = next();
        } else if (a == "--progress-thread") {
            o.progThread = next() == "1";
        } else if (a == "--huge-pages") {
            o.hugePages = next() != "no";
        } else if (a == "--mode") {
            const std::string m = next();
            if (m != "inproc" && m != "twoproc") {
                std::fprintf(stderr, "--mode is inproc or twoproc, not '%s'\n", m.c_str());
                return 2;
            }
            o.inproc = m == "inproc";
        } else if (a == "--csv") {
            o.csv = true;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--target-idle") {
            o.targetIdle = next() == "yes";
            idleGiven = true;
        } else if (a == "--prefault") {
            o.prefault = next() != "no";
        } else if (const int r = nixlBench::parsePatternFlag(a, next, o.nixlbench, o.pattern);
                   r != 0) {
            if (r < 0) {
                return 2;
            }
        } else {
            std::fprintf(stderr, "unknown option %s (see the header of ucx_bench.cpp)\n",
                         a.c_str());
            return 2;
        }
    }
    if (target_fd >= 0) {
        return targetMain(target_fd, o);
    }
    if (o.nixlbench) {
        if (o.inproc) {
            std::fprintf(stderr, "--pattern nixlbench runs two processes (no --mode inproc)\n");
            return 2;
        }
        if (o.json) {
            std::fprintf(stderr, "--pattern nixlbench prints text only (no --json)\n");
            return 2;
        }
        // nixlbench's defaults, unless given: WRITE, 4 KiB to 64 KiB, one descriptor, an idle
        // target (which the UCX path cannot use: it needs the target to progress).
        if (!opsGiven) {
            o.ops = {"WRITE"};
        }
        if (!blocksGiven) {
            o.blocks = {4096, 8192, 16384, 32768, 65536};
        }
        if (!idleGiven) {
            o.targetIdle = o.direct != "no" || o.progThread;
        }
    }
    return initiatorMain(o, argv[0]);
}
