/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file p2p_test_utils.h
 * @brief Helpers of the P2P metadata exchange tests: agents listening on 127.0.0.1 at a port
 *        the system picks (listenPort 0, read back), raw client sockets for bad input, and
 *        waits with a generous deadline that turn a hang into a failure.
 *
 * Nothing waits on time: the exchange's operations are awaited with waitMdIdle (a push or an
 * invalidate completes only after the listener has acted and answered), raw sockets wait for
 * the listener to close them.
 */
#ifndef NIXL_TEST_UNIT_P2P_P2P_TEST_UTILS_H
#define NIXL_TEST_UNIT_P2P_P2P_TEST_UTILS_H

#include <gtest/gtest.h>

#include "../../common/log_capture.h"

#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "agent/exchange.h"
#include "nixl.h"
#include "../../common/scoped_env.h"

namespace nixl_p2p_test {

using nixl_test::scopedEnv;

inline constexpr std::chrono::seconds hang_deadline{60};

/** A listening agent's configuration: port 0 (the system picks), sync mode as given. */
inline nixlAgentConfig
listenConfig(nixl_thread_sync_t mode = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE) {
    nixlAgentConfig cfg;
    cfg.useListenThread = true;
    cfg.listenPort = 0;
    cfg.syncMode = mode;
    return cfg;
}

/** extra_params addressing 127.0.0.1:port. */
inline nixl_opt_args_t
at(uint16_t port) {
    nixl_opt_args_t o;
    o.ipAddr = "127.0.0.1";
    o.port = port;
    return o;
}

inline uint16_t
portOf(const nixlAgent &a) {
    return nixlAgentInternals::p2pPort(a);
}

inline bool
idle(const nixlAgent &a) {
    return nixlAgentInternals::waitMdIdle(a, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 hang_deadline));
}

/** Polls pred until true or the deadline; true if it became true. */
inline bool
waitFor(const std::function<bool()> &pred) {
    const auto end = std::chrono::steady_clock::now() + hang_deadline;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
        std::this_thread::yield();
    }
    return pred();
}

/** A blocking client socket connected to 127.0.0.1:port (-1 on failure). */
inline int
connectTo(uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

inline bool
sendAll(int fd, const std::string &bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
        if (n <= 0) {
            return false;
        }
        off += static_cast<size_t>(n);
    }
    return true;
}

/** Reads until the peer closes (or an error); what arrived goes to out. False on timeout. */
inline bool
readToEof(int fd, std::string *out = nullptr) {
    const auto end = std::chrono::steady_clock::now() + hang_deadline;
    char buf[4096];
    while (std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 1000) <= 0) {
            continue;
        }
        const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
            return true;
        }
        if (out != nullptr) {
            out->append(buf, static_cast<size_t>(n));
        }
    }
    return false;
}

/** A TCP socket bound to 127.0.0.1 at a free port but not listening: connecting to the port
 *  is refused for as long as it lives, and nobody else can take the port meanwhile. */
class deadPort {
public:
    deadPort() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0 &&
            ::getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len) == 0) {
            port_ = ntohs(a.sin_port);
        }
    }

    ~deadPort() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }

    deadPort(const deadPort &) = delete;
    deadPort &
    operator=(const deadPort &) = delete;

    uint16_t
    port() const noexcept {
        return port_;
    }

    int
    fd() const noexcept {
        return fd_;
    }

    /** Starts listening (for fake listeners). */
    bool
    listen() {
        return ::listen(fd_, 16) == 0;
    }

    /** Accepts one connection (blocking, bounded by the hang deadline); -1 on failure. */
    int
    acceptOne() {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(hang_deadline.count() * 1000)) <= 0) {
            return -1;
        }
        return ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    }

private:
    int fd_ = -1;
    uint16_t port_ = 0;
};

using nixl_test::errorLines;
using nixl_test::oneErrorLine;
using nixl_test::stderrCapture;

} // namespace nixl_p2p_test

#endif // NIXL_TEST_UNIT_P2P_P2P_TEST_UTILS_H
