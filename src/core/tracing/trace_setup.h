/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file trace_setup.h
 * @brief Which trace backends an agent wants (NIXL_TRACE_BACKENDS, the configuration file,
 *        Nsight Systems detection) and making its Tracer from them through the plugin loader.
 *        Not installed.
 *
 * Thread safety: every function may be called from any thread; each reads the environment and
 * the configuration file when called, and makeTracer goes through the thread-safe loader.
 */
#ifndef NIXL_SRC_CORE_TRACING_TRACE_SETUP_H
#define NIXL_SRC_CORE_TRACING_TRACE_SETUP_H

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/tracing.h"

namespace nixl::trace {

/** Which backends an agent wants, and why (for messages). */
struct TracerConfig {
    std::vector<std::string> backends;
    /** e.g. "NIXL_TRACE_BACKENDS=nvtx,chrome" or "NVTX_INJECTION64_PATH is set". */
    std::string origin;
};

/**
 * Names of a NIXL_TRACE_BACKENDS value: comma-separated, each trimmed of white space, empty
 * items and repeats dropped, first occurrence's order kept.
 */
std::vector<std::string>
parseBackendList(std::string_view text);

/**
 * The process's tracing setting, read now: NIXL_TRACE_BACKENDS from the environment (set but
 * empty means off, and then nothing else is consulted), else from the configuration file; when
 * set nowhere and NVTX_INJECTION64_PATH is set and non-empty (the process runs under Nsight
 * Systems), {"nvtx"}. Empty backends: tracing off.
 */
TracerConfig
tracerConfigFromEnvironment();

/**
 * The Tracer of an agent, or null when tracing is off or no backend could be used. Each
 * backend is loaded from dir (the plugin directory when empty); a name with no plugin file is
 * one WARN line, a plugin the loader refuses is its one ERROR line; the agent works either way.
 */
std::unique_ptr<Tracer>
makeTracer(const std::string &agent, const TracerConfig &cfg, const std::string &dir = "");

} // namespace nixl::trace

#endif // NIXL_SRC_CORE_TRACING_TRACE_SETUP_H
