/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// NIXL_TELEMETRY_* settings: exporter choice, buffer size, run interval, metric allowlist.

#include <gtest/gtest.h>

#include <stdexcept>

#include "telemetry/telemetry_config.h"
#include "telemetry_test_utils.h"

namespace nixl_telemetry_test {
namespace {

using type_t = nixl_telemetry_event_type_t;

bool
on(const nixl_telemetry_metric_mask_t &m, type_t t) {
    return m[static_cast<size_t>(t)];
}

size_t
countOn(const nixl_telemetry_metric_mask_t &m) {
    size_t n = 0;
    for (bool b : m) {
        n += b ? 1 : 0;
    }
    return n;
}

/** fromEnvironment must throw invalid_argument whose text, like the one ERROR line, names
 *  the variable and value. */
void
expectRejected(const char *var, const char *value) {
    cleanTelemetryEnv clean;
    scopedEnv e(var, value);
    stderrCapture cap;
    try {
        (void)nixlTelemetryConfig::fromEnvironment("A");
        ADD_FAILURE() << var << "=" << value << " was accepted";
    }
    catch (const std::invalid_argument &ex) {
        const std::string what = ex.what();
        EXPECT_NE(std::string::npos, what.find(std::string(var) + "=" + value)) << what;
        EXPECT_NE(std::string::npos, what.find("agent A")) << what;
    }
    const auto errors = logLines(cap.stop(), 'E');
    ASSERT_EQ(1u, errors.size());
    EXPECT_NE(std::string::npos, errors[0].find(std::string(var) + "=" + value)) << errors[0];
}

TEST(telemetryConfig, DefaultsWithNothingSet) {
    cleanTelemetryEnv clean;
    const auto cfg = nixlTelemetryConfig::fromEnvironment("A");
    EXPECT_EQ("NOP", cfg.exporter);
    EXPECT_EQ(4096u, cfg.bufferSize);
    EXPECT_EQ(std::chrono::milliseconds(100), cfg.runInterval);
    EXPECT_EQ(nixl_telemetry_event_type_count, countOn(cfg.enabled));
}

TEST(telemetryConfig, DirectorySelectsBufferUnlessExporterIsNamed) {
    cleanTelemetryEnv clean;
    scopedEnv dir("NIXL_TELEMETRY_DIR", "/tmp/somewhere");
    EXPECT_EQ("BUFFER", nixlTelemetryConfig::fromEnvironment("A").exporter);
    scopedEnv exp("NIXL_TELEMETRY_EXPORTER", "nop");
    EXPECT_EQ("NOP", nixlTelemetryConfig::fromEnvironment("A").exporter);
}

TEST(telemetryConfig, BuiltInNamesInAnyCaseOthersArePluginNames) {
    cleanTelemetryEnv clean;
    const std::pair<const char *, const char *> cases[] = {
        {"BUFFER", "BUFFER"}, {"buffer", "BUFFER"}, {"Buffer", "BUFFER"}, {"NOP", "NOP"},
        {"nop", "NOP"},       {" nop ", "NOP"},     {"prometheus", "prometheus"},
        {"", "NOP"}, // empty is unset
    };
    for (const auto &[value, expect] : cases) {
        scopedEnv exp("NIXL_TELEMETRY_EXPORTER", value);
        EXPECT_EQ(expect, nixlTelemetryConfig::fromEnvironment("A").exporter) << value;
    }
}

TEST(telemetryConfig, ExporterNameWithPathIsRejected) {
    expectRejected("NIXL_TELEMETRY_EXPORTER", "../evil");
    expectRejected("NIXL_TELEMETRY_EXPORTER", "..");
}

TEST(telemetryConfig, BufferSize) {
    {
        cleanTelemetryEnv clean;
        scopedEnv s("NIXL_TELEMETRY_BUFFER_SIZE", "17");
        EXPECT_EQ(17u, nixlTelemetryConfig::fromEnvironment("A").bufferSize);
    }
    expectRejected("NIXL_TELEMETRY_BUFFER_SIZE", "0");
    expectRejected("NIXL_TELEMETRY_BUFFER_SIZE", "lots");
    expectRejected("NIXL_TELEMETRY_BUFFER_SIZE", "12k");
    expectRejected("NIXL_TELEMETRY_BUFFER_SIZE", "-4");
    expectRejected("NIXL_TELEMETRY_BUFFER_SIZE", "99999999999999999999999");
    expectRejected("NIXL_TELEMETRY_BUFFER_SIZE", "4294967297"); // above the 2^32 bound
}

// NIXL 1.4 accepts any non-zero size it can allocate; 33,554,432 (2^25) was refused before.
TEST(telemetryConfig, BufferSizeAcceptsWhatNixlAccepts) {
    cleanTelemetryEnv clean;
    for (const char *v : {"16777217", "33554432", "0x2000000"}) {
        scopedEnv s("NIXL_TELEMETRY_BUFFER_SIZE", v);
        EXPECT_NO_THROW((void)nixlTelemetryConfig::fromEnvironment("A")) << v;
    }
    scopedEnv s("NIXL_TELEMETRY_BUFFER_SIZE", "33554432");
    EXPECT_EQ(33554432u, nixlTelemetryConfig::fromEnvironment("A").bufferSize);
}

// NIXL's BUFFER ring refuses a size that is not a power of two with std::invalid_argument.
TEST(telemetryConfig, BufferExporterNeedsAPowerOfTwo) {
    cleanTelemetryEnv clean;
    scopedEnv dir("NIXL_TELEMETRY_DIR", "/tmp/somewhere");
    {
        scopedEnv s("NIXL_TELEMETRY_BUFFER_SIZE", "1000");
        stderrCapture cap;
        try {
            (void)nixlTelemetryConfig::fromEnvironment("A");
            ADD_FAILURE() << "1000 accepted for BUFFER";
        }
        catch (const std::invalid_argument &e) {
            EXPECT_NE(std::string::npos, std::string(e.what()).find("power of two")) << e.what();
        }
        EXPECT_EQ(1u, logLines(cap.stop(), 'E').size());
    }
    {
        scopedEnv s("NIXL_TELEMETRY_BUFFER_SIZE", "33554432");
        EXPECT_EQ(33554432u, nixlTelemetryConfig::fromEnvironment("A").bufferSize);
    }
    {
        // Other exporters take any size.
        scopedEnv s("NIXL_TELEMETRY_BUFFER_SIZE", "1000");
        scopedEnv e("NIXL_TELEMETRY_EXPORTER", "nop");
        EXPECT_EQ(1000u, nixlTelemetryConfig::fromEnvironment("A").bufferSize);
    }
}

TEST(telemetryConfig, BufferSizeAboveTheBoundNamesTheBound) {
    cleanTelemetryEnv clean;
    scopedEnv s("NIXL_TELEMETRY_BUFFER_SIZE", "4294967297");
    stderrCapture cap;
    try {
        (void)nixlTelemetryConfig::fromEnvironment("A");
        ADD_FAILURE() << "accepted";
    }
    catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string::npos, std::string(e.what()).find("4294967296")) << e.what();
    }
    (void)cap.stop();
}

TEST(telemetryConfig, RunInterval) {
    {
        cleanTelemetryEnv clean;
        scopedEnv s("NIXL_TELEMETRY_RUN_INTERVAL", "250");
        EXPECT_EQ(std::chrono::milliseconds(250),
                  nixlTelemetryConfig::fromEnvironment("A").runInterval);
    }
    expectRejected("NIXL_TELEMETRY_RUN_INTERVAL", "0");
    expectRejected("NIXL_TELEMETRY_RUN_INTERVAL", "fast");
    expectRejected("NIXL_TELEMETRY_RUN_INTERVAL", "1.5");
    expectRejected("NIXL_TELEMETRY_RUN_INTERVAL", "3600001");
}

TEST(telemetryConfig, EnabledMetricsGlobsTrimmedAndDeduplicated) {
    std::vector<std::string> unmatched;
    auto m = nixlParseEnabledMetrics(" agent_tx_* , agent_err_backend,agent_tx_*,, ", unmatched);
    EXPECT_TRUE(unmatched.empty());
    EXPECT_EQ(3u, countOn(m));
    EXPECT_TRUE(on(m, type_t::AGENT_TX_BYTES));
    EXPECT_TRUE(on(m, type_t::AGENT_TX_REQUESTS_NUM));
    EXPECT_TRUE(on(m, type_t::AGENT_ERR_BACKEND));
    EXPECT_FALSE(on(m, type_t::AGENT_RX_BYTES));

    m = nixlParseEnabledMetrics("agent_err_*", unmatched);
    EXPECT_EQ(12u, countOn(m));
    EXPECT_FALSE(on(m, type_t::AGENT_TELEMETRY_EVENTS_DROPPED));

    m = nixlParseEnabledMetrics("agent_?x_bytes", unmatched);
    EXPECT_TRUE(on(m, type_t::AGENT_TX_BYTES));
    EXPECT_TRUE(on(m, type_t::AGENT_RX_BYTES));
    EXPECT_EQ(2u, countOn(m));
}

TEST(telemetryConfig, EnabledMetricsEmptyMeansAll) {
    std::vector<std::string> unmatched;
    EXPECT_EQ(nixl_telemetry_event_type_count, countOn(nixlParseEnabledMetrics("", unmatched)));
    EXPECT_EQ(nixl_telemetry_event_type_count, countOn(nixlParseEnabledMetrics("  ", unmatched)));
    EXPECT_TRUE(unmatched.empty());
}

TEST(telemetryConfig, UnmatchedMetricsAreOneWarning) {
    cleanTelemetryEnv clean;
    scopedEnv s("NIXL_TELEMETRY_ENABLED_METRICS", "agent_tx_bytes, agent_nonsense, bogus_*");
    stderrCapture cap;
    const auto cfg = nixlTelemetryConfig::fromEnvironment("A");
    const auto warnings = logLines(cap.stop(), 'W');
    EXPECT_EQ(1u, countOn(cfg.enabled));
    EXPECT_TRUE(on(cfg.enabled, type_t::AGENT_TX_BYTES));
    ASSERT_EQ(1u, warnings.size());
    EXPECT_NE(std::string::npos, warnings[0].find("NIXL_TELEMETRY_ENABLED_METRICS="));
    EXPECT_NE(std::string::npos, warnings[0].find("2 name(s) match no telemetry event"));
    EXPECT_NE(std::string::npos, warnings[0].find("\"agent_nonsense\""));
    EXPECT_NE(std::string::npos, warnings[0].find("\"bogus_*\""));
}

// 8,000 bad names once wrote 16,006 lines (754 MB): now one line, the value and list cut.
TEST(telemetryConfig, ThousandsOfBadNamesAreOneShortLine) {
    cleanTelemetryEnv clean;
    std::string v;
    for (int i = 0; i < 8000; ++i) {
        v += (i == 0 ? "" : ",") + std::string("bad_name_") + std::to_string(i);
    }
    scopedEnv s("NIXL_TELEMETRY_ENABLED_METRICS", v.c_str());
    stderrCapture cap;
    const auto cfg = nixlTelemetryConfig::fromEnvironment("A");
    const auto warnings = logLines(cap.stop(), 'W');
    ASSERT_EQ(1u, warnings.size());
    EXPECT_LT(warnings[0].size(), 1024u);
    EXPECT_NE(std::string::npos, warnings[0].find("8000 name(s) match no telemetry event"));
    EXPECT_NE(std::string::npos, warnings[0].find("(" + std::to_string(v.size()) + " bytes)"));
}

} // namespace
} // namespace nixl_telemetry_test
