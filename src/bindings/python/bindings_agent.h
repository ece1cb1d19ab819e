/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file bindings_agent.h
 * @brief The agent behind nixl._bindings.nixlAgent: a nixlAgent plus tables of the handles it
 *        gave out, so that handle ints coming from Python are checked before use and calls on
 *        one handle from several Python threads are ordered. Internal to src/bindings/python.
 *
 * Thread safety: every member may be called from any number of threads at once.
 */
#ifndef NIXL_BINDINGS_PYTHON_BINDINGS_AGENT_H
#define NIXL_BINDINGS_PYTHON_BINDINGS_AGENT_H

#include <array>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "nixl.h"

namespace nixl_py {

/** The live handles of one kind, split into stripes so that threads working on different
 *  handles rarely meet on a lock. A caller holds the stripe of a handle for the whole C++ call
 *  that uses it: shared where calls on one handle may overlap (a prepared list used by many
 *  makeXferReq), exclusive where they may not (post/status/release of one request). */
class nixlPyHandleTable {
public:
    static constexpr size_t kStripes = 64;

    struct Stripe {
        std::shared_mutex mutex;
        std::unordered_set<uintptr_t> live;
    };

    Stripe &
    stripeOf(uintptr_t h) noexcept {
        // Handles are heap pointers: drop the alignment bits, then mix.
        return stripes_[((h >> 4) * 0x9E3779B97F4A7C15ull >> 58) % kStripes];
    }

    void
    add(uintptr_t h) {
        Stripe &s = stripeOf(h);
        std::unique_lock lock(s.mutex);
        s.live.insert(h);
    }

private:
    std::array<Stripe, kStripes> stripes_;
};

/** nixlAgent as Python sees it. */
class nixlPyAgent {
public:
    nixlPyAgent(const std::string &name, nixlAgentConfig cfg);
    ~nixlPyAgent();

    nixlAgent &
    agent() noexcept {
        return *agent_;
    }

    /** The sync mode the agent was created with (NONE is raised to RW, see the .cpp). */
    nixl_thread_sync_t
    syncMode() const noexcept {
        return mode_;
    }

    /** Backend handles of this agent (createBackend); throws nixlInvalidParamError for any other
     *  value. */
    std::vector<nixlBackendH *>
    checkBackends(const std::vector<uintptr_t> &handles);
    void
    addBackend(nixlBackendH *b);

    nixlPyHandleTable xfers;
    nixlPyHandleTable dlists;

private:
    std::unique_ptr<nixlAgent> agent_;
    nixl_thread_sync_t mode_;
    std::mutex backendsMutex_;
    std::unordered_set<uintptr_t> backends_;
};

} // namespace nixl_py

#endif // NIXL_BINDINGS_PYTHON_BINDINGS_AGENT_H
