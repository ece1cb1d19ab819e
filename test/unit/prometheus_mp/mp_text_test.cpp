/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Text writer: exact exposition for known stores (escaping, histogram shape, number format),
// and the same text as prometheus-cpp's serializer gives for the same scrape as families
// (mp_families.h).
#include <unistd.h>

#include <cmath>
#include <limits>
#include <locale>
#include <sstream>

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "mp_collector.h"
#include "mp_families.h"
#include "mp_test_utils.h"
#include "mp_text.h"

using namespace nixlPromMp;

namespace {

const std::vector<nixl_telemetry_event_info_t> &
smallTable() {
    static const std::vector<nixl_telemetry_event_info_t> t = {
        {0, NIXL_TELEMETRY_CAT_BYTES, "agent_tx_bytes", nullptr, "Bytes written"},
        {1, NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_time", nullptr, "Transfer time"},
        {2, NIXL_TELEMETRY_CAT_ERROR, "agent_err_backend", "backend", "Errors"},
        {3, NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_found", "not_found", "Errors"},
    };
    return t;
}

nixlMpSlotSnapshot
slot(uint64_t counter, uint64_t gauge, std::vector<uint64_t> buckets) {
    nixlMpSlotSnapshot s;
    s.counter = counter;
    s.gauge = gauge;
    s.buckets = std::move(buckets);
    return s;
}

/** Store A: every character the label rules escape; store B: no local_rank, other bounds. */
std::vector<nixlMpStoreSnapshot>
knownStores() {
    nixlMpStoreSnapshot a;
    a.id.hostname = "h";
    a.id.agentName = "a\"b\\c\nd";
    a.id.pid = 42;
    a.id.instance = 7;
    a.id.hasLocalRank = true;
    a.id.localRank = "0";
    a.boundsUs = {10, 100};
    a.slots = {slot(4096, 512, {0, 0, 0}), slot(1050, 1000, {1, 1, 1}), slot(3, 0, {0, 0, 0}),
               slot(0, 0, {0, 0, 0})};
    nixlMpStoreSnapshot b;
    b.id.hostname = "h";
    b.id.agentName = "b";
    b.id.pid = 43;
    b.id.instance = 0;
    b.boundsUs = {2.5};
    b.slots = {slot(0, 0, {0, 0}), slot(123456789, 7, {0, 2}), slot(0, 0, {0, 0}),
               slot(0, 0, {0, 0})};
    return {a, b};
}

std::string
serialize(const std::vector<prometheus::MetricFamily> &fams) {
    std::ostringstream os;
    prometheus::TextSerializer().Serialize(os, fams);
    return os.str();
}

/** text without the lines that start with prefix. */
std::string
withoutLines(const std::string &text, const std::string &prefix) {
    std::string out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with(prefix)) {
            out += line + "\n";
        }
    }
    return out;
}

} // namespace

TEST(PromMpText, ExactExpositionForKnownStores) {
    const nixlMpSchema schema(smallTable());
    std::string text;
    writeStoresText(schema, knownStores(), text);
    const std::string A =
        R"(hostname="h",agent_name="a\"b\\c\nd",pid="42",agent_instance="7",local_rank="0")";
    const std::string B = R"(hostname="h",agent_name="b",pid="43",agent_instance="0")";
    const std::string expected =
        "# HELP agent_tx_bytes_total Bytes written\n"
        "# TYPE agent_tx_bytes_total counter\n"
        "agent_tx_bytes_total{" + A + "} 4096\n"
        "agent_tx_bytes_total{" + B + "} 0\n"
        "# HELP agent_tx_last_bytes Bytes written (last operation)\n"
        "# TYPE agent_tx_last_bytes gauge\n"
        "agent_tx_last_bytes{" + A + "} 512\n"
        "agent_tx_last_bytes{" + B + "} 0\n"
        "# HELP agent_xfer_time_seconds Transfer time\n"
        "# TYPE agent_xfer_time_seconds histogram\n"
        "agent_xfer_time_seconds_count{" + A + "} 3\n"
        "agent_xfer_time_seconds_sum{" + A + "} 0.00105\n"
        "agent_xfer_time_seconds_bucket{" + A + ",le=\"1e-05\"} 1\n"
        "agent_xfer_time_seconds_bucket{" + A + ",le=\"0.0001\"} 2\n"
        "agent_xfer_time_seconds_bucket{" + A + ",le=\"+Inf\"} 3\n"
        "agent_xfer_time_seconds_count{" + B + "} 2\n"
        "agent_xfer_time_seconds_sum{" + B + "} 123.456789\n"
        "agent_xfer_time_seconds_bucket{" + B + ",le=\"2.5e-06\"} 0\n"
        "agent_xfer_time_seconds_bucket{" + B + ",le=\"+Inf\"} 2\n"
        "# HELP agent_xfer_time_last_seconds Transfer time (last operation)\n"
        "# TYPE agent_xfer_time_last_seconds gauge\n"
        "agent_xfer_time_last_seconds{" + A + "} 0.001\n"
        "agent_xfer_time_last_seconds{" + B + "} 7e-06\n"
        "# HELP agent_errors_total Errors returned by the agent, by status\n"
        "# TYPE agent_errors_total counter\n"
        "agent_errors_total{" + A + ",status=\"backend\"} 3\n"
        "agent_errors_total{" + B + ",status=\"backend\"} 0\n"
        "agent_errors_total{" + A + ",status=\"not_found\"} 0\n"
        "agent_errors_total{" + B + ",status=\"not_found\"} 0\n";
    EXPECT_EQ(text, expected);
}

TEST(PromMpText, SameTextAsPrometheusCppForBuildFamilies) {
    const nixlMpSchema small(smallTable());
    std::string text;
    writeStoresText(small, knownStores(), text);
    EXPECT_EQ(text, serialize(mpTest::buildFamilies(small, knownStores())));

    // NIXL's full table, default bounds, values of every magnitude.
    const nixlMpSchema full(mpTest::eventTable());
    std::vector<nixlMpStoreSnapshot> stores(3);
    uint64_t v = 1;
    for (size_t s = 0; s < stores.size(); ++s) {
        stores[s].id.hostname = "host";
        stores[s].id.agentName = "agent-" + std::to_string(s);
        stores[s].id.pid = static_cast<pid_t>(1000 + s);
        stores[s].id.instance = s;
        stores[s].id.hasLocalRank = s != 1;
        stores[s].id.localRank = std::to_string(s);
        stores[s].boundsUs = nixlProm::defaultBucketBoundsUs();
        for (uint32_t i = 0; i < full.slotCount(); ++i) {
            std::vector<uint64_t> buckets(stores[s].boundsUs.size() + 1);
            for (auto &b : buckets) {
                b = v % 1000;
                v = v * 6364136223846793005ull + 1442695040888963407ull;
            }
            // Up to 2^64-1: beyond 1e16 the text switches to exponent notation.
            stores[s].slots.push_back(slot(v >> (i % 64), (v >> 7) % 100000000, buckets));
            v = v * 6364136223846793005ull + 1442695040888963407ull;
        }
    }
    text.clear();
    writeStoresText(full, stores, text);
    EXPECT_EQ(text, serialize(mpTest::buildFamilies(full, stores)));
}

TEST(PromMpText, NumbersAsTheOstreamSerializerWritesThem) {
    const double values[] = {0.0,
                             -0.0,
                             1.0,
                             4096.0,
                             9999999999999998.0,
                             1e16,
                             12345678901234567.0,
                             18446744073709551615.0,
                             0.1,
                             1e-05,
                             2.5e-06,
                             0.00105,
                             1.0 / 3.0,
                             -12.5,
                             123.456789};
    for (const double d : values) {
        std::ostringstream os;
        os.imbue(std::locale::classic());
        os.precision(std::numeric_limits<double>::max_digits10 - 1);
        os << d;
        std::string s;
        appendDouble(s, d);
        EXPECT_EQ(s, os.str()) << d;
    }
    std::string s;
    appendDouble(s, std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(s, "NaN");
    s.clear();
    appendDouble(s, std::numeric_limits<double>::infinity());
    EXPECT_EQ(s, "+Inf");
    s.clear();
    appendDouble(s, -std::numeric_limits<double>::infinity());
    EXPECT_EQ(s, "-Inf");
}

TEST(PromMpText, HelpAndLabelEscaping) {
    std::string out;
    nixlMpTextWriter w(out);
    w.family("m", "a\\b\nc \"quoted\"", "gauge");
    std::string labels;
    appendLabel(labels, "k", "q\"b\\n\nz");
    w.sample("m", {}, labels, {}, 1.5);
    w.sample("m", {}, {}, {}, uint64_t{2});
    EXPECT_EQ(out,
              "# HELP m a\\\\b\\nc \"quoted\"\n"
              "# TYPE m gauge\n"
              "m{k=\"q\\\"b\\\\n\\nz\"} 1.5\n"
              "m 2\n");
}

TEST(PromMpText, CollectorScrapeMatchesCollect) {
    const auto schema = std::make_shared<const nixlMpSchema>(mpTest::eventTable());
    mpTest::tempDir dir;
    std::vector<std::unique_ptr<nixlMpStoreWriter>> writers;
    for (uint64_t i = 0; i < 3; ++i) {
        nixlMpIdentity id;
        id.agentName = "agent";
        id.hostname = "host";
        id.hasLocalRank = true;
        id.localRank = std::to_string(i);
        id.pid = getpid();
        id.instance = i;
        writers.push_back(std::make_unique<nixlMpStoreWriter>(
            dir.path(), *schema, nixlProm::defaultBucketBoundsUs(), id));
        writers.back()->record(mpTest::kTx, 4096 * (i + 1));
        writers.back()->record(mpTest::kXferTime, 300 * (i + 1));
        writers.back()->record(mpTest::kErrBackend, 1);
    }
    nixlMpCollector c(dir.path(), schema, 30);
    const std::string viaFamilies = serialize(mpTest::collectFamilies(c, *schema));
    const std::string direct = c.scrape();
    EXPECT_EQ(mpTest::countLines(direct, "agent_tx_bytes_total{"), 3u) << direct;
    // The scrape's duration differs from one scrape to the next; everything else must not.
    EXPECT_EQ(withoutLines(direct, std::string(kScrapeDurationMetric) + " "),
              withoutLines(viaFamilies, std::string(kScrapeDurationMetric) + " "));
    EXPECT_EQ(mpTest::countLines(direct, std::string(kScrapeDurationMetric) + " "), 1u);
}
