/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* libtrace_backend_throws.so: an SDK plugin whose constructor throws; the SDK logs what() once
 * and core runs the agent without it. */
#include <stdexcept>

#include "nixl_trace_backend_sdk.h"

namespace {

class throwingTracer : public nixlTraceBackendBase {
public:
    explicit throwingTracer(const nixlTraceBackendContext &ctx) {
        throw std::runtime_error("cannot trace agent " + std::string(ctx.agentName) +
                                 ": test plugin refuses by design");
    }
};

} // namespace

NIXL_TRACE_BACKEND_PLUGIN_DEFINE(throwingTracer, "throws", "0.0.1")
