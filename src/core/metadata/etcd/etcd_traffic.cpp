/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_traffic.h"

#include <atomic>

namespace {
std::atomic<uint64_t> traffic_requests{0};
std::atomic<uint64_t> traffic_bytes{0};
} // namespace

void
nixlEtcdNoteRequest(size_t body_bytes) noexcept {
    traffic_requests.fetch_add(1, std::memory_order_relaxed);
    traffic_bytes.fetch_add(body_bytes, std::memory_order_relaxed);
}

nixlEtcdTraffic
nixlEtcdProcessTraffic() noexcept {
    return {traffic_requests.load(std::memory_order_relaxed),
            traffic_bytes.load(std::memory_order_relaxed)};
}
