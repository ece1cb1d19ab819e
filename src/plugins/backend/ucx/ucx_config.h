/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_config.h
 * @brief The UCX engine's configuration: its creation parameters, parsed once.
 *
 * Thread safety: a nixlUcxConfig is built by parse() in the engine's constructor and held
 * const by the engine afterwards, so any thread may read it without a lock.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_CONFIG_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_CONFIG_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ucp/api/ucp.h>

#include "nixl_backend_sdk.h"

/** @brief What the creation parameters (and core's init parameters) asked of the engine. */
struct nixlUcxConfig {
    /** parse() accepted every value (a refused one is named in its log line). */
    bool valid = true;
    /** Core's enableProgTh and pthrDelay. */
    bool progressThread = false;
    uint64_t pthrDelayUs = 0;
    size_t numWorkers = 1;
    /** num_threads: threads of the posting pool (0: none, every post on the caller). */
    size_t numThreads = 0;
    /** split_batch_size: descriptors per batch of a pooled post. */
    size_t splitBatch = 1024;
    bool peerErrMode = true;
    bool directCma = true;
    uint64_t peerCheckMs = 200;
    uint64_t releaseTimeoutMs = 2000;
    /** Received notifications waiting for getNotifs: bytes from one sender, from all. */
    uint64_t notifPeerMax = uint64_t(256) << 20;
    uint64_t notifTotalMax = uint64_t(1) << 30;
    /** genNotif bytes to one peer handed to UCX and not yet sent. */
    uint64_t notifSendMax = uint64_t(64) << 20;
    /** ucx_fault_direct_hold_bytes (fault injection for tests, 0 = off). */
    uint64_t faultDirectHoldBytes = 0;
    /** ucx_fault_notif_trace (tests only): damage the trace context a notification
     *  carries: 0 off, 1 truncate, 2 version 0xff, 3 zero trace id. */
    int faultNotifTrace = 0;
    std::string devices;
    std::string engineConfig;
    /** Parameters left unset whose defaults the engine records (setInitParam). */
    std::vector<std::pair<std::string, std::string>> defaults;

    /** The parameters the plugin advertises, with their defaults. */
    static nixl_b_params_t
    options();

    /**
     * Reads params (and core's progress-thread settings); a refused value logs one line
     * naming agent, the key and the value, and leaves valid false.
     */
    static nixlUcxConfig
    parse(const nixl_b_params_t &params,
          bool progress_thread,
          uint64_t pthr_delay_us,
          const std::string &agent);

    /** Device list, engine_config and presets onto a UCP config read from the environment. */
    bool
    apply(ucp_config_t *config, const std::string &agent, bool log) const;

    /** The parameters of a UCP context of this engine named name. */
    ucp_params_t
    contextParams(const char *name) const;

    /**
     * Settings of the context of private workers (ucx_config.cpp says why), applied on top of
     * apply()'s.
     */
    void
    applyPrivate(ucp_config_t *config, const std::string &agent) const;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_CONFIG_H
