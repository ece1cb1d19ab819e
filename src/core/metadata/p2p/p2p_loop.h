/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file p2p_loop.h
 * @brief Internals of the P2P exchange shared by p2p_exchange.cpp (configuration, the public
 *        object, queueing), p2p_loop.cpp (the thread's poll loop and its I/O), p2p_serve.cpp
 *        (what a frame of our own framing means) and p2p_comm.cpp (NIXL 1.4's NIXLCOMM
 *        peers): a queued operation, a connection, the loop's state.
 *        Not for use outside this folder.
 *
 * Thread safety: op_t is built on the caller's thread and handed over through the exchange's
 * queue (under its mutex); everything else belongs to the exchange's thread.
 */
#ifndef NIXL_SRC_CORE_METADATA_P2P_P2P_LOOP_H
#define NIXL_SRC_CORE_METADATA_P2P_P2P_LOOP_H

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "metadata/p2p/p2p_exchange.h"
#include "metadata/p2p/p2p_frame.h"
#include "nixl_plugin_names.h"

inline std::string
nixlP2PEndpoint(const sockaddr_in &a) {
    char ip[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
    return std::string(ip) + ":" + std::to_string(ntohs(a.sin_port));
}

struct nixlP2PExchange::op_t {
    nixl_p2p_type_t kind = nixl_p2p_type_t::LOAD; ///< LOAD (push), FETCH or INVALIDATE
    std::string what; ///< the API call, for messages
    sockaddr_in addr{};
    std::string peer; ///< "ip:port"
    std::string arg; ///< the request's argument: blob (push), name asked for, our name
    std::string expected; ///< fetch: the agent asked for
    bool comm = false; ///< sent as NIXL 1.4's NIXLCOMM (else HELLO + our frame)
};

enum class nixl_p2p_phase_t { CONNECTING, SENDING, RECEIVING };

/** One connection, incoming (a peer's request) or outgoing (one of our operations). */
struct nixlP2PConn {
    nixlP2PConn(uint32_t load_limit, bool allow_comm) : parser(load_limit, allow_comm) {}

    int fd = -1;
    bool incoming = false;
    nixl_p2p_phase_t phase = nixl_p2p_phase_t::RECEIVING;
    std::string out;
    size_t outOff = 0;
    nixlP2PParser parser;
    std::chrono::steady_clock::time_point deadline;
    std::string peer;
    std::string peerName; ///< from HELLO (incoming)
    bool helloSeen = false;
    bool closeAfterSend = false;
    bool closed = false;
    bool connected = false; ///< outgoing: connect() succeeded
    bool answered = false; ///< outgoing: the peer sent at least one byte
    /** incoming NIXLCOMM: when its last frame completed (the oldest idle one is evicted). */
    std::chrono::steady_clock::time_point lastFrame;
    std::string sendError; ///< outgoing: why sending stopped early
    std::unique_ptr<nixlP2PExchange::op_t> op; ///< outgoing only
};

class nixlP2PExchange::loop_t {
public:
    explicit loop_t(nixlP2PExchange &x) : x_(x) {}

    void
    run();

private:
    // Listener side
    void
    acceptAll(std::chrono::steady_clock::time_point now);
    void
    serverFrame(nixlP2PConn &c);
    void
    badPeer(nixlP2PConn &c, const std::string &why, bool answer = true);
    /** A NIXLCOMM frame: LOAD, SEND or INVL; the connection stays open for the next. */
    void
    serverComm(nixlP2PConn &c);
    /** incoming NIXLCOMM: sends queued answers without leaving RECEIVING; re-arms the
     *  deadline (a frame or an answer in progress) or clears it (idle). */
    void
    commProgress(nixlP2PConn &c, std::chrono::steady_clock::time_point now);
    /** Closes the incoming NIXLCOMM connection idle the longest; false if none is idle. */
    bool
    evictIdleComm();

    // Client side
    void
    startOp(std::unique_ptr<op_t> op, std::chrono::steady_clock::time_point now);
    void
    clientFrame(nixlP2PConn &c);
    void
    finish(nixlP2PConn &c, bool ok, const std::string &error = {});
    /** auto mode: a peer that took our HELLO and said nothing in our framing is retried in
     *  NIXLCOMM (at the next loop turn); true when the operation was handed to retry_. */
    bool
    retryInComm(nixlP2PConn &c, const std::string &error);
    void
    remember(const std::string &peer, nixl_p2p_dialect_t dialect);

    // Both
    void
    progress(nixlP2PConn &c, short revents);
    void
    sendSome(nixlP2PConn &c);
    void
    receiveSome(nixlP2PConn &c);
    void
    onEof(nixlP2PConn &c, const std::string &why);
    void
    onTimeout(nixlP2PConn &c);
    void
    answer(nixlP2PConn &c, std::string frame);
    /** answer with a STATUS frame of st and text. */
    void
    answerStatus(nixlP2PConn &c, nixl_status_t st, const std::string &text);
    void
    close(nixlP2PConn &c);

    std::string
    who(const nixlP2PConn &c) const {
        return "peer " + c.peer +
            (c.peerName.empty() ? "" : " (agent " + nixlP2P::printable(c.peerName) + ")");
    }

    nixlP2PExchange &x_;
    std::vector<std::unique_ptr<nixlP2PConn>> conns_;
    /** Peers ("ip:port") with an operation in flight. */
    std::set<std::string> busy_;
    /** An operation finished since the queue was last looked at. */
    bool kick_ = false;
    nixlP2PLogLimiter limiter_;
    size_t incoming_ = 0;
    /** After an accept() failure (EMFILE...) the listen fd is not polled until then: a
     *  pending connection keeps it readable, and retrying at once busy-loops. */
    std::chrono::steady_clock::time_point acceptPausedUntil_{};
    /** Set when the agent's destruction began: every wait ends by then (see stop()). */
    std::chrono::steady_clock::time_point shutdownBy_{};
    std::chrono::milliseconds acceptBackoff_{0}; ///< 0 after a success; then 10 ms doubling to 1 s
    size_t outgoing_ = 0;
    /** auto mode: what each peer ("ip:port") spoke last time; capped at max_known_peers. */
    std::map<std::string, nixl_p2p_dialect_t> known_;
    static constexpr size_t max_known_peers = 4096;
    /** Operations to send again in NIXLCOMM; counted in outgoing_ and busy_ already. */
    std::vector<std::unique_ptr<op_t>> retry_;
};


#endif // NIXL_SRC_CORE_METADATA_P2P_P2P_LOOP_H
