/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file two_hosts_peer.cpp
 * @brief One side of the two-simulated-hosts test (two_hosts.py starts one in each namespace).
 *
 * two_hosts_peer initiator <listen-ip> <port>
 *     Agent "initiator" with the P2P listener on <listen-ip>:<port>. Prints "LISTENING" once
 *     the listener is bound, waits for the target's notification carrying two descriptor lists
 *     (where to WRITE, what to READ), WRITEs pattern A into the first with notification
 *     "write done", READs the second (pattern B) with notification "read done", checks every
 *     byte read, then waits until the target invalidated its metadata. Prints "INITIATOR OK".
 * two_hosts_peer target <initiator-ip> <port>
 *     Agent "target" without a listener: fetchRemoteMD/sendLocalMD to the initiator, sends the
 *     descriptor lists, waits for both notifications, checks every byte written, serves the
 *     READ, then invalidateLocalMD. Prints "TARGET OK".
 * two_hosts_peer initiator|target <initiator-ip> <port> etcd
 *     Metadata through etcd at http://<initiator-ip>:<port> instead (built with the etcd module
 *     only): no listener; each agent publishes its blob with nixlEtcdMetadata, fetches the
 *     other's (get, else watch) and loads it with loadRemoteMD. The target leaves by revoking its
 *     lease (its keys vanish); the initiator, watching the target's prefix, sees the DELETE and
 *     calls invalidateRemoteMD. The transfers are the same.
 * The backend is UCX, or the one TWO_HOSTS_BACKEND names (LIBFABRIC), created with defaults.
 * Both wait for a line on stdin before starting (the driver configures the network first) and
 * exit when stdin reaches EOF instead (the driver died). The target waits for a second line (or
 * EOF) before it exits: its exit destroys its network namespace, the veth pair and so the
 * initiator's address, on which etcd serves, and the initiator may still be revoking its lease. Exit status 0 on success, 1 otherwise;
 * the cause is printed on stderr. Public NIXL 1.4 API only.
 */

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "nixl.h"
#include "utils/serdes/serdes.h"

namespace {

/** UCX unless TWO_HOSTS_BACKEND names another backend plugin. */
std::string
backendName() {
    const char *b = std::getenv("TWO_HOSTS_BACKEND");
    return b != nullptr && *b != '\0' ? b : "UCX";
}

} // namespace
#ifdef TWO_HOSTS_ETCD
#include <atomic>
#include <memory>

#include "etcd_metadata.h"
#endif

namespace {

constexpr const char *initiator_name = "initiator";
constexpr const char *target_name = "target";
constexpr const char *write_notif = "write done";
constexpr const char *read_notif = "read done";
constexpr size_t buf_len = 8 << 20;
// Generous: the test machine may be shared by several builds.
constexpr auto timeout = std::chrono::seconds(120);

uint8_t
patternA(size_t i) {
    return static_cast<uint8_t>((i * 131u + 7u) >> 3);
}

uint8_t
patternB(size_t i) {
    return static_cast<uint8_t>((i * 29u + 101u) ^ (i >> 11));
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

/** Polls until pred is true; false after the timeout. */
template<typename Pred>
bool
poll(Pred pred) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
        ::usleep(200); // yield the core; the condition is re-checked, not timed
    }
    return false;
}

/** Blocks until the driver writes a line; false on EOF (the driver is gone). */
bool
waitGo() {
    std::string line;
    return static_cast<bool>(std::getline(std::cin, line));
}

nixl_reg_dlist_t
regList(std::vector<uint8_t> &buf) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, ""));
    return l;
}

nixl_xfer_dlist_t
xferList(const std::vector<uint8_t> &buf) {
    nixl_xfer_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0));
    return l;
}

template<typename Fn>
bool
verify(const std::vector<uint8_t> &buf, Fn pattern, const char *who, const char *what) {
    for (size_t i = 0; i < buf.size(); ++i) {
        if (buf[i] != pattern(i)) {
            std::cerr << who << ": " << what << ": byte " << i << " is " << int(buf[i])
                      << ", expected " << int(pattern(i)) << std::endl;
            return false;
        }
    }
    return true;
}

bool
transfer(nixlAgent &agent,
         nixl_xfer_op_t op,
         const nixl_xfer_dlist_t &local,
         const nixl_xfer_dlist_t &remote,
         const char *notif,
         const char *me) {
    nixl_opt_args_t args;
    args.notif = std::string(notif);
    nixlXferReqH *req = nullptr;
    if (!check(agent.createXferReq(op, local, remote, target_name, req, &args), "createXferReq",
               me)) {
        return false;
    }
    nixl_status_t st = agent.postXferReq(req);
    const bool done = poll([&] {
        return st != NIXL_IN_PROG || (st = agent.getXferStatus(req)) != NIXL_IN_PROG;
    });
    agent.releaseXferReq(req);
    if (!done) {
        std::cerr << me << ": " << notif << ": transfer did not complete" << std::endl;
        return false;
    }
    return check(st, notif, me);
}

/** Where the metadata goes: the P2P listener (ip:port of the initiator) or etcd at that URL. */
struct mdPlan {
    std::string ip;
    uint16_t port = 0;
    bool etcd = false;
};

#ifdef TWO_HOSTS_ETCD
/** Publishes our blob, fetches the peer's and loads it; md is started here. */
bool
etcdExchange(nixlAgent &agent,
             nixlEtcdMetadata &md,
             const std::string &peer,
             const char *me,
             int64_t &revision) {
    std::string blob;
    std::string theirs;
    std::string loaded;
    if (!check(md.start(), "etcd start", me) || !check(agent.getLocalMD(blob), "getLocalMD", me) ||
        !check(md.publish(nixl_etcd_metadata_label, blob), "etcd publish", me) ||
        !check(md.fetch(peer, nixl_etcd_metadata_label,
                        std::chrono::duration_cast<std::chrono::milliseconds>(timeout), theirs,
                        &revision),
               "etcd fetch", me) ||
        !check(agent.loadRemoteMD(theirs, loaded), "loadRemoteMD", me)) {
        return false;
    }
    if (loaded != peer) {
        std::cerr << me << ": etcd gave the metadata of " << loaded << ", not " << peer
                  << std::endl;
        return false;
    }
    return true;
}

std::unique_ptr<nixlEtcdMetadata>
etcdMetadata(const char *me, const mdPlan &plan) {
    nixlEtcdConfig cfg;
    cfg.endpoints = {"http://" + plan.ip + ":" + std::to_string(plan.port)};
    cfg.requestTimeout = std::chrono::milliseconds(30000); // a busy machine
    return std::make_unique<nixlEtcdMetadata>(me, cfg);
}
#endif

int
runInitiator(const mdPlan &plan) {
    const char *me = initiator_name;
    if (!waitGo()) {
        return 1;
    }
    // P2P: the listener on ip:port (throws, exit != 0, when it cannot be bound). etcd: none.
    nixlAgentConfig cfg(true, !plan.etcd, plan.port);
    cfg.syncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT;
    nixlAgent agent(me, cfg);
    nixlBackendH *ucx = nullptr;
    std::vector<uint8_t> src(buf_len);
    std::vector<uint8_t> dst(buf_len, 0);
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = patternA(i);
    }
    if (!check(agent.createBackend(backendName(), {}, ucx), "createBackend", me) ||
        !check(agent.registerMem(regList(src)), "registerMem", me) ||
        !check(agent.registerMem(regList(dst)), "registerMem", me)) {
        return 1;
    }
    // P2P: the listener is bound (constructor). etcd: the target may start; we meet there.
    std::cout << "LISTENING" << std::endl;
#ifdef TWO_HOSTS_ETCD
    std::unique_ptr<nixlEtcdMetadata> md;
    std::atomic<bool> target_left{false};
    if (plan.etcd) {
        int64_t revision = 0;
        md = etcdMetadata(me, plan);
        if (!etcdExchange(agent, *md, target_name, me, revision) ||
            !check(md->watchAgent(target_name, revision,
                                  [&](const std::string &, nixl_etcd_event_type_t type,
                                      const std::string &label) {
                                      if (type == nixl_etcd_event_type_t::DELETE &&
                                          label == nixl_etcd_metadata_label) {
                                          target_left = true;
                                      }
                                  }),
                   "etcd watchAgent", me)) {
            return 1;
        }
    }
#endif
    nixl_notifs_t notifs;
    if (!poll([&] {
            agent.getNotifs(notifs);
            return !notifs[target_name].empty();
        })) {
        std::cerr << me << ": nothing from the target" << std::endl;
        return 1;
    }
    nixlSerDes sd;
    if (!check(sd.importStr(notifs[target_name].front()), "importStr", me)) {
        return 1;
    }
    const nixl_xfer_dlist_t write_to(&sd);
    const nixl_xfer_dlist_t read_from(&sd);
    if (write_to.descCount() != 1 || write_to[0].len != buf_len || read_from.descCount() != 1 ||
        read_from[0].len != buf_len) {
        std::cerr << me << ": unexpected descriptor lists from the target" << std::endl;
        return 1;
    }
    if (!poll([&] { return agent.checkRemoteMD(target_name, write_to) == NIXL_SUCCESS; })) {
        std::cerr << me << ": the target's metadata did not arrive" << std::endl;
        return 1;
    }
    if (!transfer(agent, NIXL_WRITE, xferList(src), write_to, write_notif, me) ||
        !transfer(agent, NIXL_READ, xferList(dst), read_from, read_notif, me) ||
        !verify(dst, patternB, me, "READ")) {
        return 1;
    }
    std::cout << me << ": wrote and read " << buf_len << " bytes each way" << std::endl;
    const nixl_xfer_dlist_t none(DRAM_SEG);
#ifdef TWO_HOSTS_ETCD
    // The target leaves by revoking its lease: its keys vanish, and we forget it.
    if (plan.etcd) {
        if (!poll([&] { return target_left.load(); })) {
            std::cerr << me << ": the target's metadata key was not deleted" << std::endl;
            return 1;
        }
        if (!check(agent.invalidateRemoteMD(target_name), "invalidateRemoteMD", me)) {
            return 1;
        }
    }
#endif
    // The target leaves with invalidateLocalMD (P2P) once it checked the WRITE.
    if (!poll([&] { return agent.checkRemoteMD(target_name, none) == NIXL_ERR_NOT_FOUND; })) {
        std::cerr << me << ": the target did not invalidate its metadata" << std::endl;
        return 1;
    }
    std::cout << "INITIATOR OK" << std::endl;
    return 0;
}

int
runTarget(const mdPlan &plan) {
    const char *me = target_name;
    if (!waitGo()) {
        return 1;
    }
    // No listener; a fetch loads the answer on the metadata thread, hence a locking mode.
    nixlAgentConfig cfg(true);
    cfg.syncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT;
    nixlAgent agent(me, cfg);
    nixlBackendH *ucx = nullptr;
    std::vector<uint8_t> landing(buf_len, 0);
    std::vector<uint8_t> source(buf_len);
    for (size_t i = 0; i < source.size(); ++i) {
        source[i] = patternB(i);
    }
    if (!check(agent.createBackend(backendName(), {}, ucx), "createBackend", me) ||
        !check(agent.registerMem(regList(landing)), "registerMem", me) ||
        !check(agent.registerMem(regList(source)), "registerMem", me)) {
        return 1;
    }
    nixl_opt_args_t peer;
    peer.ipAddr = plan.ip;
    peer.port = plan.port;
#ifdef TWO_HOSTS_ETCD
    std::unique_ptr<nixlEtcdMetadata> md;
    if (plan.etcd) {
        int64_t revision = 0;
        md = etcdMetadata(me, plan);
        if (!etcdExchange(agent, *md, initiator_name, me, revision)) {
            return 1;
        }
    }
#endif
    if (!plan.etcd && (!check(agent.fetchRemoteMD(initiator_name, &peer), "fetchRemoteMD", me) ||
                       !check(agent.sendLocalMD(&peer), "sendLocalMD", me))) {
        return 1;
    }
    const nixl_xfer_dlist_t none(DRAM_SEG);
    if (!poll([&] { return agent.checkRemoteMD(initiator_name, none) == NIXL_SUCCESS; })) {
        std::cerr << me << ": the initiator's metadata did not arrive" << std::endl;
        return 1;
    }
    nixlSerDes sd;
    if (!check(xferList(landing).serialize(&sd), "serialize", me) ||
        !check(xferList(source).serialize(&sd), "serialize", me) ||
        !check(agent.genNotif(initiator_name, sd.exportStr()), "genNotif", me)) {
        return 1;
    }
    // Both notifications, in order: each follows its transfer's data (NIXL's guarantee).
    std::vector<std::string> got;
    if (!poll([&] {
            nixl_notifs_t notifs;
            agent.getNotifs(notifs);
            for (auto &n : notifs[initiator_name]) {
                got.push_back(n);
            }
            return got.size() >= 2;
        })) {
        std::cerr << me << ": " << got.size() << " of 2 notifications arrived" << std::endl;
        return 1;
    }
    if (got.size() != 2 || got[0] != write_notif || got[1] != read_notif) {
        std::cerr << me << ": unexpected notifications" << std::endl;
        return 1;
    }
    if (!verify(landing, patternA, me, "WRITE")) {
        return 1;
    }
    std::cout << me << ": verified " << buf_len << " bytes written" << std::endl;
#ifdef TWO_HOSTS_ETCD
    if (plan.etcd) {
        md.reset(); // revokes the lease: our keys are deleted, the initiator sees it
    }
#endif
    if (!plan.etcd && !check(agent.invalidateLocalMD(&peer), "invalidateLocalMD", me)) {
        return 1;
    }
    std::cout << "TARGET OK" << std::endl;
    // Our network namespace holds the veth pair, and with it the address etcd serves on: stay
    // until the driver says the initiator is done (its lease revoke must still reach etcd).
    waitGo();
    return 0;
}

} // namespace

int
main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && std::string(argv[4]) == "etcd")) {
        std::cerr << "usage: two_hosts_peer initiator|target <ip> <port> [etcd]" << std::endl;
        return 2;
    }
    const std::string role = argv[1];
    const long port = std::strtol(argv[3], nullptr, 10);
    if (port <= 0 || port > 65535) {
        std::cerr << "two_hosts_peer: bad port " << argv[3] << std::endl;
        return 2;
    }
    mdPlan plan;
    plan.ip = argv[2];
    plan.port = static_cast<uint16_t>(port);
    plan.etcd = argc == 5;
#ifndef TWO_HOSTS_ETCD
    if (plan.etcd) {
        std::cerr << "two_hosts_peer: built without the etcd module" << std::endl;
        return 2;
    }
#endif
    if (role == "initiator") {
        ::setenv("NIXL_P2P_BIND_ADDR", argv[2], 1);
        return runInitiator(plan);
    }
    if (role == "target") {
        return runTarget(plan);
    }
    std::cerr << "two_hosts_peer: unknown role " << role << std::endl;
    return 2;
}
