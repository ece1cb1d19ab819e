/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_two_process.cpp
 * @brief Two processes meet through etcd (NIXL_ETCD_ENDPOINTS; no blobs, addresses or ports
 *        handled by the application), then move data with the UCX backend.
 *
 * Run with NIXL_ETCD_ENDPOINTS pointing at an etcd (v3.4 or later), for example
 *   etcd --data-dir /tmp/e --listen-client-urls http://127.0.0.1:2379 \
 *        --advertise-client-urls http://127.0.0.1:2379 &
 *   NIXL_ETCD_ENDPOINTS=127.0.0.1:2379 ./build/examples/etcd_two_process
 * The process forks before any agent exists; parent = agent "initiator", child = "target":
 *   1. each publishes its metadata (sendLocalMD) and asks for the other's (fetchRemoteMD): the
 *      agent reads it from etcd, or watches until it appears (etcdWatchTimeout);
 *   2. the target sends the initiator the descriptor list of its 16 MiB buffer (genNotif);
 *   3. the initiator WRITEs with a notification; the target checks every byte;
 *   4. the target withdraws (invalidateLocalMD deletes its keys); the initiator, watching the
 *      target's keys, drops its metadata by itself.
 * Public NIXL 1.4 API only. Exit status 0 when the data arrived intact.
 */

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
constexpr auto timeout = std::chrono::seconds(90);

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

/** An agent with the UCX backend; the etcd exchange comes from NIXL_ETCD_ENDPOINTS. */
std::unique_ptr<nixlAgent>
makeAgent(const char *me, nixlBackendH *&ucx) {
    // A progress thread: each side's UCX work moves while the application waits elsewhere.
    nixlAgentConfig cfg(true);
    // How long a fetch watches for a peer that has not published yet (the other process may
    // still be starting).
    cfg.etcdWatchTimeout = std::chrono::seconds(60);
    auto agent = std::make_unique<nixlAgent>(me, cfg);
    if (!check(agent->createBackend("UCX", {}, ucx), "createBackend(UCX)", me)) {
        return nullptr;
    }
    return agent;
}

int
runTarget() {
    const char *me = target_name;
    nixlBackendH *ucx = nullptr;
    auto agentp = makeAgent(me, ucx);
    if (!agentp) {
        return 1;
    }
    nixlAgent &agent = *agentp;
    std::vector<uint8_t> buf(buf_len, 0);
    if (!check(agent.registerMem(regList(buf)), "registerMem", me) ||
        !check(agent.sendLocalMD(), "sendLocalMD", me) ||
        !check(agent.fetchRemoteMD(initiator_name), "fetchRemoteMD", me)) {
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
    // Leave cleanly: our keys leave etcd. Destroying the agent right after is fine, the queued
    // delete still runs (and a process that dies without it loses its keys with its lease).
    return check(agent.invalidateLocalMD(), "invalidateLocalMD", me) ? 0 : 1;
}

int
runInitiator(pid_t child) {
    const char *me = initiator_name;
    nixlBackendH *ucx = nullptr;
    auto agent = makeAgent(me, ucx);
    if (!agent) {
        return 1;
    }
    std::vector<uint8_t> src(buf_len);
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = patternByte(i);
    }
    if (!check(agent->registerMem(regList(src)), "registerMem", me) ||
        !check(agent->sendLocalMD(), "sendLocalMD", me) ||
        !check(agent->fetchRemoteMD(target_name), "fetchRemoteMD", me)) {
        return 1;
    }
    // The target sends where to write once it has our metadata.
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
    // Our fetch of the target's metadata may still be on its way.
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
    // Its keys are gone from etcd; our watch of them drops its metadata.
    const nixl_xfer_dlist_t none(DRAM_SEG);
    if (!poll([&] { return agent->checkRemoteMD(target_name, none) == NIXL_ERR_NOT_FOUND; })) {
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
    const char *eps = std::getenv("NIXL_ETCD_ENDPOINTS");
    if (eps == nullptr || *eps == '\0') {
        std::cerr << "set NIXL_ETCD_ENDPOINTS to an etcd (for example 127.0.0.1:2379)" << std::endl;
        return 2;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        return 1;
    }
    if (pid == 0) {
        std::exit(runTarget());
    }
    const int rc = runInitiator(pid);
    if (rc != 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    return rc;
}
