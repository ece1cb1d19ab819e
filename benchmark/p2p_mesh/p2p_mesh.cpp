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
 * Usage: p2p_mesh [--etcd] [--backend UCX|TEST] [--xfer] [N ...]   (default: UCX, 2 8 32)
 *
 * --backend TEST separates the exchange from the backend's own cost: the TEST backend's
 * connection info loads in microseconds (it cannot move data between processes, so not with
 * --xfer); UCX checks a same-host peer at load and builds its workers at first use
 * (docs/metadata.md, Speed). Run it with NIXL_LOG_LEVEL=ERROR: the TEST backend warns
 * once per peer that the peer's engine is not in this process.
 *
 * With --etcd the processes meet through an etcd server the benchmark starts on 127.0.0.1
 * (/usr/bin/etcd, test/common/etcd_server): no listener; after "go" each process publishes
 * (sendLocalMD) and fetches every other one (fetchRemoteMD, get or watch), and reports the
 * HTTP requests and request bytes it sent to etcd over its whole life (lease grant, prefix key
 * and keepalives included).
 *
 * With --xfer (UCX only) the mesh is followed by two rounds of transfers: in each, every process
 * WRITEs 4 KiB with a notification to every peer in turn (rank r starts with r+1), one
 * request at a time (create, post, wait, release), then waits for the N-1 notifications of the
 * round and checks the data each peer wrote. Round one is every connection's first use (UCX
 * builds a same-host peer's private workers there, docs/backends/ucx.md), round two the same
 * transfers warm. Reported per round: the time from the round's "go" until the last process
 * has sent everything and received and checked everything, and the time of one transfer
 * (create to release) over all N(N-1) of them: median, 90th percentile, largest.
 *
 * The processes fork before any agent exists, build their agents (not timed), report their
 * listen port, and wait for the port list. The clock is CLOCK_MONOTONIC, shared by all
 * processes: the parent takes "go" before it sends the list, each child reports the moment its
 * last peer was loaded.
 */

#include <sched.h>
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
bool use_xfer = false;
std::string backend_name = "UCX";

// --xfer: a 4 KiB slot per sender; round k writes to region k-1 of the peer's buffer.
constexpr size_t xfer_slot = 4096;
constexpr size_t xfer_region = 512 * 1024;
constexpr int xfer_max_ranks = static_cast<int>(xfer_region / xfer_slot);

char
xferPattern(int round, int sender, size_t i) {
    return static_cast<char>(round * 37 + sender * 7 + static_cast<int>(i % 251) + 1);
}

struct roundResult {
    int64_t doneNs = 0; ///< sent all, received and checked all; 0 = failed
};

struct childResult {
    int64_t doneNs = 0; ///< all peers loaded; 0 = failed
    uint64_t blobBytes = 0; ///< our full metadata's size
    uint64_t etcdRequests = 0; ///< HTTP requests to etcd (with --etcd)
    uint64_t etcdBytes = 0; ///< their request bytes
};

// One round of --xfer: a WRITE with a notification to every peer, one at a time, then the
// N-1 notifications of the round, each checked against the data its sender wrote. Returns the
// moment all of it was done (0 on any failure, with a line on stderr); `times` gets the time
// of each transfer from create to release.
int64_t
xferRound(nixlAgent &agent,
          int rank,
          int n,
          int round,
          std::vector<char> &buf,
          const std::vector<uint64_t> &addrs,
          std::vector<int64_t> &times) {
    const size_t region = size_t(round - 1) * xfer_region;
    char *mine = buf.data() + region + size_t(rank) * xfer_slot;
    for (size_t i = 0; i < xfer_slot; ++i) {
        mine[i] = xferPattern(round, rank, i);
    }
    const std::string tag = "r" + std::to_string(round) + ":";
    for (int k = 1; k < n; ++k) {
        const int peer = (rank + k) % n;
        const std::string peer_name = "rank" + std::to_string(peer);
        const int64_t t0 = nowNs();
        nixl_xfer_dlist_t local(DRAM_SEG), remote(DRAM_SEG);
        local.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(mine), xfer_slot, 0));
        remote.addDesc(
            nixlBasicDesc(addrs[peer] + region + size_t(rank) * xfer_slot, xfer_slot, 0));
        nixl_opt_args_t extra;
        extra.hasNotif = true;
        extra.notifMsg = tag + std::to_string(rank);
        nixlXferReqH *req = nullptr;
        nixl_status_t st = agent.createXferReq(NIXL_WRITE, local, remote, peer_name, req, &extra);
        if (st == NIXL_SUCCESS) {
            st = agent.postXferReq(req);
            while (st == NIXL_IN_PROG) {
                ::sched_yield(); // 32 processes share 2 cores: leave them the CPU
                st = agent.getXferStatus(req);
            }
        }
        if (req != nullptr) {
            agent.releaseXferReq(req);
        }
        if (st != NIXL_SUCCESS) {
            std::fprintf(stderr, "rank%d: round %d WRITE to %s: %s\n", rank, round,
                         peer_name.c_str(), nixlEnumStrings::statusStr(st).c_str());
            return 0;
        }
        times.push_back(nowNs() - t0);
    }
    std::vector<bool> seen(size_t(n), false);
    int missing = n - 1;
    const int64_t deadline = nowNs() + int64_t(120) * 1000000000;
    while (missing > 0 && nowNs() < deadline) {
        nixl_notifs_t notifs;
        if (agent.getNotifs(notifs) != NIXL_SUCCESS) {
            std::fprintf(stderr, "rank%d: getNotifs failed\n", rank);
            return 0;
        }
        for (const auto &[from, msgs] : notifs) {
            for (const auto &m : msgs) {
                const int sender = m.rfind(tag, 0) == 0 ? std::atoi(m.c_str() + tag.size()) : -1;
                if (sender < 0 || sender >= n || sender == rank || seen[size_t(sender)] ||
                    from != "rank" + std::to_string(sender)) {
                    std::fprintf(stderr, "rank%d: round %d: unexpected notification '%s' from %s\n",
                                 rank, round, m.c_str(), from.c_str());
                    return 0;
                }
                const char *slot = buf.data() + region + size_t(sender) * xfer_slot;
                for (size_t i = 0; i < xfer_slot; ++i) {
                    if (slot[i] != xferPattern(round, sender, i)) {
                        std::fprintf(stderr, "rank%d: round %d: byte %zu from %s is wrong\n",
                                     rank, round, i, from.c_str());
                        return 0;
                    }
                }
                seen[size_t(sender)] = true;
                --missing;
            }
        }
        if (missing > 0) {
            ::usleep(100); // not a synchronisation: a poll interval that leaves the CPU to others
        }
    }
    if (missing > 0) {
        std::fprintf(stderr, "rank%d: round %d: %d notification(s) missing after 120 s\n", rank,
                     round, missing);
        return 0;
    }
    return nowNs();
}

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
    const uint64_t my_addr = reinterpret_cast<uintptr_t>(buf.data());
    res.blobBytes = md.size();
    // With etcd there is no port: 1 says ready.
    const uint16_t port = use_etcd ? 1 : nixlAgentInternals::p2pPort(agent);
    writeAll(out_fd, &port, sizeof(port));
    writeAll(out_fd, &my_addr, sizeof(my_addr));
    std::vector<uint16_t> ports(n);
    std::vector<uint64_t> addrs(n);
    if (!readAll(in_fd, ports.data(), ports.size() * sizeof(uint16_t)) ||
        !readAll(in_fd, addrs.data(), addrs.size() * sizeof(uint64_t))) {
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
    if (use_xfer && all) {
        for (int round = 1; round <= 2; ++round) {
            char go = 0;
            if (!readAll(in_fd, &go, 1)) {
                return 1;
            }
            std::vector<int64_t> times;
            const int64_t done = xferRound(agent, rank, n, round, buf, addrs, times);
            writeAll(out_fd, &done, sizeof(done));
            times.resize(size_t(n - 1), 0);
            writeAll(out_fd, times.data(), times.size() * sizeof(int64_t));
            all = all && done != 0;
        }
    }
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

struct xferFigures {
    double roundMs = 0;
    double medianMs = 0;
    double p90Ms = 0;
    double maxMs = 0;
};

void
printHeader(const char *mesh_header, const char *mesh_rule) {
    if (use_xfer) {
        std::printf("| N | time to full mesh (ms) | first round (ms) | first transfer per peer: "
                    "median / p90 / max (ms) | second round (ms) | second transfer per peer: "
                    "median / p90 / max (ms) |\n");
        std::printf("|---:|---:|---:|---:|---:|---:|\n");
    } else {
        std::printf("%s\n%s\n", mesh_header, mesh_rule);
    }
    std::fflush(stdout); // before fork: children must not inherit unwritten output
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
    std::vector<uint64_t> addrs(n);
    bool ok = true;
    for (int r = 0; r < n; ++r) {
        ok = readAll(from[r], &ports[r], sizeof(uint16_t)) && ports[r] != 0 && ok;
        ok = ok && readAll(from[r], &addrs[r], sizeof(uint64_t));
    }
    const int64_t go = nowNs();
    for (int r = 0; r < n && ok; ++r) {
        writeAll(to[r], ports.data(), ports.size() * sizeof(uint16_t));
        writeAll(to[r], addrs.data(), addrs.size() * sizeof(uint64_t));
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
    xferFigures rounds[2];
    for (int round = 0; round < 2 && use_xfer && ok; ++round) {
        const int64_t round_go = nowNs();
        char go_byte = 1;
        for (int r = 0; r < n; ++r) {
            writeAll(to[r], &go_byte, 1);
        }
        int64_t round_last = 0;
        std::vector<int64_t> all_times;
        for (int r = 0; r < n && ok; ++r) {
            int64_t done = 0;
            std::vector<int64_t> times(size_t(n - 1));
            ok = readAll(from[r], &done, sizeof(done)) &&
                readAll(from[r], times.data(), times.size() * sizeof(int64_t)) && done != 0;
            round_last = std::max(round_last, done);
            all_times.insert(all_times.end(), times.begin(), times.end());
        }
        std::sort(all_times.begin(), all_times.end());
        rounds[round].roundMs = (round_last - round_go) / 1e6;
        rounds[round].medianMs = all_times[all_times.size() / 2] / 1e6;
        rounds[round].p90Ms = all_times[all_times.size() * 9 / 10] / 1e6;
        rounds[round].maxMs = all_times.back() / 1e6;
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
    if (use_xfer) {
        std::printf("| %d | %.1f | %.1f | %.2f / %.2f / %.2f | %.1f | %.2f / %.2f / %.2f |\n", n,
                    (last - go) / 1e6, rounds[0].roundMs, rounds[0].medianMs, rounds[0].p90Ms,
                    rounds[0].maxMs, rounds[1].roundMs, rounds[1].medianMs, rounds[1].p90Ms,
                    rounds[1].maxMs);
        std::fflush(stdout);
        return true;
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
        if (std::string(argv[i]) == "--xfer") {
            use_xfer = true;
            continue;
        }
        sizes.push_back(std::atoi(argv[i]));
    }
    if (sizes.empty()) {
        sizes = {2, 8, 32};
    }
    for (int n : sizes) {
        if (n < 2 || (use_xfer && n > xfer_max_ranks)) {
            std::fprintf(stderr, "p2p_mesh: N must be 2..%d\n", use_xfer ? xfer_max_ranks : 1000);
            return 2;
        }
    }
    if (use_xfer && backend_name != "UCX") {
        std::fprintf(stderr, "p2p_mesh: --xfer needs a backend that moves data between "
                             "processes (UCX)\n");
        return 2;
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
        printHeader("| N | time to full mesh (ms) | etcd requests per process (max) "
                    "| request bytes per process (max) |",
                    "|---:|---:|---:|---:|");
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
    printHeader("| N | time to full mesh (ms) | P2P requests per process | metadata bytes "
                "received per process |",
                "|---:|---:|---|---:|");
    bool ok = true;
    for (int n : sizes) {
        ok = runMesh(n) && ok;
    }
    return ok ? 0 : 1;
}
