/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// A NIXL 1.4 peer and a libnixl agent find each other through one real etcd (issue 33 item 4)
// and move data over UCX both ways. A is this binary re-executed with "--nixl-peer" and
// NIXL_METADATA_FORMAT=nixl: it publishes NIXL 1.4's blob alone, as a NIXL agent does. B is a
// default libnixl agent in the gtest process. Metadata goes only through etcd: A's full blob
// under "metadata" and a partial one (connection info and its buffer) under the label "kv",
// which B fetches; B's full blob, which A fetches. Then each side WRITEs into and READs from
// the other with a notification, every byte checked, and each side's invalidateLocalMD makes
// the other drop it. B loads A from NIXL's forms: its UCX connection to A says so
// ("NIXL peer: no identity data", UCP path).
//
// Nothing waits on time: what arrives is awaited with waitFor (a generous deadline turning a
// hang into a failure). Teardown follows docs/backends/ucx.md (Limits): notifications have gone
// both ways before A leaves, and B is destroyed after A has exited.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "agent/exchange.h"
#include "common/nixl_log.h"
#include "etcd_client.h"
#include "nixl.h"
#include "../../common/etcd_server.h"
#include "../../common/log_capture.h"
#include "../../common/scoped_env.h"

extern char **environ;

namespace {

using namespace std::chrono_literals;

// Two processes with UCX and etcd on a busy 2-core machine: generous.
constexpr auto hang_deadline = 120s;
constexpr size_t region = 256 * 1024;
/** Each side's buffer: [0] its pattern (source of its WRITE, target of the peer's READ),
 *  [1] what the peer WRITEs, [2] what it READs from the peer. */
constexpr size_t regions = 3;
constexpr const char *part_label = "kv";

uint8_t
pattern(char owner, size_t i) {
    return static_cast<uint8_t>(owner * 29 + i * 11 + (i >> 9));
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
    char buf[512];
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
say(FILE *f, const std::string &line) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fflush(f);
}

nixl_xfer_dlist_t
xferOf(uintptr_t addr, size_t len) {
    nixl_xfer_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBasicDesc(addr, len, 0));
    return l;
}

/** One side: a UCX agent meeting its peer through etcd, with its three regions registered. */
struct side_t {
    char me;
    std::string peer;
    std::vector<uint8_t> buf = std::vector<uint8_t>(regions * region, 0);
    nixl_reg_dlist_t reg{DRAM_SEG};
    std::unique_ptr<nixlAgent> agent;

    side_t(char name, char other) : me(name), peer(1, other) {
        for (size_t i = 0; i < region; ++i) {
            buf[i] = pattern(me, i);
        }
        reg.addDesc(nixlBlobDesc(addr(0), buf.size(), 0, ""));
    }

    uintptr_t
    addr(size_t r) const {
        return reinterpret_cast<uintptr_t>(buf.data()) + r * region;
    }

    /** Returns "" or what went wrong. */
    std::string
    start() {
        nixlAgentConfig cfg;
        cfg.useProgThread = true;
        cfg.etcdWatchTimeout = std::chrono::microseconds(hang_deadline);
        agent = std::make_unique<nixlAgent>(std::string(1, me), cfg);
        nixlBackendH *ucx = nullptr;
        if (agent->createBackend("UCX", {}, ucx) != NIXL_SUCCESS) {
            return "UCX backend";
        }
        if (agent->registerMem(reg) != NIXL_SUCCESS) {
            return "registerMem";
        }
        return "";
    }

    /** The peer's metadata with its buffer at peer_addr is loaded. */
    bool
    hasPeer(uintptr_t peer_addr) const {
        return agent->checkRemoteMD(peer, xferOf(peer_addr, regions * region)) == NIXL_SUCCESS;
    }

    bool
    peerDropped() const {
        return agent->checkRemoteMD(peer, nixl_xfer_dlist_t(DRAM_SEG)) != NIXL_SUCCESS;
    }

    /** One transfer between a local and a remote region, with a notification; "" or why not. */
    std::string
    xfer(nixl_xfer_op_t op, size_t local_r, uintptr_t remote, const std::string &notif) {
        nixl_opt_args_t extra;
        extra.notif = notif;
        extra.hasNotif = true;
        nixlXferReqH *req = nullptr;
        nixl_status_t st = agent->createXferReq(op, xferOf(addr(local_r), region),
                                                xferOf(remote, region), peer, req, &extra);
        if (st != NIXL_SUCCESS) {
            return notif + ": createXferReq " + nixlEnumStrings::statusStr(st);
        }
        st = agent->postXferReq(req);
        if (st == NIXL_IN_PROG) {
            waitFor([&] { return (st = agent->getXferStatus(req)) != NIXL_IN_PROG; });
        }
        agent->releaseXferReq(req);
        return st == NIXL_SUCCESS ? "" : notif + ": " + nixlEnumStrings::statusStr(st);
    }

    /** WRITE our region 0 into the peer's region 1, READ the peer's region 0 into our 2. */
    std::string
    writeAndRead(uintptr_t peer_addr) {
        std::string err = xfer(NIXL_WRITE, 0, peer_addr + region, std::string("write from ") + me);
        if (err.empty()) {
            err = xfer(NIXL_READ, 2, peer_addr, std::string("read from ") + me);
        }
        return err;
    }

    /** Both notifications of the peer arrived and regions 1 and 2 hold its pattern. */
    std::string
    checkPeerData() {
        std::multiset<std::string> got;
        const bool all = waitFor([&] {
            nixl_notifs_t notifs;
            agent->getNotifs(notifs);
            for (auto &[who, msgs] : notifs) {
                for (auto &m : msgs) {
                    got.insert(who + ": " + m);
                }
            }
            return got.size() >= 2;
        });
        const std::multiset<std::string> want{peer + ": write from " + peer,
                                              peer + ": read from " + peer};
        if (!all || got != want) {
            std::string s = "notifications:";
            for (auto &g : got) {
                s += " [" + g + "]";
            }
            return s;
        }
        for (size_t r = 1; r < regions; ++r) {
            for (size_t i = 0; i < region; ++i) {
                if (buf[r * region + i] != pattern(peer[0], i)) {
                    return "region " + std::to_string(r) + " byte " + std::to_string(i) +
                        " differs";
                }
            }
        }
        return "";
    }
};

/** Agent A, a NIXL 1.4 peer (NIXL_METADATA_FORMAT=nixl in its environment), driven by line
 *  commands on stdin; answers on stdout. */
int
nixlPeerMain() {
    side_t a('A', 'B');
    if (std::string err = a.start(); !err.empty()) {
        say(stdout, "error " + err);
        return 1;
    }
    nixl_opt_args_t part;
    part.metadataLabel = part_label;
    part.includeConnInfo = true;
    if (a.agent->sendLocalMD() != NIXL_SUCCESS ||
        a.agent->sendLocalPartialMD(a.reg, &part) != NIXL_SUCCESS ||
        a.agent->fetchRemoteMD("B") != NIXL_SUCCESS) {
        say(stdout, "error sendLocalMD/sendLocalPartialMD/fetchRemoteMD");
        return 1;
    }
    say(stdout, "ready " + std::to_string(a.addr(0)));
    uintptr_t b_addr = 0;
    for (std::string line; readLine(stdin, line);) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd == "go") {
            in >> b_addr;
            if (!waitFor([&] { return a.hasPeer(b_addr); })) {
                say(stdout, "error B's metadata not loaded from etcd");
                continue;
            }
            std::string err = a.writeAndRead(b_addr);
            if (err.empty()) {
                err = a.checkPeerData();
            }
            say(stdout, err.empty() ? "ok" : "error " + err);
        } else if (cmd == "invalidate") {
            const bool ok = a.agent->invalidateLocalMD() == NIXL_SUCCESS &&
                nixlAgentInternals::waitMdIdle(
                    *a.agent, std::chrono::duration_cast<std::chrono::milliseconds>(hang_deadline));
            say(stdout, ok ? "ok" : "error invalidateLocalMD");
        } else if (cmd == "await-drop") {
            say(stdout, waitFor([&] { return a.peerDropped(); }) ? "dropped" : "still loaded");
        } else if (cmd == "exit") {
            a.agent.reset();
            return 0;
        } else {
            return 2;
        }
    }
    return 1;
}

struct child_t {
    pid_t pid = -1;
    FILE *out = nullptr; // its stdout
    FILE *in = nullptr; // its stdin
};

/** This binary as A, with NIXL_METADATA_FORMAT=nixl added to our environment (ours keeps the
 *  default: B is a libnixl agent). */
child_t
spawnNixlPeer() {
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
    std::vector<std::string> env_s;
    for (char **e = environ; *e != nullptr; ++e) {
        if (std::strncmp(*e, "NIXL_METADATA_FORMAT=", 21) != 0) {
            env_s.emplace_back(*e);
        }
    }
    env_s.emplace_back("NIXL_METADATA_FORMAT=nixl");
    std::vector<char *> envp;
    for (auto &e : env_s) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    std::string self = "/proc/self/exe";
    std::string flag = "--nixl-peer";
    char *argv[] = {self.data(), flag.data(), nullptr};
    if (posix_spawn(&c.pid, self.c_str(), &fa, nullptr, argv, envp.data()) != 0) {
        c.pid = -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    ::close(to[0]);
    ::close(from[1]);
    c.in = ::fdopen(to[1], "w");
    c.out = ::fdopen(from[0], "r");
    return c;
}

/** DEBUG logging for the scope: the UCX engine's connection line names the data path. */
struct debugLog {
    nixl::log::level old = nixl::log::getLevel();

    debugLog() {
        nixl::log::setLevel(nixl::log::level::DEBUG);
    }

    ~debugLog() {
        nixl::log::setLevel(old);
    }
};

/** The lines of log that contain every needle. */
std::string
linesWith(const std::string &log, std::initializer_list<std::string_view> needles) {
    std::istringstream in(log);
    std::string out;
    for (std::string line; std::getline(in, line);) {
        bool all = true;
        for (auto n : needles) {
            all = all && line.find(n) != std::string::npos;
        }
        if (all) {
            out += line + "\n";
        }
    }
    return out;
}

TEST(EtcdNixlPeer, ANixlPeerAndALibnixlAgentMeetThroughEtcdAndTransferBothWays) {
    nixl_test::etcdCluster server(nixl_test::etcdCluster::options{});
    const std::string ns = "/nixl-peer-test/";
    nixl_test::scopedEnv ep("NIXL_ETCD_ENDPOINTS", server.endpoints().c_str());
    nixl_test::scopedEnv rt("NIXL_ETCD_REQUEST_TIMEOUT_MS", "60000");
    nixl_test::scopedEnv nsv("NIXL_ETCD_NAMESPACE", ns.c_str());
    nixl_test::scopedEnv fmt("NIXL_METADATA_FORMAT", nullptr);

    nixl_test::stderrReader log;
    debugLog debug;
    child_t kid = spawnNixlPeer();
    ASSERT_GT(kid.pid, 0);
    auto reap = [&](bool kill) {
        if (kid.pid > 0) {
            if (kill) {
                ::kill(kid.pid, SIGKILL);
            }
            int status = 0;
            ::waitpid(kid.pid, &status, 0);
            kid.pid = -1;
            return status;
        }
        return -1;
    };
    auto ask = [&](const std::string &cmd) {
        say(kid.in, cmd);
        std::string line;
        return readLine(kid.out, line) ? line : std::string("(A exited)");
    };

    side_t b('B', 'A');
    std::string err = b.start();
    ASSERT_EQ(err, "");
    ASSERT_EQ(b.agent->sendLocalMD(), NIXL_SUCCESS);
    nixl_opt_args_t part;
    part.metadataLabel = part_label;
    ASSERT_EQ(b.agent->fetchRemoteMD("A", &part), NIXL_SUCCESS);

    std::string ready;
    if (!readLine(kid.out, ready) || ready.rfind("ready ", 0) != 0) {
        reap(true);
        FAIL() << "A: " << ready << "\n" << linesWith(log.text(), {"[nixl E"});
    }
    const uintptr_t a_addr = std::stoull(ready.substr(6));

    // What etcd holds: A's values are NIXL 1.4's blob alone, B's the combined one (NIXL's
    // layout plus the libnixl section), under NIXL's keys.
    {
        nixlEtcdConfig cfg;
        std::string why;
        ASSERT_TRUE(nixlEtcdConfig::parseEndpoints(server.endpoints(), false, cfg.endpoints, why))
            << why;
        cfg.nameSpace = ns;
        nixlEtcdClient raw(std::move(cfg));
        std::optional<nixlEtcdKv> kv;
        for (const char *key : {"/A/metadata", "/A/kv"}) {
            ASSERT_TRUE(waitFor([&] {
                return raw.get(ns + key, kv) == NIXL_SUCCESS && kv.has_value();
            })) << key;
            EXPECT_EQ(kv->value.find("libnixl"), std::string::npos) << key;
        }
        ASSERT_EQ(raw.get(ns + "/A/", kv), NIXL_SUCCESS);
        ASSERT_TRUE(kv.has_value());
        EXPECT_EQ(kv->value, "");
        ASSERT_EQ(raw.get(ns + "/B/metadata", kv), NIXL_SUCCESS);
        ASSERT_TRUE(kv.has_value());
        std::string blob;
        ASSERT_EQ(b.agent->getLocalMD(blob), NIXL_SUCCESS);
        EXPECT_EQ(kv->value, blob);
        EXPECT_NE(kv->value.find("libnixl"), std::string::npos);
    }

    // B loaded A's partial blob (label "kv") from etcd.
    ASSERT_TRUE(waitFor([&] { return b.hasPeer(a_addr); })) << linesWith(log.text(), {"[nixl E"});
    // B: WRITE and READ with notifications; then A does the same and checks what B did.
    EXPECT_EQ(b.writeAndRead(a_addr), "");
    EXPECT_EQ(ask("go " + std::to_string(b.addr(0))), "ok");
    EXPECT_EQ(b.checkPeerData(), "");

    // B took A for a NIXL peer: UCP path, for want of the identity data NIXL's blob lacks.
    const std::string conn = linesWith(log.text(), {"agent B: UCX connection to A"});
    EXPECT_NE(conn.find("ucp_put/get (NIXL peer: no identity data)"), std::string::npos)
        << "B's connection line(s) to A:\n"
        << conn;

    // A's invalidateLocalMD deletes its keys: B's watch drops A.
    EXPECT_EQ(ask("invalidate"), "ok");
    EXPECT_TRUE(waitFor([&] { return b.peerDropped(); }));
    // B's invalidateLocalMD: A's watch drops B.
    ASSERT_EQ(b.agent->invalidateLocalMD(), NIXL_SUCCESS);
    EXPECT_EQ(ask("await-drop"), "dropped");

    say(kid.in, "exit");
    const int status = reap(false);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    std::fclose(kid.in);
    std::fclose(kid.out);
    b.agent.reset();
    log.restore();
    if (::testing::Test::HasFailure()) {
        std::fprintf(stderr, "%s", linesWith(log.text(), {"[nixl E"}).c_str());
    }
}

} // namespace

int
main(int argc, char **argv) {
    if (argc == 2 && std::strcmp(argv[1], "--nixl-peer") == 0) {
        return nixlPeerMain();
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
