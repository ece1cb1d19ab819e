/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <system_error>

namespace nixlPromMp {

namespace {

    /**
     * Sends all of @p iov (modified) in as few system calls as the socket allows. One call for
     * head and body: a small head sent alone would make Nagle's algorithm hold the body's tail
     * until the client's delayed ACK (tens of ms at p99).
     */
    bool
    sendAll(int fd, iovec *iov, size_t count) noexcept {
        while (count > 0) {
            msghdr msg{};
            msg.msg_iov = iov;
            msg.msg_iovlen = count;
            const ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL);
            if (w < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return false;
            }
            size_t left = static_cast<size_t>(w);
            while (count > 0 && left >= iov->iov_len) {
                left -= iov->iov_len;
                ++iov;
                --count;
            }
            if (count > 0) {
                iov->iov_base = static_cast<char *>(iov->iov_base) + left;
                iov->iov_len -= left;
            }
        }
        return true;
    }

} // namespace

nixlMpHttpServer::~nixlMpHttpServer() {
    stop();
}

int
nixlMpHttpServer::listenOn(const std::string &addr, uint16_t port) noexcept {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) {
        return EINVAL;
    }
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return errno;
    }
    // Lets a successor bind while the dead owner's connections sit in TIME_WAIT; a listening
    // socket still refuses a second bind.
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0 || listen(fd, 64) != 0) {
        const int err = errno;
        close(fd);
        return err;
    }
    socklen_t len = sizeof(sa);
    getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    listenFd_ = fd;
    return 0;
}

void
nixlMpHttpServer::start(handler_t handler) {
    handler_ = std::move(handler);
    wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wakeFd_ < 0) {
        throw std::system_error(errno, std::generic_category(), "eventfd");
    }
    thread_ = std::thread([this] { run(); });
}

void
nixlMpHttpServer::stop() noexcept {
    if (thread_.joinable()) {
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t w = write(wakeFd_, &one, sizeof(one));
        thread_.join();
    }
    if (wakeFd_ >= 0) {
        close(wakeFd_);
        wakeFd_ = -1;
    }
    if (listenFd_ >= 0) {
        close(listenFd_);
        listenFd_ = -1;
    }
}

void
nixlMpHttpServer::run() noexcept {
    pollfd fds[2] = {{listenFd_, POLLIN, 0}, {wakeFd_, POLLIN, 0}};
    while (true) {
        const int r = poll(fds, 2, -1);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        if (fds[1].revents != 0) {
            return;
        }
        if ((fds[0].revents & POLLIN) != 0) {
            const int conn = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (conn >= 0) {
                serveOne(conn);
                close(conn);
            }
        }
    }
}

void
nixlMpHttpServer::serveOne(int conn) noexcept {
    // A slow or silent client must not stall the endpoint for long.
    timeval tv{2, 0};
    setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    // The response is written whole; nothing is gained by delaying its last segment.
    const int one = 1;
    setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    char buf[8192];
    size_t got = 0;
    while (got < sizeof(buf) - 1) {
        const ssize_t r = recv(conn, buf + got, sizeof(buf) - 1 - got, 0);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += static_cast<size_t>(r);
        buf[got] = '\0';
        if (std::strstr(buf, "\r\n\r\n") != nullptr || std::strstr(buf, "\n\n") != nullptr) {
            break;
        }
    }
    buf[got] = '\0';
    const std::string_view req(buf, got);
    const bool isGet = req.starts_with("GET ");
    const bool isHead = req.starts_with("HEAD ");
    std::string_view target;
    if (isGet || isHead) {
        target = req.substr(isGet ? 4 : 5);
        target = target.substr(0, target.find_first_of(" ?\r\n"));
    }
    std::string &body = body_;
    body.clear();
    const char *status = "200 OK";
    if (!isGet && !isHead) {
        status = "405 Method Not Allowed";
    } else if (target != "/metrics" && target != "/") {
        status = "404 Not Found";
    } else {
        try {
            handler_(body);
        }
        catch (...) {
            status = "500 Internal Server Error";
            body.clear();
        }
    }
    try {
        std::string head = std::string("HTTP/1.0 ") + status +
            "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
        iovec iov[2] = {{head.data(), head.size()}, {body.data(), isGet ? body.size() : 0}};
        sendAll(conn, iov, isGet ? 2 : 1);
    }
    catch (...) {
    }
}

} // namespace nixlPromMp
