/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file p2p_two_process.cpp
 * @brief Two processes meet through the agents' P2P metadata exchange (no blobs handled by the
 *        application), then move data with the UCX backend.
 *
 * The process forks before any agent exists. The parent is agent "initiator": it listens for
 * metadata (nixlAgentConfig::useListenThread) on 127.0.0.1 at a port it picks, and tells the
 * child that port over a pipe, the one thing a deployment would put in its configuration. The
 * child is agent "target":
 *   1. fetchRemoteMD("initiator") and sendLocalMD() to that listener: both agents now know each
 *      other (checkRemoteMD polls for it);
 *   2. genNotif sends the initiator the descriptor list of its 16 MiB buffer (nixlSerDes);
 *   3. it waits for the notification of the initiator's WRITE and checks every byte;
 *   4. invalidateLocalMD() makes the initiator forget it, then it exits.
 * Public NIXL 1.4 API only. Exit status 0 when the data arrived intact.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nixl.h"
#include "utils/serdes/serdes.h"

namespace {

constexpr const char *initiator_name = "initiator";
constexpr const char *target_name = "target";
constexpr const char *notif_text = "data is in place";
constexpr size_t buf_len = 16 << 20;
constexpr auto timeout = std::chrono::seconds(30);

uint8_t
patternByte(size_t i) {
    return static_cast<uint8_t>((i * 131u + 7u) >> 3);
}

bool
check(nixl_status_t status, const char *what, const char *who) {
    if (status != NIXL_SUCCESS) {
        std::cerr << who << ": " << what << " failed: " << nixlEnumStrings::statusStr(status)
                  << std::endl;
        return false;
    }
    return true;
}

/** Polls until pred is true or the timeout passes. */
template<typename Pred>
bool
poll(Pred pred) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
    }
    return false;
}

/** A port that is free now: bind port 0, read it, close. Someone may take it before the agent
 *  binds it, so the caller retries when the agent's constructor throws. */
uint16_t
freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    uint16_t port = 0;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0) {
        port = ntohs(a.sin_port);
    }
    if (fd >= 0) {
        ::close(fd);
    }
    return port;
}

nixl_reg_dlist_t
regList(std::vector<uint8_t> &buf) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, ""));
    return l;
}

nixl_xfer_dlist_t
xferList(uintptr_t addr, size_t len) {
    nixl_xfer_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBasicDesc(addr, len, 0));
    return l;
}

int
runTarget(int pipe_fd) {
    const char *me = target_name;
    uint16_t port = 0;
    if (::read(pipe_fd, &port, sizeof(port)) != sizeof(port) || port == 0) {
        std::cerr << me << ": no port from the initiator" << std::endl;
        return 1;
    }
    // No listener: this agent only pushes and fetches. A fetch loads the answer on the
    // metadata thread, so the agent must lock (a sync mode other than NONE).
    nixlAgentConfig cfg(true);
    cfg.syncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT;
    nixlAgent agent(me, cfg);
    nixlBackendH *ucx = nullptr;
    std::vector<uint8_t> buf(buf_len, 0);
    if (!check(agent.createBackend("UCX", {}, ucx), "createBackend(UCX)", me) ||
        !check(agent.registerMem(regList(buf)), "registerMem", me)) {
        return 1;
    }
    nixl_opt_args_t peer;
    peer.ipAddr = "127.0.0.1";
    peer.port = port;
    if (!check(agent.fetchRemoteMD(initiator_name, &peer), "fetchRemoteMD", me) ||
        !check(agent.sendLocalMD(&peer), "sendLocalMD", me)) {
        return 1;
    }
    const nixl_xfer_dlist_t none(DRAM_SEG);
    if (!poll([&] { return agent.checkRemoteMD(initiator_name, none) == NIXL_SUCCESS; })) {
        std::cerr << me << ": the initiator's metadata did not arrive" << std::endl;
        return 1;
    }
    // Where to write: the descriptor list of the buffer, as a notification.
    nixlSerDes sd;
    if (!check(xferList(reinterpret_cast<uintptr_t>(buf.data()), buf.size()).serialize(&sd),
               "serialize", me) ||
        !check(agent.genNotif(initiator_name, sd.exportStr()), "genNotif", me)) {
        return 1;
    }
    nixl_notifs_t notifs;
    if (!poll([&] {
            agent.getNotifs(notifs);
            return !notifs[initiator_name].empty();
        })) {
        std::cerr << me << ": no notification from the initiator" << std::endl;
        return 1;
    }
    if (notifs[initiator_name].front() != notif_text) {
        std::cerr << me << ": unexpected notification" << std::endl;
        return 1;
    }
    for (size_t i = 0; i < buf.size(); ++i) {
        if (buf[i] != patternByte(i)) {
            std::cerr << me << ": byte " << i << " differs" << std::endl;
            return 1;
        }
    }
    std::cout << me << ": verified " << buf.size() << " bytes" << std::endl;
    // Leave cleanly: the initiator forgets us. Destroying the agent right after is fine, the
    // queued message still goes out.
    return check(agent.invalidateLocalMD(&peer), "invalidateLocalMD", me) ? 0 : 1;
}

int
runInitiator(int pipe_fd, pid_t child) {
    const char *me = initiator_name;
    std::unique_ptr<nixlAgent> agent;
    uint16_t port = 0;
    for (int attempt = 0; attempt < 10 && !agent; ++attempt) {
        port = freePort();
        nixlAgentConfig cfg(true, true, port);
        try {
            agent = std::make_unique<nixlAgent>(me, cfg);
        }
        catch (const std::runtime_error &e) {
            std::cerr << me << ": port " << port << " was taken (" << e.what() << "), retrying"
                      << std::endl;
        }
    }
    if (!agent) {
        return 1;
    }
    nixlBackendH *ucx = nullptr;
    std::vector<uint8_t> src(buf_len);
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = patternByte(i);
    }
    if (!check(agent->createBackend("UCX", {}, ucx), "createBackend(UCX)", me) ||
        !check(agent->registerMem(regList(src)), "registerMem", me)) {
        return 1;
    }
    if (::write(pipe_fd, &port, sizeof(port)) != sizeof(port)) {
        return 1;
    }
    // The target pushes its metadata, then sends where to write.
    nixl_notifs_t notifs;
    if (!poll([&] {
            agent->getNotifs(notifs);
            return !notifs[target_name].empty();
        })) {
        std::cerr << me << ": nothing from the target" << std::endl;
        return 1;
    }
    nixlSerDes sd;
    if (!check(sd.importStr(notifs[target_name].front()), "importStr", me)) {
        return 1;
    }
    const nixl_xfer_dlist_t remote(&sd);
    if (remote.descCount() != 1 || remote[0].len != src.size()) {
        std::cerr << me << ": unexpected descriptor list" << std::endl;
        return 1;
    }
    // The target's push may still be on its way when its notification is here.
    if (!poll([&] { return agent->checkRemoteMD(target_name, remote) == NIXL_SUCCESS; })) {
        std::cerr << me << ": the target's metadata did not arrive" << std::endl;
        return 1;
    }
    nixl_opt_args_t args;
    args.notif = std::string(notif_text);
    nixlXferReqH *req = nullptr;
    if (!check(agent->createXferReq(NIXL_WRITE,
                                    xferList(reinterpret_cast<uintptr_t>(src.data()), src.size()),
                                    remote, target_name, req, &args),
               "createXferReq", me)) {
        return 1;
    }
    nixl_status_t st = agent->postXferReq(req);
    poll([&] { return st != NIXL_IN_PROG || (st = agent->getXferStatus(req)) != NIXL_IN_PROG; });
    agent->releaseXferReq(req);
    if (!check(st, "WRITE", me)) {
        return 1;
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::cerr << me << ": the target failed" << std::endl;
        return 1;
    }
    // The target's invalidateLocalMD was answered before it exited.
    const nixl_xfer_dlist_t none(DRAM_SEG);
    if (agent->checkRemoteMD(target_name, none) != NIXL_ERR_NOT_FOUND) {
        std::cerr << me << ": the target's metadata is still loaded" << std::endl;
        return 1;
    }
    std::cout << me << ": wrote " << src.size() << " bytes; the target verified them and left"
              << std::endl;
    return 0;
}

} // namespace

int
main() {
    // The listener only on this host: the example needs nothing else.
    ::setenv("NIXL_P2P_BIND_ADDR", "127.0.0.1", 0);
    int fds[2];
    if (::pipe(fds) != 0) {
        return 1;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        return 1;
    }
    if (pid == 0) {
        ::close(fds[1]);
        std::exit(runTarget(fds[0]));
    }
    ::close(fds[0]);
    const int rc = runInitiator(fds[1], pid);
    ::close(fds[1]);
    if (rc != 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    return rc;
}
