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
#include <algorithm>
#include <cstring>
#include <ctime>
#include <string_view>
#include <system_error>

namespace nixlPromMp {


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
    // Non-blocking: the server thread accepts until EAGAIN and must never block in accept().
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return errno;
    }
    // Lets a successor bind while the dead owner's connections sit in TIME_WAIT; a listening
    // socket still refuses a second bind.
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // The longest accept queue the kernel allows (net.core.somaxconn, 4096 by default): once
    // it is full the kernel drops handshakes and a scraper retries after 1 s, then 3 s, while
    // a queued connection only waits its turn. With 64, a few hundred idle clients that
    // reconnect as soon as they are closed kept it full (p99 2 s per scrape at 400).
    if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0 ||
        listen(fd, SOMAXCONN) != 0) {
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

namespace {

    int64_t
    nowMs() noexcept {
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
    }

    bool
    requestComplete(const std::string &in) noexcept {
        return in.find("\r\n\r\n") != std::string::npos || in.find("\n\n") != std::string::npos;
    }

} // namespace

void
nixlMpHttpServer::run() noexcept {
    std::vector<conn_t> conns;
    std::vector<pollfd> fds;
    try {
        conns.reserve(kMaxConns);
        fds.reserve(kMaxConns + 2);
    }
    catch (...) {
        return;
    }
    int64_t acceptPausedUntil = 0;
    auto closeAt = [&conns](size_t i) {
        close(conns[i].fd);
        conns[i] = std::move(conns.back());
        conns.pop_back();
    };
    while (true) {
        const int64_t now = nowMs();
        // Deadlines: the whole request, then the whole connection, whatever the client sends.
        for (size_t i = conns.size(); i-- > 0;) {
            const int64_t age = now - conns[i].acceptMs;
            if (age >= kConnDeadlineMs || (!conns[i].writing && age >= kRequestDeadlineMs)) {
                closeAt(i);
            }
        }
        int64_t next = -1;
        for (const conn_t &c : conns) {
            const int64_t due = c.acceptMs + (c.writing ? kConnDeadlineMs : kRequestDeadlineMs);
            next = next < 0 ? due : std::min(next, due);
        }
        const bool listening = now >= acceptPausedUntil;
        if (!listening) {
            next = next < 0 ? acceptPausedUntil : std::min(next, acceptPausedUntil);
        }
        fds.clear();
        fds.push_back({wakeFd_, POLLIN, 0});
        fds.push_back({listening ? listenFd_ : -1, POLLIN, 0});
        for (const conn_t &c : conns) {
            fds.push_back({c.fd, static_cast<short>(c.writing ? POLLOUT : POLLIN), 0});
        }
        const int timeout = next < 0 ? -1 : static_cast<int>(std::max<int64_t>(next - now, 0) + 1);
        const int r = poll(fds.data(), fds.size(), timeout);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (fds[0].revents != 0) {
            break;
        }
        // Connections first (indices match fds[2..] until the first close).
        for (size_t i = conns.size(); i-- > 0;) {
            const short ev = fds[i + 2].revents;
            if (ev == 0) {
                continue;
            }
            conn_t &c = conns[i];
            bool keep = true;
            if (c.writing) {
                iovec iov{c.out.data() + c.outOff, c.out.size() - c.outOff};
                msghdr m{};
                m.msg_iov = &iov;
                m.msg_iovlen = 1;
                const ssize_t w = sendmsg(c.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0) {
                    c.outOff += static_cast<size_t>(w);
                    keep = c.outOff < c.out.size();
                } else {
                    keep = w < 0 && (errno == EAGAIN || errno == EINTR);
                }
            } else {
                char buf[4096];
                const size_t room = kMaxRequestBytes - c.in.size();
                const ssize_t n = recv(c.fd, buf, std::min(room, sizeof(buf)), MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                    continue;
                }
                if (n < 0 || (n == 0 && c.in.empty())) {
                    keep = false;
                } else {
                    try {
                        c.in.append(buf, static_cast<size_t>(n));
                    }
                    catch (...) {
                        keep = false;
                    }
                    // EOF, a full buffer or the end of the headers: answer what we have.
                    if (keep &&
                        (n == 0 || c.in.size() >= kMaxRequestBytes || requestComplete(c.in))) {
                        keep = respond(c);
                    }
                }
            }
            if (!keep) {
                closeAt(i);
            }
        }
        if (listening && (fds[1].revents & POLLIN) != 0) {
            // Accept what is pending; beyond the cap the oldest still-reading connection (or,
            // failing that, the oldest) makes room, so a held slot never locks a scrape out.
            // But only once it has had kEvictGraceMs to send its request: evicting at the rate
            // clients arrive gave a connection only cap/arrival-rate (~10 ms against hundreds
            // of reconnecting idle clients) and closed scrapes whose request came a little
            // late. Until then newcomers wait in the kernel's accept queue, which is FIFO.
            auto victimIndex = [&conns] {
                size_t victim = 0;
                bool found = false;
                for (size_t v = 0; v < conns.size(); ++v) {
                    if (!conns[v].writing &&
                        (!found || conns[v].acceptMs < conns[victim].acceptMs)) {
                        victim = v;
                        found = true;
                    }
                }
                if (!found) {
                    for (size_t v = 1; v < conns.size(); ++v) {
                        if (conns[v].acceptMs < conns[victim].acceptMs) {
                            victim = v;
                        }
                    }
                }
                return victim;
            };
            for (size_t k = 0; k < kAcceptBatch; ++k) {
                if (conns.size() >= kMaxConns) {
                    const int64_t evictable = conns[victimIndex()].acceptMs + kEvictGraceMs;
                    if (nowMs() < evictable) {
                        acceptPausedUntil = evictable;
                        break;
                    }
                }
                const int fd = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0) {
                    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                        errno == ENOMEM) {
                        acceptPausedUntil = nowMs() + 100; // back off instead of spinning
                    }
                    break;
                }
                const int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                if (conns.size() >= kMaxConns) {
                    closeAt(victimIndex());
                }
                conn_t c;
                c.fd = fd;
                c.acceptMs = nowMs();
                conns.push_back(std::move(c));
            }
        }
    }
    for (conn_t &c : conns) {
        close(c.fd);
    }
}

bool
nixlMpHttpServer::respond(conn_t &c) noexcept {
    const std::string_view req(c.in);
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
        const size_t bodyLen = isGet ? body.size() : 0;
        iovec iov[2] = {{head.data(), head.size()}, {body.data(), bodyLen}};
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = 2;
        ssize_t w;
        do {
            w = sendmsg(c.fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        } while (w < 0 && errno == EINTR);
        if (w < 0 && errno != EAGAIN) {
            return false;
        }
        const size_t sent = w < 0 ? 0 : static_cast<size_t>(w);
        if (sent >= head.size() + bodyLen) {
            return false; // all sent in one call: the common case, no copy of the body
        }
        // A slow reader: keep the rest on the connection and send it as the socket drains,
        // within the connection's deadline.
        c.in.clear();
        c.in.shrink_to_fit();
        c.out.clear();
        if (sent < head.size()) {
            c.out.append(head, sent);
            c.out.append(body.data(), bodyLen);
        } else {
            c.out.append(body.data() + (sent - head.size()), bodyLen - (sent - head.size()));
        }
        c.outOff = 0;
        c.writing = true;
        return true;
    }
    catch (...) {
        return false;
    }
}

} // namespace nixlPromMp
