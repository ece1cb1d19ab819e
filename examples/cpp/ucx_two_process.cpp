/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Two processes move data with the UCX backend:
 *
 *   1. The process forks. The parent is agent "initiator", the child agent "target"; each creates
 *      a UCX backend and registers a DRAM buffer.
 *   2. They swap metadata blobs (and the target's buffer address) over a socketpair. In a real
 *      deployment the blobs travel over the network; the API calls are the same.
 *      The target runs the agent's progress thread (nixlAgentConfig(true)), so transfers that
 *      need its help complete while it waits on the socket.
 *   3. The initiator WRITEs its buffer into the target's with a notification. The target waits
 *      for the notification, checks every byte and answers with a notification of its own.
 *   4. The initiator READs the target's buffer back into a third buffer and checks every byte.
 *   5. Teardown in a fixed order: the initiator destroys its agent, then tells the target, which
 *      destroys its own. Neither process goes while the other still talks to it, and a
 *      notification each way has completed UCX's connection setup in both directions first
 *      (UCX 1.13's tcp transport can abort a process whose endpoint fails with a setup message
 *      still queued).
 *
 *   NIXL_PLUGIN_DIR=build/src/plugins build/examples/ucx_two_process [--size BYTES]
 *       [--backend UCX|LIBFABRIC]
 *
 * --backend LIBFABRIC moves the same data over the LIBFABRIC backend instead (shm between these
 * two processes of one host); every step is the same, only the backend name changes.
 *
 * Prints "verified <n> bytes ..." and exits 0 on success.
 */
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "nixl.h"

namespace {

/** The backend plugin both agents use (--backend); set once in main, before the fork. */
std::string backend_name = "UCX";

constexpr const char *initiator_name = "initiator";
constexpr const char *target_name = "target";
constexpr const char *notif_text = "data is in place";
constexpr const char *reply_text = "data verified";
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

// Length-prefixed frames over the socketpair.
bool
sendFrame(int fd, const std::string &s) {
    const uint64_t len = s.size();
    std::string buf(reinterpret_cast<const char *>(&len), sizeof(len));
    buf += s;
    size_t off = 0;
    while (off < buf.size()) {
        const ssize_t n = ::write(fd, buf.data() + off, buf.size() - off);
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
readAll(int fd, void *dst, size_t len) {
    auto *p = static_cast<char *>(dst);
    while (len > 0) {
        const ssize_t n = ::read(fd, p, len);
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
recvFrame(int fd, std::string &out) {
    uint64_t len = 0;
    if (!readAll(fd, &len, sizeof(len)) || len > (64u << 20)) {
        return false;
    }
    out.resize(len);
    return len == 0 || readAll(fd, out.data(), len);
}

nixl_reg_dlist_t
regList(std::vector<uint8_t> &buf) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, ""));
    return l;
}

nixl_xfer_dlist_t
xferList(uintptr_t addr, size_t size) {
    nixl_xfer_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBasicDesc(addr, size, 0));
    return l;
}

size_t
firstMismatch(const std::vector<uint8_t> &buf) {
    for (size_t i = 0; i < buf.size(); ++i) {
        if (buf[i] != patternByte(i)) {
            return i;
        }
    }
    return buf.size();
}

bool
waitXfer(nixlAgent &agent, nixlXferReqH *req, const char *what) {
    nixl_status_t st = agent.postXferReq(req);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (st == NIXL_IN_PROG && std::chrono::steady_clock::now() < deadline) {
        st = agent.getXferStatus(req);
    }
    const bool ok = check(st, what, initiator_name);
    return check(agent.releaseXferReq(req), "releaseXferReq", initiator_name) && ok;
}

// Polls getNotifs until `text` arrives from `from`, or the timeout passes.
bool
awaitNotif(nixlAgent &agent, const char *self, const char *from, const char *text) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        nixl_notifs_t notifs;
        if (!check(agent.getNotifs(notifs), "getNotifs", self)) {
            return false;
        }
        for (const nixl_blob_t &msg : notifs[from]) {
            if (msg == text) {
                return true;
            }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    std::cerr << self << ": no notification '" << text << "' from " << from << " within "
              << timeout.count() << " s" << std::endl;
    return false;
}

int
targetMain(int fd, size_t size) {
    // Declared before the agent so that it outlives it: registered memory must stay mapped
    // until the agent (and its backends) are gone.
    std::vector<uint8_t> buf(size, 0);
    // The progress thread lets transfers that need the target's help (READ over tcp, where UCX
    // emulates RMA with messages) complete while this process blocks on the socket.
    nixlAgent agent(target_name, nixlAgentConfig(true));
    nixlBackendH *backend = nullptr;
    if (!check(agent.createBackend(backend_name, {}, backend), "createBackend", target_name)) {
        return 1;
    }
    nixl_reg_dlist_t reg = regList(buf);
    nixl_blob_t md;
    if (!check(agent.registerMem(reg), "registerMem", target_name) ||
        !check(agent.getLocalMD(md), "getLocalMD", target_name) || !sendFrame(fd, md) ||
        !sendFrame(fd, std::to_string(reinterpret_cast<uintptr_t>(buf.data())))) {
        return 1;
    }
    std::string peer_md;
    std::string peer;
    if (!recvFrame(fd, peer_md) || !check(agent.loadRemoteMD(peer_md, peer), "loadRemoteMD",
                                          target_name)) {
        return 1;
    }

    // The notification arrives only after the data it announces is visible here.
    if (!awaitNotif(agent, target_name, initiator_name, notif_text)) {
        return 1;
    }
    const size_t bad = firstMismatch(buf);
    if (bad != size) {
        std::cerr << target_name << ": byte " << bad << " differs after the WRITE" << std::endl;
        return 1; // the initiator sees no reply and fails too
    }
    std::cout << target_name << " (pid " << ::getpid() << "): notification '" << notif_text
              << "' received, " << size << " bytes verified" << std::endl;
    // The reply also completes UCX's connection setup from this side (see step 5 above).
    std::string gone;
    if (!check(agent.genNotif(initiator_name, reply_text), "genNotif", target_name) ||
        !recvFrame(fd, gone) || gone != "gone") {
        return 1;
    }
    agent.invalidateRemoteMD(initiator_name);
    return check(agent.deregisterMem(reg), "deregisterMem", target_name) ? 0 : 1;
}

int
runInitiator(int fd, std::vector<uint8_t> &src, std::vector<uint8_t> &dst) {
    const size_t size = src.size();
    nixlAgent agent(initiator_name, nixlAgentConfig(false));
    nixlBackendH *backend = nullptr;
    if (!check(agent.createBackend(backend_name, {}, backend), "createBackend", initiator_name)) {
        std::cerr << "ucx_two_process: is libplugin_" << backend_name
                  << ".so in NIXL_PLUGIN_DIR or next to libnixl?" << std::endl;
        return 1;
    }
    for (size_t i = 0; i < size; ++i) {
        src[i] = patternByte(i);
    }
    nixl_reg_dlist_t src_reg = regList(src);
    nixl_reg_dlist_t dst_reg = regList(dst);
    if (!check(agent.registerMem(src_reg), "registerMem(src)", initiator_name) ||
        !check(agent.registerMem(dst_reg), "registerMem(dst)", initiator_name)) {
        return 1;
    }
    std::string target_md;
    std::string addr;
    std::string peer;
    nixl_blob_t md;
    if (!recvFrame(fd, target_md) || !recvFrame(fd, addr) ||
        !check(agent.loadRemoteMD(target_md, peer), "loadRemoteMD", initiator_name) ||
        !check(agent.getLocalMD(md), "getLocalMD", initiator_name) || !sendFrame(fd, md)) {
        return 1;
    }
    const uintptr_t remote = std::strtoull(addr.c_str(), nullptr, 10);

    nixl_opt_args_t write_opts;
    write_opts.notifMsg = notif_text;
    write_opts.hasNotif = true;
    nixlXferReqH *req = nullptr;
    if (!check(agent.createXferReq(NIXL_WRITE,
                                   xferList(reinterpret_cast<uintptr_t>(src.data()), size),
                                   xferList(remote, size),
                                   target_name,
                                   req,
                                   &write_opts),
               "createXferReq(WRITE)",
               initiator_name) ||
        !waitXfer(agent, req, "WRITE")) {
        return 1;
    }
    std::cout << initiator_name << " (pid " << ::getpid() << "): WRITE of " << size
              << " bytes with notification completed" << std::endl;
    if (!awaitNotif(agent, initiator_name, target_name, reply_text)) {
        std::cerr << initiator_name << ": target did not confirm the data" << std::endl;
        return 1;
    }

    if (!check(agent.createXferReq(NIXL_READ,
                                   xferList(reinterpret_cast<uintptr_t>(dst.data()), size),
                                   xferList(remote, size),
                                   target_name,
                                   req),
               "createXferReq(READ)",
               initiator_name) ||
        !waitXfer(agent, req, "READ")) {
        return 1;
    }
    const size_t bad = firstMismatch(dst);
    if (bad != size) {
        std::cerr << initiator_name << ": byte " << bad << " differs after the READ" << std::endl;
        return 1;
    }
    agent.invalidateRemoteMD(target_name);
    const bool ok = check(agent.deregisterMem(dst_reg), "deregisterMem", initiator_name) &&
        check(agent.deregisterMem(src_reg), "deregisterMem", initiator_name);
    std::cout << "verified " << size << " bytes between two processes over " << backend_name
              << " "
              << "(WRITE with notification, READ back)" << std::endl;
    return ok ? 0 : 1;
}

int
initiatorMain(int fd, size_t size) {
    // The buffers outlive the agent: registered memory stays mapped until the agent is gone.
    std::vector<uint8_t> src(size);
    std::vector<uint8_t> dst(size, 0);
    const int rc = runInitiator(fd, src, dst);
    // Only now, with this agent destroyed, may the target destroy its own (step 5 above).
    if (rc == 0 && !sendFrame(fd, "gone")) {
        return 1;
    }
    return rc;
}

} // namespace

int
main(int argc, char **argv) {
    size_t size = 16u << 20;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            size = std::strtoull(argv[++i], nullptr, 0);
        } else if (std::strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            backend_name = argv[++i];
        } else {
            std::cerr << "usage: " << argv[0] << " [--size BYTES] [--backend UCX|LIBFABRIC]"
                      << std::endl;
            return 2;
        }
    }
    if (size == 0) {
        std::cerr << "ucx_two_process: --size must be positive" << std::endl;
        return 2;
    }
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        std::perror("socketpair");
        return 1;
    }
    // Fork before any agent exists: no threads to lose in the child.
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::perror("fork");
        return 1;
    }
    if (pid == 0) {
        ::close(sv[0]);
        std::_Exit(targetMain(sv[1], size));
    }
    ::close(sv[1]);
    int rc = initiatorMain(sv[0], size);
    ::close(sv[0]); // unblocks a target waiting for a frame if the initiator failed
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::cerr << "ucx_two_process: target process failed (status " << status << ")"
                  << std::endl;
        rc = 1;
    }
    return rc;
}
