/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The P2P thread's part for NIXL 1.4 peers (p2p_loop.h; docs/metadata.md, "NIXLCOMM"): serving
// NIXLCOMM frames on a connection that stays open between them, making room by closing the
// idle one, and the auto client's retry in NIXLCOMM with its memory of what each peer spoke.
// Everything here runs on the exchange's thread, as the rest of loop_t.

#include "metadata/p2p/p2p_loop.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>

#include "common/nixl_log.h"

using namespace std::chrono;
using conn_t = nixlP2PConn;

void
nixlP2PExchange::loop_t::serverComm(conn_t &c) {
    const std::string &me = x_.sink_.agentName();
    const nixl_p2p_type_t type = c.parser.type();
    const std::string &payload = c.parser.payload();
    c.lastFrame = steady_clock::now();
    c.deadline = steady_clock::time_point::max(); // commProgress re-arms it while busy
    {
        std::lock_guard<std::mutex> lock(x_.mutex_);
        ++x_.stats_.requestsServed;
    }
    switch (type) {
    case nixl_p2p_type_t::LOAD: {
        // No answer: NIXL's LOAD has none. loadRemote logged why it failed.
        std::string name;
        const nixl_status_t st = x_.sink_.loadRemote(payload, std::string(), name);
        NIXL_DEBUG << "agent " << me << ": P2P listener: NIXLCOMM LOAD from " << who(c) << ": "
                   << nixl_plugin_status_name(st);
        return;
    }
    case nixl_p2p_type_t::FETCH: {
        // NIXL 1.4 waits for each answer; a peer that sends SEND after SEND without reading
        // would otherwise make us queue a copy of the metadata per 21-byte frame. (The loop
        // also stops reading a connection while its answer is unsent.)
        if (c.outOff < c.out.size()) {
            badPeer(c, "sent NIXLCOMM SEND while an earlier answer is still unsent", false);
            return;
        }
        std::string blob;
        const nixl_status_t st = x_.sink_.localMD(blob);
        if (st != NIXL_SUCCESS || blob.size() > x_.cfg_.maxFrame) {
            // NIXL 1.4 would send an empty blob, which its peer cannot load either. Closed
            // through badPeer: one rate-limited line, not one per frame the peer repeats.
            badPeer(c,
                    "NIXLCOMM SEND not answered: " +
                        (st != NIXL_SUCCESS ?
                             std::string("getLocalMD failed: ") + nixl_plugin_status_name(st) :
                             "the metadata is " + std::to_string(blob.size()) +
                                 " bytes, over NIXL_P2P_MAX_FRAME (" +
                                 std::to_string(x_.cfg_.maxFrame) + ")"),
                    false);
            return;
        }
        NIXL_DEBUG << "agent " << me << ": P2P listener: sending metadata to " << who(c)
                   << " (NIXLCOMM)";
        c.out = nixlP2P::encodeComm(nixl_p2p_type_t::LOAD, blob); // nothing was unsent
        c.outOff = 0;
        return;
    }
    case nixl_p2p_type_t::INVALIDATE: {
        // NIXLCOMM names no sender: as without a token in our framing, anyone reaching the
        // port may name any agent (docs/metadata.md, threat model).
        if (payload.empty()) {
            badPeer(c, "NIXLCOMM INVL without an agent name", false);
            return;
        }
        c.peerName = payload;
        const nixl_status_t st = x_.sink_.invalidateRemote(payload);
        NIXL_DEBUG << "agent " << me << ": P2P listener: NIXLCOMM INVL from " << who(c) << ": "
                   << nixl_plugin_status_name(st);
        return;
    }
    default:
        badPeer(c, "unexpected NIXLCOMM frame", false); // the parser yields only the three
        return;
    }
}

void
nixlP2PExchange::loop_t::commProgress(conn_t &c, steady_clock::time_point now) {
    while (c.outOff < c.out.size()) {
        const ssize_t n =
            ::send(c.fd, c.out.data() + c.outOff, c.out.size() - c.outOff, MSG_NOSIGNAL);
        if (n > 0) {
            c.outOff += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            break;
        }
        NIXL_DEBUG << "agent " << x_.sink_.agentName() << ": P2P listener: " << who(c)
                   << " went away before its NIXLCOMM answer was sent: "
                   << std::strerror(n < 0 ? errno : EPIPE);
        close(c);
        return;
    }
    if (c.outOff == c.out.size()) {
        c.out.clear();
        c.outOff = 0;
    }
    if (c.out.empty() && c.parser.partial() == 0) {
        c.deadline = steady_clock::time_point::max();
    } else if (c.deadline == steady_clock::time_point::max()) {
        c.deadline = now + x_.cfg_.timeout;
    }
}

bool
nixlP2PExchange::loop_t::evictIdleComm() {
    conn_t *oldest = nullptr;
    for (auto &c : conns_) {
        if (c->incoming && !c->closed && c->deadline == steady_clock::time_point::max() &&
            (oldest == nullptr || c->lastFrame < oldest->lastFrame)) {
            oldest = c.get();
        }
    }
    if (oldest == nullptr) {
        return false;
    }
    NIXL_DEBUG << "agent " << x_.sink_.agentName() << ": P2P listener: closing the idle NIXLCOMM "
               << "connection of " << who(*oldest) << " to make room (NIXL_P2P_MAX_CONNECTIONS)";
    close(*oldest);
    return true;
}

bool
nixlP2PExchange::loop_t::retryInComm(conn_t &c, const std::string &error) {
    op_t &op = *c.op;
    // With NIXL_P2P_TOKEN set the peer must be a libnixl listener with the token: a NIXL 1.4
    // peer has none, and NIXLCOMM cannot carry it.
    if (x_.cfg_.protocol != nixl_p2p_protocol_t::AUTO || op.comm || !c.connected ||
        !x_.cfg_.token.empty() ||
        shutdownBy_ != steady_clock::time_point{} ||
        c.parser.dialect() == nixl_p2p_dialect_t::LIBNIXL) {
        return false;
    }
    const auto known = known_.find(op.peer);
    if (known != known_.end() && known->second == nixl_p2p_dialect_t::LIBNIXL) {
        known_.erase(known); // it spoke ours before: this failure is not a dialect question
        return false;
    }
    // Retried: a peer that said nothing (a NIXL 1.4 listener never answers our HELLO), or
    // answered with well-formed NIXLCOMM bytes. Garbage is reported as it is.
    if (c.answered &&
        (c.parser.dialect() != nixl_p2p_dialect_t::NIXLCOMM || !c.parser.error().empty())) {
        return false;
    }
    NIXL_DEBUG << "agent " << x_.sink_.agentName() << ": " << op.what << " via " << op.peer
               << ": " << error << "; retrying in NIXL 1.4's NIXLCOMM";
    remember(op.peer, nixl_p2p_dialect_t::NIXLCOMM);
    close(c);
    ++outgoing_;
    retry_.push_back(std::move(c.op));
    retry_.back()->comm = true;
    kick_ = true;
    return true;
}

void
nixlP2PExchange::loop_t::remember(const std::string &peer, nixl_p2p_dialect_t dialect) {
    if (known_.size() >= max_known_peers && known_.count(peer) == 0) {
        known_.clear(); // forgetting costs one more probe per peer, never a wrong answer
    }
    known_[peer] = dialect;
}
