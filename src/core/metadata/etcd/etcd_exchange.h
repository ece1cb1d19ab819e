/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_exchange.h
 * @brief The agent's central store: nixlMdExchange over etcd (nixlEtcdMetadata), used by
 *        sendLocalMD / sendLocalPartialMD / fetchRemoteMD / invalidateLocalMD without ipAddr
 *        when NIXL_ETCD_ENDPOINTS is set. See docs/metadata.md.
 *
 * Threads: one ordered worker runs start (lease grant, at construction), publishes, our
 * invalidations and the invalidation of peers whose keys were deleted; fetches run on a small
 * pool of their own threads (a fetch may wait up to etcdWatchTimeout for a peer to publish and
 * must not hold up publishing). A fetch thread takes every queued fetch at once (up to
 * nixl_etcd_max_batch_keys) and reads them in one request (nixlEtcdMetadata::fetchMany).
 * Watch callbacks only queue work: the worker drops the peer and ends its watch, never the
 * watch thread itself.
 *
 * Thread safety: all public members may be called from any thread concurrently.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_EXCHANGE_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_EXCHANGE_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "etcd_client.h"
#include "etcd_metadata.h"
#include "metadata/md_exchange.h"

/**
 * Longest the etcd exchange keeps working once the agent is being destroyed: requests are cut
 * at it, queued publishes/invalidations not started by then are dropped (one line, the count).
 */
inline constexpr std::chrono::milliseconds nixl_etcd_shutdown_budget{2000};

class nixlEtcdExchange final : public nixlMdExchange {
public:
    /** Counters for tests and benchmarks. */
    struct stats_t {
        uint64_t published = 0; ///< keys written (full and partial)
        uint64_t fetched = 0; ///< blobs fetched and loaded
        uint64_t peersInvalidated = 0; ///< peers dropped after their keys were deleted
        uint64_t fetchesStarted = 0; ///< batches a fetch thread took off the queue
        uint64_t fetchAgentsStarted = 0; ///< agents in those batches
    };

    /** Starts the worker, which grants the lease and writes our prefix key (no wait here).
     *  Throws std::invalid_argument for an agent name etcd keys cannot carry ('/'). */
    nixlEtcdExchange(nixlMdSink &sink, nixlEtcdConfig cfg, std::chrono::milliseconds watchTimeout);
    ~nixlEtcdExchange() override;

    // Our keys: both go through the worker, in the order they were called.
    /** Queues the put under our prefix ("metadata", or extra->metadataLabel when partial). */
    nixl_status_t
    sendLocal(const std::string &blob, bool partial, const nixl_opt_args_t *extra) override;
    /** Queues the deletion of every key under our prefix. */
    nixl_status_t
    invalidateLocal(const nixl_opt_args_t *extra) override;

    /** Queues a read of agent's label (a watch when it is not published yet). */
    nixl_status_t
    fetchRemote(const std::string &agent, const nixl_opt_args_t *extra) override;
    /** Finishes queued publishes and invalidations (within nixl_etcd_shutdown_budget), abandons
     *  queued fetches, ends running ones (their waits at once, their requests by the budget),
     *  ends the watches and revokes the lease (our keys disappear at once). */
    void
    stop() noexcept override;

    /** Waits until no queued or running operation is left; false on timeout. */
    bool
    waitIdle(std::chrono::milliseconds timeout);

    stats_t
    stats() const;

    /** The endpoints, comma-joined (log lines). */
    const std::string &
    endpoints() const noexcept {
        return endpoints_;
    }

private:
    using task_t = std::function<void()>;
    enum class link_t { PENDING, UP, DOWN };

    /** Queues t on the ordered worker. */
    nixl_status_t
    post(task_t t);
    void
    orderedLoop();
    void
    fetchLoop();
    /** After any task: wakes waitIdle when nothing is left. Called with mutex_ held. */
    void
    noteDoneLocked();
    /** The lease and our prefix key; on the ordered worker. */
    void
    connect();
    /** SUCCESS when the store is reachable as far as we know, else one ERROR line for what. */
    nixl_status_t
    checkLink(const char *what);
    /** One queued fetchRemoteMD: whose key, under which label. */
    struct fetch_req_t {
        std::string agent;
        std::string label;
    };

    void
    runFetches(const std::vector<std::string> &agents, const std::string &label);
    void
    loadFetched(nixlEtcdMetadata::fetch_result_t &r);
    void
    onPeerEvent(const std::string &agent,
                uint64_t generation,
                nixl_etcd_event_type_t type,
                const std::string &label);
    void
    dropPeer(const std::string &agent);

    nixlMdSink &sink_;
    const std::string agent_;
    const std::chrono::milliseconds watchTimeout_;
    std::string endpoints_;
    std::unique_ptr<nixlEtcdMetadata> md_;

    /** Orders loading and watching a peer against dropping it; never taken by watch callbacks. */
    std::mutex watchOps_;
    mutable std::mutex mutex_;
    std::condition_variable workCv_;
    std::condition_variable idleCv_;
    std::deque<task_t> ordered_;
    std::deque<fetch_req_t> fetches_; ///< fetches not started yet, in call order
    size_t running_ = 0;
    bool stopping_ = false;
    std::chrono::steady_clock::time_point shutdownBy_{}; ///< mutex_; set by stop()
    link_t link_ = link_t::PENDING;
    /** agent -> generation of its current watch; an invalidation of an older one is stale. */
    std::map<std::string, uint64_t> watchGen_;
    uint64_t nextGen_ = 0;
    stats_t stats_;
    std::thread worker_;
    std::vector<std::thread> fetchers_;
};

/**
 * The agent's etcd exchange from the process configuration (NIXL_ETCD_*); null when
 * NIXL_ETCD_ENDPOINTS is unset. Throws std::invalid_argument on a bad value (logged).
 */
std::unique_ptr<nixlEtcdExchange>
nixlMakeEtcdExchange(nixlMdSink &sink, std::chrono::milliseconds watchTimeout);

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_EXCHANGE_H
