/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Received notifications: decode, reassemble, queue; bad input logged at most once a second.

#include "lf_inbox.h"

#include "lf_clock.h"
#include "nixl_backend_sdk.h"

namespace nixlLf {

void
lfNotifInbox::receive(const std::string &prov,
                      std::string_view bytes,
                      std::vector<notifReassembler::message> &ready) {
    notifFragWire f;
    std::string why;
    std::lock_guard<std::mutex> g(mu_);
    const int64_t nowMsec = nowMs();
    if (!decodeNotifFrag(bytes, f, why)) {
        // A peer's bytes: at most one line a second, however many arrive.
        if (nowMsec - malformedLogMs_ >= 1000) {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov
                                    << ": dropped a message: " << why << " ("
                                    << malformedUnlogged_ << " more since the last line)");
            malformedLogMs_ = nowMsec;
            malformedUnlogged_ = 0;
        } else {
            ++malformedUnlogged_;
        }
        return;
    }
    auto res = reasm_.feed(f, nowMsec, ready);
    if (res.log) {
        NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov
                                << ": dropped a notification from "
                                << (res.sender.empty() ? std::string("an unnamed sender")
                                                       : "agent " + res.sender)
                                << " (nonce 0x" << std::hex << f.nonce << std::dec
                                << "): " << res.why << "; " << res.senderDrops
                                << " dropped from it so far, " << res.suppressed
                                << " not logged since the last line");
    }
    for (auto &m : ready) {
        const size_t len = m.data.size();
        const std::string sender = m.sender;
        if (queue_.push(std::move(m.sender), std::move(m.data))) {
            continue;
        }
        m.traced = false; // dropped: no phases for it
        if (nowMsec - queue_.lastLogMs >= 1000) {
            NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov
                                    << ": dropped a notification of " << len
                                    << " bytes from agent " << sender << ": "
                                    << queue_.heldBytes()
                                    << " bytes of notifications wait for getNotifs "
                                       "(notif_total_max_bytes); "
                                    << queue_.dropped() << " dropped so far, "
                                    << queue_.unlogged - 1
                                    << " not logged since the last line");
            queue_.lastLogMs = nowMsec;
            queue_.unlogged = 0;
        }
    }
}

void
lfNotifInbox::pushLocal(std::string sender, std::string msg) {
    std::lock_guard<std::mutex> g(mu_);
    queue_.pushLocal(std::move(sender), std::move(msg));
}

void
lfNotifInbox::take(deliveredNotifs::list_t &out) {
    std::lock_guard<std::mutex> g(mu_);
    queue_.take(out);
}

} // namespace nixlLf
