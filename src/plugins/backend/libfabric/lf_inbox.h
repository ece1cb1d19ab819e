/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_inbox.h
 * @brief The LIBFABRIC engine's received notifications: fragments decoded, reassembled in each
 *        sender's order and queued for getNotifs, all within the notif_*_max_bytes limits; what
 *        a peer sends wrong is logged at most once a second per cause.
 *
 * Thread safety: every member is under the inbox's own mutex, so the progress thread, the pool
 * and callers of getNotifs/genNotif may call it concurrently. Nothing else is locked inside it.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_INBOX_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_INBOX_H

#include <climits>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lf_notif.h"

namespace nixlLf {

class lfNotifInbox {
public:
    /** agent: named in log lines; perSender and total: notif_peer/total_max_bytes. */
    lfNotifInbox(std::string agent, size_t perSender, size_t total)
        : agent_(std::move(agent)),
          reasm_(perSender, total),
          queue_(total) {}

    /**
     * One received message's bytes, from rail prov. Notifications it completes are queued for
     * take() and also appended to ready (their sender and data moved out: the caller reads
     * their trace context only).
     */
    void
    receive(const std::string &prov,
            std::string_view bytes,
            std::vector<notifReassembler::message> &ready);

    /** Queues one of the agent's own notifications (loopback): never dropped. */
    void
    pushLocal(std::string sender, std::string msg);

    /** Moves every queued notification to out, oldest first. */
    void
    take(deliveredNotifs::list_t &out);

private:
    const std::string agent_;
    std::mutex mu_;
    notifReassembler reasm_; ///< mu_
    deliveredNotifs queue_; ///< mu_
    int64_t malformedLogMs_ = INT64_MIN / 2; ///< mu_: last line about a bad fragment
    uint64_t malformedUnlogged_ = 0; ///< mu_
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_INBOX_H
