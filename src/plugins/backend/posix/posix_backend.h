/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file posix_backend.h
 * @brief The POSIX backend (libplugin_POSIX.so): local transfers between the agent's DRAM_SEG
 *        and FILE_SEG registrations through io_uring, Linux AIO or POSIX AIO, as NIXL 1.4's
 *        POSIX backend does. docs/backends/posix.md has the semantics.
 *
 * The engine owns four components: its configuration (posix_config.h, immutable), the file
 * registrations (posix_file.h, locked), the I/O engine (probed once at creation, with a
 * fallback and one log line when the chosen engine cannot be set up) and its pool of kernel
 * queues (posix_queue.h, locked), and the requests (posix_request.h, each with its own lock,
 * holding a queue from the pool while a post runs).
 *
 * Thread safety: control calls come serialised from core; transfer calls on different
 * requests run concurrently (each request locks itself); the engine's own state after
 * construction is read-only apart from the registry, which locks.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_BACKEND_H
#define NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_BACKEND_H

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "nixl_backend_sdk.h"
#include "posix_config.h"
#include "posix_file.h"
#include "posix_queue.h"

class nixlPosixEngine : public nixlBackendEngine {
public:
    explicit nixlPosixEngine(const nixlBackendInitParams *init_params);

    static nixl_b_params_t
    pluginOptions();
    static nixl_mem_list_t
    pluginMems();

    bool
    supportsRemote() const override {
        return false;
    }

    bool
    supportsLocal() const override {
        return true;
    }

    bool
    supportsNotif() const override {
        return false;
    }

    nixl_mem_list_t
    getSupportedMems() const override {
        return pluginMems();
    }

    nixl_status_t
    registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem, nixlBackendMD *&out) override;
    nixl_status_t
    deregisterMem(nixlBackendMD *meta) override;
    nixl_status_t
    connect(const std::string &remote_agent) override;
    nixl_status_t
    disconnect(const std::string &remote_agent) override;
    nixl_status_t
    unloadMD(nixlBackendMD *input) override;
    nixl_status_t
    loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) override;

    nixl_status_t
    prepXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const override;
    nixl_status_t
    postXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const override;
    nixl_status_t
    checkXfer(nixlBackendReqH *handle) const override;
    nixl_status_t
    releaseReqH(nixlBackendReqH *handle) const override;
    /** uring, aio or posix_aio: the engine's I/O engine; when it is not the one configured,
     *  transport_unavailable, once per engine. Any thread. */
    nixl_status_t
    getXferPath(const nixlBackendReqH *handle, nixl_xfer_path_info_t &out) const override;

    nixl_status_t
    queryMem(const std::vector<nixlBlobDesc> &descs,
             std::vector<nixl_query_resp_t> &resp) const override;

private:
    /** Picks cfg_.engine or the first that works after it; false when none does. */
    bool
    chooseEngine();

    nixlPosixConfig cfg_;
    nixl_posix_engine_t engine_ = nixl_posix_engine_t::LINUX_AIO;
    /** chooseEngine's fallback went to telemetry (getXferPath). */
    mutable std::atomic<bool> fallbackReported_{false};
    mutable nixlPosixFileRegistry files_;
    /** Kernel queues of engine_, lent to requests while their posts run. Declared last: it
     *  outlives no request (core releases them before destroying the engine). */
    std::unique_ptr<nixlPosixQueuePool> pool_;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_BACKEND_H
