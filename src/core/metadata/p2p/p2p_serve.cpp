/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The P2P thread's part for libnixl's own framing (p2p_loop.h): what a whole frame means.
// serverFrame answers a peer's request (metadata, load, invalidate, status), clientFrame
// takes the answer to one of ours, finish ends the operation that waited for it. The I/O that
// brings frames in and out (poll, accept, send, receive, deadlines) is p2p_loop.cpp; NIXL
// 1.4's NIXLCOMM frames are p2p_comm.cpp. Everything here runs on the exchange's thread.

#include "metadata/p2p/p2p_loop.h"


#include "common/nixl_log.h"

using namespace std::chrono;
using nixlP2P::printable;
using phase_t = nixl_p2p_phase_t;
using conn_t = nixlP2PConn;

void
nixlP2PExchange::loop_t::answer(conn_t &c, std::string frame) {
    {
        std::lock_guard<std::mutex> lock(x_.mutex_);
        ++x_.stats_.requestsServed;
    }
    c.out = std::move(frame);
    c.outOff = 0;
    c.closeAfterSend = true;
    c.phase = phase_t::SENDING;
    sendSome(c);
}

void
nixlP2PExchange::loop_t::serverFrame(conn_t &c) {
    const std::string &me = x_.sink_.agentName();
    const nixl_p2p_type_t type = c.parser.type();
    const std::string &payload = c.parser.payload();
    using nixlP2P::encodeFrame;
    if (c.parser.dialect() == nixl_p2p_dialect_t::NIXLCOMM) {
        serverComm(c);
        return;
    }
    if (!c.helloSeen) {
        if (type != nixl_p2p_type_t::HELLO) {
            badPeer(c, "the first frame is " + nixlP2P::typeName(static_cast<uint8_t>(type)) +
                           ", expected HELLO");
            return;
        }
        std::string name;
        std::string token;
        std::string error;
        if (!nixlP2P::decodeHello(payload, name, token, error)) {
            badPeer(c, error);
            return;
        }
        c.peerName = name;
        if (!x_.cfg_.token.empty() && !nixlP2P::tokenEqual(x_.cfg_.token, token)) {
            {
                std::lock_guard<std::mutex> lock(x_.mutex_);
                ++x_.stats_.badPeers;
            }
            uint64_t suppressed = 0;
            if (limiter_.allow(steady_clock::now(), suppressed)) {
                NIXL_ERROR << "agent " << me << ": P2P listener: refused " << who(c) << ": "
                           << (token.empty() ? "it presented no token" :
                                               "it presented a wrong token")
                           << " (NIXL_P2P_TOKEN is set)"
                           << (suppressed ? " (" + std::to_string(suppressed) +
                                       " similar lines suppressed)" :
                                            std::string());
            }
            answerStatus(c,
                         NIXL_ERR_NOT_ALLOWED,
                         "refused by agent " + me + ": missing or wrong token (NIXL_P2P_TOKEN)");
            return;
        }
        c.helloSeen = true;
        return;
    }
    switch (type) {
    case nixl_p2p_type_t::LOAD: {
        std::string name;
        const nixl_status_t st = x_.sink_.loadRemote(payload, std::string(), name);
        NIXL_DEBUG << "agent " << me << ": P2P listener: metadata from " << who(c) << ": "
                   << nixl_plugin_status_name(st);
        answerStatus(c,
                     st,
                     st == NIXL_SUCCESS ? "loaded by agent " + me :
                                          "agent " + me + " could not load it");
        return;
    }
    case nixl_p2p_type_t::FETCH: {
        if (!payload.empty() && payload != me) {
            answerStatus(c,
                         NIXL_ERR_NOT_FOUND,
                         "this listener serves agent " + me + ", not " + printable(payload));
            return;
        }
        std::string blob;
        const nixl_status_t st = x_.sink_.localMD(blob);
        if (st != NIXL_SUCCESS) {
            answerStatus(c, st, "agent " + me + " has no metadata to send");
            return;
        }
        if (blob.size() > x_.cfg_.maxFrame) {
            NIXL_ERROR << "agent " << me << ": P2P listener: the metadata asked for by "
                       << who(c) << " is " << blob.size()
                       << " bytes, over NIXL_P2P_MAX_FRAME (" << x_.cfg_.maxFrame << ")";
            answerStatus(c, NIXL_ERR_NOT_ALLOWED, "metadata over NIXL_P2P_MAX_FRAME");
            return;
        }
        NIXL_DEBUG << "agent " << me << ": P2P listener: sending metadata to " << who(c);
        answer(c, encodeFrame(nixl_p2p_type_t::LOAD, blob));
        return;
    }
    case nixl_p2p_type_t::INVALIDATE: {
        if (payload != c.peerName) {
            badPeer(c, "INVALIDATE names agent " + printable(payload) +
                           ", not the agent of its HELLO");
            return;
        }
        const nixl_status_t st = x_.sink_.invalidateRemote(payload);
        NIXL_DEBUG << "agent " << me << ": P2P listener: invalidate from " << who(c) << ": "
                   << nixl_plugin_status_name(st);
        answerStatus(c,
                     st,
                     st == NIXL_SUCCESS ? "forgotten by agent " + me :
                                          "agent " + me + " has no metadata of it");
        return;
    }
    default:
        badPeer(c, "unexpected " + nixlP2P::typeName(static_cast<uint8_t>(type)) +
                       " frame after HELLO; expected LOAD, FETCH or INVALIDATE");
        return;
    }
}

void
nixlP2PExchange::loop_t::clientFrame(conn_t &c) {
    const op_t &op = *c.op;
    const nixl_p2p_type_t type = c.parser.type();
    const bool comm_answer = c.parser.dialect() == nixl_p2p_dialect_t::NIXLCOMM;
    if (comm_answer != op.comm) {
        finish(c, false,
               comm_answer ? "the peer answered in NIXL 1.4's NIXLCOMM framing" :
                             "the peer answered a NIXLCOMM request in libnixl's framing");
        return;
    }
    if (type == nixl_p2p_type_t::STATUS) {
        nixl_status_t st = NIXL_SUCCESS;
        std::string msg;
        std::string error;
        if (!nixlP2P::decodeStatus(c.parser.payload(), st, msg, error)) {
            finish(c, false, "the answer is not valid: " + error);
            return;
        }
        if (st == NIXL_SUCCESS && op.kind != nixl_p2p_type_t::FETCH) {
            finish(c, true);
            return;
        }
        if (st == NIXL_ERR_NOT_FOUND && op.kind == nixl_p2p_type_t::INVALIDATE) {
            // What invalidating is for already holds: the peer does not know us.
            NIXL_DEBUG << "agent " << x_.sink_.agentName() << ": " << op.what << " via " << op.peer
                       << ": the peer had no metadata of this agent";
            finish(c, true);
            return;
        }
        finish(c, false,
               std::string("the peer answered ") + nixl_plugin_status_name(st) + ": " + printable(msg));
        return;
    }
    if (type == nixl_p2p_type_t::LOAD && op.kind == nixl_p2p_type_t::FETCH) {
        std::string name;
        const nixl_status_t st = x_.sink_.loadRemote(c.parser.payload(), op.expected, name);
        // loadRemote logged why it failed: the line of the first place to see it.
        if (st == NIXL_SUCCESS) {
            finish(c, true);
        } else {
            NIXL_DEBUG << "agent " << x_.sink_.agentName() << ": " << op.what << " from "
                       << op.peer << ": loading the answer failed: " << nixl_plugin_status_name(st);
            c.op->what.clear(); // logged already
            finish(c, false);
        }
        return;
    }
    finish(c, false,
           "the peer answered with an unexpected " +
               (comm_answer ? "NIXLCOMM " + std::string(nixlP2P::commCommand(type)) :
                              nixlP2P::typeName(static_cast<uint8_t>(type))) +
               " frame");
}

void
nixlP2PExchange::loop_t::finish(conn_t &c, bool ok, const std::string &error) {
    if (!ok && retryInComm(c, error)) {
        return;
    }
    if (x_.cfg_.protocol == nixl_p2p_protocol_t::AUTO &&
        (c.parser.dialect() == nixl_p2p_dialect_t::LIBNIXL || (ok && c.op->comm))) {
        remember(c.op->peer,
                 c.op->comm ? nixl_p2p_dialect_t::NIXLCOMM : nixl_p2p_dialect_t::LIBNIXL);
    } else if (!ok && c.op->comm) {
        // A NIXLCOMM guess that failed is not kept: the next operation probes in ours again,
        // rather than a peer that was only slow or busy staying NIXLCOMM until the map fills.
        known_.erase(c.op->peer);
    }
    if (!ok && !c.op->what.empty()) {
        NIXL_ERROR << "agent " << x_.sink_.agentName() << ": " << c.op->what << " via "
                   << c.op->peer << ": " << error << "; nothing was "
                   << (c.op->kind == nixl_p2p_type_t::FETCH ? "loaded" : "delivered");
    } else if (ok) {
        NIXL_DEBUG << "agent " << x_.sink_.agentName() << ": " << c.op->what << " via "
                   << c.op->peer << ": done";
    }
    close(c);
    busy_.erase(c.op->peer);
    kick_ = true;
    {
        std::lock_guard<std::mutex> lock(x_.mutex_);
        ++x_.stats_.opsDone;
        if (!ok) {
            ++x_.stats_.opsFailed;
        }
        --x_.pending_;
    }
    x_.idle_.notify_all();
}

void
nixlP2PExchange::loop_t::answerStatus(conn_t &c, nixl_status_t st, const std::string &text) {
    answer(c, nixlP2P::encodeFrame(nixl_p2p_type_t::STATUS, nixlP2P::encodeStatus(st, text)));
}
