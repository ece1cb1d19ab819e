/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_params.h
 * @brief nixlAgentConfig: construction-time settings of an agent.
 */
#ifndef _NIXL_PARAMS_H
#define _NIXL_PARAMS_H

#include <chrono>
#include <cstdint>
#include <string> // NIXL 1.4's nixl_params.h includes it; programs may rely on that

#include "nixl_types.h"

/**
 * @brief Settings fixed at agent construction. Copyable value type; the agent keeps a copy.
 */
struct nixlAgentConfig {
    static constexpr bool kDefaultUseProgThread = false;
    static constexpr bool kDefaultUseListenThread = false;
    static constexpr uint16_t kDefaultListenPort = default_comm_port;
    static constexpr nixl_thread_sync_t kDefaultSyncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_DEFAULT;
    static constexpr bool kDefaultCaptureTelemetry = false;
    static constexpr uint64_t kDefaultPthrDelayUs = 0;
    static constexpr uint64_t kDefaultLthrDelayUs = 100000;
    static constexpr std::chrono::microseconds kDefaultEtcdWatchTimeout =
        std::chrono::microseconds(5000000);

    /** Backends run their own progress thread (transfers complete without polling). */
    bool useProgThread = kDefaultUseProgThread;
    /** Run the peer-to-peer metadata listener. */
    bool useListenThread = kDefaultUseListenThread;
    /** Port of the metadata listener. */
    uint16_t listenPort = kDefaultListenPort;
    /** Locking discipline of the agent, see nixl_thread_sync_t. */
    nixl_thread_sync_t syncMode = kDefaultSyncMode;
    /** Record per-request telemetry (NIXL_TELEMETRY_ENABLE overrides). */
    bool captureTelemetry = kDefaultCaptureTelemetry;
    /** Progress-thread polling delay, microseconds. */
    uint64_t pthrDelay = kDefaultPthrDelayUs;
    /** Accepted for compatibility and not used: the metadata thread sleeps in poll() until
     *  something happens instead of polling (docs/metadata.md). */
    uint64_t lthrDelay = kDefaultLthrDelayUs;
    /** How long fetchRemoteMD watches an etcd key that is not there yet. */
    std::chrono::microseconds etcdWatchTimeout = kDefaultEtcdWatchTimeout;

    nixlAgentConfig() = default;

    /** @param num_workers accepted for compatibility and ignored, as in NIXL 1.4. */
    explicit nixlAgentConfig(const bool use_prog_thread,
                             const bool use_listen_thread = kDefaultUseListenThread,
                             uint16_t port = kDefaultListenPort,
                             nixl_thread_sync_t sync_mode = kDefaultSyncMode,
                             unsigned int num_workers = 1,
                             uint64_t pthr_delay_us = kDefaultPthrDelayUs,
                             uint64_t lthr_delay_us = kDefaultLthrDelayUs,
                             bool capture_telemetry = kDefaultCaptureTelemetry,
                             std::chrono::microseconds etcd_watch_timeout =
                                 kDefaultEtcdWatchTimeout) noexcept
        : useProgThread(use_prog_thread),
          useListenThread(use_listen_thread),
          listenPort(port),
          syncMode(sync_mode),
          captureTelemetry(capture_telemetry),
          pthrDelay(pthr_delay_us),
          lthrDelay(lthr_delay_us),
          etcdWatchTimeout(etcd_watch_timeout) {
        (void)num_workers;
    }
};

#endif // _NIXL_PARAMS_H
