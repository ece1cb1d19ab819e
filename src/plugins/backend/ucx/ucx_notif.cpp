/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: notifications (active messages) sent and received.
#include "ucx_internal.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>

#include "nixl_trace_context.h"

using nixlUcx::notif_am_id;
using nixlUcx::threadSlot;
using nixlUcx::opName;
using nixlUcx::finishReq;
using nixlUcx::track;
using nixlUcx::goneStatus;

namespace {

void
amSendCb(void *request, ucs_status_t status, void *user_data) {
    ucp_request_free(request);
    auto *s = static_cast<nixlUcxAmSend *>(user_data);
    s->worker->sends.erase(s);
    nixlUcx::unchargeSend(*s);
    if (s->req != nullptr) {
        nixlUcxReq &req = *s->req;
        req.notifSend = nullptr;
        const bool lost = !req.conn->usable();
        if (status == UCS_OK) {
            finishReq(req, NIXL_SUCCESS);
        } else {
            if (!lost) {
                NIXL_SDK_ERROR("agent " << s->engine->agentName() << ": notification of a "
                                        << opName(req.op) << " to " << s->remote
                                        << " failed after the data was delivered: "
                                        << ucs_status_string(status));
            }
            finishReq(req, nixlUcx::statusFromUcs(status, lost));
        }
    } else if (status != UCS_OK) {
        // genNotif reported this one sent: its loss is always said (rate-limited here, summed
        // up when the engine goes).
        s->engine->notifQueue().lost(s->body.size());
        NIXL_SDK_ERROR_LIMITED("agent " << s->engine->agentName() << ": a " << s->body.size()
                                        << "-byte notification that genNotif reported sent to "
                                        << s->remote << " was lost: "
                                        << ucs_status_string(status));
    }
    delete s;
}

/** A rendezvous notification being received. */
struct rndvRecv {
    const nixlUcxEngine *engine;
    std::string sender;
    std::string msg;
    nixl_be_trace_ctx_t trace{}; ///< valid only when the header carried a usable one
    bool traced = false;
};

/** NOTIF_RECEIVED of a message whose data arrived: under the sender's context if usable. */
void
notifArrived(const nixlUcxEngine &engine,
             std::string sender,
             std::string msg,
             const nixl_be_trace_ctx_t *trace) {
    if (engine.tracing()) {
        engine.tracePhase(trace, NIXL_BE_PHASE_NOTIF_RECEIVED, "ucx.am");
    }
    engine.notifQueue().push(std::move(sender), std::move(msg), trace);
}

void
rndvRecvCb(void *request, ucs_status_t status, size_t length, void *user_data) {
    auto *r = static_cast<rndvRecv *>(user_data);
    if (status == UCS_OK) {
        r->msg.resize(length);
        notifArrived(*r->engine, std::move(r->sender), std::move(r->msg),
                     r->traced ? &r->trace : nullptr);
    } else {
        NIXL_SDK_ERROR("agent " << r->engine->agentName() << ": receiving a "
                                << r->msg.size() << "-byte notification from " << r->sender
                                << " failed: " << ucs_status_string(status));
    }
    ucp_request_free(request);
    delete r;
}

} // namespace

namespace nixlUcx {

void
unchargeSend(nixlUcxAmSend &s) noexcept {
    if (s.budget) {
        s.budget->fetch_sub(s.charged, std::memory_order_relaxed);
        s.budget.reset();
        s.engine->notifQueue().sendDone();
    }
}

namespace {

/** Receives notifications on a home worker (arg: the nixlUcxWorker). */
ucs_status_t
amRecvCb(void *arg,
         const void *header,
         size_t header_length,
         void *data,
         size_t length,
         const ucp_am_recv_param_t *param) {
    auto *w = static_cast<nixlUcxWorker *>(arg);
    const nixlUcxEngine *engine = w->engine;
    nixlUcx::notifHeaderWire hdr;
    std::string why;
    if (!nixlUcx::decodeNotifHeader(
            std::string_view(static_cast<const char *>(header), header_length), hdr, why)) {
        NIXL_SDK_ERROR("agent " << engine->agentName() << ": dropped a " << length
                                << "-byte active message: " << why);
        return UCS_OK;
    }
    // A context is used, and a damaged one reported, only when this agent traces.
    const bool traced = engine->tracing() && hdr.traceOk;
    if (engine->tracing() && hdr.traceSent && !hdr.traceOk) {
        engine->notifQueue().badTraceContext(hdr.sender, hdr.traceWhy);
    }
    std::string sender(hdr.sender);
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
        // Refused before its buffer is allocated, so a peer cannot make us hold more than the
        // limits with large messages; the error status drops the descriptor and fails the
        // sender's send (ucp_am_recv_callback_t), which then says the message was lost.
        if (!engine->notifQueue().fits(sender, length)) {
            return UCS_ERR_NO_RESOURCE;
        }
        auto *r = new rndvRecv{engine, std::move(sender), std::string(length, '\0'), hdr.trace,
                               traced};
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.recv_am = rndvRecvCb;
        p.user_data = r;
        ucs_status_ptr_t sp = ucp_am_recv_data_nbx(w->worker, data, r->msg.data(), length, &p);
        if (sp == nullptr) {
            notifArrived(*engine, std::move(r->sender), std::move(r->msg),
                         traced ? &r->trace : nullptr);
            delete r;
        } else if (UCS_PTR_IS_ERR(sp)) {
            NIXL_SDK_ERROR("agent " << engine->agentName() << ": cannot receive a " << length
                                    << "-byte notification from " << r->sender << ": "
                                    << ucs_status_string(UCS_PTR_STATUS(sp)));
            delete r;
        }
        return UCS_OK;
    }
    notifArrived(*engine, std::move(sender),
                 std::string(static_cast<const char *>(data), length),
                 traced ? &hdr.trace : nullptr);
    return UCS_OK;
}

/**
 * Receives NIXL 1.4's notifications (active message 0, ucx_nixl_peer.h) on a home worker: the
 * sender's name comes from the body, as NIXL keys them, whatever endpoint it came on.
 */
ucs_status_t
nixlAmRecvCb(void *arg,
             const void *header,
             size_t header_length,
             void *data,
             size_t length,
             const ucp_am_recv_param_t *param) {
    (void)header;
    (void)header_length; // NIXL sends none and ignores one; so do we
    auto *w = static_cast<nixlUcxWorker *>(arg);
    const nixlUcxEngine *engine = w->engine;
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
        // NIXL sends eagerly (UCP_AM_SEND_FLAG_EAGER); the error fails the sender's send.
        NIXL_SDK_ERROR_LIMITED("agent " << engine->agentName() << ": refused a " << length
                                        << "-byte NIXL-form notification sent by rendezvous "
                                           "(NIXL peers send them eagerly)");
        return UCS_ERR_NO_RESOURCE;
    }
    std::string_view sender;
    std::string_view msg;
    std::string why;
    if (!nixlUcx::decodeNixlNotif(std::string_view(static_cast<const char *>(data), length),
                                  sender, msg, why)) {
        NIXL_SDK_ERROR_LIMITED("agent " << engine->agentName() << ": dropped a " << length
                                        << "-byte NIXL-form notification: " << why);
        return UCS_OK;
    }
    notifArrived(*engine, std::string(sender), std::string(msg), nullptr);
    return UCS_OK;
}

ucs_status_t
setHandler(nixlUcxWorker &w, unsigned id, ucp_am_recv_callback_t cb) {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
        UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = id;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    hp.cb = cb;
    hp.arg = &w;
    return ucp_worker_set_am_recv_handler(w.worker, &hp);
}

} // namespace

ucs_status_t
receiveNotifs(nixlUcxWorker &w) {
    // Ours on notif_am_id, NIXL's on its id 0: a NIXL agent may notify any agent whose
    // worker address it loaded, with or without our metadata.
    const ucs_status_t st = setHandler(w, notif_am_id, amRecvCb);
    return st != UCS_OK ? st : setHandler(w, nixl_notif_am_id, nixlAmRecvCb);
}

} // namespace nixlUcx

void
nixlUcxEngine::sendXferNotifLocked(nixlUcxReq &req) const {
    if (!req.hasNotif || req.dropNotif) {
        finishReq(req, NIXL_SUCCESS);
        return;
    }
    if (!req.conn->usable()) {
        finishReq(req, goneStatus(*req.conn));
        return;
    }
    req.phase = nixlUcxReq::phase_t::NOTIF;
    nixl_status_t st = sendAm(*req.lane, req.remoteAgent, req.notif, &req);
    // Before finishReq: once the status is out, the request may be released at any time.
    if (tracing() && (st == NIXL_SUCCESS || st == NIXL_IN_PROG)) {
        tracePhase(req, NIXL_BE_PHASE_NOTIF_SENT, "ucx.am");
    }
    if (st != NIXL_IN_PROG) {
        finishReq(req, st);
    }
}

bool
nixlUcxEngine::carriesTrace(const nixlUcxReq *req) const noexcept {
    return req != nullptr && tracing() &&
        localAgent.size() <= std::numeric_limits<uint16_t>::max() &&
        nixl_trace_ctx_is_valid(req->traceCtx);
}

nixl_status_t
nixlUcxEngine::sendAm(nixlUcxLane &lane,
                      const std::string &remote,
                      const std::string &msg,
                      nixlUcxReq *req) const {
    if (lane.worker->worker == nullptr || lane.ep == nullptr) {
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    auto s = std::make_unique<nixlUcxAmSend>();
    if (lane.conn->nixl) {
        return sendNixlAm(lane, remote, msg, req, std::move(s));
    }
    // The request's trace context goes along only when the agent traces and it is valid, so
    // that without tracing the message is the version-1 one, byte for byte.
    uint8_t trace[NIXL_BE_TRACE_CTX_WIRE_SIZE];
    const bool carry =
        carriesTrace(req) && nixl_trace_ctx_encode(req->traceCtx, trace) == NIXL_TRACE_CTX_OK;
    if (carry && cfg_.faultNotifTrace != 0) {
        damageTrace(trace);
    }
    nixlUcx::encodeNotifHeader(s->header, localAgent, carry ? trace : nullptr);
    if (carry && cfg_.faultNotifTrace == 1) {
        s->header.resize(s->header.size() - NIXL_BE_TRACE_CTX_WIRE_SIZE / 2);
    }
    s->body = msg;
    // To a watched same-host peer, eager only: a rendezvous would leave the receiver reading
    // from this process, and that read cannot be cancelled on a "none" endpoint if we die.
    return postAm(lane, remote, msg.size(), req, std::move(s), notif_am_id,
                  lane.conn->watched ? UCP_AM_SEND_FLAG_EAGER : 0);
}

nixl_status_t
nixlUcxEngine::sendNixlAm(nixlUcxLane &lane,
                          const std::string &remote,
                          const std::string &msg,
                          nixlUcxReq *req,
                          std::unique_ptr<nixlUcxAmSend> s) const {
    // NIXL's form (ucx_nixl_peer.h): no header (no trace context), the sender's name and the
    // message in a serdes body, eager as NIXL's receiver requires.
    s->body = nixlUcx::encodeNixlNotif(localAgent, msg);
    return postAm(lane, remote, msg.size(), req, std::move(s), nixlUcx::nixl_notif_am_id,
                  UCP_AM_SEND_FLAG_EAGER);
}

nixl_status_t
nixlUcxEngine::postAm(nixlUcxLane &lane,
                      const std::string &remote,
                      size_t msg_size,
                      nixlUcxReq *req,
                      std::unique_ptr<nixlUcxAmSend> s,
                      unsigned am_id,
                      uint32_t flags) const {
    s->req = req;
    s->remote = remote;
    s->engine = this;
    s->worker = lane.worker.get();
    ucp_request_param_t p{};
    p.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    p.cb.send = amSendCb;
    p.user_data = s.get();
    p.flags = flags;
    ucs_status_ptr_t sp = ucp_am_send_nbx(
        lane.ep, am_id, s->header.data(), s->header.size(), s->body.data(), s->body.size(), &p);
    if (sp == nullptr) {
        return NIXL_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(sp)) {
        const bool lost = !lane.conn->usable();
        if (!lost) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot send a " << msg_size
                                    << "-byte notification to " << remote << ": "
                                    << ucs_status_string(UCS_PTR_STATUS(sp)));
        }
        return nixlUcx::statusFromUcs(UCS_PTR_STATUS(sp), lost);
    }
    if (req != nullptr) {
        req->notifSend = s.get();
        track(*req);
    } else {
        s->charged = s->body.size() + nixlUcx::notif_entry_overhead;
        s->budget = lane.conn->notifSendHeld;
        s->budget->fetch_add(s->charged, std::memory_order_relaxed);
        notifs_->sendStarted();
    }
    lane.worker->sends.insert(s.get());
    s.release();
    return NIXL_IN_PROG;
}

void
nixlUcxEngine::tracePhase(const nixl_be_trace_ctx_t *ctx,
                          nixl_be_trace_phase_t phase,
                          std::string_view label) const noexcept {
    if (traceSink_ != nullptr) {
        recordPhase(ctx, phase, label, nixlTraceNow); // core reads its (TSC) clock
    }
}

void
nixlUcxEngine::tracePhase(nixlUcxReq &req,
                          nixl_be_trace_phase_t phase,
                          std::string_view label) const noexcept {
    if (req.phaseBatch != nullptr && req.phaseBatch->add(phase, label)) {
        return;
    }
    tracePhase(req.traceCtx, phase, label);
}

void
nixlUcxEngine::damageTrace(uint8_t *trace) const {
    // Fault injection (tests only): 1 truncates the record (in sendAm), 2 gives it version
    // 0xff, 3 zeroes its trace id.
    if (cfg_.faultNotifTrace == 2) {
        trace[0] = 0xff;
    } else if (cfg_.faultNotifTrace == 3) {
        std::memset(trace + 1, 0, 16);
    }
}

nixl_status_t
nixlUcxEngine::getNotifs(notif_list_t &notif_list) {
    progressAll(cfg_.progressThread);
    checkPeers();
    std::vector<nixl_be_trace_ctx_t> traces;
    notifs_->take(notif_list, traces);
    // The target's application sees the request's effect now: REMOTE_OBSERVED, under the
    // context each message carried (only messages that carried one).
    for (const nixl_be_trace_ctx_t &t : traces) {
        if (nixl_trace_ctx_is_valid(&t)) {
            tracePhase(&t, NIXL_BE_PHASE_REMOTE_OBSERVED, "ucx.delivered");
        }
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::genNotif(const std::string &remote_agent, const std::string &msg) const {
    std::shared_ptr<nixlUcxConn> conn = findConn(remote_agent);
    if (!conn) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX genNotif: no connection to "
                                << remote_agent);
        return NIXL_ERR_NOT_FOUND;
    }
    if (!conn->usable()) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX genNotif: " << remote_agent
                                << " was lost or disconnected");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    if (nixl_status_t st = ensureLanes(*conn); st != NIXL_SUCCESS) {
        return st;
    }
    nixlUcxLane &lane = *conn->lanes[threadSlot() % conn->lanes.size()];
    nixl_status_t st;
    {
        std::lock_guard<std::mutex> g(lane.worker->lock);
        // Push back when the peer does not take what was sent. One message always goes (a
        // message larger than the limit can still be sent alone).
        const size_t cost = msg.size() + nixlUcx::notif_entry_overhead;
        auto full = [&] {
            const size_t held = conn->notifSendHeld->load(std::memory_order_relaxed);
            return held > 0 &&
                cost > cfg_.notifSendMax - std::min<size_t>(held, cfg_.notifSendMax);
        };
        if (full()) {
            lane.worker->progressLocked();
            if (full()) {
                NIXL_SDK_WARN_LIMITED("agent " << localAgent << ": UCX genNotif to "
                                               << remote_agent << " refused for now: "
                                               << conn->notifSendHeld->load(
                                                      std::memory_order_relaxed)
                                               << " bytes of notifications to it are not sent yet "
                                                  "(notif_send_max_bytes="
                                               << cfg_.notifSendMax << "); retry later");
                return NIXL_ERR_REPOST_ACTIVE;
            }
        }
        st = sendAm(lane, remote_agent, msg, nullptr);
        lane.worker->progressLocked();
    }
    wakeProgress();
    return st == NIXL_IN_PROG ? NIXL_SUCCESS : st;
}
