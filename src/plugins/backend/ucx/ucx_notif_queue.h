/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_notif_queue.h
 * @brief The UCX engine's notification accounting: received notifications waiting for
 *        getNotifs (bounded per sender and in all), the genNotif sends still in flight, and the
 *        notifications counted as dropped, lost or carrying a damaged trace context.
 *
 * Thread safety: every method may be called from any thread (UCX callbacks of any worker,
 * getNotifs, genNotif). The queue and its held/dropped counts are guarded by the queue's own
 * lock, a leaf lock (nothing is called with it held); the send and loss counters are atomics.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_NOTIF_QUEUE_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_NOTIF_QUEUE_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "nixl_backend_sdk.h"

/** @brief Received notifications and the counts of those sent, dropped and lost. */
class nixlUcxNotifQueue {
public:
    /**
     * agent: the engine's agent (its own notifications are never dropped, and log lines name
     * it); peer_max and total_max: notif_peer_max_bytes and notif_total_max_bytes; traced:
     * the agent traces, so each entry keeps the trace context it carried.
     */
    nixlUcxNotifQueue(std::string agent, uint64_t peer_max, uint64_t total_max, bool traced);

    nixlUcxNotifQueue(const nixlUcxNotifQueue &) = delete;
    nixlUcxNotifQueue &
    operator=(const nixlUcxNotifQueue &) = delete;

    /**
     * Whether a notification of length bytes from sender fits the limits now (checked before
     * a rendezvous message is received); counts it as dropped, and logs at most one line a
     * second, when not.
     */
    bool
    fits(std::string_view sender, size_t length);
    /** Queues a received notification (dropped, as fits says, when over the limits). */
    void
    push(std::string sender, std::string msg, const nixl_be_trace_ctx_t *trace);
    /**
     * Moves every queued notification to the end of out, and their trace contexts (tracing
     * on; zeroed where none came) to traces; the queue's bytes are free again.
     */
    void
    take(notif_list_t &out, std::vector<nixl_be_trace_ctx_t> &traces);

    /**
     * A peer's notification carried a trace context this engine cannot use: the first one
     * logs one line (naming the sender and why), later ones are only counted.
     */
    void
    badTraceContext(std::string_view sender, const std::string &why);

    /** A genNotif send was handed to UCX / is over (completed, failed or dropped). */
    void
    sendStarted() noexcept {
        sendsPending_.fetch_add(1, std::memory_order_relaxed);
    }

    void
    sendDone() noexcept {
        sendsPending_.fetch_sub(1, std::memory_order_relaxed);
    }

    /** genNotif sends not completed yet (the engine's teardown waits for them). */
    const std::atomic<size_t> &
    sendsPending() const noexcept {
        return sendsPending_;
    }

    /** A message genNotif reported sent was lost (counted; summed up at teardown). */
    void
    lost(size_t bytes) noexcept {
        lost_.fetch_add(1, std::memory_order_relaxed);
        lostBytes_.fetch_add(bytes, std::memory_order_relaxed);
    }

    /** Logs the one line of lost notifications, if any were. */
    void
    reportLost() const;

private:
    bool
    fitsLocked(std::string_view sender, size_t length);

    const std::string agent_;
    const uint64_t peerMax_;
    const uint64_t totalMax_;
    const bool traced_;

    std::mutex lock_;
    notif_list_t queue_;
    /** With tracing on: the context of each entry of queue_ (zeroed when it had none). */
    std::vector<nixl_be_trace_ctx_t> traces_;
    /** Bytes of queue_ (each charged its sender, data and notif_entry_overhead), in all and
     *  per sender (entries only for senders with messages queued). */
    size_t held_ = 0;
    std::map<std::string, size_t, std::less<>> heldBy_;
    /** Received notifications dropped for the limits, and the one-a-second line. */
    uint64_t dropped_ = 0;
    uint64_t dropUnlogged_ = 0;
    int64_t dropLogMs_ = INT64_MIN / 2;

    std::atomic<uint64_t> badTrace_{0};
    std::atomic<size_t> sendsPending_{0};
    std::atomic<uint64_t> lost_{0};
    std::atomic<uint64_t> lostBytes_{0};
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_NOTIF_QUEUE_H
