/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file md_exchange.h
 * @brief The internal interface between nixlAgent and the ways metadata travels between
 *        processes: P2P sockets (metadata/p2p/), a central store such as etcd (metadata/etcd/).
 *
 * The agent turns sendLocalMD / sendLocalPartialMD / fetchRemoteMD / invalidateLocalMD into
 * calls of one nixlMdExchange (ipAddr given: P2P; else the central store when one is
 * configured). An exchange queues the work and returns; what it receives it hands to the agent
 * through the nixlMdSink the agent gave it, from the exchange's own thread.
 *
 * Thread safety: every nixlMdExchange member may be called from any thread concurrently.
 * nixlMdSink members are called from the exchange's thread; the agent's implementation takes
 * the agent lock like the public calls do.
 */
#ifndef NIXL_SRC_CORE_METADATA_MD_EXCHANGE_H
#define NIXL_SRC_CORE_METADATA_MD_EXCHANGE_H

#include <string>

#include "nixl_types.h"

/** What an exchange needs from its agent. */
class nixlMdSink {
public:
    virtual ~nixlMdSink() = default;

    virtual const std::string &
    agentName() const noexcept = 0;

    /** loadRemoteMD of a received blob. When expected is not empty, a blob of another agent
     *  is refused (NIXL_ERR_MISMATCH) and nothing is loaded. name receives the blob's agent. */
    virtual nixl_status_t
    loadRemote(const std::string &blob, const std::string &expected, std::string &name) = 0;

    /** invalidateRemoteMD on behalf of a peer; NIXL_ERR_NOT_FOUND when it is not loaded. */
    virtual nixl_status_t
    invalidateRemote(const std::string &agent) = 0;

    /** The agent's full metadata (getLocalMD), for a peer that asks. */
    virtual nixl_status_t
    localMD(std::string &blob) = 0;
};

/** One way of moving metadata. Members return once the work is queued (SUCCESS) or refused. */
class nixlMdExchange {
public:
    virtual ~nixlMdExchange() = default;

    /** Publishes blob (full metadata when partial is false). */
    virtual nixl_status_t
    sendLocal(const std::string &blob, bool partial, const nixl_opt_args_t *extra) = 0;

    /** Fetches the full metadata of agent and loads it when it arrives. */
    virtual nixl_status_t
    fetchRemote(const std::string &agent, const nixl_opt_args_t *extra) = 0;

    /** Withdraws this agent's metadata from the peer or store extra designates. */
    virtual nixl_status_t
    invalidateLocal(const nixl_opt_args_t *extra) = 0;

    /** Finishes or abandons queued work, stops and joins the exchange's threads; no sink call
     *  happens after it returns. Idempotent. */
    virtual void
    stop() noexcept = 0;
};

#endif // NIXL_SRC_CORE_METADATA_MD_EXCHANGE_H
