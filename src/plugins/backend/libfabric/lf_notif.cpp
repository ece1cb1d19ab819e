/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Bounded reassembly of notification fragments (lf_notif.h).

#include "lf_notif.h"

#include <algorithm>

#include <cstring>
#include <utility>

namespace nixlLf {

size_t
notifReassembler::heldBytes(uint64_t nonce) const noexcept {
    auto it = senders_.find(nonce);
    return it == senders_.end() ? 0 : it->second.held;
}

void
notifReassembler::charge(senderState &ss, partial &p, size_t bytes) {
    ss.held += bytes;
    held_ += bytes;
    p.charged += bytes;
}

void
notifReassembler::release(senderState &ss, partial &p) {
    ss.held -= p.charged;
    held_ -= p.charged;
    p.charged = 0;
}

notifReassembler::result
notifReassembler::drop(senderState &ss, partial &p, bool overLimit, std::string why,
                       int64_t nowMs) {
    // Keep a tombstone charged with the fixed overhead only: it counts the rest of the
    // message's fragments so the sender's order moves on once they are all in.
    const size_t keep = std::min(p.charged, notif_entry_overhead);
    ss.held -= p.charged - keep;
    held_ -= p.charged - keep;
    p.charged = keep;
    std::string().swap(p.data);
    p.dropped = true;
    ++ss.drops;
    ++dropped_;
    result r;
    r.dropped = true;
    r.overLimit = overLimit;
    r.why = std::move(why);
    r.sender = ss.name;
    r.senderDrops = ss.drops;
    if (nowMs - ss.lastLogMs >= 1000) {
        r.log = true;
        r.suppressed = ss.unlogged;
        ss.unlogged = 0;
        ss.lastLogMs = nowMs;
    } else {
        ++ss.unlogged;
    }
    return r;
}

notifReassembler::result
notifReassembler::feed(const notifFragWire &f, int64_t nowMs, std::vector<message> &out) {
    result res;
    auto sit = senders_.find(f.nonce);
    if (sit == senders_.end()) {
        // A sender's state lives as long as the engine (its order must survive): charged to
        // the total for good.
        if (held_ + notif_entry_overhead > totalMax_) {
            res.dropped = res.overLimit = true;
            res.why = "a new sender while the notification memory limit is reached";
            ++dropped_;
            if (nowMs - unknownLogMs_ >= 1000) {
                res.log = true;
                unknownLogMs_ = nowMs;
            }
            return res;
        }
        sit = senders_.emplace(f.nonce, senderState{}).first;
        held_ += notif_entry_overhead;
    }
    senderState &ss = sit->second;
    if (f.offset == 0 && !f.sender.empty()) {
        ss.name.assign(f.sender.data(), f.sender.size());
    }
    if (f.seq - ss.next > (1u << 30)) {
        res.dropped = true;
        res.why = "notification " + std::to_string(f.seq) + " arrived again";
        res.sender = ss.name;
        if (nowMs - ss.lastLogMs >= 1000) {
            res.log = true;
            ss.lastLogMs = nowMs;
        }
        return res;
    }
    auto [pit, fresh] = ss.pending.try_emplace(f.seq);
    partial &p = pit->second;
    if (fresh) {
        if (ss.held + notif_entry_overhead > perSenderMax_ ||
            held_ + notif_entry_overhead > totalMax_) {
            // Not even a tombstone fits: this sender has too many messages under way. Its
            // later messages wait for this one (its own order), within its bound.
            ss.pending.erase(pit);
            partial none;
            res = drop(ss, none, true, "too many notifications under way", nowMs);
            return res;
        }
        p.total = f.total;
        charge(ss, p, notif_entry_overhead);
    } else if (p.total != f.total) {
        if (!p.dropped) {
            res = drop(ss, p, false,
                       "fragments of notification " + std::to_string(f.seq) +
                           " disagree on its length",
                       nowMs);
        }
        p.received = p.total; // nothing more can be trusted of it: let the order move on
    }
    if (!p.dropped && p.data.size() != p.total) {
        if (ss.held + p.total > perSenderMax_ || held_ + p.total > totalMax_) {
            res = drop(ss, p, true,
                       "notification of " + std::to_string(p.total) +
                           " bytes would pass the memory limit (" + std::to_string(ss.held) +
                           " bytes held for this sender, " + std::to_string(held_) + " in all)",
                       nowMs);
        } else {
            p.data.resize(p.total);
            charge(ss, p, p.total);
        }
    }
    if (p.dropped) {
        res.dropped = true;
        p.received += f.payload.size();
    } else {
        if (f.offset == 0) {
            p.haveFirst = true;
            p.sender.assign(f.sender.data(), f.sender.size());
            p.traced = f.traced;
            std::memcpy(p.trace, f.trace, sizeof(p.trace));
        }
        std::memcpy(p.data.data() + f.offset, f.payload.data(), f.payload.size());
        p.received += f.payload.size();
    }
    // Deliver this sender's complete messages in order; skip complete tombstones.
    for (auto it = ss.pending.find(ss.next); it != ss.pending.end();
         it = ss.pending.find(ss.next)) {
        partial &q = it->second;
        if (q.received < q.total || (!q.dropped && !q.haveFirst)) {
            break;
        }
        if (!q.dropped) {
            message m;
            m.sender = std::move(q.sender);
            m.data = std::move(q.data);
            m.traced = q.traced;
            std::memcpy(m.trace, q.trace, sizeof(m.trace));
            out.push_back(std::move(m));
        }
        release(ss, q);
        ss.pending.erase(it);
        ++ss.next;
    }
    return res;
}

bool
deliveredNotifs::push(std::string sender, std::string data) {
    const size_t cost = sender.size() + data.size() + notif_entry_overhead;
    if (cost > max_ - std::min(held_, max_)) {
        ++dropped_;
        ++unlogged;
        return false;
    }
    held_ += cost;
    q_.emplace_back(std::move(sender), std::move(data));
    return true;
}

void
deliveredNotifs::pushLocal(std::string sender, std::string data) {
    held_ += sender.size() + data.size() + notif_entry_overhead;
    q_.emplace_back(std::move(sender), std::move(data));
}

void
deliveredNotifs::take(list_t &out) {
    for (auto &n : q_) {
        out.push_back(std::move(n));
    }
    q_.clear();
    held_ = 0;
}

} // namespace nixlLf
