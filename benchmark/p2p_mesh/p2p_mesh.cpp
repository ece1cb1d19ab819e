/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file p2p_mesh.cpp
 * @brief Full-mesh metadata exchange over P2P: N processes, each an agent with the UCX backend,
 *        a listener on 127.0.0.1 and one registered buffer, fetch every other process's
 *        metadata. Reports the time from "go" until every process has loaded all N-1 peers,
 *        and the requests and bytes each process sent and received.
 *
 * Usage: p2p_mesh [--etcd] [--backend UCX|TEST] [N ...]   (default: UCX, 2 8 32)
 *
 * --backend TEST separates the exchange from the backend's own cost: the TEST backend's
 * connection info loads in microseconds (it cannot move data between processes, which the
 * mesh does not do), while UCX builds its connection to a same-host peer when the metadata is
 * loaded (docs/metadata.md, Speed). Run it with NIXL_LOG_LEVEL=ERROR: the TEST backend warns
 * once per peer that the peer's engine is not in this process.
 *
 * With --etcd the processes meet through an etcd server the benchmark starts on 127.0.0.1
 * (/usr/bin/etcd, test/common/etcd_server): no listener; after "go" each process publishes
 * (sendLocalMD) and fetches every other one (fetchRemoteMD, get or watch), and reports the
 * HTTP requests and request bytes it sent to etcd over its whole life (lease grant, prefix key
 * and keepalives included).
 *
 * The processes fork before any agent exists, build their agents (not timed), report their
 * listen port, and wait for the port list. The clock is CLOCK_MONOTONIC, shared by all
 * processes: the parent takes "go" before it sends the list, each child reports the moment its
 * last peer was loaded.
 */

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "agent/exchange.h"
#include "nixl.h"
#ifdef NIXL_MESH_ETCD
#include "../../test/common/etcd_server.h"
#endif

namespace {

int64_t
nowNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool
readAll(int fd, void *p, size_t n) {
    auto *c = static_cast<char *>(p);
    while (n > 0) {
        const ssize_t r = ::read(fd, c, n);
        if (r <= 0) {
            return false;
        }
        c += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

bool
writeAll(int fd, const void *p, size_t n) {
    auto *c = static_cast<const char *>(p);
    while (n > 0) {
        const ssize_t r = ::write(fd, c, n);
        if (r <= 0) {
            return false;
        }
        c += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

bool use_etcd = false;
std::string backend_name = "UCX";

struct childResult {
    int64_t doneNs = 0; ///< all peers loaded; 0 = failed
    uint64_t blobBytes = 0; ///< our full metadata's size
    uint64_t etcdRequests = 0; ///< HTTP requests to etcd (with --etcd)
    uint64_t etcdBytes = 0; ///< their request bytes
};

int
child(int rank, int n, int in_fd, int out_fd) {
    const std::string me = "rank" + std::to_string(rank);
    nixlAgentConfig cfg(true, !use_etcd, 0);
    cfg.etcdWatchTimeout = std::chrono::seconds(120);
    nixlAgent agent(me, cfg);
    nixlBackendH *h = nullptr;
    std::vector<char> buf(1 << 20);
    nixl_reg_dlist_t regs(DRAM_SEG);
    regs.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, ""));
    childResult res;
    nixl_blob_t md;
    if (agent.createBackend(backend_name, {}, h) != NIXL_SUCCESS || agent.registerMem(regs) != NIXL_SUCCESS ||
        agent.getLocalMD(md) != NIXL_SUCCESS) {
        uint16_t zero = 0;
        writeAll(out_fd, &zero, sizeof(zero));
        return 1;
    }
    res.blobBytes = md.size();
    // With etcd there is no port: 1 says ready.
    const uint16_t port = use_etcd ? 1 : nixlAgentInternals::p2pPort(agent);
    writeAll(out_fd, &port, sizeof(port));
    std::vector<uint16_t> ports(n);
    if (!readAll(in_fd, ports.data(), ports.size() * sizeof(uint16_t))) {
        return 1;
    }
    if (use_etcd && agent.sendLocalMD() != NIXL_SUCCESS) {
        writeAll(out_fd, &res, sizeof(res));
        return 1;
    }
    for (int r = 0; r < n; ++r) {
        if (r == rank) {
            continue;
        }
        if (use_etcd) {
            agent.fetchRemoteMD("rank" + std::to_string(r));
            continue;
        }
        nixl_opt_args_t at;
        at.ipAddr = "127.0.0.1";
        at.port = ports[r];
        agent.fetchRemoteMD("rank" + std::to_string(r), &at);
    }
    // A fetch completes once its answer is loaded: wait for them instead of spinning on
    // checkRemoteMD, which would take the CPU from the listeners of a 2-core machine.
    nixlAgentInternals::waitMdIdle(agent, std::chrono::seconds(120));
    const nixl_xfer_dlist_t none(DRAM_SEG);
    bool all = true;
    for (int r = 0; r < n; ++r) {
        all = all && (r == rank || agent.checkRemoteMD("rank" + std::to_string(r), none) == NIXL_SUCCESS);
    }
    res.doneNs = all ? nowNs() : 0;
    const auto traffic = nixlAgentInternals::etcdTraffic(agent);
    res.etcdRequests = traffic.requests;
    res.etcdBytes = traffic.bytesSent;
    writeAll(out_fd, &res, sizeof(res));
    // Two steps to leave quietly: everyone forgets everyone, then everyone exits (a peer that
    // exits while others still hold its metadata is reported by UCX).
    char step = 0;
    readAll(in_fd, &step, 1);
    for (int r = 0; r < n; ++r) {
        if (r != rank) {
            agent.invalidateRemoteMD("rank" + std::to_string(r));
        }
    }
    writeAll(out_fd, &step, 1);
    readAll(in_fd, &step, 1);
    return all ? 0 : 1;
}

bool
runMesh(int n) {
    std::vector<int> to(n), from(n);
    std::vector<pid_t> pids(n);
    for (int r = 0; r < n; ++r) {
        int a[2], b[2];
        if (::pipe(a) != 0 || ::pipe(b) != 0) {
            return false;
        }
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(a[1]);
            ::close(b[0]);
            std::_Exit(child(r, n, a[0], b[1]));
        }
        ::close(a[0]);
        ::close(b[1]);
        to[r] = a[1];
        from[r] = b[0];
        pids[r] = pid;
    }
    std::vector<uint16_t> ports(n);
    bool ok = true;
    for (int r = 0; r < n; ++r) {
        ok = readAll(from[r], &ports[r], sizeof(uint16_t)) && ports[r] != 0 && ok;
    }
    const int64_t go = nowNs();
    for (int r = 0; r < n && ok; ++r) {
        writeAll(to[r], ports.data(), ports.size() * sizeof(uint16_t));
    }
    int64_t last = 0;
    uint64_t blob = 0;
    uint64_t maxReq = 0;
    uint64_t maxBytes = 0;
    for (int r = 0; r < n && ok; ++r) {
        childResult res;
        ok = readAll(from[r], &res, sizeof(res)) && res.doneNs != 0;
        last = std::max(last, res.doneNs);
        blob = std::max(blob, res.blobBytes);
        maxReq = std::max(maxReq, res.etcdRequests);
        maxBytes = std::max(maxBytes, res.etcdBytes);
    }
    char step = 1;
    for (int r = 0; r < n && ok; ++r) {
        writeAll(to[r], &step, 1);
    }
    for (int r = 0; r < n && ok; ++r) {
        readAll(from[r], &step, 1);
    }
    for (int r = 0; r < n; ++r) {
        ::close(to[r]);
        ::close(from[r]);
    }
    for (pid_t p : pids) {
        int st = 0;
        ::waitpid(p, &st, 0);
        ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    if (!ok) {
        std::printf("| %d | failed | | |\n", n);
        return false;
    }
    if (use_etcd) {
        std::printf("| %d | %.1f | %llu | %llu |\n", n, (last - go) / 1e6,
                    static_cast<unsigned long long>(maxReq),
                    static_cast<unsigned long long>(maxBytes));
        std::fflush(stdout);
        return true;
    }
    // Per process: N-1 fetches out (one connection each: HELLO + FETCH, answer LOAD), N-1
    // fetches served. Frame overhead: 16-byte headers, HELLO of 4 + name bytes.
    const uint64_t req = uint64_t(n - 1);
    std::printf("| %d | %.1f | %llu out, %llu served | %llu |\n", n, (last - go) / 1e6,
                static_cast<unsigned long long>(req), static_cast<unsigned long long>(req),
                static_cast<unsigned long long>(req * (blob + 16)));
    std::fflush(stdout);
    return true;
}

} // namespace

int
main(int argc, char **argv) {
    std::vector<int> sizes;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--backend" && i + 1 < argc) {
            backend_name = argv[++i];
            continue;
        }
        if (std::string(argv[i]) == "--etcd") {
            use_etcd = true;
            continue;
        }
        sizes.push_back(std::atoi(argv[i]));
    }
    if (sizes.empty()) {
        sizes = {2, 8, 32};
    }
    ::setenv("NIXL_P2P_BIND_ADDR", "127.0.0.1", 0);
    // 32 processes on 2 cores: an answer can wait longer than the default 5 s behind the
    // peer's own loads (each one thread). The figure is the time to the full mesh, so a
    // generous deadline; set NIXL_P2P_TIMEOUT_MS to measure with another.
    ::setenv("NIXL_P2P_TIMEOUT_MS", "60000", 0);
    if (use_etcd) {
#ifdef NIXL_MESH_ETCD
        // One server for all sizes, a namespace per size.
        nixl_test::etcdCluster server(nixl_test::etcdCluster::options{});
        ::setenv("NIXL_ETCD_ENDPOINTS", server.endpoints().c_str(), 1);
        ::setenv("NIXL_ETCD_REQUEST_TIMEOUT_MS", "60000", 0);
        std::printf("| N | time to full mesh (ms) | etcd requests per process (max) "
                    "| request bytes per process (max) |\n");
        std::printf("|---:|---:|---:|---:|\n");
        std::fflush(stdout); // before fork: children must not inherit unwritten output
        bool ok = true;
        for (int n : sizes) {
            const std::string ns = "/mesh-" + std::to_string(n) + "/";
            ::setenv("NIXL_ETCD_NAMESPACE", ns.c_str(), 1);
            ok = runMesh(n) && ok;
        }
        return ok ? 0 : 1;
#else
        std::fprintf(stderr, "p2p_mesh: built without etcd (libcurl or /usr/bin/etcd missing)\n");
        return 2;
#endif
    }
    std::printf("| N | time to full mesh (ms) | P2P requests per process | metadata bytes received per process |\n");
    std::printf("|---:|---:|---|---:|\n");
    std::fflush(stdout); // before fork: children must not inherit unwritten output
    bool ok = true;
    for (int n : sizes) {
        ok = runMesh(n) && ok;
    }
    return ok ? 0 : 1;
}
