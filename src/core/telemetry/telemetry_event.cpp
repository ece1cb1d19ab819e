/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "telemetry/telemetry_event.h"

namespace {

using type_t = nixl_telemetry_event_type_t;

constexpr uint32_t
idx(type_t t) noexcept {
    return static_cast<uint32_t>(t);
}

// Row i must describe type i; the static_asserts below check it for every row, so inserting a
// type without its row fails to compile.
constexpr nixl_telemetry_event_info_t kTable[] = {
    {idx(type_t::AGENT_TX_BYTES), NIXL_TELEMETRY_CAT_BYTES, "agent_tx_bytes", nullptr,
     "Bytes sent by completed NIXL_WRITE transfers"},
    {idx(type_t::AGENT_RX_BYTES), NIXL_TELEMETRY_CAT_BYTES, "agent_rx_bytes", nullptr,
     "Bytes received by completed NIXL_READ transfers"},
    {idx(type_t::AGENT_TX_REQUESTS_NUM), NIXL_TELEMETRY_CAT_COUNT, "agent_tx_requests_num",
     nullptr, "Completed NIXL_WRITE transfers"},
    {idx(type_t::AGENT_RX_REQUESTS_NUM), NIXL_TELEMETRY_CAT_COUNT, "agent_rx_requests_num",
     nullptr, "Completed NIXL_READ transfers"},
    {idx(type_t::AGENT_MEMORY_REGISTERED), NIXL_TELEMETRY_CAT_BYTES, "agent_memory_registered",
     nullptr, "Bytes of memory registered"},
    {idx(type_t::AGENT_MEMORY_DEREGISTERED), NIXL_TELEMETRY_CAT_BYTES,
     "agent_memory_deregistered", nullptr, "Bytes of memory deregistered"},
    {idx(type_t::AGENT_XFER_TIME), NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_time", nullptr,
     "Transfer time from post to completion seen"},
    {idx(type_t::AGENT_XFER_POST_TIME), NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_post_time",
     nullptr, "Time spent posting a transfer to the backend"},
    {idx(type_t::AGENT_ERR_NOT_POSTED), NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_posted",
     "not_posted", "Calls that failed with NIXL_ERR_NOT_POSTED"},
    {idx(type_t::AGENT_ERR_INVALID_PARAM), NIXL_TELEMETRY_CAT_ERROR, "agent_err_invalid_param",
     "invalid_param", "Calls that failed with NIXL_ERR_INVALID_PARAM"},
    {idx(type_t::AGENT_ERR_BACKEND), NIXL_TELEMETRY_CAT_ERROR, "agent_err_backend", "backend",
     "Calls that failed with NIXL_ERR_BACKEND"},
    {idx(type_t::AGENT_ERR_NOT_FOUND), NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_found",
     "not_found", "Calls that failed with NIXL_ERR_NOT_FOUND"},
    {idx(type_t::AGENT_ERR_MISMATCH), NIXL_TELEMETRY_CAT_ERROR, "agent_err_mismatch",
     "mismatch", "Calls that failed with NIXL_ERR_MISMATCH"},
    {idx(type_t::AGENT_ERR_NOT_ALLOWED), NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_allowed",
     "not_allowed", "Calls that failed with NIXL_ERR_NOT_ALLOWED"},
    {idx(type_t::AGENT_ERR_REPOST_ACTIVE), NIXL_TELEMETRY_CAT_ERROR, "agent_err_repost_active",
     "repost_active", "Calls that failed with NIXL_ERR_REPOST_ACTIVE"},
    {idx(type_t::AGENT_ERR_UNKNOWN), NIXL_TELEMETRY_CAT_ERROR, "agent_err_unknown", "unknown",
     "Calls that failed with NIXL_ERR_UNKNOWN or an unlisted error status"},
    {idx(type_t::AGENT_ERR_NOT_SUPPORTED), NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_supported",
     "not_supported", "Calls that failed with NIXL_ERR_NOT_SUPPORTED"},
    {idx(type_t::AGENT_ERR_REMOTE_DISCONNECT), NIXL_TELEMETRY_CAT_ERROR,
     "agent_err_remote_disconnect", "remote_disconnect",
     "Calls that failed with NIXL_ERR_REMOTE_DISCONNECT"},
    {idx(type_t::AGENT_ERR_CANCELED), NIXL_TELEMETRY_CAT_ERROR, "agent_err_canceled",
     "canceled", "Calls that failed with NIXL_ERR_CANCELED"},
    {idx(type_t::AGENT_ERR_NO_TELEMETRY), NIXL_TELEMETRY_CAT_ERROR, "agent_err_no_telemetry",
     "no_telemetry", "Calls that failed with NIXL_ERR_NO_TELEMETRY"},
    {idx(type_t::AGENT_TRACE_PHASES_DROPPED), NIXL_TELEMETRY_CAT_COUNT,
     "agent_trace_phases_dropped", nullptr,
     "Backend trace phases that could not be delivered to the trace plugins"},
    {idx(type_t::AGENT_TELEMETRY_EVENTS_DROPPED), NIXL_TELEMETRY_CAT_DROPPED,
     "agent_telemetry_events_dropped", nullptr,
     "Telemetry events lost before reaching the exporter (staging queue full or exporter "
     "refused them)"},
};

static_assert(std::size(kTable) == nixl_telemetry_event_type_count,
              "every event type needs exactly one row");

constexpr bool
rowsInOrder() noexcept {
    for (size_t i = 0; i < std::size(kTable); ++i) {
        if (kTable[i].type != i) {
            return false;
        }
        const bool error = nixlTelemetryIsErrorType(static_cast<type_t>(i));
        if (error != (kTable[i].category == NIXL_TELEMETRY_CAT_ERROR) ||
            error != (kTable[i].status_label != nullptr)) {
            return false;
        }
    }
    return kTable[std::size(kTable) - 1].category == NIXL_TELEMETRY_CAT_DROPPED;
}

static_assert(rowsInOrder(), "row i must describe type i; errors carry a status label");

} // namespace

std::string_view
telemetryEventTypeStr(nixl_telemetry_event_type_t type) noexcept {
    const auto i = static_cast<size_t>(type);
    return i < std::size(kTable) ? std::string_view(kTable[i].name) : std::string_view();
}

std::string_view
telemetryErrorStatusLabel(nixl_telemetry_event_type_t type) noexcept {
    const auto i = static_cast<size_t>(type);
    if (i >= std::size(kTable) || kTable[i].status_label == nullptr) {
        return {};
    }
    return kTable[i].status_label;
}

const nixl_telemetry_event_info_t *
nixlTelemetryEventTable() noexcept {
    return kTable;
}
