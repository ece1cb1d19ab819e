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

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "bindings_handle_table.h"
#include "nixl.h"

namespace nixl_py {

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
