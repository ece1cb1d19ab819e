/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_config.h
 * @brief The LIBFABRIC engine's parameters: the options it advertises and their validation.
 *
 * Thread safety: parsed once, in the engine's constructor, and immutable after (the engine holds
 * a const lfConfig): any thread reads it without a lock.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_CONFIG_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_CONFIG_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nixl_backend_sdk.h"

namespace nixlLf {

/** Engine parameters after validation. */
struct lfConfig {
    std::vector<std::string> providers; ///< empty: auto (shm and tcp;ofi_rxm)
    size_t splitBatch = 1024;
    /** num_threads: posting pool threads (0: the caller and progress post, as before). */
    size_t numThreads = 0;
    size_t notifFrag = 8192; ///< under tcp;ofi_rxm's eager size, so fragments stay eager
    size_t recvBufs = 64;
    std::chrono::milliseconds peerCheck{100};
    /** 0: off. On by default: libfabric 1.17's shm drops an operation with a stale key
     *  without answering, and only this ends such a request (docs: failure model). */
    std::chrono::milliseconds stallTimeout{10000};
    size_t notifPeerMax = size_t(256) << 20; ///< bytes held reassembling one sender's notifications
    size_t notifTotalMax = size_t(1) << 30; ///< ... all senders'
    /** genNotif bytes to one peer posted and not yet completed: genNotif refuses more with
     *  NIXL_ERR_REPOST_ACTIVE (one message always goes). */
    size_t notifSendMax = size_t(64) << 20;
    /** shm fast RMA (off: every operation with FI_DELIVERY_COMPLETE, as before 2026-12). */
    bool fastRma = true;
    /** How long deregisterMem waits for a peer's fast RMA in flight. */
    uint64_t releaseTimeoutMs = 2000;
    /** Longest wait of an idle progress thread whose rails all have wait fds (tcp;ofi_rxm): a
     *  bound against a lost wake-up, not a period (traffic and posts wake it at once). */
    uint64_t progressIdleMs = 100;
    /** Fault injection for tests (fault_hold_mark): a request keeps its mark in the peer's
     *  table until it is released, as if a fast operation were still copying. */
    bool faultHoldMark = false;

    /** The parameters and defaults the plugin advertises (pluginOptions). */
    static nixl_b_params_t
    options();

    /**
     * Validates params for the engine of agent. On a refused value (NIXL_ERR_INVALID_PARAM) or
     * an agent name too long for a notification's first fragment (NIXL_ERR_BACKEND) it logs one
     * line naming the cause and sets status; the returned configuration is then not to be used.
     */
    static lfConfig
    parse(const std::string &agent, const nixl_b_params_t &params, nixl_status_t &status);
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_CONFIG_H
