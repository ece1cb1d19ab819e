/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The BUFFER exporter, driven only through its C operations table as core drives it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "common/shared_ring.h"
#include "ring_test_util.h"
#include "telemetry/buffer_exporter.h"
#include "telemetry/telemetry.h"

namespace {

using eventRing = nixlSharedRing<nixl_telemetry_event_abi_t>;

// A table smaller than NIXL's, with the dropped row last at index 5, so a hard-coded 20 fails.
const nixl_telemetry_event_info_t kTable[] = {
    {0, NIXL_TELEMETRY_CAT_BYTES, "agent_tx_bytes", nullptr, "tx"},
    {1, NIXL_TELEMETRY_CAT_BYTES, "agent_rx_bytes", nullptr, "rx"},
    {2, NIXL_TELEMETRY_CAT_COUNT, "agent_tx_requests_num", nullptr, "txn"},
    {3, NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_time", nullptr, "t"},
    {4, NIXL_TELEMETRY_CAT_ERROR, "agent_err_backend", "backend", "err"},
    {5, NIXL_TELEMETRY_CAT_DROPPED, "agent_telemetry_events_dropped", nullptr, "dropped"},
};
constexpr uint32_t kDroppedType = 5;

class bufferExporterTest : public ::testing::Test {
protected:
    void
    SetUp() override {
        ::umask(022);
        const char *old = std::getenv("NIXL_TELEMETRY_DIR");
        hadDir_ = old != nullptr;
        if (hadDir_) {
            oldDir_ = old;
        }
        ::setenv("NIXL_TELEMETRY_DIR", dir_.root().c_str(), 1);
        core_.size = sizeof(core_);
        core_.ctx = &logs_;
        core_.log = captureLog;
        core_.log_enabled = logAll;
    }

    void
    TearDown() override {
        if (hadDir_) {
            ::setenv("NIXL_TELEMETRY_DIR", oldDir_.c_str(), 1);
        } else {
            ::unsetenv("NIXL_TELEMETRY_DIR");
        }
    }

    nixl_plugin_status_t
    create(const std::string &name, size_t capacity, nixl_telemetry_exporter_t **out) {
        nixl_telemetry_exporter_init_params_t p{};
        p.size = sizeof(p);
        p.core = &core_;
        p.agent_name = nixl_plugin_str_t{name.data(), name.size()};
        p.max_events_buffered = capacity;
        p.event_types = kTable;
        p.event_type_count = sizeof(kTable) / sizeof(kTable[0]);
        return ops_->create(&p, out);
    }

    nixl_plugin_status_t
    exportEvents(nixl_telemetry_exporter_t *e, const std::vector<nixl_telemetry_event_abi_t> &ev) {
        return ops_->export_events(e, ev.data(), ev.size());
    }

    size_t
    logsContaining(const std::string &s) const {
        size_t n = 0;
        for (const auto &l : logs_) {
            n += l.msg.find(s) != std::string::npos ? 1 : 0;
        }
        return n;
    }

    std::string
    allLogs() const {
        std::string s;
        for (const auto &l : logs_) {
            s += l.msg + "\n";
        }
        return s;
    }

    const nixl_telemetry_exporter_ops_t *ops_ = nixlBufferExporterOps();
    ringTestDir dir_;
    nixl_plugin_core_services_t core_{};
    std::vector<logged> logs_;
    bool hadDir_ = false;
    std::string oldDir_;
};

TEST_F(bufferExporterTest, OpsTableIsComplete) {
    ASSERT_NE(ops_, nullptr);
    EXPECT_EQ(ops_->size, sizeof(nixl_telemetry_exporter_ops_t));
    EXPECT_NE(ops_->create, nullptr);
    EXPECT_NE(ops_->destroy, nullptr);
    EXPECT_NE(ops_->export_events, nullptr);
    EXPECT_NE(ops_->batch_begin, nullptr);
}

TEST_F(bufferExporterTest, WritesEventsToDirSlashAgentName) {
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(create("agentA", 8, &e), NIXL_PLUGIN_SUCCESS) << allLogs();
    ASSERT_NE(e, nullptr);
    const std::string path = dir_.path("agentA");
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    EXPECT_EQ(uint64_t(st.st_size), 512u + 8 * 16);

    ASSERT_EQ(exportEvents(e, {{0, 0, 100}, {2, 0, 1}, {3, 0, 42}}), NIXL_PLUGIN_SUCCESS);
    std::string error;
    auto reader = eventRing::attach(path, error);
    ASSERT_TRUE(reader) << error;
    nixl_telemetry_event_abi_t ev{};
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.type, 0u);
    EXPECT_EQ(ev.value, 100u);
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.type, 2u);
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.value, 42u);
    EXPECT_FALSE(reader->pop(ev));
    EXPECT_TRUE(logs_.empty()) << allLogs();
    ops_->destroy(e);
    // The file outlives the exporter for late readers.
    EXPECT_TRUE(fileExists(path));
}

TEST_F(bufferExporterTest, CreateResetsTheHeaderOfAnOldFile) {
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(create("agentR", 4, &e), NIXL_PLUGIN_SUCCESS) << allLogs();
    ASSERT_EQ(exportEvents(e, {{0, 0, 1}, {0, 0, 2}, {0, 0, 3}, {0, 0, 4}}),
              NIXL_PLUGIN_SUCCESS);
    ops_->destroy(e);
    ASSERT_EQ(create("agentR", 8, &e), NIXL_PLUGIN_SUCCESS) << allLogs();
    std::string error;
    auto reader = eventRing::attach(dir_.path("agentR"), error);
    ASSERT_TRUE(reader) << error;
    EXPECT_EQ(reader->capacity(), 8u);
    EXPECT_TRUE(reader->empty());
    EXPECT_EQ(reader->lost(), 0u);
    ops_->destroy(e);
}

TEST_F(bufferExporterTest, MissingDirVariableFailsNamingIt) {
    ::unsetenv("NIXL_TELEMETRY_DIR");
    nixl_telemetry_exporter_t *e = nullptr;
    EXPECT_EQ(create("agentA", 8, &e), NIXL_PLUGIN_ERR_INVALID_PARAM);
    EXPECT_EQ(e, nullptr);
    ASSERT_EQ(logs_.size(), 1u) << allLogs();
    EXPECT_NE(logs_[0].msg.find("NIXL_TELEMETRY_DIR"), std::string::npos) << allLogs();
    EXPECT_EQ(logs_[0].level, NIXL_PLUGIN_LOG_ERROR);
}

TEST_F(bufferExporterTest, MissingDirectoryFailsNamingThePath) {
    ::setenv("NIXL_TELEMETRY_DIR", dir_.path("nope").c_str(), 1);
    nixl_telemetry_exporter_t *e = nullptr;
    EXPECT_NE(create("agentA", 8, &e), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(logs_.size(), 1u) << allLogs();
    EXPECT_NE(logs_[0].msg.find(dir_.path("nope") + "/agentA"), std::string::npos) << allLogs();
}

TEST_F(bufferExporterTest, NamesThatAreNotOneFileNameAreRejected) {
    ASSERT_EQ(::mkdir(dir_.path("sub").c_str(), 0755), 0);
    ::setenv("NIXL_TELEMETRY_DIR", dir_.path("sub").c_str(), 1);
    const std::vector<std::string> names = {
        "", ".", "..", "a/b", "../escape", "/abs", std::string("nul\0byte", 8),
        std::string(300, 'x')};
    for (const auto &name : names) {
        logs_.clear();
        nixl_telemetry_exporter_t *e = nullptr;
        EXPECT_EQ(create(name, 8, &e), NIXL_PLUGIN_ERR_INVALID_PARAM) << name;
        EXPECT_EQ(e, nullptr);
        ASSERT_EQ(logs_.size(), 1u) << name << "\n" << allLogs();
        EXPECT_NE(logs_[0].msg.find("agent name"), std::string::npos) << allLogs();
        EXPECT_NE(logs_[0].msg.find("NIXL_TELEMETRY_DIR=" + dir_.path("sub")), std::string::npos)
            << allLogs();
    }
    // Nothing was written inside or outside the directory.
    EXPECT_TRUE(std::filesystem::is_empty(dir_.path("sub")));
    EXPECT_FALSE(fileExists(dir_.path("escape")));
    EXPECT_FALSE(fileExists("/abs"));
    // Dots inside a name are fine: it is still one file in the directory.
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(create("..agent.", 8, &e), NIXL_PLUGIN_SUCCESS) << allLogs();
    EXPECT_TRUE(fileExists(dir_.path("sub/..agent.")));
    ops_->destroy(e);
}

TEST_F(bufferExporterTest, SymlinkAtTheRingPathIsNotFollowed) {
    ASSERT_EQ(::symlink(dir_.path("elsewhere").c_str(), dir_.path("agentL").c_str()), 0);
    nixl_telemetry_exporter_t *e = nullptr;
    EXPECT_EQ(create("agentL", 8, &e), NIXL_PLUGIN_ERR_BACKEND);
    EXPECT_FALSE(fileExists(dir_.path("elsewhere")));
    EXPECT_EQ(logs_.size(), 1u) << allLogs();
}

// Issue 29 item 6: a hard link at <dir>/<agent> was opened and the linked file overwritten.
TEST_F(bufferExporterTest, HardLinkAtTheRingPathIsRefusedAndTheFileKept) {
    const std::string victim = dir_.path("victim");
    {
        FILE *f = std::fopen(victim.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fputs("precious", f);
        std::fclose(f);
    }
    ASSERT_EQ(::link(victim.c_str(), dir_.path("agentH").c_str()), 0);
    nixl_telemetry_exporter_t *e = nullptr;
    EXPECT_EQ(create("agentH", 8, &e), NIXL_PLUGIN_ERR_BACKEND);
    EXPECT_EQ(e, nullptr);
    ASSERT_EQ(logs_.size(), 1u) << allLogs();
    EXPECT_NE(logs_[0].msg.find("2 links"), std::string::npos) << allLogs();
    EXPECT_EQ(fileSize(victim), 8u);
    char buf[16] = {};
    FILE *f = std::fopen(victim.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(std::fread(buf, 1, sizeof(buf), f), 8u);
    std::fclose(f);
    EXPECT_STREQ(buf, "precious");
}

TEST_F(bufferExporterTest, CapacityMustBeAPowerOfTwo) {
    for (size_t bad : {size_t(1000), size_t(0), size_t(1), size_t(4097)}) {
        logs_.clear();
        nixl_telemetry_exporter_t *e = nullptr;
        EXPECT_EQ(create("agentP", bad, &e), NIXL_PLUGIN_ERR_INVALID_PARAM) << bad;
        ASSERT_EQ(logs_.size(), 1u) << allLogs();
        EXPECT_NE(logs_[0].msg.find("NIXL_TELEMETRY_BUFFER_SIZE=" + std::to_string(bad)),
                  std::string::npos)
            << allLogs();
    }
    EXPECT_FALSE(fileExists(dir_.path("agentP")));
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(create("agentP", 4096, &e), NIXL_PLUGIN_SUCCESS) << allLogs();
    EXPECT_EQ(fileSize(dir_.path("agentP")), 512u + 4096 * 16);
    ops_->destroy(e);
}

TEST_F(bufferExporterTest, LossesAreCountedAndReportedAsDroppedOnceSpaceReturns) {
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(create("agentD", 4, &e), NIXL_PLUGIN_SUCCESS) << allLogs();
    std::string error;
    auto reader = eventRing::attach(dir_.path("agentD"), error);
    ASSERT_TRUE(reader) << error;

    // 3 usable slots: 2 of these 5 are lost.
    EXPECT_EQ(exportEvents(e, {{0, 0, 1}, {0, 0, 2}, {0, 0, 3}, {0, 0, 4}, {0, 0, 5}}),
              NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(reader->lost(), 2u);
    // Still full: 2 more lost, and no second log line for the same episode.
    EXPECT_EQ(exportEvents(e, {{1, 0, 6}, {1, 0, 7}}), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(reader->lost(), 4u);
    ASSERT_EQ(logs_.size(), 1u) << allLogs();
    EXPECT_EQ(logs_[0].level, NIXL_PLUGIN_LOG_WARN);
    EXPECT_NE(logs_[0].msg.find(dir_.path("agentD")), std::string::npos) << allLogs();

    nixl_telemetry_event_abi_t ev{};
    for (uint64_t v = 1; v <= 3; ++v) {
        ASSERT_TRUE(reader->pop(ev));
        EXPECT_EQ(ev.value, v);
    }
    // Space is back: the next export reports the 4 losses first, then its own event.
    EXPECT_EQ(exportEvents(e, {{2, 0, 8}}), NIXL_PLUGIN_SUCCESS);
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.type, kDroppedType);
    EXPECT_EQ(ev.value, 4u);
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.type, 2u);
    EXPECT_EQ(ev.value, 8u);
    EXPECT_FALSE(reader->pop(ev));
    // Reported once; the header keeps the cumulative total.
    EXPECT_EQ(exportEvents(e, {{2, 0, 9}}), NIXL_PLUGIN_SUCCESS);
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.value, 9u);
    EXPECT_EQ(reader->lost(), 4u);
    ops_->destroy(e);
}

TEST_F(bufferExporterTest, DroppedReportIsRetriedWhileTheRingStaysFull) {
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(create("agentF", 2, &e), NIXL_PLUGIN_SUCCESS) << allLogs();
    std::string error;
    auto reader = eventRing::attach(dir_.path("agentF"), error);
    ASSERT_TRUE(reader) << error;
    EXPECT_EQ(exportEvents(e, {{0, 0, 1}, {0, 0, 2}}), NIXL_PLUGIN_SUCCESS); // 1 lost
    EXPECT_EQ(exportEvents(e, {}), NIXL_PLUGIN_SUCCESS); // still full: report waits
    nixl_telemetry_event_abi_t ev{};
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.value, 1u);
    EXPECT_FALSE(reader->pop(ev));
    EXPECT_EQ(exportEvents(e, {}), NIXL_PLUGIN_SUCCESS); // an empty flush still reports
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.type, kDroppedType);
    EXPECT_EQ(ev.value, 1u);
    ops_->destroy(e);
}

TEST_F(bufferExporterTest, IdleFlushReportsDroppedAndMergesCoreReports) {
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(create("agentI", 2, &e), NIXL_PLUGIN_SUCCESS) << allLogs();
    std::string error;
    auto reader = eventRing::attach(dir_.path("agentI"), error);
    ASSERT_TRUE(reader) << error;
    // One slot: the first event fits; then a regular event and core's own DROPPED report of 10
    // staging losses are refused.
    EXPECT_EQ(exportEvents(e, {{0, 0, 1}, {1, 0, 2}, {kDroppedType, 0, 10}}),
              NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(reader->lost(), 1u); // events lost to the ring; the report is not an event
    nixl_telemetry_event_abi_t ev{};
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.value, 1u);
    // No new events: core only calls batch_begin/batch_end. batch_begin reports the losses.
    ops_->batch_begin(e);
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.type, kDroppedType);
    EXPECT_EQ(ev.value, 11u);
    EXPECT_FALSE(reader->pop(ev));
    ops_->batch_begin(e); // nothing pending: nothing written
    EXPECT_FALSE(reader->pop(ev));
    ops_->destroy(e);
}

TEST_F(bufferExporterTest, SecondLiveProducerOfTheSameNameIsRefused) {
    nixl_telemetry_exporter_t *first = nullptr;
    ASSERT_EQ(create("agentX", 8, &first), NIXL_PLUGIN_SUCCESS) << allLogs();
    ASSERT_EQ(exportEvents(first, {{0, 0, 5}}), NIXL_PLUGIN_SUCCESS);
    nixl_telemetry_exporter_t *second = nullptr;
    EXPECT_EQ(create("agentX", 8, &second), NIXL_PLUGIN_ERR_NOT_ALLOWED);
    EXPECT_EQ(second, nullptr);
    ASSERT_EQ(logs_.size(), 1u) << allLogs();
    EXPECT_NE(logs_[0].msg.find("in use by another live agent"), std::string::npos) << allLogs();
    // The first ring was not reset.
    std::string error;
    auto reader = eventRing::attach(dir_.path("agentX"), error);
    ASSERT_TRUE(reader) << error;
    nixl_telemetry_event_abi_t ev{};
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(ev.value, 5u);
    // Once the first is gone, the name is free again.
    ops_->destroy(first);
    ASSERT_EQ(create("agentX", 8, &second), NIXL_PLUGIN_SUCCESS) << allLogs();
    ops_->destroy(second);
}

TEST_F(bufferExporterTest, BadArgumentsAreRefused) {
    nixl_telemetry_exporter_t *e = nullptr;
    EXPECT_EQ(ops_->create(nullptr, &e), NIXL_PLUGIN_ERR_INVALID_PARAM);
    nixl_telemetry_exporter_init_params_t p{};
    p.size = 8;
    EXPECT_EQ(ops_->create(&p, &e), NIXL_PLUGIN_ERR_INVALID_PARAM);
    EXPECT_EQ(ops_->export_events(nullptr, nullptr, 0), NIXL_PLUGIN_ERR_INVALID_PARAM);
    ops_->destroy(nullptr);
}

// Issue 12: the core pipeline, with core's own table, into the BUFFER ring. The trace sink that
// calls addTracePhaseDrops in production is not needed to check the path from the counter on.
TEST_F(bufferExporterTest, TracePhaseDropsReachTheRingAsOneDeltaPerFlush) {
    nixlTelemetryConfig cfg;
    cfg.exporter = nixl_telemetry_buffer_exporter;
    cfg.exporterOrigin = "test";
    cfg.bufferSize = 8;
    cfg.runInterval = std::chrono::hours(1); // only flushNow flushes
    auto t = nixlTelemetry::create(
        "phases", cfg, nixlTelemetryExporterRef{cfg.exporter, "built-in", ops_});
    ASSERT_TRUE(t) << allLogs();
    std::string error;
    auto reader = eventRing::attach(dir_.path("phases"), error);
    ASSERT_TRUE(reader) << error;

    t->addTracePhaseDrops(4);
    t->addTracePhaseDrops(3);
    t->flushNow();
    nixl_telemetry_event_abi_t ev{};
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ("agent_trace_phases_dropped",
              telemetryEventTypeStr(static_cast<nixl_telemetry_event_type_t>(ev.type)));
    EXPECT_EQ(20u, ev.type);
    EXPECT_EQ(7u, ev.value);
    EXPECT_FALSE(reader->pop(ev));

    t->flushNow(); // nothing dropped since: nothing written
    EXPECT_FALSE(reader->pop(ev));

    t->addTracePhaseDrops(2);
    t->flushNow();
    ASSERT_TRUE(reader->pop(ev));
    EXPECT_EQ(20u, ev.type);
    EXPECT_EQ(2u, ev.value);
    EXPECT_FALSE(reader->pop(ev));
}

} // namespace
