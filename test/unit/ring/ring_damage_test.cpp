/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Another process damages a ring file while its producer or a reader uses it (truncation to 0
// or 100 bytes, removal, random bytes in the header). Neither side may die (a mapping would
// raise SIGBUS); the producer restores the file, a reader exits with status 1 and a message.
// A separate executable: before the fix these tests killed the whole binary.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/shared_ring.h"
#include "common/shared_ring_io.h"
#include "ring_test_util.h"
#include "telemetry/buffer_exporter.h"

namespace {

using ev_t = nixl_telemetry_event_abi_t;
using ioRing = nixlSharedRingIo<ev_t>;

const nixl_telemetry_event_info_t kTable[] = {
    {0, NIXL_TELEMETRY_CAT_BYTES, "agent_tx_bytes", nullptr, "tx"},
    {1, NIXL_TELEMETRY_CAT_DROPPED, "agent_telemetry_events_dropped", nullptr, "dropped"},
};
constexpr uint32_t kDroppedType = 1;

std::vector<ev_t>
txEvents(uint64_t first, size_t n) {
    std::vector<ev_t> v;
    for (size_t i = 0; i < n; ++i) {
        v.push_back(ev_t{0, 0, first + i});
    }
    return v;
}

// Everything a consumer can take from path now.
std::vector<ev_t>
drain(const std::string &path, std::string &error) {
    std::vector<ev_t> all;
    auto r = ioRing::attach(path, error);
    if (!r) {
        return all;
    }
    ev_t buf[256];
    size_t got = 0;
    do {
        if (!r->popBatch(buf, 256, got, error)) {
            return all;
        }
        all.insert(all.end(), buf, buf + got);
    } while (got > 0);
    return all;
}

class ringDamageTest : public ::testing::TestWithParam<off_t> {
protected:
    void
    SetUp() override {
        ::setenv("NIXL_TELEMETRY_DIR", dir_.root().c_str(), 1);
        core_.size = sizeof(core_);
        core_.ctx = &logs_;
        core_.log = captureLog;
        core_.log_enabled = logAll;
    }

    void
    TearDown() override {
        ::unsetenv("NIXL_TELEMETRY_DIR");
    }

    nixl_telemetry_exporter_t *
    create(const std::string &name, size_t capacity) {
        nixl_telemetry_exporter_init_params_t p{};
        p.size = sizeof(p);
        p.core = &core_;
        p.agent_name = nixl_plugin_str_t{name.data(), name.size()};
        p.max_events_buffered = capacity;
        p.event_types = kTable;
        p.event_type_count = 2;
        nixl_telemetry_exporter_t *e = nullptr;
        EXPECT_EQ(ops_->create(&p, &e), NIXL_PLUGIN_SUCCESS);
        return e;
    }

    // One flush as core does it: batch_begin, then the events.
    void
    flush(nixl_telemetry_exporter_t *e, const std::vector<ev_t> &ev) {
        ops_->batch_begin(e);
        if (!ev.empty()) {
            ASSERT_EQ(ops_->export_events(e, ev.data(), ev.size()), NIXL_PLUGIN_SUCCESS);
        }
    }

    size_t
    logsContaining(const std::string &s) const {
        size_t n = 0;
        for (const auto &l : logs_) {
            n += l.msg.find(s) != std::string::npos ? 1 : 0;
        }
        return n;
    }

    const nixl_telemetry_exporter_ops_t *ops_ = nixlBufferExporterOps();
    ringTestDir dir_;
    nixl_plugin_core_services_t core_{};
    std::vector<logged> logs_;
};

INSTANTIATE_TEST_SUITE_P(truncatedTo,
                         ringDamageTest,
                         ::testing::Values(off_t(0), off_t(100)),
                         [](const ::testing::TestParamInfo<off_t> &i) {
                             return "size" + std::to_string(i.param);
                         });

// 300 events put the write position past the first page, so a mapped producer faults on a file
// truncated to 0 or to 100 bytes.
TEST_P(ringDamageTest, ProducerSurvivesTruncationAndRestoresTheFile) {
    const std::string path = dir_.path("agentT");
    nixl_telemetry_exporter_t *e = create("agentT", 1024);
    ASSERT_NE(e, nullptr);
    flush(e, txEvents(0, 300));
    std::string error;
    ASSERT_EQ(drain(path, error).size(), 300u) << error;
    flush(e, {}); // the producer learns that the reader took them

    ASSERT_EQ(::truncate(path.c_str(), GetParam()), 0);
    // Events exported before the next flush checks the file: into the damaged file.
    ASSERT_EQ(ops_->export_events(e, txEvents(1000, 2).data(), 2), NIXL_PLUGIN_SUCCESS);
    flush(e, txEvents(2000, 3));
    flush(e, txEvents(3000, 1)); // intact now: no second warning

    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(uint64_t(st.st_size), 512u + 1024 * 16);
    auto reader = ioRing::attach(path, error);
    ASSERT_TRUE(reader) << error;
    // The 2 events written into the damaged file are lost, counted and reported first.
    EXPECT_EQ(reader->lost(), 2u);
    std::vector<ev_t> got = drain(path, error);
    ASSERT_EQ(got.size(), 5u) << error;
    EXPECT_EQ(got[0].type, kDroppedType);
    EXPECT_EQ(got[0].value, 2u);
    EXPECT_EQ(got[1].value, 2000u);
    EXPECT_EQ(got[3].value, 2002u);
    EXPECT_EQ(got[4].value, 3000u);
    EXPECT_EQ(logsContaining("was changed by another process"), 1u);
    EXPECT_EQ(logsContaining(path), 1u);
    ops_->destroy(e);
}

TEST_P(ringDamageTest, UnreadEventsOfATruncatedRingAreCountedAsLost) {
    const std::string path = dir_.path("agentU");
    nixl_telemetry_exporter_t *e = create("agentU", 1024);
    ASSERT_NE(e, nullptr);
    flush(e, txEvents(0, 300));
    ASSERT_EQ(::truncate(path.c_str(), GetParam()), 0);
    flush(e, txEvents(500, 1));
    std::string error;
    std::vector<ev_t> got = drain(path, error);
    ASSERT_EQ(got.size(), 2u) << error;
    EXPECT_EQ(got[0].type, kDroppedType);
    EXPECT_EQ(got[0].value, 300u);
    EXPECT_EQ(got[1].value, 500u);
    ops_->destroy(e);
}

TEST_F(ringDamageTest, RemovedFileIsReportedOnceAndNothingBreaks) {
    const std::string path = dir_.path("agentX");
    nixl_telemetry_exporter_t *e = create("agentX", 16);
    ASSERT_NE(e, nullptr);
    flush(e, txEvents(0, 3));
    ASSERT_EQ(::unlink(path.c_str()), 0);
    for (int i = 0; i < 5; ++i) {
        flush(e, txEvents(10, 3));
    }
    EXPECT_EQ(logsContaining("removed or replaced"), 1u);
    ops_->destroy(e);
}

TEST_F(ringDamageTest, RandomBytesInTheHeaderAreRepairedNotTrusted) {
    const std::string path = dir_.path("agentH");
    nixl_telemetry_exporter_t *e = create("agentH", 16);
    ASSERT_NE(e, nullptr);
    flush(e, txEvents(0, 3));
    std::vector<uint8_t> b = readBytes(path);
    uint32_t x = 0x9e3779b9u;
    for (size_t i = 0; i < 512; ++i) {
        x = x * 1664525u + 1013904223u;
        b[i] = static_cast<uint8_t>(x >> 24);
    }
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, b.data(), 512, 0), 512);
    ::close(fd);
    flush(e, txEvents(7, 1));
    std::string error;
    std::vector<ev_t> got = drain(path, error);
    ASSERT_EQ(got.size(), 2u) << error;
    EXPECT_EQ(got[0].value, 3u); // the three unread events, reported lost
    EXPECT_EQ(got[1].value, 7u);
    EXPECT_EQ(logsContaining("header was overwritten"), 1u);
    ops_->destroy(e);
}

} // namespace
