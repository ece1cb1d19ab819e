/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Eight processes find each other through etcd (sendLocalMD / fetchRemoteMD without ipAddr)
// and each WRITEs verified data with a notification to every other one over UCX. As
// "etcd_mesh_test --mesh-peer I N" the binary is one of the processes; the gtest process only
// starts them, hands out buffer addresses (which metadata does not carry) and orders teardown.
//
// Teardown follows docs/backends/ucx.md (Limits): every pair has exchanged a notification each
// way before anyone leaves, then the processes destroy their agents one after the other, each
// told to only once the previous one has exited.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "agent/exchange.h"
#include "nixl.h"
#include "../../common/etcd_server.h"
#include "../../common/scoped_env.h"

extern char **environ;

namespace {

using namespace std::chrono_literals;

constexpr size_t procs = 8;
constexpr size_t chunk = 64 * 1024;
// Eight processes with UCX on a busy 2-core machine: generous, a hang becomes a failure.
constexpr auto hang_deadline = 240s;

uint8_t
pattern(size_t from, size_t to, size_t i) {
    return static_cast<uint8_t>(from * 31 + to * 7 + i * 13 + (i >> 8));
}

std::string
peerName(size_t i) {
    return "mesh" + std::to_string(i);
}

bool
waitFor(const std::function<bool()> &pred) {
    const auto end = std::chrono::steady_clock::now() + hang_deadline;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(5ms); // polling interval, not synchronisation
    }
    return pred();
}

bool
readLine(FILE *f, std::string &line) {
    char buf[4096];
    if (std::fgets(buf, sizeof(buf), f) == nullptr) {
        return false;
    }
    line = buf;
    while (!line.empty() && line.back() == '\n') {
        line.pop_back();
    }
    return true;
}

void
say(const std::string &line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

/** One mesh process; returns its exit code, reports progress and errors on stdout. */
int
meshPeer(size_t me, size_t n) {
    nixlAgentConfig cfg;
    cfg.useProgThread = true;
    cfg.etcdWatchTimeout = std::chrono::microseconds(hang_deadline);
    auto agent = std::make_unique<nixlAgent>(peerName(me), cfg);
    nixlBackendH *ucx = nullptr;
    if (agent->createBackend("UCX", {}, ucx) != NIXL_SUCCESS) {
        say("error UCX backend");
        return 1;
    }
    // recv: region j receives from process j; src: region j goes to process j.
    std::vector<uint8_t> recv(n * chunk, 0);
    std::vector<uint8_t> src(n * chunk);
    for (size_t j = 0; j < n; ++j) {
        for (size_t i = 0; i < chunk; ++i) {
            src[j * chunk + i] = pattern(me, j, i);
        }
    }
    nixl_reg_dlist_t reg(DRAM_SEG);
    reg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(recv.data()), recv.size(), 0, ""));
    reg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(src.data()), src.size(), 0, ""));
    if (agent->registerMem(reg) != NIXL_SUCCESS || agent->sendLocalMD() != NIXL_SUCCESS) {
        say("error registerMem/sendLocalMD");
        return 1;
    }
    for (size_t j = 0; j < n; ++j) {
        if (j != me && agent->fetchRemoteMD(peerName(j)) != NIXL_SUCCESS) {
            say("error fetchRemoteMD");
            return 1;
        }
    }
    say("ready " + std::to_string(reinterpret_cast<uintptr_t>(recv.data())));
    std::string line;
    if (!readLine(stdin, line)) {
        return 1;
    }
    std::istringstream in(line);
    std::string word;
    in >> word;
    std::vector<uintptr_t> addrs(n);
    for (auto &a : addrs) {
        in >> a;
    }
    if (word != "addrs" || !in) {
        say("error bad addrs line");
        return 1;
    }
    // Every peer's metadata arrives through etcd (get, or a watch while it had not published).
    for (size_t j = 0; j < n; ++j) {
        if (j == me) {
            continue;
        }
        nixl_xfer_dlist_t dst(DRAM_SEG);
        dst.addDesc(nixlBasicDesc(addrs[j] + me * chunk, chunk, 0));
        if (!waitFor([&] { return agent->checkRemoteMD(peerName(j), dst) == NIXL_SUCCESS; })) {
            say("error metadata of " + peerName(j) + " not loaded");
            return 1;
        }
    }
    for (size_t j = 0; j < n; ++j) {
        if (j == me) {
            continue;
        }
        nixl_xfer_dlist_t local(DRAM_SEG);
        local.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(src.data()) + j * chunk, chunk, 0));
        nixl_xfer_dlist_t remote(DRAM_SEG);
        remote.addDesc(nixlBasicDesc(addrs[j] + me * chunk, chunk, 0));
        nixl_opt_args_t extra;
        extra.notif = "from " + peerName(me);
        extra.hasNotif = true;
        nixlXferReqH *req = nullptr;
        if (agent->createXferReq(NIXL_WRITE, local, remote, peerName(j), req, &extra) !=
            NIXL_SUCCESS) {
            say("error createXferReq to " + peerName(j));
            return 1;
        }
        nixl_status_t st = agent->postXferReq(req);
        if (st == NIXL_IN_PROG &&
            !waitFor([&] { return (st = agent->getXferStatus(req)) != NIXL_IN_PROG; })) {
            say("error write to " + peerName(j) + " did not complete");
            return 1;
        }
        agent->releaseXferReq(req);
        if (st != NIXL_SUCCESS) {
            say("error write to " + peerName(j) + ": " + std::to_string(st));
            return 1;
        }
    }
    std::map<std::string, std::vector<std::string>> got;
    const bool all = waitFor([&] {
        nixl_notifs_t notifs;
        agent->getNotifs(notifs);
        for (auto &[who, msgs] : notifs) {
            got[who].insert(got[who].end(), msgs.begin(), msgs.end());
        }
        return got.size() == n - 1;
    });
    if (!all) {
        say("error notifications from " + std::to_string(got.size()) + " peers");
        return 1;
    }
    for (size_t j = 0; j < n; ++j) {
        if (j == me) {
            continue;
        }
        if (got[peerName(j)] != std::vector<std::string>{"from " + peerName(j)}) {
            say("error wrong notification from " + peerName(j));
            return 1;
        }
        for (size_t i = 0; i < chunk; ++i) {
            if (recv[j * chunk + i] != pattern(j, me, i)) {
                say("error byte " + std::to_string(i) + " from " + peerName(j) + " differs");
                return 1;
            }
        }
    }
    // The fetch thread counts a fetch just after loading it (checkRemoteMD can see the peer a
    // moment earlier), so wait for the count instead of reading it once.
    waitFor([&] { return nixlAgentInternals::etcdStats(*agent).fetched >= n - 1; });
    say("done " + std::to_string(nixlAgentInternals::etcdStats(*agent).fetched));
    if (!readLine(stdin, line) || line != "exit") {
        return 1;
    }
    agent.reset();
    return 0;
}

struct child_t {
    pid_t pid = -1;
    FILE *out = nullptr; // its stdout
    FILE *in = nullptr; // its stdin
};

child_t
spawnPeer(size_t me, size_t n) {
    int to[2];
    int from[2];
    child_t c;
    if (::pipe(to) != 0 || ::pipe(from) != 0) {
        return c;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, from[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, to[1]);
    posix_spawn_file_actions_addclose(&fa, from[0]);
    std::string self = "/proc/self/exe";
    std::string flag = "--mesh-peer";
    std::string a1 = std::to_string(me);
    std::string a2 = std::to_string(n);
    char *argv[] = {self.data(), flag.data(), a1.data(), a2.data(), nullptr};
    if (posix_spawn(&c.pid, self.c_str(), &fa, nullptr, argv, environ) != 0) {
        c.pid = -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    ::close(to[0]);
    ::close(from[1]);
    c.in = ::fdopen(to[1], "w");
    c.out = ::fdopen(from[0], "r");
    return c;
}

TEST(EtcdMesh, EightProcessesMeetThroughEtcdAndWriteToEachOther) {
    nixl_test::etcdCluster server(nixl_test::etcdCluster::options{});
    nixl_test::scopedEnv ep("NIXL_ETCD_ENDPOINTS", server.endpoints().c_str());
    nixl_test::scopedEnv rt("NIXL_ETCD_REQUEST_TIMEOUT_MS", "60000");
    nixl_test::scopedEnv ns("NIXL_ETCD_NAMESPACE", "/mesh-test/");
    std::vector<child_t> kids;
    for (size_t i = 0; i < procs; ++i) {
        kids.push_back(spawnPeer(i, procs));
        ASSERT_GT(kids.back().pid, 0);
    }
    auto killAll = [&] {
        for (auto &k : kids) {
            if (k.pid > 0) {
                ::kill(k.pid, SIGKILL);
                ::waitpid(k.pid, nullptr, 0);
                k.pid = -1;
            }
        }
    };
    std::string addrs = "addrs";
    for (size_t i = 0; i < procs; ++i) {
        std::string line;
        if (!readLine(kids[i].out, line) || line.rfind("ready ", 0) != 0) {
            killAll();
            FAIL() << peerName(i) << ": " << line;
        }
        addrs += " " + line.substr(6);
    }
    for (auto &k : kids) {
        std::fprintf(k.in, "%s\n", addrs.c_str());
        std::fflush(k.in);
    }
    for (size_t i = 0; i < procs; ++i) {
        std::string line;
        if (!readLine(kids[i].out, line) || line != "done " + std::to_string(procs - 1)) {
            killAll();
            FAIL() << peerName(i) << ": " << line;
        }
    }
    for (size_t i = 0; i < procs; ++i) {
        std::fprintf(kids[i].in, "exit\n");
        std::fflush(kids[i].in);
        int status = 0;
        ASSERT_EQ(::waitpid(kids[i].pid, &status, 0), kids[i].pid);
        kids[i].pid = -1;
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << peerName(i) << ": " << status;
        std::fclose(kids[i].in);
        std::fclose(kids[i].out);
    }
}

} // namespace

int
main(int argc, char **argv) {
    if (argc == 4 && std::strcmp(argv[1], "--mesh-peer") == 0) {
        return meshPeer(std::stoul(argv[2]), std::stoul(argv[3]));
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
