/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_internal.h
 * @brief Helpers shared by the agent's source files. Callers hold the agent lock as noted.
 */
#ifndef NIXL_SRC_CORE_AGENT_AGENT_INTERNAL_H
#define NIXL_SRC_CORE_AGENT_AGENT_INTERNAL_H

#include <string>
#include <string_view>
#include <vector>

#include "agent/agent_data.h"

/** Parses y/yes/on/1/true/enable and n/no/off/0/false/disable, case-insensitively. */
bool
nixlParseBool(std::string_view text, bool &out) noexcept;

/** Engines to consider: the hinted ones of this agent in hint order, else all in creation
 *  order. Any lock mode. */
std::vector<nixlBackendEngineProxy *>
nixlCandidateEngines(const nixlAgentData &d, const nixl_opt_args_t *extra);

/** True when a hint is not a handle of this agent. Any lock mode. */
bool
nixlHasForeignHint(const nixlAgentData &d, const nixl_opt_args_t *extra);

/** Records the error event of a negative status when the agent exports telemetry; returns st.
 *  Any lock mode; no allocation. */
inline nixl_status_t
nixlNoteStatus(const nixlAgentData &d, nixl_status_t st) noexcept {
    if (st < 0 && d.telemetry != nullptr) {
        d.telemetry->recordStatus(st);
    }
    return st;
}

/** Disconnects from, unloads and forgets a remote agent. Writer lock. */
void
nixlDropRemote(nixlAgentData &d, const std::string &name);

#endif // NIXL_SRC_CORE_AGENT_AGENT_INTERNAL_H
