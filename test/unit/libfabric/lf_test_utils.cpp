/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "lf_test_utils.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace nixl_lf_test {

std::unique_ptr<lfAgent>
lfAgent::make(const std::string &name, const lfSetup &setup, nixl_status_t *st) {
    auto a = std::make_unique<lfAgent>();
    a->name = name;
    nixlAgentConfig cfg(setup.progThread, false, default_comm_port, setup.sync, 1, 0);
    a->agent = std::make_unique<nixlAgent>(name, cfg);
    nixl_b_params_t params = setup.extra;
    if (!setup.provider.empty()) {
        params["provider"] = setup.provider;
    }
    nixl_status_t s = a->agent->createBackend("LIBFABRIC", params, a->backend);
    if (st != nullptr) {
        *st = s;
    }
    return s == NIXL_SUCCESS ? std::move(a) : nullptr;
}

nixl_status_t
lfAgent::registerDram(uintptr_t addr, size_t len) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(addr, len, 0, ""));
    return agent->registerMem(l);
}

std::string
lfAgent::md() const {
    nixl_blob_t blob;
    agent->getLocalMD(blob);
    return blob;
}

// ---------------------------------------------------------------------------------------------

namespace {

    bool
    readFull(int fd, char *p, size_t len, std::chrono::steady_clock::time_point end) {
        while (len > 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                end - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return false;
            }
            pollfd pfd{fd, POLLIN, 0};
            int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r <= 0) {
                return false;
            }
            ssize_t n = ::read(fd, p, len);
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

} // namespace

bool
recvFrame(int fd, std::string &out, std::chrono::steady_clock::duration deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    uint64_t len = 0;
    if (!readFull(fd, reinterpret_cast<char *>(&len), sizeof(len), end) || len > (1ULL << 32)) {
        return false;
    }
    out.assign(len, '\0');
    return readFull(fd, out.data(), len, end);
}

peerProcess::~peerProcess() {
    if (pid_ > 0) {
        kill();
        wait();
    }
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

bool
peerProcess::start(const std::string &provider,
                   size_t buf_size,
                   std::string &err,
                   const std::string &params) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        err = std::string("socketpair: ") + std::strerror(errno);
        return false;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
        ::close(sv[0]);
        if (!params.empty()) {
            ::setenv("NIXL_LF_TEST_PEER_PARAMS", params.c_str(), 1);
        } else {
            ::unsetenv("NIXL_LF_TEST_PEER_PARAMS");
        }
        int fd = ::dup(sv[1]); // without CLOEXEC
        std::string fds = std::to_string(fd), sz = std::to_string(buf_size);
        const char *argv[] = {"lf_test", "--lf-peer", fds.c_str(), provider.c_str(), sz.c_str(),
                              nullptr};
        ::execv("/proc/self/exe", const_cast<char *const *>(argv));
        ::_exit(127);
    }
    ::close(sv[1]);
    fd_ = sv[0];
    if (pid_ < 0) {
        err = std::string("fork: ") + std::strerror(errno);
        return false;
    }
    std::string hello, addr;
    if (!recvFrame(fd_, hello) || hello != "ok" || !recvFrame(fd_, md) || !recvFrame(fd_, addr)) {
        err = "peer did not start: " + hello;
        return false;
    }
    std::istringstream(addr) >> bufAddr >> bufSize;
    return true;
}

std::string
peerProcess::cmd(const std::string &line, const std::string *blob) {
    if (!sendFrame(fd_, line) || (blob != nullptr && !sendFrame(fd_, *blob))) {
        return "";
    }
    std::string reply;
    return recvFrame(fd_, reply) ? reply : "";
}

void
peerProcess::kill() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
    }
}

int
peerProcess::wait() {
    if (pid_ <= 0) {
        return -1;
    }
    return nixl_test::reapChild(pid_);
}

int
peerMain(int fd, const std::string &provider, size_t buf_size) {
    lfSetup setup;
    setup.provider = provider == "-" ? "" : provider;
    // Extra backend parameters, "key=value;key=value" (peerProcess::start's params).
    if (const char *e = std::getenv("NIXL_LF_TEST_PEER_PARAMS")) {
        std::istringstream ps(e);
        std::string kv;
        while (std::getline(ps, kv, ';')) {
            const size_t eq = kv.find('=');
            if (eq != std::string::npos) {
                setup.extra[kv.substr(0, eq)] = kv.substr(eq + 1);
            }
        }
    }
    nixl_status_t st = NIXL_SUCCESS;
    auto a = lfAgent::make("peer", setup, &st);
    if (!a) {
        sendFrame(fd, "err createBackend " + std::to_string(st));
        return 1;
    }
    std::vector<uint8_t> buf(buf_size);
    fillPattern(buf.data(), buf.size(), 7);
    const auto addr = reinterpret_cast<uintptr_t>(buf.data());
    if ((st = a->registerDram(addr, buf.size())) != NIXL_SUCCESS) {
        sendFrame(fd, "err registerMem " + std::to_string(st));
        return 1;
    }
    sendFrame(fd, "ok");
    sendFrame(fd, a->md());
    sendFrame(fd, std::to_string(addr) + " " + std::to_string(buf.size()));
    notifBox box;
    std::vector<uint8_t> snapshot;
    std::vector<nixlXferReqH *> held;
    for (;;) {
        // Idle: keep the engine progressing (a tcp target must read its queue for data to land).
        pollfd pfd{fd, POLLIN, 0};
        int r = ::poll(&pfd, 1, 1);
        if (r == 0) {
            box.poll(*a->agent);
            continue;
        }
        std::string line;
        if (r < 0 || !recvFrame(fd, line)) {
            return 0;
        }
        std::istringstream in(line);
        std::string verb;
        in >> verb;
        std::string reply = "ok";
        if (verb == "load") {
            std::string blob, name;
            recvFrame(fd, blob);
            st = a->agent->loadRemoteMD(blob, name);
            reply = st == NIXL_SUCCESS ? "ok" : "err " + std::to_string(st);
        } else if (verb == "check") {
            size_t off = 0, len = 0;
            uint32_t seed = 0;
            in >> off >> len >> seed;
            long long bad = firstMismatch(buf.data() + off, len, seed);
            reply = bad < 0 ? "ok" : "bad " + std::to_string(bad);
        } else if (verb == "fill") {
            uint32_t seed = 0;
            in >> seed;
            fillPattern(buf.data(), buf.size(), seed);
        } else if (verb == "notif") {
            // notif <len> <seed> [<sender>]: waits for that message (from A by default).
            size_t len = 0;
            uint32_t seed = 0;
            std::string sender;
            in >> len >> seed;
            if (!(in >> sender)) {
                sender = "A";
            }
            const std::string want = patternString(len, seed);
            bool got = waitFor([&] {
                box.poll(*a->agent);
                return box.count(sender, want) > 0;
            });
            reply = got ? "ok" : "timeout";
        } else if (verb == "dereg") {
            nixl_reg_dlist_t l(DRAM_SEG);
            l.addDesc(nixlBlobDesc(addr, buf.size(), 0, ""));
            st = a->agent->deregisterMem(l);
            snapshot = buf; // what the buffer holds once deregisterMem returned
            reply = st == NIXL_SUCCESS ? "ok" : "err " + std::to_string(st);
        } else if (verb == "unchanged") {
            size_t i = 0;
            while (i < buf.size() && buf[i] == snapshot[i]) {
                ++i;
            }
            reply = i == buf.size() ? "ok" : "bad " + std::to_string(i);
        } else if (verb == "write_hold") {
            // WRITE of len bytes of the buffer to A at raddr, posted and left running (with
            // fault_hold_mark the request keeps its mark in A's table): "holding <status>".
            uintptr_t raddr = 0;
            size_t len = 0;
            in >> raddr >> len;
            nixlXferReqH *req = nullptr;
            st = a->agent->createXferReq(NIXL_WRITE, xferList({{addr, len}}),
                                         xferList({{raddr, len}}), "A", req);
            if (st == NIXL_SUCCESS) {
                st = a->agent->postXferReq(req);
                held.push_back(req);
            }
            reply = "holding " + std::to_string(st);
        } else if (verb == "hang") {
            sendFrame(fd, "ready");
            for (;;) {
                ::pause();
            }
        } else {
            reply = "unknown command";
        }
        sendFrame(fd, reply);
    }
}

} // namespace nixl_lf_test
