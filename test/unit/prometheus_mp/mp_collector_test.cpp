/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Collector: series, labels and histogram shape; publication, reaping and the cardinality
// policy; refused, foreign and staging files; own metrics; promtool on the real output.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "mp_collector.h"
#include "mp_test_utils.h"

using namespace nixlPromMp;

namespace {

class PromMpCollector : public ::testing::Test {
protected:
    std::shared_ptr<const nixlMpSchema> schema_ =
        std::make_shared<const nixlMpSchema>(mpTest::eventTable());
    mpTest::tempDir dir_;

    std::unique_ptr<nixlMpStoreWriter>
    writer(const std::string &name,
           std::optional<std::string> rank = std::nullopt,
           std::vector<double> bounds = {10, 100}) {
        nixlMpIdentity id;
        id.agentName = name;
        id.hostname = "host-a";
        id.hasLocalRank = rank.has_value();
        id.localRank = rank.value_or("");
        id.pid = getpid();
        id.instance = next_++;
        return std::make_unique<nixlMpStoreWriter>(dir_.path(), *schema_, bounds, id);
    }

    bool
    exists(const std::string &p) const {
        return access(p.c_str(), F_OK) == 0;
    }

    uint64_t next_ = 0;
};

} // namespace

TEST_F(PromMpCollector, SeriesNamesLabelsAndHistogramShape) {
    auto w = writer("agent-a", "2");
    w->record(mpTest::kTx, 4096);
    w->record(mpTest::kTxReq, 1);
    w->record(mpTest::kErrBackend, 1);
    w->record(mpTest::kXferTime, 10); // on the first bound
    w->record(mpTest::kXferTime, 50);
    w->record(mpTest::kXferTime, 1000); // overflow
    nixlMpCollector c(dir_.path(), schema_, 30);
    const std::string text = c.scrape();
    const std::vector<std::string> who = {"hostname=\"host-a\"",
                                          "agent_name=\"agent-a\"",
                                          "pid=\"" + std::to_string(getpid()) + "\"",
                                          "agent_instance=\"0\"",
                                          "local_rank=\"2\""};
    EXPECT_EQ(mpTest::sampleValue(text, "agent_tx_bytes_total", who), 4096.0) << text;
    EXPECT_EQ(mpTest::sampleValue(text, "agent_tx_last_bytes", who), 4096.0);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_tx_requests_total", who), 1.0);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_errors_total", {"status=\"backend\""}), 1.0);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_errors_total", {"status=\"not_found\""}), 0.0);
    EXPECT_EQ(mpTest::countLines(text, "agent_errors_total{"), 12u);
    EXPECT_EQ(mpTest::countLines(text, "# TYPE agent_errors_total counter"), 1u);
    EXPECT_EQ(mpTest::countLines(text, "# TYPE agent_xfer_time_seconds histogram"), 1u);
    // Cumulative buckets in seconds, +Inf == _count.
    EXPECT_EQ(mpTest::sampleValue(text, "agent_xfer_time_seconds_bucket", {"le=\"1e-05\""}), 1.0)
        << text;
    EXPECT_EQ(mpTest::sampleValue(text, "agent_xfer_time_seconds_bucket", {"le=\"0.0001\""}), 2.0);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_xfer_time_seconds_bucket", {"le=\"+Inf\""}), 3.0);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_xfer_time_seconds_count", who), 3.0);
    EXPECT_DOUBLE_EQ(*mpTest::sampleValue(text, "agent_xfer_time_seconds_sum", who), 1060e-6);
    EXPECT_DOUBLE_EQ(*mpTest::sampleValue(text, "agent_xfer_time_last_seconds", who), 1000e-6);
    EXPECT_EQ(mpTest::countLines(text, "agent_xfer_time_seconds_bucket{"), 3u);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_telemetry_events_dropped_total"), 0.0);
    EXPECT_EQ(mpTest::sampleValue(text, kStoresMetric, {"state=\"live\""}), 1.0);
    EXPECT_EQ(mpTest::sampleValue(text, kOwnerPidMetric), static_cast<double>(getpid()));
}

TEST_F(PromMpCollector, NoLocalRankLabelWhenUnset) {
    auto w = writer("agent-a");
    nixlMpCollector c(dir_.path(), schema_, 30);
    const std::string text = c.scrape();
    EXPECT_GT(mpTest::countLines(text, "agent_tx_bytes_total{"), 0u);
    EXPECT_EQ(text.find("local_rank"), std::string::npos);
}

TEST_F(PromMpCollector, EveryStoreIsItsOwnSeriesNeverSummed) {
    auto a = writer("same");
    auto b = writer("same"); // same name, same process: agent_instance tells them apart
    a->record(mpTest::kTx, 1);
    b->record(mpTest::kTx, 2);
    nixlMpCollector c(dir_.path(), schema_, 30);
    const std::string text = c.scrape();
    EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{"), 2u);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_tx_bytes_total", {"agent_instance=\"0\""}), 1.0);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_tx_bytes_total", {"agent_instance=\"1\""}), 2.0);
}

TEST_F(PromMpCollector, LiveWriterOutlivesAnExpiredTtl) {
    auto w = writer("live");
    nixlMpCollector c(dir_.path(), schema_, 0);
    for (int i = 0; i < 3; ++i) {
        const std::string text = c.scrape();
        EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"agent_name=\"live\""}), 1u);
    }
    EXPECT_TRUE(exists(w->path()));
}

TEST_F(PromMpCollector, DepartedWriterIsPublishedOnceMoreThenReaped) {
    auto w = writer("gone");
    w->record(mpTest::kTx, 77);
    const std::string path = w->path();
    w.reset();
    nixlMpCollector c(dir_.path(), schema_, 0);
    const std::string last = c.scrape();
    EXPECT_EQ(mpTest::sampleValue(last, "agent_tx_bytes_total", {"agent_name=\"gone\""}), 77.0)
        << last;
    EXPECT_EQ(mpTest::sampleValue(last, kStoresMetric, {"state=\"departed\""}), 1.0);
    EXPECT_FALSE(exists(path));
    const std::string after = c.scrape();
    EXPECT_EQ(mpTest::countLines(after, "agent_tx_bytes_total{"), 0u);
    EXPECT_EQ(mpTest::sampleValue(after, kReapedMetric), 1.0);
}

TEST_F(PromMpCollector, DepartedWriterStaysWithinTheTtl) {
    auto w = writer("gone");
    const std::string path = w->path();
    w.reset();
    nixlMpCollector c(dir_.path(), schema_, 3600);
    for (int i = 0; i < 2; ++i) {
        const std::string text = c.scrape();
        EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"agent_name=\"gone\""}), 1u);
    }
    EXPECT_TRUE(exists(path));
}

TEST_F(PromMpCollector, RestartedRankReplacesItsDepartedStoreAtOnce) {
    auto old = writer("rank", "0");
    const std::string oldPath = old->path();
    old.reset();
    auto other = writer("rank", "1");
    const std::string otherPath = other->path();
    other.reset();
    auto restarted = writer("rank", "0");
    nixlMpCollector c(dir_.path(), schema_, 3600);
    c.scrape();
    EXPECT_FALSE(exists(oldPath)) << "superseded store kept";
    EXPECT_TRUE(exists(otherPath)) << "rank 1 has no successor and is within the TTL";
    const std::string text = c.scrape();
    EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"local_rank=\"0\""}), 1u);
    EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"local_rank=\"1\""}), 1u);
}

TEST_F(PromMpCollector, RefusedStoresAreCountedOnceAndReapedWhenDeparted) {
    auto table = mpTest::eventTable();
    table.pop_back();
    const nixlMpSchema older(table);
    nixlMpIdentity id;
    id.agentName = "old-build";
    id.pid = getpid();
    auto w = std::make_unique<nixlMpStoreWriter>(dir_.path(), older, std::vector<double>{10}, id);
    const std::string path = w->path();
    nixlMpCollector c(dir_.path(), schema_, 0);
    mpTest::globalLog().clear();
    std::string text = c.scrape();
    text = c.scrape();
    EXPECT_EQ(mpTest::sampleValue(text, kRefusedMetric), 1.0) << text;
    EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{"), 0u);
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, path), 1u)
        << mpTest::globalLog().all();
    EXPECT_TRUE(exists(path)) << "a live writer's file is never reaped";
    w.reset();
    c.scrape();
    EXPECT_FALSE(exists(path));
}

TEST_F(PromMpCollector, AbandonedStagingFileIsReaped) {
    const std::string staging = dir_.path() + "/.nixl.1.2.3.staging";
    const int fd = open(staging.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
    const std::string held = dir_.path() + "/.nixl.4.5.6.staging";
    const int hfd = open(held.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(hfd, 0);
    ASSERT_EQ(flock(hfd, LOCK_EX), 0); // a writer still staging its store
    nixlMpCollector c(dir_.path(), schema_, 0);
    c.scrape();
    EXPECT_FALSE(exists(staging));
    EXPECT_TRUE(exists(held));
    close(hfd);
}

TEST_F(PromMpCollector, FilesOfAnotherUserAreIgnored) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to chown a file to another user";
    }
    auto w = writer("mine");
    {
        auto planted = writer("planted");
        ASSERT_EQ(chown(planted->path().c_str(), 65534, 65534), 0);
        nixlMpCollector c(dir_.path(), schema_, 0);
        mpTest::globalLog().clear();
        const std::string text = c.scrape();
        EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"agent_name=\"mine\""}), 1u);
        EXPECT_EQ(text.find("planted"), std::string::npos);
        EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, planted->path()), 1u);
    }
}

TEST_F(PromMpCollector, MissingDirectoryGivesOwnMetricsOnly) {
    nixlMpCollector c(dir_.path() + "/nope", schema_, 0);
    std::string text;
    ASSERT_NO_THROW(text = c.scrape());
    EXPECT_EQ(mpTest::sampleValue(text, kStoresMetric, {"state=\"live\""}), 0.0);
}

TEST_F(PromMpCollector, PromtoolFindsNoProblems) {
    auto a = writer("agent-a", "0");
    auto b = writer("agent-b", "1", {10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000});
    for (uint64_t v : {5, 10, 15, 200, 40000, 100000000}) {
        a->record(mpTest::kXferTime, v);
        b->record(mpTest::kXferTime, v);
        a->record(7, v);
    }
    for (uint32_t t = 0; t < schema_->slotCount(); ++t) {
        a->record(t, 3);
    }
    b->record(mpTest::kTracePhases, 4);
    nixlMpCollector c(dir_.path(), schema_, 30);
    const std::string text = c.scrape();
    std::string out;
    EXPECT_EQ(mpTest::promtoolCheck(text, &out), 0) << out << "\n" << text;
    EXPECT_EQ(out, "") << text;
    // Issue 12's counter is among what promtool checked, summed per store, with its metadata.
    EXPECT_NE(text.find("# HELP agent_trace_phases_dropped_total "), std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE agent_trace_phases_dropped_total counter\n"), std::string::npos)
        << text;
    EXPECT_EQ(mpTest::sampleValue(text, "agent_trace_phases_dropped_total",
                                  {"agent_name=\"agent-a\""}),
              3.0);
    EXPECT_EQ(mpTest::sampleValue(text, "agent_trace_phases_dropped_total",
                                  {"agent_name=\"agent-b\""}),
              4.0);
}
