/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prometheus_endpoint.h
 * @brief The process-wide /metrics endpoints: one HTTP server per port, shared by every agent
 *        of the process that exports on that port.
 *
 * An endpoint starts when the first agent attaches to its port and stops (its HTTP thread
 * joined, the port closed) when the last one detaches; an agent's series disappear from the
 * next scrape once it has detached. The HTTP server is prometheus_mp's poll-driven one
 * (mp_http.h): one thread, bounded per-connection deadlines and a connection cap, so idle or
 * slow clients cannot hold a scrape out.
 *
 * Thread safety: attach and detach may be called from any thread; one process-wide mutex
 * serialises them, including the server start and stop, so an agent attaching while the last
 * one detaches never races the old server for the port. Scrapes (the HTTP thread) take only
 * the endpoint's own list lock and each agent's value lock.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_ENDPOINT_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_ENDPOINT_H

#include <cstdint>
#include <memory>
#include <string>

#include "prometheus_series.h"

namespace nixlPromEndpoints {

/**
 * Publishes @p series on @p port, bound to @p bindAddress ("127.0.0.1:<port>" or
 * "0.0.0.0:<port>"), starting the server when this is the port's first agent.
 * Throws:
 *  - nixlTelemetryExporterUnavailable when the port cannot be bound (held by another process,
 *    or not permitted) or is already served by this process on another address;
 *  - std::invalid_argument when an agent of the same name is already published on the port
 *    (two identical label sets would make every scrape invalid).
 * Messages name the agent, the address and the variable to change.
 */
void
attach(const std::string &bindAddress,
       uint16_t port,
       std::shared_ptr<const nixlPromAgentSeries> series);

/** Removes @p series from @p port; stops the server when it was the last. Never throws. */
void
detach(uint16_t port, const nixlPromAgentSeries *series) noexcept;

} // namespace nixlPromEndpoints

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_ENDPOINT_H
