/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prom_host.h
 * @brief The `hostname` label value of the prometheus and prometheus_mp exporters, shared so
 *        both label a host alike (docs/telemetry-prometheus.md, "Labels").
 *
 * Thread-safety: stateless free functions, safe from any thread.
 */
#ifndef NIXL_SRC_PLUGINS_TELEMETRY_COMMON_PROM_HOST_H
#define NIXL_SRC_PLUGINS_TELEMETRY_COMMON_PROM_HOST_H

#include <unistd.h>

#include <climits>
#include <string>

/**
 * The label value for a host name: the name itself, or "unknown" when there is none (null: the
 * name could not be read; empty: the host has no name set). An empty value would be the same as
 * an absent label to Prometheus, and the two exporters would disagree on it.
 */
inline std::string
nixlPromHostLabel(const char *name) {
    return name != nullptr && name[0] != '\0' ? std::string(name) : std::string("unknown");
}

/** nixlPromHostLabel of this host's gethostname(). */
inline std::string
nixlPromHostName() {
    char buf[HOST_NAME_MAX + 1] = {};
    if (::gethostname(buf, sizeof(buf) - 1) != 0) {
        return nixlPromHostLabel(nullptr);
    }
    return nixlPromHostLabel(buf);
}

#endif
