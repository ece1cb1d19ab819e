/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file p2p_exchange.h
 * @brief Peer-to-peer metadata exchange over TCP: the listener of useListenThread and the
 *        client side of sendLocalMD / sendLocalPartialMD / fetchRemoteMD / invalidateLocalMD
 *        with ipAddr. One thread runs a poll loop over non-blocking sockets; see
 *        docs/metadata.md for the protocol, the limits and the threat model.
 *
 * Thread safety: the public members may be called from any thread. The sink is called from
 * the exchange's thread only, and only when a listener runs or a fetch was queued.
 */
#ifndef NIXL_SRC_CORE_METADATA_P2P_P2P_EXCHANGE_H
#define NIXL_SRC_CORE_METADATA_P2P_P2P_EXCHANGE_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "metadata/md_exchange.h"
#include "metadata/p2p/p2p_frame.h"

/** What the client speaks to listeners (NIXL_P2P_PROTOCOL). The listener reads both. */
enum class nixl_p2p_protocol_t {
    AUTO, ///< libnixl's frames; NIXLCOMM to a peer that does not answer them (remembered)
    LIBNIXL, ///< libnixl's frames only
    NIXLCOMM, ///< NIXL 1.4's NIXLCOMM only (what a NIXL 1.4 agent sends)
};

/** Options of the P2P exchange (NIXL_P2P_* and the agent configuration). */
struct nixlP2PConfig {
    bool listen = false; ///< nixlAgentConfig::useListenThread
    uint16_t port = 0; ///< listenPort; 0 = a free port the system picks
    std::string bindAddr = "0.0.0.0"; ///< NIXL_P2P_BIND_ADDR
    std::string token; ///< NIXL_P2P_TOKEN; empty = none
    std::chrono::milliseconds timeout{5000}; ///< NIXL_P2P_TIMEOUT_MS: one connection's deadline
    uint32_t maxFrame = nixlP2P::default_load_limit; ///< NIXL_P2P_MAX_FRAME
    size_t maxConnections = 64; ///< NIXL_P2P_MAX_CONNECTIONS, each direction
    nixl_p2p_protocol_t protocol = nixl_p2p_protocol_t::AUTO; ///< NIXL_P2P_PROTOCOL

    /** The agent's listen settings plus NIXL_P2P_*; throws std::invalid_argument (after one
     *  ERROR line) on a bad value. */
    static nixlP2PConfig
    fromOptions(const std::string &agent, bool listen, uint16_t port);
};

/** At most burst lines, then one per interval; the suppressed count goes with the next line. */
class nixlP2PLogLimiter {
public:
    using clock_t = std::chrono::steady_clock;

    explicit nixlP2PLogLimiter(unsigned burst = 20,
                               clock_t::duration interval = std::chrono::milliseconds(500)) noexcept
        : burst_(burst),
          interval_(interval),
          tokens_(burst) {}

    /** True when a line may be written now; suppressed receives how many were dropped
     *  since the last line written (and is reset). */
    bool
    allow(clock_t::time_point now, uint64_t &suppressed) noexcept;

private:
    unsigned burst_;
    clock_t::duration interval_;
    unsigned tokens_;
    clock_t::time_point last_{};
    bool started_ = false;
    uint64_t dropped_ = 0;
};

/**
 * Longest the P2P thread keeps working once the agent is being destroyed: operations still
 * running are cut at it, queued ones not started by then are dropped (one line with the count).
 */
inline constexpr std::chrono::milliseconds nixl_p2p_shutdown_budget{2000};

class nixlP2PExchange final : public nixlMdExchange {
public:
    /** Binds and starts listening when cfg.listen (throws std::runtime_error naming the
     *  address and port when that fails); the thread starts with the listener or with the
     *  first queued operation. */
    nixlP2PExchange(nixlMdSink &sink, nixlP2PConfig cfg);
    ~nixlP2PExchange() override;

    nixlP2PExchange(const nixlP2PExchange &) = delete;
    nixlP2PExchange &
    operator=(const nixlP2PExchange &) = delete;

    nixl_status_t
    sendLocal(const std::string &blob, bool partial, const nixl_opt_args_t *extra) override;
    nixl_status_t
    fetchRemote(const std::string &agent, const nixl_opt_args_t *extra) override;
    nixl_status_t
    invalidateLocal(const nixl_opt_args_t *extra) override;

    /** Completes the queued operations (each within its deadline), closes the listener and
     *  incoming connections, joins the thread. */
    void
    stop() noexcept override;

    /** The port the listener is bound to (0 without listener). */
    uint16_t
    boundPort() const noexcept {
        return boundPort_;
    }

    /** Waits until every queued operation has finished (answered, failed or timed out);
     *  false if timeout passed first. For tests and benchmarks. */
    bool
    waitIdle(std::chrono::milliseconds timeout);

    /** Counters for tests: operations that failed, incoming connections refused or dropped
     *  for bad input. */
    struct stats_t {
        uint64_t opsDone = 0;
        uint64_t opsFailed = 0;
        uint64_t badPeers = 0;
        uint64_t requestsServed = 0;
        uint64_t acceptFailures = 0; ///< accept() errors other than EAGAIN/EINTR/ECONNABORTED
    };

    stats_t
    stats() const;

    struct op_t; ///< a queued outgoing operation (p2p_exchange.cpp)
    class loop_t; ///< the thread's state (p2p_exchange.cpp)

private:
    nixl_status_t
    enqueue(std::unique_ptr<op_t> op);
    void
    run() noexcept;

    nixlMdSink &sink_;
    const nixlP2PConfig cfg_;
    int listenFd_ = -1;
    int wakeFd_ = -1;
    uint16_t boundPort_ = 0;

    mutable std::mutex mutex_;
    std::condition_variable idle_;
    std::deque<std::unique_ptr<op_t>> queue_;
    size_t pending_ = 0; ///< queued or in flight
    bool stopping_ = false;
    stats_t stats_;
    std::thread thread_;
};

#endif // NIXL_SRC_CORE_METADATA_P2P_P2P_EXCHANGE_H
