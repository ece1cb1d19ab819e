/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_election.h
 * @brief Owner election for one scrape address: whoever holds the exclusive flock on
 *        <dir>/nixl-owner.<addr>:<port>.lock binds the port and serves every store of the
 *        directory; everyone else only writes its store and retries the election later.
 *
 * Outcomes of elect():
 *  - SERVING: this endpoint holds the lock and the port. Re-electing is a no-op that keeps both.
 *  - SIBLING_OWNS: another endpoint (another process, or another nixlMpEndpoint object) holds the
 *    lock. Retried every kRetryNs.
 *  - PORT_TAKEN: the lock was won but the bind failed, so the port is held from outside the run
 *    (another service, or ranks pointed at another directory). The lock is released at once so
 *    a sibling may try, and this endpoint backs off for kPortTakenBackoffNs.
 * When the lock file cannot be used (not a regular file of this user, or no flock on the
 * filesystem) the bind alone decides, with one warning.
 *
 * Thread-safety: every member may be called from any thread; elections are serialised.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_ELECTION_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_ELECTION_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "mp_collector.h"
#include "mp_http.h"

namespace nixlPromMp {

enum class nixlMpElection { SERVING, SIBLING_OWNS, PORT_TAKEN };

const char *
electionName(nixlMpElection e) noexcept;

class nixlMpEndpoint {
public:
    static constexpr uint64_t kRetryNs = 200'000'000ull;
    static constexpr uint64_t kPortTakenBackoffNs = 5'000'000'000ull;

    nixlMpEndpoint(std::string dir,
               std::string addr,
               uint16_t port,
               std::shared_ptr<nixlMpCollector> collector);
    ~nixlMpEndpoint();
    nixlMpEndpoint(const nixlMpEndpoint &) = delete;
    nixlMpEndpoint &
    operator=(const nixlMpEndpoint &) = delete;

    /** Runs the election now. */
    nixlMpElection
    elect() noexcept;

    /** Runs the election when not serving and the retry time has come; cheap otherwise. */
    nixlMpElection
    maybeElect() noexcept;

    nixlMpElection
    state() const noexcept {
        return state_.load(std::memory_order_acquire);
    }

    /** Port bound while SERVING, else 0. */
    uint16_t
    boundPort() const noexcept {
        return boundPort_.load(std::memory_order_acquire);
    }

    const std::string &
    lockPath() const noexcept {
        return lockPath_;
    }

    nixlMpCollector &
    collector() noexcept {
        return *collector_;
    }

private:
    nixlMpElection
    electLocked();
    void
    warnOtherOwners();

    const std::string dir_;
    const std::string addr_;
    const uint16_t port_;
    const std::string lockPath_;
    const std::shared_ptr<nixlMpCollector> collector_;
    std::mutex mu_;
    int lockFd_ = -1;
    bool lockUsable_ = true;
    bool warnedPortTaken_ = false;
    bool warnedOthers_ = false;
    std::unique_ptr<nixlMpHttpServer> server_;
    std::atomic<nixlMpElection> state_{nixlMpElection::SIBLING_OWNS};
    std::atomic<uint16_t> boundPort_{0};
    std::atomic<uint64_t> nextElectNs_{0};
};

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_ELECTION_H
