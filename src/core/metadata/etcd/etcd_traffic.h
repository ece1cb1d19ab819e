/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_traffic.h
 * @brief The process's etcd traffic counters: every HTTP request the client sends (each attempt
 *        of a call, each watch stream) and its body bytes. Benchmarks read them per process.
 *
 * Thread safety: process-wide relaxed atomics; any thread may count or read at any time.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_TRAFFIC_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_TRAFFIC_H

#include <cstddef>
#include <cstdint>

/** What this process sent to etcd: HTTP requests and their body bytes. */
struct nixlEtcdTraffic {
    uint64_t requests = 0;
    uint64_t bytesSent = 0;
};

nixlEtcdTraffic
nixlEtcdProcessTraffic() noexcept;

/** Counts one request of body_bytes in nixlEtcdProcessTraffic. */
void
nixlEtcdNoteRequest(size_t body_bytes) noexcept;

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_TRAFFIC_H
