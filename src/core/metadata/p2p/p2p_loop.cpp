/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The P2P exchange's thread (p2p_loop.h): one poll loop over the listener and every
// connection. A connection in libnixl's framing carries exactly one request and its answer:
// client -> HELLO + request, server -> answer, close; it has one deadline (NIXL_P2P_TIMEOUT_MS
// from connect or accept) covering all its reads and writes. An incoming connection in NIXL
// 1.4's NIXLCOMM stays open for more frames, as NIXL caches it: each frame and each answer has
// that deadline, an idle one none (the oldest idle one makes room at NIXL_P2P_MAX_CONNECTIONS).

#include "metadata/p2p/p2p_loop.h"

#include <cerrno>
#include <cstring>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/nixl_log.h"

using namespace std::chrono;
using nixlP2P::printable;
using phase_t = nixl_p2p_phase_t;
using conn_t = nixlP2PConn;

void
nixlP2PExchange::loop_t::run() {
    const std::string &me = x_.sink_.agentName();
    std::vector<pollfd> fds;
    for (;;) {
        const auto now = steady_clock::now();
        bool stopping = false;
        size_t dropped = 0;
        std::vector<std::unique_ptr<op_t>> ready;
        {
            // Operations to one peer run one at a time, in the order they were queued (a push
            // then an invalidate must arrive in that order); different peers in parallel.
            std::lock_guard<std::mutex> lock(x_.mutex_);
            stopping = x_.stopping_;
            if (stopping && shutdownBy_ == steady_clock::time_point{}) {
                // One budget for the whole shutdown, however many operations are queued:
                // the running ones are cut at it, the ones not started by then are dropped.
                shutdownBy_ = now + nixl_p2p_shutdown_budget;
                for (auto &c : conns_) {
                    c->deadline = std::min(c->deadline, shutdownBy_);
                }
            }
            if (stopping && now >= shutdownBy_ && !x_.queue_.empty()) {
                dropped = x_.queue_.size();
                x_.queue_.clear();
                x_.pending_ -= std::min(x_.pending_, dropped);
                x_.stats_.opsFailed += dropped;
            }
            for (auto it = x_.queue_.begin();
                 it != x_.queue_.end() && outgoing_ + ready.size() < x_.cfg_.maxConnections;) {
                if (busy_.insert((*it)->peer).second) {
                    ready.push_back(std::move(*it));
                    it = x_.queue_.erase(it);
                } else {
                    ++it;
                }
            }
        }
        if (dropped != 0) {
            NIXL_ERROR << "agent " << me << ": P2P metadata: " << dropped
                       << " queued operation(s) not started within the "
                       << nixl_p2p_shutdown_budget.count()
                       << " ms shutdown budget were dropped at agent destruction";
            dropped = 0;
        }
        kick_ = false;
        for (auto &op : ready) {
            ++outgoing_;
            startOp(std::move(op), now);
        }
        auto retries = std::move(retry_);
        retry_.clear();
        for (auto &op : retries) {
            startOp(std::move(op), now); // counted in outgoing_ when handed over
        }
        if (stopping) {
            // Queued pushes still go out (an invalidateLocalMD right before the agent is
            // destroyed is the usual case); peers are no longer served.
            if (x_.listenFd_ >= 0) {
                ::close(x_.listenFd_);
                x_.listenFd_ = -1;
            }
            for (auto &c : conns_) {
                if (c->incoming && !c->closed) {
                    close(*c);
                }
            }
            std::lock_guard<std::mutex> lock(x_.mutex_);
            if (x_.queue_.empty() && outgoing_ == 0) {
                break;
            }
        }
        std::erase_if(conns_, [](const auto &c) { return c->closed; });

        fds.clear();
        fds.push_back(pollfd{x_.wakeFd_, POLLIN, 0});
        const bool listening = x_.listenFd_ >= 0 && now >= acceptPausedUntil_;
        if (listening) {
            fds.push_back(pollfd{x_.listenFd_, POLLIN, 0});
        }
        const size_t first = fds.size();
        auto next = steady_clock::time_point::max();
        if (x_.listenFd_ >= 0 && !listening) {
            next = acceptPausedUntil_;
        }
        for (const auto &c : conns_) {
            short ev = c->phase == phase_t::RECEIVING ? POLLIN : POLLOUT;
            if (c->incoming && c->outOff < c->out.size()) {
                // NIXLCOMM: the answer goes out first; nothing more is read meanwhile, so a
                // peer that does not read our answers cannot make us queue more of them.
                ev = POLLOUT;
            }
            fds.push_back(pollfd{c->fd, ev, 0});
            next = std::min(next, c->deadline);
        }
        int wait_ms = -1;
        if (kick_) {
            wait_ms = 0; // an operation finished: the next one to its peer may start
        } else if (next != steady_clock::time_point::max()) {
            const auto left = duration_cast<milliseconds>(next - now) + milliseconds(1);
            wait_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
        }
        const int n = ::poll(fds.data(), fds.size(), wait_ms);
        if (n < 0 && errno != EINTR) {
            NIXL_ERROR << "agent " << me << ": P2P metadata thread: poll failed: "
                       << std::strerror(errno) << "; retrying";
        }
        const auto after = steady_clock::now();
        if (n > 0 && (fds[0].revents & POLLIN) != 0) {
            uint64_t v = 0;
            (void)!::read(x_.wakeFd_, &v, sizeof(v));
        }
        if (n > 0 && listening && (fds[1].revents & POLLIN) != 0) {
            acceptAll(after);
        }
        // New connections were appended after the poll set was built; only the first ones
        // have revents.
        const size_t polled = fds.size() - first;
        for (size_t i = 0; i < polled; ++i) {
            conn_t &c = *conns_[i];
            if (n > 0 && fds[first + i].revents != 0 && !c.closed) {
                progress(c, fds[first + i].revents);
            }
        }
        for (auto &c : conns_) {
            if (!c->closed && after >= c->deadline) {
                // This thread may have been busy (loading metadata takes the agent lock and
                // the backends' time): what the peer sent in time counts, so read it first.
                const phase_t before = c->phase;
                if (before == phase_t::RECEIVING) {
                    receiveSome(*c);
                } else if (before == phase_t::SENDING) {
                    sendSome(*c);
                }
                // A NIXLCOMM connection stays RECEIVING after a frame completes; it is idle
                // then (no deadline), not late.
                if (!c->closed && c->phase == before && after >= c->deadline) {
                    onTimeout(*c);
                }
            }
        }
    }
    for (auto &c : conns_) {
        if (!c->closed) {
            close(*c);
        }
    }
}

void
nixlP2PExchange::loop_t::acceptAll(steady_clock::time_point now) {
    for (;;) {
        sockaddr_in a{};
        socklen_t alen = sizeof(a);
        const int fd = ::accept4(x_.listenFd_, reinterpret_cast<sockaddr *>(&a), &alen,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                errno != ECONNABORTED) {
                const int err = errno;
                // Out of descriptors (or memory): the connection stays pending and the listen
                // fd readable, so retrying at once spins. Stop polling it for a growing while.
                acceptBackoff_ = std::min<milliseconds>(
                    milliseconds(1000),
                    acceptBackoff_ == milliseconds(0) ? milliseconds(10) : acceptBackoff_ * 2);
                acceptPausedUntil_ = now + acceptBackoff_;
                {
                    std::lock_guard<std::mutex> lock(x_.mutex_);
                    ++x_.stats_.acceptFailures;
                }
                errno = err;
                uint64_t suppressed = 0;
                if (limiter_.allow(now, suppressed)) {
                    NIXL_ERROR << "agent " << x_.sink_.agentName()
                               << ": P2P listener: accept failed: " << std::strerror(errno)
                               << "; not accepting for " << acceptBackoff_.count() << " ms"
                               << (suppressed ? " (" + std::to_string(suppressed) +
                                           " similar lines suppressed)" :
                                                std::string());
                }
            }
            return;
        }
        acceptBackoff_ = milliseconds(0);
        if (incoming_ >= x_.cfg_.maxConnections && !evictIdleComm()) {
            uint64_t suppressed = 0;
            if (limiter_.allow(now, suppressed)) {
                NIXL_ERROR << "agent " << x_.sink_.agentName() << ": P2P listener: refused peer "
                           << nixlP2PEndpoint(a) << ": " << incoming_
                           << " connections are open, the limit (NIXL_P2P_MAX_CONNECTIONS)"
                           << (suppressed ? " (" + std::to_string(suppressed) +
                                       " similar lines suppressed)" :
                                            std::string());
            }
            ::close(fd);
            std::lock_guard<std::mutex> lock(x_.mutex_);
            ++x_.stats_.badPeers;
            continue;
        }
        auto c = std::make_unique<conn_t>(x_.cfg_.maxFrame, true);
        c->fd = fd;
        c->incoming = true;
        c->phase = phase_t::RECEIVING;
        c->deadline = now + x_.cfg_.timeout;
        c->peer = nixlP2PEndpoint(a);
        ++incoming_;
        conns_.push_back(std::move(c));
    }
}

void
nixlP2PExchange::loop_t::startOp(std::unique_ptr<op_t> op, steady_clock::time_point now) {
    auto c = std::make_unique<conn_t>(x_.cfg_.maxFrame, true);
    c->incoming = false;
    c->peer = op->peer;
    c->deadline = now + x_.cfg_.timeout;
    if (shutdownBy_ != steady_clock::time_point{}) {
        c->deadline = std::min(c->deadline, shutdownBy_);
    }
    const auto known = known_.find(op->peer);
    const auto protocol = x_.cfg_.protocol;
    if (protocol == nixl_p2p_protocol_t::NIXLCOMM ||
        (protocol == nixl_p2p_protocol_t::AUTO && known != known_.end() &&
         known->second == nixl_p2p_dialect_t::NIXLCOMM)) {
        op->comm = true;
    }
    if (op->comm) {
        // NIXL's SEND carries nothing: the name asked for is checked when the answer loads.
        c->out = nixlP2P::encodeComm(
            op->kind, op->kind == nixl_p2p_type_t::FETCH ? std::string_view() : op->arg);
    } else {
        c->out = nixlP2P::encodeFrame(
            nixl_p2p_type_t::HELLO, nixlP2P::encodeHello(x_.sink_.agentName(), x_.cfg_.token));
        c->out += nixlP2P::encodeFrame(op->kind, op->arg);
    }
    const bool may_retry = protocol == nixl_p2p_protocol_t::AUTO && !op->comm &&
        (known == known_.end() || known->second != nixl_p2p_dialect_t::LIBNIXL);
    if (!may_retry) {
        std::string().swap(op->arg); // a pushed blob is not kept twice
    }
    c->op = std::move(op);
    c->fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    conns_.push_back(std::move(c));
    conn_t &r = *conns_.back();
    if (r.fd < 0) {
        finish(r, false, std::string("cannot create a socket: ") + std::strerror(errno));
        return;
    }
    const int one = 1;
    (void)::setsockopt(r.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (::connect(r.fd, reinterpret_cast<const sockaddr *>(&r.op->addr), sizeof(r.op->addr)) ==
        0) {
        r.connected = true;
        r.phase = phase_t::SENDING;
        sendSome(r);
    } else if (errno == EINPROGRESS) {
        r.phase = phase_t::CONNECTING;
    } else {
        finish(r, false, std::string("cannot connect: ") + std::strerror(errno));
    }
}

void
nixlP2PExchange::loop_t::progress(conn_t &c, short revents) {
    if (c.phase == phase_t::CONNECTING) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
            err = errno;
        }
        if (err != 0) {
            finish(c, false, std::string("cannot connect: ") + std::strerror(err));
            return;
        }
        if ((revents & (POLLOUT | POLLERR | POLLHUP)) == 0) {
            return;
        }
        c.connected = true;
        c.phase = phase_t::SENDING;
    }
    if (c.phase == phase_t::SENDING) {
        sendSome(c);
        return;
    }
    if (c.incoming && c.parser.dialect() == nixl_p2p_dialect_t::NIXLCOMM &&
        (revents & POLLOUT) != 0) {
        commProgress(c, steady_clock::now());
    }
    if (!c.closed && (revents & ~POLLOUT) != 0) {
        receiveSome(c);
    }
}

void
nixlP2PExchange::loop_t::sendSome(conn_t &c) {
    while (c.outOff < c.out.size()) {
        const ssize_t n =
            ::send(c.fd, c.out.data() + c.outOff, c.out.size() - c.outOff, MSG_NOSIGNAL);
        if (n > 0) {
            c.outOff += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            return;
        }
        const std::string why = std::strerror(n < 0 ? errno : EPIPE);
        if (c.incoming) {
            // The peer left before taking its answer.
            NIXL_DEBUG << "agent " << x_.sink_.agentName() << ": P2P listener: " << who(c)
                       << " went away before its answer was sent: " << why;
            close(c);
            return;
        }
        // A listener that refused us (token, version) answers and closes while we are still
        // sending a large request: its answer may be waiting, so read before reporting.
        c.sendError = why;
        c.phase = phase_t::RECEIVING;
        receiveSome(c);
        return;
    }
    if (c.closeAfterSend) {
        close(c);
        return;
    }
    if (!c.incoming && c.op->comm && c.op->kind != nixl_p2p_type_t::FETCH) {
        // NIXLCOMM has no answers: a push or an invalidation is done once it is sent.
        finish(c, true);
        return;
    }
    c.phase = phase_t::RECEIVING;
}

void
nixlP2PExchange::loop_t::receiveSome(conn_t &c) {
    char buf[65536];
    for (int rounds = 0; rounds < 64 && !c.closed; ++rounds) {
        const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
        if (n == 0) {
            onEof(c, "closed the connection");
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                if (!c.sendError.empty()) {
                    // Nothing to read after a failed send: the send error is the story.
                    finish(c, false, "connection lost while sending: " + c.sendError);
                }
                return;
            }
            onEof(c, std::string("connection error (") + std::strerror(errno) + ")");
            return;
        }
        c.answered = true;
        size_t off = 0;
        while (off < static_cast<size_t>(n) && !c.closed && c.phase == phase_t::RECEIVING) {
            size_t used = 0;
            const auto r = c.parser.feed(buf + off, static_cast<size_t>(n) - off, used);
            off += used;
            if (c.incoming && c.parser.dialect() == nixl_p2p_dialect_t::NIXLCOMM &&
                !x_.cfg_.token.empty()) {
                badPeer(c,
                        "refused NIXL 1.4 NIXLCOMM frames: they carry no token and "
                        "NIXL_P2P_TOKEN is set",
                        false);
                return;
            }
            if (r == nixlP2PParser::result_t::ERROR) {
                if (c.incoming) {
                    // No STATUS to a NIXL peer: it could not read one.
                    badPeer(c, c.parser.error(),
                            c.parser.dialect() != nixl_p2p_dialect_t::NIXLCOMM);
                } else {
                    finish(c, false, "the answer is not valid: " + c.parser.error());
                }
                return;
            }
            if (r == nixlP2PParser::result_t::FRAME) {
                if (c.incoming) {
                    serverFrame(c);
                } else {
                    clientFrame(c);
                }
            }
        }
        if (c.closed || c.phase != phase_t::RECEIVING) {
            return; // bytes after the one request are ignored
        }
        if (c.incoming && c.parser.dialect() == nixl_p2p_dialect_t::NIXLCOMM) {
            commProgress(c, steady_clock::now());
            if (c.closed) {
                return;
            }
        }
    }
}

void
nixlP2PExchange::loop_t::onEof(conn_t &c, const std::string &why) {
    if (!c.incoming) {
        finish(c, false,
               "the peer " + why + " without answering" +
                   (c.sendError.empty() ? std::string() : " (send failed: " + c.sendError + ")"));
        return;
    }
    const size_t partial = c.parser.partial();
    if (partial > 0) {
        const size_t expected = c.parser.expected();
        badPeer(c,
                why + " in the middle of a frame: " + std::to_string(partial) + " of " +
                    (expected ? std::to_string(expected) :
                                std::to_string(c.parser.headerSize()) + " (header)") +
                    " bytes received (truncated frame)",
                false);
        return;
    }
    NIXL_DEBUG << "agent " << x_.sink_.agentName() << ": P2P listener: " << who(c) << " " << why
               << (c.helloSeen ? " after its HELLO" : " before sending a frame");
    close(c);
}

void
nixlP2PExchange::loop_t::onTimeout(conn_t &c) {
    const std::string limit = std::to_string(x_.cfg_.timeout.count()) + " ms (NIXL_P2P_TIMEOUT_MS)";
    if (!c.incoming) {
        finish(c, false,
               c.phase == phase_t::CONNECTING ? "could not connect within " + limit :
                   c.phase == phase_t::SENDING ? "could not send the request within " + limit :
                                                 "no answer within " + limit);
        return;
    }
    if (c.phase == phase_t::SENDING || c.outOff < c.out.size()) {
        badPeer(c, "did not take its answer within " + limit, false);
        return;
    }
    const size_t expected = c.parser.expected();
    badPeer(c,
            "no complete request within " + limit + ": " + std::to_string(c.parser.partial()) +
                " of " +
                (expected ? std::to_string(expected) :
                            std::to_string(c.parser.headerSize()) + " (header)") +
                " bytes of a frame received (slow or stalled peer)",
            false);
}

void
nixlP2PExchange::loop_t::badPeer(conn_t &c, const std::string &why, bool answer_it) {
    {
        std::lock_guard<std::mutex> lock(x_.mutex_);
        ++x_.stats_.badPeers;
    }
    uint64_t suppressed = 0;
    if (limiter_.allow(steady_clock::now(), suppressed)) {
        NIXL_ERROR << "agent " << x_.sink_.agentName() << ": P2P listener: " << who(c) << ": "
                   << why << "; connection closed"
                   << (suppressed ? " (" + std::to_string(suppressed) +
                               " similar lines suppressed)" :
                                    std::string());
    }
    if (answer_it) {
        // Best effort, one send: tells a misdirected client what it reached.
        const std::string f =
            nixlP2P::encodeFrame(nixl_p2p_type_t::STATUS,
                                 nixlP2P::encodeStatus(NIXL_ERR_MISMATCH, "refused: " + why));
        (void)!::send(c.fd, f.data(), f.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close(c);
}

void
nixlP2PExchange::loop_t::close(conn_t &c) {
    if (c.closed) {
        return;
    }
    c.closed = true;
    if (c.fd >= 0) {
        ::close(c.fd);
        c.fd = -1;
    }
    if (c.incoming) {
        --incoming_;
    } else {
        --outgoing_;
    }
}

