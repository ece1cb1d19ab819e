/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: creation and teardown (parameters: ucx_config.cpp; the UCP context and the
// workers: ucx_context.cpp).
#include "ucx_internal.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uct/api/uct.h>

using nixlUcx::reg_table_slots;
using nixlUcx::nowNs;

nixl_b_params_t
nixlUcxEngine::pluginOptions() {
    return nixlUcxConfig::options();
}

nixl_mem_list_t
nixlUcxEngine::pluginMems() {
    nixl_mem_list_t mems = {DRAM_SEG};
    // VRAM only when UCX was built with a CUDA component; asking uct needs no context.
    uct_component_h *comps = nullptr;
    unsigned n = 0;
    if (uct_query_components(&comps, &n) == UCS_OK) {
        bool cuda = false;
        for (unsigned i = 0; i < n; ++i) {
            uct_component_attr_t attr{};
            attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
            if (uct_component_query(comps[i], &attr) == UCS_OK &&
                std::strncmp(attr.name, "cuda", 4) == 0) {
                cuda = true;
            }
        }
        uct_release_component_list(comps);
        if (cuda) {
            mems.push_back(VRAM_SEG);
        }
    }
    return mems;
}

nixl_mem_list_t
nixlUcxEngine::getSupportedMems() const {
    nixl_mem_list_t mems = {DRAM_SEG};
    if (vram_) {
        mems.push_back(VRAM_SEG);
    }
    return mems;
}

nixlUcxEngine::nixlUcxEngine(const nixlBackendInitParams *init_params)
    : nixlBackendEngine(init_params),
      cfg_(nixlUcxConfig::parse(getCustomParams(),
                                init_params->enableProgTh,
                                init_params->pthrDelay,
                                localAgent)),
      notifs_(std::make_unique<nixlUcxNotifQueue>(
          localAgent, cfg_.notifPeerMax, cfg_.notifTotalMax, traceSink_ != nullptr)),
      pool_(std::make_unique<nixlUcxPostPool>()),
      workers_(std::make_unique<nixlUcxWorkerSet>()),
      peers_(std::make_unique<nixlUcxPeerTable>()),
      registry_(std::make_unique<nixlUcxRegistry>()),
      direct_(std::make_unique<nixlUcxDirectPath>(static_cast<const nixlUcxPathHost &>(*this), cfg_)),
      ucp_(std::make_unique<nixlUcxUcpPath>(static_cast<const nixlUcxPathHost &>(*this), cfg_)),
      privCtx_(std::make_unique<nixlUcxPrivateContext>()) {
    for (const auto &[key, value] : cfg_.defaults) {
        setInitParam(key, value);
    }
    if (!cfg_.valid) {
        initErr = true;
        initErrStatus = NIXL_ERR_INVALID_PARAM; // a value refused, named in its line
        return;
    }
    if (!initUcx()) {
        initErr = true;
        return;
    }
    if (!startPool()) {
        initErr = true;
        return;
    }
    if (cfg_.progressThread) {
        wakeFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (wakeFd_ < 0) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX: eventfd: " << std::strerror(errno));
            initErr = true;
            return;
        }
        try {
            thread_ = std::thread([this] { progressLoop(); });
        }
        catch (const std::exception &e) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX: cannot start the progress thread: "
                                    << e.what());
            initErr = true;
        }
    }
}

nixlUcxEngine::~nixlUcxEngine() {
    // First: pool threads post on the workers and notify through them.
    pool_->stop();
    if (thread_.joinable()) {
        stop_.store(true, std::memory_order_release);
        wakeProgress();
        thread_.join();
    }
    // Progresses every worker until left() is 0, for at most min(ucx_release_timeout_ms, 1 s):
    // a peer that takes nothing must not hang the exit.
    auto progressWhile = [this](const std::atomic<size_t> &left) {
        const auto end = std::chrono::steady_clock::now() +
            std::chrono::milliseconds(std::min<uint64_t>(cfg_.releaseTimeoutMs, 1000));
        while (left.load(std::memory_order_relaxed) > 0 && std::chrono::steady_clock::now() < end) {
            if (progressAll(false) == 0) {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
        }
    };
    // genNotif reported these sent: they may leave before the endpoints close (destroyLocked
    // says what is left).
    progressWhile(notifs_->sendsPending());
    for (auto &[name, conn] : peers_->takeAll()) {
        closeConn(*conn);
    }
    // Workers of closed connections with operations in flight: their live peers answer, then
    // the workers are destroyed; what is left after the bound is abandoned below.
    progressWhile(workers_->draining());
    const std::vector<std::shared_ptr<nixlUcxWorker>> left = workers_->snapshot();
    {
        for (auto &w : left) {
            std::lock_guard<std::mutex> wl(w->lock);
            if (w->draining) {
                w->destroyLocked(NIXL_ERR_NOT_FOUND);
                workers_->noteAbandoned(*w);
            }
        }
    }
    for (auto &w : home_) {
        std::lock_guard<std::mutex> g(w->lock);
        w->destroyLocked(NIXL_ERR_NOT_FOUND);
        workers_->noteAbandoned(*w);
    }
    workers_->clear();
    home_.clear();
    // A context with an abandoned worker cannot be cleaned up either (see destroyLocked);
    // which context the abandoned one belonged to is not kept, so both stay.
    if (privCtx_->made() != nullptr && !workers_->anyAbandoned()) {
        ucp_cleanup(privCtx_->made());
    }
    if (ctx_ != nullptr && !workers_->anyAbandoned()) {
        ucp_cleanup(ctx_);
    }
    notifs_->reportLost();
    if (std::string who; !registry_->close(cfg_.releaseTimeoutMs, who)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX engine closing: a peer, " << who
                                << ", may still access registered memory");
    }
    if (wakeFd_ >= 0) {
        ::close(wakeFd_);
    }
}

NIXL_BACKEND_PLUGIN_DEFINE(nixlUcxEngine, "UCX", "1.0.0")
