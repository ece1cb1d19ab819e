/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The core services table every plugin kind is handed (src/core/plugin/core_services.h): one
// table per plugin, its log lines' prefix and source, the agent hook, and out-of-range levels.

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "common/nixl_log.h"
#include "plugin/core_services.h"
#include "../../common/log_capture.h"

namespace {

int hook_calls = 0;
nixl::log::level hook_last = nixl::log::level::TRACE;

std::string_view
hookAgent(nixl::log::level lvl) noexcept {
    ++hook_calls;
    hook_last = lvl;
    return "A1";
}

void
recordNothing(void *,
              const struct nixl_be_trace_sink *,
              const struct nixl_be_trace_ctx *,
              const struct nixl_be_trace_phase_rec *,
              size_t,
              size_t) {}

void
say(const nixl_plugin_core_services_t *core, int32_t level, std::string_view msg) {
    core->log(core->ctx, level, msg.data(), msg.size());
}

} // namespace

TEST(coreServicesTest, OneTablePerPluginKeptForTheProcess) {
    const auto *a = nixlPluginCoreServices({"plugin", "CS_A", "/x/libplugin_CS_A.so"});
    const auto *again = nixlPluginCoreServices({"plugin", "CS_A", "/x/libplugin_CS_A.so"});
    const auto *other_kind =
        nixlPluginCoreServices({"trace backend", "CS_A", "/x/libplugin_CS_A.so"});
    const auto *other_origin = nixlPluginCoreServices({"plugin", "CS_A", "/y/libplugin_CS_A.so"});
    EXPECT_EQ(a, again);
    EXPECT_NE(a, other_kind);
    EXPECT_NE(a, other_origin);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->size, sizeof(nixl_plugin_core_services_t));
    EXPECT_NE(a->log, nullptr);
    EXPECT_NE(a->log_enabled, nullptr);
    EXPECT_NE(a->get_config, nullptr);
    EXPECT_EQ(a->record_phases, nullptr); // only the kinds that ask for it get one
}

TEST(coreServicesTest, RecordPhasesOnlyWhenGiven) {
    nixlPluginServicesSpec spec{"plugin", "CS_PHASES", "/x/libplugin_CS_PHASES.so"};
    spec.recordPhases = recordNothing;
    EXPECT_EQ(nixlPluginCoreServices(spec)->record_phases, recordNothing);
}

TEST(coreServicesTest, LineNamesKindNameAndOrigin) {
    const auto *core =
        nixlPluginCoreServices({"telemetry exporter", "CS_LINE", "/x/libexporter_cs.so"});
    nixl_test::stderrCapture cap;
    say(core, static_cast<int32_t>(nixl::log::level::ERROR), "disk full");
    const std::string out = cap.stop();
    EXPECT_NE(out.find("telemetry exporter CS_LINE: disk full"), std::string::npos) << out;
    EXPECT_NE(out.find("libexporter_cs.so"), std::string::npos) << out;
    EXPECT_EQ(out.find("agent "), std::string::npos) << out;
}

TEST(coreServicesTest, AgentHookSeesEveryLineAndNamesTheAgent) {
    nixlPluginServicesSpec spec{"trace backend", "CS_HOOK", "/x/libtrace_backend_cs.so"};
    spec.agent = hookAgent;
    const auto *core = nixlPluginCoreServices(spec);
    hook_calls = 0;
    const nixl::log::level saved = nixl::log::getLevel();
    nixl::log::setLevel(nixl::log::level::ERROR);
    nixl_test::stderrCapture cap;
    say(core, static_cast<int32_t>(nixl::log::level::DEBUG), "not written");
    say(core, static_cast<int32_t>(nixl::log::level::ERROR), "create failed");
    const std::string out = cap.stop();
    nixl::log::setLevel(saved);
    EXPECT_EQ(hook_calls, 2); // the disabled line too
    EXPECT_EQ(hook_last, nixl::log::level::ERROR);
    EXPECT_NE(out.find("agent A1: trace backend CS_HOOK: create failed"), std::string::npos)
        << out;
    EXPECT_EQ(out.find("not written"), std::string::npos) << out;
}

TEST(coreServicesTest, LevelOutOfRangeIsAnError) {
    const auto *core = nixlPluginCoreServices({"plugin", "CS_RANGE", "/x/libplugin_CS_RANGE.so"});
    EXPECT_EQ(core->log_enabled(core->ctx, -1), 1);
    EXPECT_EQ(core->log_enabled(core->ctx, 99), 1);
    nixl_test::stderrCapture cap;
    say(core, 99, "odd level");
    const std::string out = cap.stop();
    EXPECT_NE(out.find("plugin CS_RANGE: odd level"), std::string::npos) << out;
}
