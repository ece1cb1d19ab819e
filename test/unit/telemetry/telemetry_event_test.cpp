/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The event types, their names, status labels and the table handed to exporters.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "telemetry/telemetry_event.h"

namespace {

using type_t = nixl_telemetry_event_type_t;

// 0..19 keep NIXL 1.4's values; issue 12's trace-phase counter took 20 and moved "events
// dropped" (which stays last) to 21.
TEST(telemetryEvent, TypesKeepNixl14ValuesUpToTheNewCounter) {
    EXPECT_EQ(0u, static_cast<uint32_t>(type_t::AGENT_TX_BYTES));
    EXPECT_EQ(3u, static_cast<uint32_t>(type_t::AGENT_RX_REQUESTS_NUM));
    EXPECT_EQ(5u, static_cast<uint32_t>(type_t::AGENT_MEMORY_DEREGISTERED));
    EXPECT_EQ(7u, static_cast<uint32_t>(type_t::AGENT_XFER_POST_TIME));
    EXPECT_EQ(8u, static_cast<uint32_t>(type_t::AGENT_ERR_NOT_POSTED));
    EXPECT_EQ(19u, static_cast<uint32_t>(type_t::AGENT_ERR_NO_TELEMETRY));
    EXPECT_EQ(20u, static_cast<uint32_t>(type_t::AGENT_TRACE_PHASES_DROPPED));
    EXPECT_EQ(21u, static_cast<uint32_t>(type_t::AGENT_TELEMETRY_EVENTS_DROPPED));
    EXPECT_EQ(22u, nixl_telemetry_event_type_count);
}

TEST(telemetryEvent, EventIsSixteenBytesLikeTheAbi) {
    EXPECT_EQ(16u, sizeof(nixlTelemetryEvent));
    EXPECT_TRUE(std::is_trivially_copyable_v<nixlTelemetryEvent>);
    const nixlTelemetryEvent e(type_t::AGENT_RX_BYTES, 0x1122334455667788ULL);
    const nixl_telemetry_event_abi_t abi = e.toAbi();
    EXPECT_EQ(1u, abi.type);
    EXPECT_EQ(0u, abi.reserved);
    EXPECT_EQ(0x1122334455667788ULL, abi.value);
}

TEST(telemetryEvent, EveryErrorStatusHasItsEvent) {
    const std::pair<nixl_status_t, type_t> cases[] = {
        {NIXL_ERR_NOT_POSTED, type_t::AGENT_ERR_NOT_POSTED},
        {NIXL_ERR_INVALID_PARAM, type_t::AGENT_ERR_INVALID_PARAM},
        {NIXL_ERR_BACKEND, type_t::AGENT_ERR_BACKEND},
        {NIXL_ERR_NOT_FOUND, type_t::AGENT_ERR_NOT_FOUND},
        {NIXL_ERR_MISMATCH, type_t::AGENT_ERR_MISMATCH},
        {NIXL_ERR_NOT_ALLOWED, type_t::AGENT_ERR_NOT_ALLOWED},
        {NIXL_ERR_REPOST_ACTIVE, type_t::AGENT_ERR_REPOST_ACTIVE},
        {NIXL_ERR_UNKNOWN, type_t::AGENT_ERR_UNKNOWN},
        {NIXL_ERR_NOT_SUPPORTED, type_t::AGENT_ERR_NOT_SUPPORTED},
        {NIXL_ERR_REMOTE_DISCONNECT, type_t::AGENT_ERR_REMOTE_DISCONNECT},
        {NIXL_ERR_CANCELED, type_t::AGENT_ERR_CANCELED},
        {NIXL_ERR_NO_TELEMETRY, type_t::AGENT_ERR_NO_TELEMETRY},
    };
    for (const auto &[status, type] : cases) {
        auto got = nixlTelemetryEventTypeForStatus(status);
        ASSERT_TRUE(got.has_value()) << status;
        EXPECT_EQ(type, *got) << status;
        EXPECT_TRUE(nixlTelemetryIsErrorType(type));
    }
    EXPECT_FALSE(nixlTelemetryEventTypeForStatus(NIXL_SUCCESS).has_value());
    EXPECT_FALSE(nixlTelemetryEventTypeForStatus(NIXL_IN_PROG).has_value());
    // A status newer than this table is still counted, as unknown.
    EXPECT_EQ(type_t::AGENT_ERR_UNKNOWN,
              nixlTelemetryEventTypeForStatus(static_cast<nixl_status_t>(-13)).value());
}

TEST(telemetryEvent, NamesAndStatusLabels) {
    EXPECT_EQ("agent_tx_bytes", telemetryEventTypeStr(type_t::AGENT_TX_BYTES));
    EXPECT_EQ("agent_xfer_post_time", telemetryEventTypeStr(type_t::AGENT_XFER_POST_TIME));
    EXPECT_EQ("agent_err_remote_disconnect",
              telemetryEventTypeStr(type_t::AGENT_ERR_REMOTE_DISCONNECT));
    EXPECT_EQ("agent_telemetry_events_dropped",
              telemetryEventTypeStr(type_t::AGENT_TELEMETRY_EVENTS_DROPPED));
    EXPECT_EQ("agent_trace_phases_dropped",
              telemetryEventTypeStr(type_t::AGENT_TRACE_PHASES_DROPPED));
    EXPECT_EQ("", telemetryEventTypeStr(static_cast<type_t>(22)));
    EXPECT_EQ("not_posted", telemetryErrorStatusLabel(type_t::AGENT_ERR_NOT_POSTED));
    EXPECT_EQ("no_telemetry", telemetryErrorStatusLabel(type_t::AGENT_ERR_NO_TELEMETRY));
    EXPECT_EQ("", telemetryErrorStatusLabel(type_t::AGENT_TX_BYTES));
    EXPECT_EQ("", telemetryErrorStatusLabel(static_cast<type_t>(1000)));
    // Every error's name is agent_err_<label>.
    for (uint32_t i = 8; i <= 19; ++i) {
        const auto t = static_cast<type_t>(i);
        EXPECT_EQ("agent_err_" + std::string(telemetryErrorStatusLabel(t)),
                  telemetryEventTypeStr(t));
    }
}

TEST(telemetryEvent, TableDescribesEveryTypeInOrder) {
    const nixl_telemetry_event_info_t *table = nixlTelemetryEventTable();
    std::set<std::string> names;
    for (uint32_t i = 0; i < nixl_telemetry_event_type_count; ++i) {
        const auto &row = table[i];
        EXPECT_EQ(i, row.type);
        ASSERT_NE(nullptr, row.name);
        ASSERT_NE(nullptr, row.help);
        EXPECT_NE('\0', row.help[0]);
        EXPECT_EQ(std::string(telemetryEventTypeStr(static_cast<type_t>(i))), row.name);
        EXPECT_TRUE(names.insert(row.name).second) << "duplicate " << row.name;
        EXPECT_EQ(std::string(row.help).find('\n'), std::string::npos) << "help is one line";
    }
    auto cat = [&](type_t t) { return table[static_cast<uint32_t>(t)].category; };
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_BYTES), cat(type_t::AGENT_TX_BYTES));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_BYTES), cat(type_t::AGENT_RX_BYTES));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_BYTES), cat(type_t::AGENT_MEMORY_REGISTERED));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_BYTES), cat(type_t::AGENT_MEMORY_DEREGISTERED));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_COUNT), cat(type_t::AGENT_TX_REQUESTS_NUM));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_COUNT), cat(type_t::AGENT_RX_REQUESTS_NUM));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_DURATION_US), cat(type_t::AGENT_XFER_TIME));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_DURATION_US), cat(type_t::AGENT_XFER_POST_TIME));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_ERROR), cat(type_t::AGENT_ERR_BACKEND));
    EXPECT_STREQ("backend", table[static_cast<uint32_t>(type_t::AGENT_ERR_BACKEND)].status_label);
    EXPECT_EQ(nullptr, table[0].status_label);
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_COUNT), cat(type_t::AGENT_TRACE_PHASES_DROPPED));
    EXPECT_EQ(uint32_t(NIXL_TELEMETRY_CAT_DROPPED),
              table[nixl_telemetry_event_type_count - 1].category);
}

} // namespace
