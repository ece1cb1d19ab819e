/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file exchange.h
 * @brief The agent's side of metadata exchange (exchange.cpp): setting up and stopping the
 *        exchanges, and nixlAgentInternals, the window libnixl's tests and benchmarks use to
 *        see what the public API does not show. Not installed.
 */
#ifndef NIXL_SRC_CORE_AGENT_EXCHANGE_H
#define NIXL_SRC_CORE_AGENT_EXCHANGE_H

#include <chrono>
#include <cstdint>

#include "agent/agent_data.h"

/** Creates the sink and the P2P exchange (listening with useListenThread). Throws as
 *  nixlAgent's constructor documents. */
void
nixlSetupMdExchange(nixlAgent &agent, nixlAgentData &data);

/** Stops every exchange's thread (finishing queued pushes); the agent lock must not be held. */
void
nixlStopMdExchange(nixlAgentData &data) noexcept;

/** Test and benchmark access to an agent's internals. Thread-safe. */
class nixlAgentInternals {
public:
    /** The port the P2P listener is bound to; 0 without listener. */
    static uint16_t
    p2pPort(const nixlAgent &agent) noexcept;

    /** Waits until the agent's queued P2P and etcd operations have finished; false on timeout. */
    static bool
    waitMdIdle(const nixlAgent &agent, std::chrono::milliseconds timeout);

    static nixlP2PExchange::stats_t
    p2pStats(const nixlAgent &agent);

    /** The etcd exchange's counters; active false without one. */
    struct etcd_stats_t {
        bool active = false;
        uint64_t published = 0;
        uint64_t fetched = 0;
        uint64_t peersInvalidated = 0;
        uint64_t fetchesStarted = 0; ///< batches fetch threads took off the queue
        uint64_t fetchAgentsStarted = 0; ///< agents in those batches
    };
    static etcd_stats_t
    etcdStats(const nixlAgent &agent);

    /** HTTP requests and request body bytes this process sent to etcd (all its agents). */
    struct etcd_traffic_t {
        uint64_t requests = 0;
        uint64_t bytesSent = 0;
    };
    static etcd_traffic_t
    etcdTraffic(const nixlAgent &agent) noexcept;

    /** The sync mode the agent lock really runs in. */
    static nixl_thread_sync_t
    syncMode(const nixlAgent &agent) noexcept;
};

#endif // NIXL_SRC_CORE_AGENT_EXCHANGE_H
