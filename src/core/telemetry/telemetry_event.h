/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file telemetry_event.h
 * @brief The agent's telemetry events (NIXL 1.4 types and values), their names, categories and
 *        help text, and the table core hands to exporter plugins. Not installed.
 *
 * Growth rule: new types are inserted before AGENT_TELEMETRY_EVENTS_DROPPED, which stays last,
 * so nixl_telemetry_event_type_count grows with it. Exporters never hard-code numbers: they get
 * the table (nixlTelemetryEventTable) at create time. Any change here is a change to the layout
 * readers of the BUFFER ring see, so it bumps that ring's layout version too
 * (NIXL_SHARED_RING_VERSION), the exporter ABI (NIXL_TELEMETRY_EXPORTER_ABI_VERSION) and the
 * prometheus_mp store schema (nixlPromMp::kLayoutVersion).
 *
 * Everything here is immutable data and pure functions: thread-safe.
 */
#ifndef NIXL_SRC_CORE_TELEMETRY_TELEMETRY_EVENT_H
#define NIXL_SRC_CORE_TELEMETRY_TELEMETRY_EVENT_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "nixl_telemetry_exporter_plugin.h"
#include "nixl_types.h"

/**
 * Event types. 0..19 have NIXL 1.4's values (8..19 are the errors of status -1..-12); 20 is
 * libnixl's trace-phase drop counter, which moved "events dropped" from NIXL 1.4's 20 to 21
 * (ring layout 6, exporter ABI 3, prometheus_mp store schema 2).
 */
enum class nixl_telemetry_event_type_t : uint32_t {
    AGENT_TX_BYTES = 0, ///< bytes of a completed NIXL_WRITE
    AGENT_RX_BYTES = 1, ///< bytes of a completed NIXL_READ
    AGENT_TX_REQUESTS_NUM = 2, ///< 1 per completed NIXL_WRITE
    AGENT_RX_REQUESTS_NUM = 3, ///< 1 per completed NIXL_READ
    AGENT_MEMORY_REGISTERED = 4, ///< bytes of a successful registerMem
    AGENT_MEMORY_DEREGISTERED = 5, ///< bytes of a successful deregisterMem
    AGENT_XFER_TIME = 6, ///< µs from the start of postXferReq to completion seen
    AGENT_XFER_POST_TIME = 7, ///< µs from the start of postXferReq to the backend's post return
    AGENT_ERR_NOT_POSTED = 8,
    AGENT_ERR_INVALID_PARAM = 9,
    AGENT_ERR_BACKEND = 10,
    AGENT_ERR_NOT_FOUND = 11,
    AGENT_ERR_MISMATCH = 12,
    AGENT_ERR_NOT_ALLOWED = 13,
    AGENT_ERR_REPOST_ACTIVE = 14,
    AGENT_ERR_UNKNOWN = 15,
    AGENT_ERR_NOT_SUPPORTED = 16,
    AGENT_ERR_REMOTE_DISCONNECT = 17,
    AGENT_ERR_CANCELED = 18,
    AGENT_ERR_NO_TELEMETRY = 19,
    /** Backend trace phases that could not be delivered, since the previous flush (issue 12). */
    AGENT_TRACE_PHASES_DROPPED = 20,
    /** Events lost before the exporter since the previous flush. Always the last type. */
    AGENT_TELEMETRY_EVENTS_DROPPED = 21,
};

/** Number of event types; the index of the last one (DROPPED) plus one. */
inline constexpr size_t nixl_telemetry_event_type_count =
    static_cast<size_t>(nixl_telemetry_event_type_t::AGENT_TELEMETRY_EVENTS_DROPPED) + 1;

/** Number of error types (one per error status -1..-12). */
inline constexpr size_t nixl_telemetry_error_type_count = 12;

/** Which event types are wanted (NIXL_TELEMETRY_ENABLED_METRICS), indexed by type. */
using nixl_telemetry_metric_mask_t = std::array<bool, nixl_telemetry_event_type_count>;

/** Environment variables of the core pipeline. */
inline constexpr char TELEMETRY_ENABLE_VAR[] = "NIXL_TELEMETRY_ENABLE";
inline constexpr char TELEMETRY_EXPORTER_VAR[] = "NIXL_TELEMETRY_EXPORTER";
inline constexpr char TELEMETRY_DIR_VAR[] = "NIXL_TELEMETRY_DIR";
inline constexpr char TELEMETRY_BUFFER_SIZE_VAR[] = "NIXL_TELEMETRY_BUFFER_SIZE";
inline constexpr char TELEMETRY_RUN_INTERVAL_VAR[] = "NIXL_TELEMETRY_RUN_INTERVAL";
inline constexpr char TELEMETRY_ENABLED_METRICS_VAR[] = "NIXL_TELEMETRY_ENABLED_METRICS";

/** One event: 16 bytes, trivially copyable; the C++ view of nixl_telemetry_event_abi_t. */
struct nixlTelemetryEvent {
    nixl_telemetry_event_type_t eventType_ = nixl_telemetry_event_type_t::AGENT_TX_BYTES;
    uint64_t value_ = 0;

    constexpr nixlTelemetryEvent() noexcept = default;

    constexpr nixlTelemetryEvent(nixl_telemetry_event_type_t type, uint64_t value) noexcept
        : eventType_(type),
          value_(value) {}

    /** The ABI form handed to exporters (reserved word zeroed, whatever the padding held). */
    constexpr nixl_telemetry_event_abi_t
    toAbi() const noexcept {
        return nixl_telemetry_event_abi_t{static_cast<uint32_t>(eventType_), 0u, value_};
    }
};

static_assert(std::is_trivially_copyable_v<nixlTelemetryEvent>);
static_assert(std::is_standard_layout_v<nixlTelemetryEvent>);
static_assert(sizeof(nixlTelemetryEvent) == 16);
static_assert(sizeof(nixlTelemetryEvent) == sizeof(nixl_telemetry_event_abi_t));
static_assert(alignof(nixlTelemetryEvent) == alignof(nixl_telemetry_event_abi_t));
static_assert(offsetof(nixlTelemetryEvent, eventType_) ==
              offsetof(nixl_telemetry_event_abi_t, type));
static_assert(offsetof(nixlTelemetryEvent, value_) == offsetof(nixl_telemetry_event_abi_t, value));
static_assert(sizeof(nixl_telemetry_event_type_t) == sizeof(uint32_t));

/**
 * The error event of a status: AGENT_ERR_* for -1..-12, AGENT_ERR_UNKNOWN for any other
 * negative value (a status from a newer backend is still counted), nothing for success and
 * NIXL_IN_PROG.
 */
constexpr std::optional<nixl_telemetry_event_type_t>
nixlTelemetryEventTypeForStatus(nixl_status_t status) noexcept {
    const int32_t st = static_cast<int32_t>(status);
    if (st >= 0) {
        return std::nullopt;
    }
    if (st < -static_cast<int32_t>(nixl_telemetry_error_type_count)) {
        return nixl_telemetry_event_type_t::AGENT_ERR_UNKNOWN;
    }
    return static_cast<nixl_telemetry_event_type_t>(
        static_cast<uint32_t>(nixl_telemetry_event_type_t::AGENT_ERR_NOT_POSTED) +
        static_cast<uint32_t>(-st - 1));
}

static_assert(*nixlTelemetryEventTypeForStatus(NIXL_ERR_NOT_POSTED) ==
              nixl_telemetry_event_type_t::AGENT_ERR_NOT_POSTED);
static_assert(*nixlTelemetryEventTypeForStatus(NIXL_ERR_NO_TELEMETRY) ==
              nixl_telemetry_event_type_t::AGENT_ERR_NO_TELEMETRY);

/** The base name ("agent_tx_bytes", "agent_err_backend", ...); "" outside the table. */
std::string_view
telemetryEventTypeStr(nixl_telemetry_event_type_t type) noexcept;

/** For an error type the status label ("not_posted", ...); "" for any other type. */
std::string_view
telemetryErrorStatusLabel(nixl_telemetry_event_type_t type) noexcept;

/** True for the AGENT_ERR_* types. */
constexpr bool
nixlTelemetryIsErrorType(nixl_telemetry_event_type_t type) noexcept {
    const auto t = static_cast<uint32_t>(type);
    return t >= static_cast<uint32_t>(nixl_telemetry_event_type_t::AGENT_ERR_NOT_POSTED) &&
        t <= static_cast<uint32_t>(nixl_telemetry_event_type_t::AGENT_ERR_NO_TELEMETRY);
}

/**
 * The table passed to exporters: row i describes type i, nixl_telemetry_event_type_count rows,
 * static storage.
 */
const nixl_telemetry_event_info_t *
nixlTelemetryEventTable() noexcept;

#endif // NIXL_SRC_CORE_TELEMETRY_TELEMETRY_EVENT_H
