/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine's notification queue and its accounting (ucx_notif_queue.h).
#include "ucx_notif_queue.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "ucx_internal.h"

namespace {

int64_t
steadyMs() noexcept {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

nixlUcxNotifQueue::nixlUcxNotifQueue(std::string agent,
                                     uint64_t peer_max,
                                     uint64_t total_max,
                                     bool traced)
    : agent_(std::move(agent)),
      peerMax_(peer_max),
      totalMax_(total_max),
      traced_(traced) {}

bool
nixlUcxNotifQueue::fitsLocked(std::string_view sender, size_t length) {
    if (sender == agent_) {
        return true; // the agent's own (loopback) are never dropped
    }
    const size_t cost = sender.size() + length + nixlUcx::notif_entry_overhead;
    auto it = heldBy_.find(sender);
    const size_t peer = it == heldBy_.end() ? 0 : it->second;
    if (cost <= peerMax_ - std::min<size_t>(peer, peerMax_) &&
        cost <= totalMax_ - std::min<size_t>(held_, totalMax_)) {
        return true;
    }
    ++dropped_;
    const int64_t now = steadyMs();
    if (now - dropLogMs_ >= 1000) {
        NIXL_SDK_ERROR("agent " << agent_ << ": UCX dropped a " << length
                                << "-byte notification from " << nixlSdk::cutValue(sender)
                                << ": " << peer << " bytes from it and " << held_
                                << " in all wait for getNotifs (notif_peer_max_bytes="
                                << peerMax_ << ", notif_total_max_bytes=" << totalMax_ << "); "
                                << dropped_ << " dropped so far, " << dropUnlogged_
                                << " not logged since the last line");
        dropLogMs_ = now;
        dropUnlogged_ = 0;
    } else {
        ++dropUnlogged_;
    }
    return false;
}

bool
nixlUcxNotifQueue::fits(std::string_view sender, size_t length) {
    std::lock_guard<std::mutex> g(lock_);
    return fitsLocked(sender, length);
}

void
nixlUcxNotifQueue::push(std::string sender, std::string msg, const nixl_be_trace_ctx_t *trace) {
    std::lock_guard<std::mutex> g(lock_);
    if (!fitsLocked(sender, msg.size())) {
        return;
    }
    if (sender != agent_) {
        const size_t cost = sender.size() + msg.size() + nixlUcx::notif_entry_overhead;
        held_ += cost;
        heldBy_[sender] += cost;
    }
    queue_.emplace_back(std::move(sender), std::move(msg));
    if (traced_) {
        traces_.push_back(trace != nullptr ? *trace : nixl_be_trace_ctx_t{});
    }
}

void
nixlUcxNotifQueue::take(notif_list_t &out, std::vector<nixl_be_trace_ctx_t> &traces) {
    std::lock_guard<std::mutex> g(lock_);
    if (out.empty()) {
        out.swap(queue_);
    } else {
        for (auto &n : queue_) {
            out.push_back(std::move(n));
        }
        queue_.clear();
    }
    traces.swap(traces_);
    held_ = 0;
    heldBy_.clear();
}

void
nixlUcxNotifQueue::badTraceContext(std::string_view sender, const std::string &why) {
    if (badTrace_.fetch_add(1, std::memory_order_relaxed) == 0) {
        NIXL_SDK_WARN("agent " << agent_ << ": notification from " << sender << ": " << why
                               << "; delivered, its trace phases recorded without the "
                               << "sender's trace (later damaged contexts are only counted)");
    }
}

void
nixlUcxNotifQueue::reportLost() const {
    if (const uint64_t n = lost_.load(std::memory_order_relaxed); n > 0) {
        NIXL_SDK_ERROR("agent " << agent_ << ": UCX engine closing: " << n
                                << " notification(s) that genNotif reported sent were lost ("
                                << lostBytes_.load(std::memory_order_relaxed)
                                << " bytes; their peers were lost or never took them)");
    }
}
