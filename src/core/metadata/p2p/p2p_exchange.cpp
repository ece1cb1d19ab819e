/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The P2P metadata exchange (p2p_exchange.h): configuration, log limiting, the exchange object
// and queueing. The thread's poll loop is in p2p_loop.cpp.

#include "metadata/p2p/p2p_exchange.h"
#include "metadata/p2p/p2p_loop.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "common/nixl_log.h"
#include "config/config.h"

using namespace std::chrono;
using nixlP2P::printable;

namespace {

constexpr char bind_addr_var[] = "NIXL_P2P_BIND_ADDR";
constexpr char token_var[] = "NIXL_P2P_TOKEN";
constexpr char timeout_var[] = "NIXL_P2P_TIMEOUT_MS";
constexpr char max_frame_var[] = "NIXL_P2P_MAX_FRAME";
constexpr char max_conns_var[] = "NIXL_P2P_MAX_CONNECTIONS";
constexpr char protocol_var[] = "NIXL_P2P_PROTOCOL";

} // namespace

// ---------------------------------------------------------------------------------------------
// Configuration and log limiting

nixlP2PConfig
nixlP2PConfig::fromOptions(const std::string &agent, bool listen, uint16_t port) {
    const std::string who = "agent " + agent + ": ";
    nixlP2PConfig c;
    c.listen = listen;
    c.port = port;
    if (auto v = nixlConfig::lookup(bind_addr_var)) {
        in_addr a{};
        if (::inet_pton(AF_INET, v->text.c_str(), &a) != 1) {
            nixlConfig::reject(who, bind_addr_var, *v, "a dotted IPv4 address (e.g. 127.0.0.1)");
        }
        c.bindAddr = v->text;
    }
    if (auto v = nixlConfig::lookup(token_var)) {
        if (v->text.size() > nixlP2P::max_token) {
            // The value is a secret: the message gives its length only.
            const nixlConfigValue hidden{
                "(" + std::to_string(v->text.size()) + " bytes, not shown)", v->origin};
            nixlConfig::reject(who, token_var, hidden, "a token of 1..256 bytes");
        }
        c.token = v->text;
    }
    if (auto v = nixlConfig::getMilliseconds(timeout_var, who, 1, 3600000)) {
        c.timeout = *v;
    }
    if (auto v = nixlConfig::getUnsigned(
            max_frame_var, who, nixlP2P::min_load_limit, nixlP2P::default_load_limit)) {
        c.maxFrame = static_cast<uint32_t>(*v);
    }
    if (auto v = nixlConfig::getUnsigned(max_conns_var, who, 1, 4096)) {
        c.maxConnections = static_cast<size_t>(*v);
    }
    if (auto v = nixlConfig::lookup(protocol_var)) {
        if (v->text == "auto") {
            c.protocol = nixl_p2p_protocol_t::AUTO;
        } else if (v->text == "libnixl") {
            c.protocol = nixl_p2p_protocol_t::LIBNIXL;
        } else if (v->text == "nixl") {
            c.protocol = nixl_p2p_protocol_t::NIXLCOMM;
        } else {
            nixlConfig::reject(who, protocol_var, *v, "auto, libnixl or nixl");
        }
    }
    return c;
}

bool
nixlP2PLogLimiter::allow(clock_t::time_point now, uint64_t &suppressed) noexcept {
    if (!started_) {
        started_ = true;
        last_ = now;
    }
    if (tokens_ < burst_ && now - last_ >= interval_) {
        const auto refill = static_cast<uint64_t>((now - last_) / interval_);
        tokens_ = static_cast<unsigned>(std::min<uint64_t>(burst_, tokens_ + refill));
        last_ += interval_ * refill;
    }
    if (tokens_ == 0) {
        ++dropped_;
        return false;
    }
    if (tokens_ == burst_) {
        last_ = now; // refill counts from the first token spent
    }
    --tokens_;
    suppressed = dropped_;
    dropped_ = 0;
    return true;
}

// ---------------------------------------------------------------------------------------------
// The exchange object

nixlP2PExchange::nixlP2PExchange(nixlMdSink &sink, nixlP2PConfig cfg)
    : sink_(sink),
      cfg_(std::move(cfg)) {
    const std::string &me = sink_.agentName();
    wakeFd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wakeFd_ < 0) {
        NIXL_ERROR << "agent " << me << ": P2P metadata exchange: eventfd failed: "
                   << std::strerror(errno);
        throw std::runtime_error("nixlAgent: eventfd for the P2P metadata thread failed");
    }
    if (!cfg_.listen) {
        return;
    }
    const std::string where = cfg_.bindAddr + ":" + std::to_string(cfg_.port);
    auto fail = [&](const char *what, int err) {
        const std::string msg = "agent " + me + ": cannot listen for P2P metadata on " + where +
            ": " + what + ": " + std::strerror(err);
        NIXL_ERROR << msg;
        if (listenFd_ >= 0) {
            ::close(listenFd_);
        }
        ::close(wakeFd_);
        throw std::runtime_error(msg);
    };
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(cfg_.port);
    if (::inet_pton(AF_INET, cfg_.bindAddr.c_str(), &a.sin_addr) != 1) {
        fail("address", EINVAL);
    }
    listenFd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listenFd_ < 0) {
        fail("socket", errno);
    }
    const int one = 1;
    // As NIXL: a restarted agent can take its port while old connections sit in TIME_WAIT.
    (void)::setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(listenFd_, reinterpret_cast<const sockaddr *>(&a), sizeof(a)) != 0) {
        fail("bind", errno);
    }
    if (::listen(listenFd_, 128) != 0) {
        fail("listen", errno);
    }
    socklen_t alen = sizeof(a);
    if (::getsockname(listenFd_, reinterpret_cast<sockaddr *>(&a), &alen) != 0) {
        fail("getsockname", errno);
    }
    boundPort_ = ntohs(a.sin_port);
    NIXL_DEBUG << "agent " << me << ": P2P metadata listener on " << cfg_.bindAddr << ":"
               << boundPort_ << (cfg_.token.empty() ? "" : " (token required)");
    thread_ = std::thread([this] { run(); });
}

nixlP2PExchange::~nixlP2PExchange() {
    stop();
}

void
nixlP2PExchange::run() noexcept {
    try {
        loop_t loop(*this);
        loop.run();
    }
    catch (const std::exception &e) {
        NIXL_ERROR << "agent " << sink_.agentName() << ": P2P metadata thread stopped: "
                   << e.what();
    }
    // Whatever is left is abandoned: waiters must not wait for it.
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.clear();
    pending_ = 0;
    idle_.notify_all();
}

void
nixlP2PExchange::stop() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    if (thread_.joinable()) {
        const uint64_t one = 1;
        (void)!::write(wakeFd_, &one, sizeof(one));
        thread_.join();
    }
    if (listenFd_ >= 0) {
        ::close(listenFd_);
        listenFd_ = -1;
    }
    if (wakeFd_ >= 0) {
        ::close(wakeFd_);
        wakeFd_ = -1;
    }
}

nixl_status_t
nixlP2PExchange::enqueue(std::unique_ptr<op_t> op) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) {
            NIXL_ERROR << "agent " << sink_.agentName() << ": " << op->what
                       << ": the agent is being destroyed";
            return NIXL_ERR_NOT_ALLOWED;
        }
        queue_.push_back(std::move(op));
        ++pending_;
        if (!thread_.joinable()) {
            thread_ = std::thread([this] { run(); });
        }
    }
    const uint64_t one = 1;
    (void)!::write(wakeFd_, &one, sizeof(one));
    return NIXL_SUCCESS;
}

namespace {

/** The peer of extra (ipAddr, port) as a socket address; logs and returns false when bad. */
bool
peerAddress(const std::string &me,
            const char *what,
            const nixl_opt_args_t *extra,
            sockaddr_in &a,
            std::string &peer) {
    a = sockaddr_in{};
    a.sin_family = AF_INET;
    if (::inet_pton(AF_INET, extra->ipAddr.c_str(), &a.sin_addr) != 1) {
        NIXL_ERROR << "agent " << me << ": " << what << ": ipAddr \"" << printable(extra->ipAddr)
                   << "\" is not a dotted IPv4 address";
        return false;
    }
    if (extra->port <= 0 || extra->port > 65535) {
        NIXL_ERROR << "agent " << me << ": " << what << ": port " << extra->port
                   << " is not a TCP port (1..65535)";
        return false;
    }
    a.sin_port = htons(static_cast<uint16_t>(extra->port));
    peer = nixlP2PEndpoint(a);
    return true;
}

} // namespace

nixl_status_t
nixlP2PExchange::sendLocal(const std::string &blob, bool partial, const nixl_opt_args_t *extra) {
    auto op = std::make_unique<op_t>();
    op->kind = nixl_p2p_type_t::LOAD;
    op->what = partial ? "sendLocalPartialMD" : "sendLocalMD";
    if (!peerAddress(sink_.agentName(), op->what.c_str(), extra, op->addr, op->peer)) {
        return NIXL_ERR_INVALID_PARAM;
    }
    if (blob.size() > cfg_.maxFrame) {
        NIXL_ERROR << "agent " << sink_.agentName() << ": " << op->what << ": the metadata is "
                   << blob.size() << " bytes, over NIXL_P2P_MAX_FRAME (" << cfg_.maxFrame << ")";
        return NIXL_ERR_INVALID_PARAM;
    }
    op->arg = blob;
    return enqueue(std::move(op));
}

nixl_status_t
nixlP2PExchange::fetchRemote(const std::string &agent, const nixl_opt_args_t *extra) {
    auto op = std::make_unique<op_t>();
    op->kind = nixl_p2p_type_t::FETCH;
    op->what = "fetchRemoteMD(" + printable(agent) + ")";
    if (!peerAddress(sink_.agentName(), op->what.c_str(), extra, op->addr, op->peer)) {
        return NIXL_ERR_INVALID_PARAM;
    }
    if (agent.size() > nixlP2P::max_name) {
        NIXL_ERROR << "agent " << sink_.agentName() << ": " << op->what << ": the name is "
                   << agent.size() << " bytes, over " << nixlP2P::max_name;
        return NIXL_ERR_INVALID_PARAM;
    }
    op->expected = agent;
    op->arg = agent;
    return enqueue(std::move(op));
}

nixl_status_t
nixlP2PExchange::invalidateLocal(const nixl_opt_args_t *extra) {
    auto op = std::make_unique<op_t>();
    op->kind = nixl_p2p_type_t::INVALIDATE;
    op->what = "invalidateLocalMD";
    if (!peerAddress(sink_.agentName(), op->what.c_str(), extra, op->addr, op->peer)) {
        return NIXL_ERR_INVALID_PARAM;
    }
    op->arg = sink_.agentName();
    return enqueue(std::move(op));
}

bool
nixlP2PExchange::waitIdle(milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_for(lock, timeout, [this] { return pending_ == 0; });
}

nixlP2PExchange::stats_t
nixlP2PExchange::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

