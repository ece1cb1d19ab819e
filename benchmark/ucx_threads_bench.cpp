/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// ucx_threads_bench: the UCX backend's num_threads (posting pool) against the caller's path.
//
// Two processes. The initiator re-executes itself as the target, which registers one buffer
// and, for the UCP path, serves (polls its agent, which UCX's software RMA needs; for the
// direct path it sleeps, as nixlbench's target). The initiator
// makes one agent per num_threads value, all registering the same buffer, and one prepared
// WRITE (or READ) of --descs descriptors of --block bytes per agent. It then times the agents
// in turns, --rounds times --min-ms each, so that all of them see the machine in the same
// states (this VM's load changes by the minute), and prints GB/s (10^9 bytes of data per
// second, post to completion, polling getXferStatus) and the ratio to the first value.
//
//   NIXL_PLUGIN_DIR=build/src/plugins ucx_threads_bench [--threads 0,1,2] [--paths direct,ucp]
//       [--op WRITE|READ] [--descs 4096] [--block 64K] [--split 1024] [--rounds 5]
//       [--min-ms 300] [--progress-thread 0|1] [--backend UCX|LIBFABRIC]
//
// --backend LIBFABRIC measures LIBFABRIC's num_threads the same way; its paths are the
// providers, shm and tcp (tcp;ofi_rxm), and its target always polls (tcp needs it).

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <poll.h>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "nixl.h"

namespace {

using steady = std::chrono::steady_clock;

struct options {
    std::string backend = "UCX";
    std::vector<size_t> threads{0, 1, 2};
    std::vector<std::string> paths{"direct", "ucp"};
    std::string op = "WRITE";
    size_t descs = 4096;
    size_t block = 64 * 1024;
    size_t split = 1024;
    int rounds = 5;
    int minMs = 300;
    bool progThread = false;
};

bool
sendFrame(int fd, const std::string &s) {
    const uint64_t len = s.size();
    std::string buf(reinterpret_cast<const char *>(&len), sizeof(len));
    buf += s;
    for (size_t off = 0; off < buf.size();) {
        const ssize_t n = ::send(fd, buf.data() + off, buf.size() - off, MSG_NOSIGNAL);
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
    for (size_t off = 0; off < len;) {
        const ssize_t n = ::read(fd, p + off, len - off);
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
    if (!readFull(fd, reinterpret_cast<char *>(&len), sizeof(len)) || len > (1u << 30)) {
        return false;
    }
    out.resize(len);
    return readFull(fd, out.data(), len);
}

std::vector<std::string>
split(const std::string &s) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= s.size()) {
        const size_t c = s.find(',', pos);
        out.push_back(s.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
        if (c == std::string::npos) {
            break;
        }
        pos = c + 1;
    }
    return out;
}

size_t
parseSize(const std::string &s) {
    char *end = nullptr;
    size_t v = std::strtoull(s.c_str(), &end, 10);
    if (*end == 'K' || *end == 'k') {
        v <<= 10;
    } else if (*end == 'M' || *end == 'm') {
        v <<= 20;
    }
    return v;
}

void *
mapBuffer(size_t len) {
    void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    ::madvise(p, len, MADV_HUGEPAGE); // as ucx_bench: page pinning is the cma path's cost
    std::memset(p, 0x5a, len);
    return p;
}

nixl_b_params_t
params(const std::string &backend, const std::string &path, size_t threads, size_t split_batch) {
    nixl_b_params_t p = {{"num_threads", std::to_string(threads)},
                         {"split_batch_size", std::to_string(split_batch)}};
    if (backend == "UCX") {
        p["ucx_direct_cma"] = path == "direct" ? "yes" : "no";
    } else {
        p["provider"] = path == "shm" ? "shm" : "tcp;ofi_rxm";
    }
    return p;
}

/** Registers its buffer, hands over its metadata, loads the initiators', serves until told. */
int
targetMain(int fd,
           const std::string &backend,
           const std::string &path,
           size_t len,
           size_t agents,
           bool prog) {
    nixlAgent agent("target", nixlAgentConfig(prog));
    nixlBackendH *be = nullptr;
    if (agent.createBackend(backend, params(backend, path, 0, 1024), be) != NIXL_SUCCESS) {
        sendFrame(fd, "err");
        return 1;
    }
    void *buf = mapBuffer(len);
    nixl_reg_dlist_t reg(DRAM_SEG);
    reg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf), len, 0, ""));
    std::string md;
    if (agent.registerMem(reg) != NIXL_SUCCESS || agent.getLocalMD(md) != NIXL_SUCCESS) {
        sendFrame(fd, "err");
        return 1;
    }
    sendFrame(fd, std::to_string(reinterpret_cast<uintptr_t>(buf)));
    sendFrame(fd, md);
    for (size_t i = 0; i < agents; ++i) {
        std::string peer_md;
        std::string name;
        if (!recvFrame(fd, peer_md) || agent.loadRemoteMD(peer_md, name) != NIXL_SUCCESS) {
            return 1;
        }
    }
    sendFrame(fd, "ready");
    if (backend == "UCX" && path == "direct") {
        // One-sided copies need nothing of the target: it sleeps (nixlbench's target), and
        // leaves the two cores to the initiator.
        struct pollfd pfd = {fd, POLLIN, 0};
        while (::poll(&pfd, 1, -1) < 0 && errno == EINTR) {
        }
        agent.deregisterMem(reg);
        return 0;
    }
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

struct initiator {
    size_t threads = 0;
    std::unique_ptr<nixlAgent> agent;
    nixlXferReqH *req = nullptr;
    double bytes = 0;
    double secs = 0;
    std::vector<double> roundGbps;
};

/** Posts and polls req to completion; false on failure. */
bool
runOnce(nixlAgent &agent, nixlXferReqH *req) {
    nixl_status_t st = agent.postXferReq(req);
    while (st == NIXL_IN_PROG) {
        st = agent.getXferStatus(req);
    }
    return st == NIXL_SUCCESS;
}

int
runPath(const options &o, const std::string &path, const char *self) {
    const size_t len = o.descs * o.block;
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        std::perror("socketpair");
        return 1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::fcntl(sv[1], F_SETFD, 0);
        std::vector<std::string> args = {self,
                                         "--target",
                                         std::to_string(sv[1]),
                                         o.backend,
                                         path,
                                         std::to_string(len),
                                         std::to_string(o.threads.size()),
                                         o.progThread ? "1" : "0"};
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
    std::string addr;
    std::string tmd;
    if (!recvFrame(fd, addr) || addr == "err" || !recvFrame(fd, tmd)) {
        std::fprintf(stderr, "target did not start\n");
        return 1;
    }
    const uintptr_t raddr = std::strtoull(addr.c_str(), nullptr, 10);
    void *buf = mapBuffer(len);
    const uintptr_t laddr = reinterpret_cast<uintptr_t>(buf);
    nixl_reg_dlist_t reg(DRAM_SEG);
    reg.addDesc(nixlBlobDesc(laddr, len, 0, ""));
    std::vector<initiator> inits(o.threads.size());
    for (size_t i = 0; i < inits.size(); ++i) {
        initiator &in = inits[i];
        in.threads = o.threads[i];
        in.agent = std::make_unique<nixlAgent>("init" + std::to_string(i),
                                               nixlAgentConfig(o.progThread));
        nixlBackendH *be = nullptr;
        std::string md;
        std::string name;
        if (in.agent->createBackend(o.backend, params(o.backend, path, in.threads, o.split),
                                    be) !=
                NIXL_SUCCESS ||
            in.agent->registerMem(reg) != NIXL_SUCCESS || in.agent->getLocalMD(md) != NIXL_SUCCESS ||
            in.agent->loadRemoteMD(tmd, name) != NIXL_SUCCESS || !sendFrame(fd, md)) {
            std::fprintf(stderr, "initiator with num_threads=%zu did not start\n", in.threads);
            return 1;
        }
    }
    std::string ready;
    if (!recvFrame(fd, ready) || ready != "ready") {
        std::fprintf(stderr, "target did not load the initiators' metadata\n");
        return 1;
    }
    nixl_xfer_dlist_t l(DRAM_SEG);
    nixl_xfer_dlist_t r(DRAM_SEG);
    for (size_t i = 0; i < o.descs; ++i) {
        l.addDesc(nixlBasicDesc(laddr + i * o.block, o.block, 0));
        r.addDesc(nixlBasicDesc(raddr + i * o.block, o.block, 0));
    }
    const nixl_xfer_op_t op = o.op == "READ" ? NIXL_READ : NIXL_WRITE;
    for (initiator &in : inits) {
        if (in.agent->createXferReq(op, l, r, "target", in.req) != NIXL_SUCCESS) {
            std::fprintf(stderr, "createXferReq failed\n");
            return 1;
        }
        for (int w = 0; w < 3; ++w) {
            if (!runOnce(*in.agent, in.req)) {
                std::fprintf(stderr, "warm-up transfer failed (num_threads=%zu)\n", in.threads);
                return 1;
            }
        }
    }
    for (int round = 0; round < o.rounds; ++round) {
        for (initiator &in : inits) {
            const auto start = steady::now();
            const auto end = start + std::chrono::milliseconds(o.minMs);
            size_t n = 0;
            while (n < 3 || steady::now() < end) {
                if (!runOnce(*in.agent, in.req)) {
                    std::fprintf(stderr, "transfer failed (num_threads=%zu)\n", in.threads);
                    return 1;
                }
                ++n;
            }
            const double s = std::chrono::duration<double>(steady::now() - start).count();
            in.bytes += static_cast<double>(len) * n;
            in.secs += s;
            in.roundGbps.push_back(static_cast<double>(len) * n / s / 1e9);
        }
    }
    std::printf("# %s %s path, %s of %zu x %zu B (%.0f MiB), split_batch_size %zu, progress "
                "thread %s, %d rounds x %d ms per value, interleaved\n",
                o.backend.c_str(), path.c_str(), o.op.c_str(), o.descs, o.block, len / 1048576.0, o.split,
                o.progThread ? "on" : "off", o.rounds, o.minMs);
    std::printf("%-8s %-12s %10s %12s %12s %12s\n", "path", "num_threads", "GB/s", "ratio",
                "min round", "max round");
    const double base = inits.front().bytes / inits.front().secs / 1e9;
    for (initiator &in : inits) {
        const double gbps = in.bytes / in.secs / 1e9;
        std::printf("%-8s %-12zu %10.3f %12.3f %12.3f %12.3f\n", path.c_str(), in.threads, gbps,
                    gbps / base, *std::min_element(in.roundGbps.begin(), in.roundGbps.end()),
                    *std::max_element(in.roundGbps.begin(), in.roundGbps.end()));
        in.agent->releaseXferReq(in.req);
    }
    std::fflush(stdout);
    // The target goes first: a sleeping target answers UCX's wireup of the initiators' home
    // workers only at its teardown, which needs them still there.
    sendFrame(fd, "exit");
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(fd);
    for (initiator &in : inits) {
        in.agent->deregisterMem(reg);
        in.agent.reset();
    }
    ::munmap(buf, len);
    return 0;
}

} // namespace

int
main(int argc, char **argv) {
    if (argc == 8 && std::string(argv[1]) == "--target") {
        return targetMain(std::atoi(argv[2]), argv[3], argv[4],
                          std::strtoull(argv[5], nullptr, 10),
                          std::strtoull(argv[6], nullptr, 10), std::string(argv[7]) == "1");
    }
    bool pathsGiven = false;
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--threads") {
            o.threads.clear();
            for (const auto &s : split(next())) {
                o.threads.push_back(parseSize(s));
            }
        } else if (a == "--paths") {
            o.paths = split(next());
            pathsGiven = true;
        } else if (a == "--backend") {
            o.backend = next();
        } else if (a == "--op") {
            o.op = next();
        } else if (a == "--descs") {
            o.descs = parseSize(next());
        } else if (a == "--block") {
            o.block = parseSize(next());
        } else if (a == "--split") {
            o.split = parseSize(next());
        } else if (a == "--rounds") {
            o.rounds = std::atoi(next().c_str());
        } else if (a == "--min-ms") {
            o.minMs = std::atoi(next().c_str());
        } else if (a == "--progress-thread") {
            o.progThread = next() == "1";
        } else {
            std::fprintf(stderr, "unknown option %s (see the header of ucx_threads_bench.cpp)\n",
                         a.c_str());
            return 2;
        }
    }
    if (o.threads.empty() || o.descs == 0 || o.block == 0 || o.rounds < 1) {
        std::fprintf(stderr, "--threads, --descs, --block and --rounds must not be empty or 0\n");
        return 2;
    }
    if (o.backend != "UCX" && o.backend != "LIBFABRIC") {
        std::fprintf(stderr, "--backend is UCX or LIBFABRIC, not '%s'\n", o.backend.c_str());
        return 2;
    }
    const bool ucx = o.backend == "UCX";
    if (!pathsGiven && !ucx) {
        o.paths = {"shm", "tcp"};
    }
    for (const std::string &p : o.paths) {
        if (ucx ? p != "direct" && p != "ucp" : p != "shm" && p != "tcp") {
            std::fprintf(stderr, "--paths of %s takes %s, not '%s'\n", o.backend.c_str(),
                         ucx ? "direct and ucp" : "shm and tcp", p.c_str());
            return 2;
        }
        if (runPath(o, p, argv[0]) != 0) {
            return 1;
        }
    }
    return 0;
}
