/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_internal.h
 * @brief Parsing helpers of agent.cpp. The helpers on agent state that every agent source file
 *        uses (engine candidates, hints, dropping a remote, noting a status) are declared in
 *        agent_data.h and defined in agent_data.cpp, so the agent's files depend on that layer
 *        and not on each other.
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

#endif // NIXL_SRC_CORE_AGENT_AGENT_INTERNAL_H
