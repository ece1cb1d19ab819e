/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_notif.h
 * @brief Reassembly of received notification fragments into messages, in each sender's order,
 *        within bounded memory.
 *
 * Fragments may complete out of order at the receiver (a provider's rendezvous for large
 * sends), so each lands at its offset; a complete message waits until every earlier message of
 * its sender was delivered. What a peer can make us hold is bounded: bytes of unfinished or
 * waiting messages per sender and over all senders (each message, and each sender known,
 * also charges a fixed overhead). A fragment that would pass a limit drops its whole message:
 * its memory is freed and a small tombstone counts the rest of its fragments, so the sender's
 * later messages are still delivered once it is complete (a well-behaved peer's connection keeps
 * working). Pure: no libfabric, no logging; the caller logs what `feed` reports.
 *
 * Thread safety: none; the engine calls it under its notification mutex.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_NOTIF_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_NOTIF_H

#include <cstddef>
#include <cstdint>
#include <climits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lf_wire.h"

namespace nixlLf {

/** Bytes charged for each message being received and each sender known, beyond its data. */
inline constexpr size_t notif_entry_overhead = 256;

class notifReassembler {
public:
    /** A delivered message. */
    struct message {
        std::string sender;
        std::string data;
        bool traced = false;
        uint8_t trace[26] = {}; ///< the wire trace context, when traced
    };
    /** What one fragment did beyond delivering. */
    struct result {
        bool dropped = false; ///< this fragment's message was dropped (now or earlier)
        bool overLimit = false; ///< ... because a memory limit would be passed (now)
        bool log = false; ///< the caller logs it (at most one line per sender per second)
        std::string why; ///< the cause, a phrase
        std::string sender; ///< the sender's name if known, else ""
        uint64_t senderDrops = 0; ///< messages dropped from this sender so far
        uint64_t suppressed = 0; ///< drops from this sender not logged since its last line
    };

    notifReassembler(size_t perSender, size_t total) : perSenderMax_(perSender), totalMax_(total) {}

    /** Takes one decoded fragment; complete messages, in order, are appended to out. */
    result
    feed(const notifFragWire &f, int64_t nowMs, std::vector<message> &out);

    size_t
    heldBytes() const noexcept {
        return held_;
    }
    size_t
    heldBytes(uint64_t nonce) const noexcept;
    uint64_t
    droppedMessages() const noexcept {
        return dropped_;
    }

private:
    struct partial {
        bool haveFirst = false;
        bool dropped = false; ///< tombstone: data freed, counting the rest of its fragments
        uint32_t total = 0;
        std::string sender;
        bool traced = false;
        uint8_t trace[26] = {};
        std::string data;
        size_t received = 0;
        size_t charged = 0;
    };
    struct senderState {
        uint32_t next = 0;
        std::string name;
        std::map<uint32_t, partial> pending;
        size_t held = 0;
        uint64_t drops = 0;
        uint64_t unlogged = 0;
        int64_t lastLogMs = INT64_MIN / 2;
    };

    void
    charge(senderState &ss, partial &p, size_t bytes);
    void
    release(senderState &ss, partial &p);
    result
    drop(senderState &ss, partial &p, bool overLimit, std::string why, int64_t nowMs);

    size_t perSenderMax_;
    size_t totalMax_;
    size_t held_ = 0;
    uint64_t dropped_ = 0;
    int64_t unknownLogMs_ = INT64_MIN / 2; ///< last line about a sender refused outright
    std::map<uint64_t, senderState> senders_;
};

/**
 * @brief Notifications delivered (complete, in order) and not yet taken by getNotifs, within a
 *        byte limit: an agent that never calls getNotifs must not let peers grow its memory
 *        without bound, just as reassembly is bounded. Each message charges its sender name
 *        and data plus notif_entry_overhead; a message that would pass the limit is dropped
 *        (counted; the caller logs at most one line a second). Pure.
 *
 * Thread safety: none; the engine calls it under its notification mutex.
 */
class deliveredNotifs {
public:
    using list_t = std::vector<std::pair<std::string, std::string>>;

    explicit deliveredNotifs(size_t maxBytes) : max_(maxBytes) {}

    /** Queues a message from a peer; false (and counted) when it was dropped for the limit. */
    bool
    push(std::string sender, std::string data);
    /** Queues one of the agent's own (loopback, genNotif to itself): never dropped. */
    void
    pushLocal(std::string sender, std::string data);
    /** Moves every queued message to out, oldest first; the queue is empty after. */
    void
    take(list_t &out);

    size_t
    heldBytes() const noexcept {
        return held_;
    }
    uint64_t
    dropped() const noexcept {
        return dropped_;
    }
    /** Drops not yet logged; the caller resets it when it logs. */
    uint64_t unlogged = 0;
    int64_t lastLogMs = INT64_MIN / 2;

private:
    size_t max_;
    size_t held_ = 0;
    uint64_t dropped_ = 0;
    list_t q_;
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_NOTIF_H
