/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * Agents exporting through the real pipeline: NIXL_TELEMETRY_EXPORTER=prometheus, the TEST
 * backend moving bytes between two agents of this process, and /metrics scraped over loopback
 * until the flush thread has delivered (polled with a deadline, no fixed sleeps).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "agent_test_utils.h"
#include "config/config.h"
#include "prom_test_utils.h"
#include "telemetry/telemetry.h"

namespace {

using nixl_agent_test::agentConfig;
using nixl_agent_test::regList;
using nixl_agent_test::testBuffer;
using nixl_agent_test::xferList;
using nixl_prom_test::findValue;
using nixl_prom_test::httpGet;
using nixl_prom_test::parseSamples;
using nixl_prom_test::sample;

/** Polls cond until it holds or a generous deadline passes; returns the last result. */
bool
waitFor(const std::function<bool()> &cond) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!cond()) {
        if (std::chrono::steady_clock::now() > end) {
            return cond();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

class PrometheusAgentTest : public nixl_agent_test::agentTest {
protected:
    std::vector<sample>
    scrape() const {
        const auto body = httpGet("127.0.0.1", port_);
        return body ? parseSamples(*body) : std::vector<sample>{};
    }

    std::optional<double>
    value(const std::string &name, const std::string &agent) const {
        return findValue(scrape(), name,
                         {{"hostname", nixl_prom_test::hostName()}, {"agent_name", agent}});
    }

    uint16_t port_ = nixl_prom_test::freePort();
    std::string portStr_ = std::to_string(port_);
    nixl_agent_test::scopedEnv exporter_{"NIXL_TELEMETRY_EXPORTER", "prometheus"};
    nixl_agent_test::scopedEnv port_env_{"NIXL_TELEMETRY_PROMETHEUS_PORT", portStr_.c_str()};
    nixl_agent_test::scopedEnv local_{"NIXL_TELEMETRY_PROMETHEUS_LOCAL", "true"};
    nixl_agent_test::scopedEnv interval_{"NIXL_TELEMETRY_RUN_INTERVAL", "1"};
    nixl_agent_test::scopedEnv buckets_{"NIXL_TELEMETRY_HISTOGRAM_BUCKETS_US", nullptr};
};

TEST_F(PrometheusAgentTest, TwoAgentsExportTransfersOnOnePort) {
    ASSERT_NE(port_, 0);
    testBuffer bufA(4096, 1);
    testBuffer bufB(8192, 2);
    const auto cfg = agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true);
    auto a = makeAgent("A", cfg);
    auto b = makeAgent("B", cfg);
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b));
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({bufA.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({bufB.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));

    nixlXferReqH *w = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({bufA.desc(0, 1000)}),
                                             xferList({bufB.desc(0, 1000)}), "B", w));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a, w));
    ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(w));

    EXPECT_TRUE(waitFor([&] { return value("agent_tx_bytes_total", "A") == 1000.0; }))
        << "agent_tx_bytes_total of A never reached 1000";
    EXPECT_EQ(value("agent_tx_requests_total", "A"), 1.0);
    EXPECT_EQ(value("agent_xfer_time_seconds_count", "A"), 1.0);
    EXPECT_EQ(value("agent_xfer_post_time_seconds_count", "A"), 1.0);
    EXPECT_EQ(value("agent_tx_last_bytes", "A"), 1000.0);
    EXPECT_EQ(value("agent_memory_registered_bytes_total", "A"), 4096.0);
    EXPECT_TRUE(waitFor([&] {
        return value("agent_memory_registered_bytes_total", "B") == 8192.0;
    }));
    EXPECT_EQ(value("agent_tx_bytes_total", "B"), 0.0);

    // A destroyed: its series leave; B's stay. B destroyed: the endpoint closes.
    a.reset();
    EXPECT_FALSE(value("agent_tx_bytes_total", "A").has_value());
    EXPECT_EQ(value("agent_memory_registered_bytes_total", "B"), 8192.0);
    b.reset();
    EXPECT_FALSE(nixl_prom_test::canConnect("127.0.0.1", port_));
}

// Issue 12's counter through core's pipeline into the prometheus plugin. The trace sink that
// calls addTracePhaseDrops in production is not needed: the test calls it as the sink would.
TEST_F(PrometheusAgentTest, TracePhaseDropsAreExportedAsACounterOfDeltas) {
    ASSERT_NE(port_, 0);
    nixl_agent_test::scopedEnv enable("NIXL_TELEMETRY_ENABLE", "y");
    std::unique_ptr<nixlTelemetry> t = nixlTelemetry::create("P");
    ASSERT_TRUE(t);
    t->addTracePhaseDrops(4);
    t->addTracePhaseDrops(1);
    t->flushNow();
    EXPECT_EQ(value("agent_trace_phases_dropped_total", "P"), 5.0);
    // Flushes with nothing dropped add nothing; a later delta adds to the counter (a flush that
    // re-sent the running total would make this 12).
    t->flushNow();
    t->addTracePhaseDrops(2);
    t->flushNow();
    t->flushNow();
    EXPECT_EQ(value("agent_trace_phases_dropped_total", "P"), 7.0);

    const auto body = httpGet("127.0.0.1", port_);
    ASSERT_TRUE(body.has_value());
    EXPECT_NE(body->find("# HELP agent_trace_phases_dropped_total Backend trace phases"),
              std::string::npos)
        << *body;
    EXPECT_NE(body->find("# TYPE agent_trace_phases_dropped_total counter\n"), std::string::npos)
        << *body;
    const std::string promtool = nixl_prom_test::promtoolPath();
    if (promtool.empty()) {
        GTEST_SKIP() << "promtool not installed; the counter was checked without it";
    }
    const auto [status, output] = nixl_prom_test::promtoolCheck(promtool, *body);
    EXPECT_EQ(status, 0) << output;
    EXPECT_EQ(output, "") << "scrape:\n" << *body;
}

// The same counter end to end: agents whose trace plugin throws from mark (it breaks its
// contract), so core's phase sink drops every phase the TEST backend records and counts it in
// telemetry; the prometheus plugin exports the count per agent. The loader reads one
// directory, so the test makes one with links to the TEST backend, the exporter and the
// throwing trace plugin.
TEST_F(PrometheusAgentTest, PhasesDroppedByAThrowingTracePluginAreCounted) {
    ASSERT_NE(port_, 0);
    const char *plugins = std::getenv("NIXL_PLUGIN_DIR");
    const char *traces = std::getenv("NIXL_TEST_TRACE_PLUGIN_DIR");
    ASSERT_NE(plugins, nullptr) << "run through meson test";
    ASSERT_NE(traces, nullptr) << "run through meson test";
    char tmpl[] = "/tmp/nixl-prom-phases-XXXXXX";
    ASSERT_NE(nullptr, ::mkdtemp(tmpl));
    const std::string dir = tmpl;
    for (const auto &[from, name] :
         {std::pair<std::string, std::string>{plugins, "libplugin_TEST.so"},
          {plugins, "libtelemetry_exporter_prometheus.so"},
          {traces, "libtrace_backend_markthrows.so"}}) {
        ASSERT_EQ(0, ::symlink((from + "/" + name).c_str(), (dir + "/" + name).c_str())) << name;
    }
    {
        nixl_agent_test::scopedEnv plugin_dir("NIXL_PLUGIN_DIR", dir.c_str());
        nixl_agent_test::scopedEnv backends("NIXL_TRACE_BACKENDS", "markthrows");
        testBuffer bufA(4096, 1);
        testBuffer bufB(4096, 2);
        const auto cfg = agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true);
        nixl_agent_test::stderrCapture err;
        auto a = makeAgent("A", cfg);
        auto b = makeAgent("B", cfg);
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
        ASSERT_EQ(NIXL_SUCCESS, addTest(*b));
        ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({bufA.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({bufB.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));
        for (int i = 0; i < 2; ++i) {
            nixl_opt_args_t extra;
            extra.notif = "n" + std::to_string(i);
            nixlXferReqH *w = nullptr;
            ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({bufA.desc(0, 100)}),
                                                     xferList({bufB.desc(0, 100)}), "B", w,
                                                     &extra));
            ASSERT_EQ(NIXL_SUCCESS, runXfer(*a, w));
            ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(w));
        }
        nixl_notifs_t notifs;
        ASSERT_TRUE(waitFor([&] {
            b->getNotifs(notifs);
            return notifs["A"].size() == 2;
        }));
        // A: SUBMIT, WIRE_SUBMITTED, WIRE_COMPLETED, NOTIF_SENT per transfer; B: one
        // NOTIF_RECEIVED per delivered notification. All dropped, all counted.
        EXPECT_TRUE(waitFor([&] { return value("agent_trace_phases_dropped_total", "A") == 8.0; }))
            << value("agent_trace_phases_dropped_total", "A").value_or(-1);
        EXPECT_TRUE(waitFor([&] { return value("agent_trace_phases_dropped_total", "B") == 2.0; }))
            << value("agent_trace_phases_dropped_total", "B").value_or(-1);
        // The transfers themselves were counted as usual.
        EXPECT_EQ(value("agent_tx_requests_total", "A"), 2.0);
        a.reset();
        b.reset();
        // One line per sink (one sink per agent's TEST engine), naming the cause.
        const std::string log = err.stop();
        size_t lines = 0;
        for (size_t at = 0; (at = log.find("a trace plugin threw while recording it", at)) !=
             std::string::npos;
             ++at) {
            ++lines;
        }
        EXPECT_EQ(lines, 2u) << log;
    }
    std::filesystem::remove_all(dir);
}

TEST_F(PrometheusAgentTest, PortTakenLeavesAWorkingAgentWithoutExport) {
    ASSERT_NE(port_, 0);
    // Another "process" (here: a plain socket) holds the port.
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port_);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(0, bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)));
    ASSERT_EQ(0, listen(fd, 4));
    nixl_agent_test::stderrCapture err;
    auto a = makeAgent("A", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true));
    const std::string log = err.stop();
    EXPECT_NE(log.find("Address already in use"), std::string::npos) << log;
    testBuffer bufA(4096, 1);
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
    EXPECT_EQ(NIXL_SUCCESS, a->registerMem(regList({bufA.desc()})));
    close(fd);
}

// Regression: NIXL's "y" used to make the exporter refuse to start and the agent constructor
// throw, which terminates a NIXL 1.4 program that does not expect it.
TEST_F(PrometheusAgentTest, LocalYesBindsLoopbackOnly) {
    ASSERT_NE(port_, 0);
    nixl_agent_test::scopedEnv local("NIXL_TELEMETRY_PROMETHEUS_LOCAL", "y");
    auto a = makeAgent("A", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true));
    EXPECT_TRUE(httpGet("127.0.0.1", port_).has_value());
    EXPECT_FALSE(nixl_prom_test::canConnect("127.0.0.2", port_)) << "bound beyond 127.0.0.1";
}

// An option from the TOML configuration file reaches the plugin through core services.
TEST_F(PrometheusAgentTest, ConfigFileOptionsReachThePlugin) {
    ASSERT_NE(port_, 0);
    char tmpl[] = "/tmp/nixl-prom-config-XXXXXX";
    ASSERT_NE(nullptr, ::mkdtemp(tmpl));
    const std::string dir = tmpl;
    const std::string file = dir + "/nixl.cfg";
    std::ofstream(file) << "NIXL_TELEMETRY_PROMETHEUS_PORT = " << port_ << "\n"
                        << "NIXL_TELEMETRY_PROMETHEUS_LOCAL = \"Enable\"\n";
    nixl_agent_test::scopedEnv config("NIXL_CONFIG_FILE", file.c_str());
    nixl_agent_test::scopedEnv port("NIXL_TELEMETRY_PROMETHEUS_PORT", nullptr);
    nixl_agent_test::scopedEnv local("NIXL_TELEMETRY_PROMETHEUS_LOCAL", nullptr);
    nixlConfig::reloadForTesting();
    {
        auto a = makeAgent("A", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true));
        EXPECT_TRUE(httpGet("127.0.0.1", port_).has_value()) << "port from the file not used";
        EXPECT_FALSE(nixl_prom_test::canConnect("127.0.0.2", port_)) << "LOCAL from the file";
    }
    nixlConfig::reloadForTesting();
    std::remove(file.c_str());
    ::rmdir(dir.c_str());
}


// Issue 34: per-path series through the real pipeline. Two agents of this process over UCX:
// with the direct path on, their bytes count under direct_memcpy (one address space, the
// peer's registration table mapped); with ucx_direct_cma=no they count under ucp, and the
// fallback is counted once for the connection (two requests prepared on it), with its reason.
class PrometheusUcxPathTest : public PrometheusAgentTest,
                              public ::testing::WithParamInterface<bool> {};

/** Posts req of a and polls it, progressing b too (UCP needs the target's worker), until it
 *  leaves IN_PROG or a generous deadline passes. */
nixl_status_t
runBoth(nixlAgent &a, nixlAgent &b, nixlXferReqH *req) {
    nixl_status_t st = a.postXferReq(req);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (st == NIXL_IN_PROG && std::chrono::steady_clock::now() < end) {
        nixl_notifs_t ignored;
        (void)b.getNotifs(ignored);
        st = a.getXferStatus(req);
    }
    return st;
}

TEST_P(PrometheusUcxPathTest, BytesCountByPathAndAFallbackOncePerConnection) {
    ASSERT_NE(port_, 0);
    const bool direct = GetParam();
    testBuffer bufA(4096, 1);
    testBuffer bufB(4096, 2);
    const auto cfg = agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true);
    auto a = makeAgent("A", cfg);
    auto b = makeAgent("B", cfg);
    const nixl_b_params_t params = {{"ucx_direct_cma", direct ? "yes" : "no"}};
    nixlBackendH *h = nullptr;
    if (a->createBackend("UCX", params, h) != NIXL_SUCCESS) {
        GTEST_SKIP() << "the UCX backend is not available here";
    }
    ASSERT_EQ(NIXL_SUCCESS, b->createBackend("UCX", params, h));
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({bufA.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({bufB.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));
    for (int i = 0; i < 2; ++i) {
        nixlXferReqH *w = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({bufA.desc(0, 1000)}),
                                                 xferList({bufB.desc(0, 1000)}), "B", w));
        ASSERT_EQ(NIXL_SUCCESS, runBoth(*a, *b, w));
        ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(w));
    }
    nixlXferReqH *r = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_READ, xferList({bufA.desc(0, 500)}),
                                             xferList({bufB.desc(0, 500)}), "B", r));
    ASSERT_EQ(NIXL_SUCCESS, runBoth(*a, *b, r));
    ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(r));

    const std::string path = direct ? "direct_memcpy" : "ucp";
    const std::map<std::string, std::string> labels = {{"hostname", nixl_prom_test::hostName()},
                                                        {"agent_name", "A"},
                                                        {"backend", "UCX"},
                                                        {"path", path}};
    EXPECT_TRUE(waitFor([&] {
        return findValue(scrape(), "agent_path_rx_bytes_total", labels) == 500.0;
    })) << "agent_path_rx_bytes_total of A on " << path << " never reached 500";
    const auto samples = scrape();
    EXPECT_EQ(findValue(samples, "agent_path_tx_bytes_total", labels), 2000.0);
    EXPECT_EQ(findValue(samples, "agent_path_tx_requests_total", labels), 2.0);
    EXPECT_EQ(findValue(samples, "agent_path_rx_requests_total", labels), 1.0);
    // The totals are unchanged by the fallback marker (a request event of value 0).
    EXPECT_EQ(value("agent_tx_requests_total", "A"), 2.0);
    EXPECT_EQ(value("agent_rx_requests_total", "A"), 1.0);
    const std::map<std::string, std::string> fb = {{"hostname", nixl_prom_test::hostName()},
                                                    {"agent_name", "A"},
                                                    {"backend", "UCX"},
                                                    {"reason", "disabled_by_config"}};
    size_t fallbackSeries = 0;
    for (const sample &s : samples) {
        fallbackSeries += s.name == "agent_path_fallbacks_total" ? 1 : 0;
    }
    if (direct) {
        EXPECT_EQ(fallbackSeries, 0u);
    } else {
        // Once for A's connection to B, though the WRITE and the READ were prepared on it.
        EXPECT_EQ(fallbackSeries, 1u);
        EXPECT_EQ(findValue(samples, "agent_path_fallbacks_total", fb), 1.0);
    }

    const auto body = httpGet("127.0.0.1", port_);
    ASSERT_TRUE(body.has_value());
    EXPECT_NE(body->find("# TYPE agent_path_tx_bytes_total counter\n"), std::string::npos)
        << *body;
    const std::string promtool = nixl_prom_test::promtoolPath();
    if (promtool.empty()) {
        GTEST_SKIP() << "promtool not installed; the series were checked without it";
    }
    const auto [status, output] = nixl_prom_test::promtoolCheck(promtool, *body);
    EXPECT_EQ(status, 0) << output;
    EXPECT_EQ(output, "") << "scrape:\n" << *body;
}

INSTANTIATE_TEST_SUITE_P(Direct,
                         PrometheusUcxPathTest,
                         ::testing::Bool(),
                         [](const auto &info) { return info.param ? "Direct" : "Ucp"; });

// Issue 34: a peer whose metadata is NIXL 1.4's form alone (NIXL_METADATA_FORMAT=nixl, what a
// NIXL agent sends) has no identity data, so A's UCX connection to it takes the ucp path with
// the reason nixl_peer, even with the direct path allowed; counted once for the connection.
TEST_F(PrometheusAgentTest, UcxNixlPeerCountsUcpWithReasonNixlPeer) {
    ASSERT_NE(port_, 0);
    testBuffer bufA(4096, 1);
    testBuffer bufB(4096, 2);
    const auto cfg = agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true);
    auto a = makeAgent("A", cfg);
    auto b = makeAgent("B", cfg);
    const nixl_b_params_t params = {{"ucx_direct_cma", "yes"}};
    nixlBackendH *h = nullptr;
    if (a->createBackend("UCX", params, h) != NIXL_SUCCESS) {
        GTEST_SKIP() << "the UCX backend is not available here";
    }
    ASSERT_EQ(NIXL_SUCCESS, b->createBackend("UCX", params, h));
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({bufA.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({bufB.desc()})));
    {
        nixl_agent_test::scopedEnv fmt("NIXL_METADATA_FORMAT", "nixl");
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));
    }
    for (int i = 0; i < 2; ++i) {
        nixlXferReqH *w = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({bufA.desc(0, 700)}),
                                                 xferList({bufB.desc(0, 700)}), "B", w));
        ASSERT_EQ(NIXL_SUCCESS, runBoth(*a, *b, w));
        ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(w));
    }
    const std::map<std::string, std::string> ucp = {{"hostname", nixl_prom_test::hostName()},
                                                     {"agent_name", "A"},
                                                     {"backend", "UCX"},
                                                     {"path", "ucp"}};
    EXPECT_TRUE(waitFor([&] {
        return findValue(scrape(), "agent_path_tx_bytes_total", ucp) == 1400.0;
    })) << "agent_path_tx_bytes_total of A on ucp never reached 1400";
    const auto samples = scrape();
    EXPECT_EQ(findValue(samples, "agent_path_tx_requests_total", ucp), 2.0);
    std::vector<std::string> reasons;
    for (const sample &s : samples) {
        if (s.name == "agent_path_fallbacks_total") {
            reasons.push_back(s.labels.count("reason") ? s.labels.at("reason") : "?");
        }
        // Nothing of A's moved on the direct path: the NIXL peer offered no identity.
        if (s.name == "agent_path_tx_bytes_total" && s.labels.count("path")) {
            EXPECT_EQ(s.labels.at("path"), "ucp");
        }
    }
    EXPECT_EQ(reasons, std::vector<std::string>{"nixl_peer"});
    const std::map<std::string, std::string> fb = {{"hostname", nixl_prom_test::hostName()},
                                                    {"agent_name", "A"},
                                                    {"backend", "UCX"},
                                                    {"reason", "nixl_peer"}};
    EXPECT_EQ(findValue(samples, "agent_path_fallbacks_total", fb), 1.0);
    EXPECT_EQ(value("agent_tx_requests_total", "A"), 2.0);
}

// Issue 34: the POSIX backend's I/O engine is its data path: a WRITE of memory to a file
// counts under {backend="POSIX", path=<engine>} for each engine this host can run (the
// configured engine's label when it set up; a fallback with its reason otherwise).
class PrometheusPosixPathTest : public PrometheusAgentTest,
                                public ::testing::WithParamInterface<const char *> {};

TEST_P(PrometheusPosixPathTest, FileWritesCountUnderTheEngine) {
    ASSERT_NE(port_, 0);
    const std::string engine = GetParam();
    auto a = makeAgent("A", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true));
    nixlBackendH *h = nullptr;
    if (a->createBackend("POSIX", {{"use_" + engine, "true"}}, h) != NIXL_SUCCESS) {
        GTEST_SKIP() << "the POSIX backend is not available here";
    }
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(NIXL_SUCCESS, a->getBackendParams(h, mems, params));
    const std::string used = params["engine"]; // io_uring, linux_aio or posix_aio
    const std::string path = used == "io_uring" ? "uring" : used == "linux_aio" ? "aio" :
                                                                                  "posix_aio";
    char dir[] = "/tmp/nixl-prom-posix-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const std::string file = std::string(dir) + "/f";
    testBuffer buf(4096, 3);
    nixl_reg_dlist_t freg(FILE_SEG);
    freg.addDesc(nixlBlobDesc(0, 0, 1, "rw,create:" + file));
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(freg));
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({buf.desc()})));
    nixl_xfer_dlist_t flist(FILE_SEG);
    flist.addDesc(nixlBasicDesc(0, 4096, 1));
    nixlXferReqH *w = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({buf.desc()}), flist, "A", w));
    ASSERT_EQ(NIXL_SUCCESS, runBoth(*a, *a, w)); // polled to a deadline: the kernel's pace
    ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(w));

    const std::map<std::string, std::string> labels = {{"hostname", nixl_prom_test::hostName()},
                                                        {"agent_name", "A"},
                                                        {"backend", "POSIX"},
                                                        {"path", path}};
    EXPECT_TRUE(waitFor([&] {
        return findValue(scrape(), "agent_path_tx_bytes_total", labels) == 4096.0;
    })) << "agent_path_tx_bytes_total of A on " << path << " never reached 4096";
    const auto samples = scrape();
    EXPECT_EQ(findValue(samples, "agent_path_tx_requests_total", labels), 1.0);
    const std::string configured = engine == "uring" ? "io_uring" :
        engine == "aio"                             ? "linux_aio" :
                                                      "posix_aio";
    const std::map<std::string, std::string> fb = {{"hostname", nixl_prom_test::hostName()},
                                                    {"agent_name", "A"},
                                                    {"backend", "POSIX"},
                                                    {"reason", "transport_unavailable"}};
    EXPECT_EQ(findValue(samples, "agent_path_fallbacks_total", fb),
              used == configured ? std::nullopt : std::optional<double>(1.0));
    a.reset();
    std::remove(file.c_str());
    ::rmdir(dir);
}

INSTANTIATE_TEST_SUITE_P(Engines,
                         PrometheusPosixPathTest,
                         ::testing::Values("uring", "aio", "posix_aio"),
                         [](const auto &info) { return std::string(info.param); });

// Issue 34: LIBFABRIC's rail is its path. Two agents of this process: with the providers
// chosen automatically they meet on shm; with tcp only, on tcp, and the connection counts one
// disabled_by_config fallback (no shm rail here) for two requests.
class PrometheusLfPathTest : public PrometheusAgentTest,
                             public ::testing::WithParamInterface<const char *> {};

TEST_P(PrometheusLfPathTest, RailIsThePathAndNotShmIsAFallback) {
    ASSERT_NE(port_, 0);
    const bool tcpOnly = std::string(GetParam()) != "auto";
    testBuffer bufA(4096, 1);
    testBuffer bufB(4096, 2);
    const auto cfg = agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true);
    auto a = makeAgent("A", cfg);
    auto b = makeAgent("B", cfg);
    const nixl_b_params_t params = {{"provider", GetParam()}};
    nixlBackendH *h = nullptr;
    if (a->createBackend("LIBFABRIC", params, h) != NIXL_SUCCESS ||
        b->createBackend("LIBFABRIC", params, h) != NIXL_SUCCESS) {
        GTEST_SKIP() << "the LIBFABRIC backend (provider " << GetParam()
                     << ") is not available here";
    }
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({bufA.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({bufB.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));
    for (int i = 0; i < 2; ++i) {
        nixlXferReqH *w = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({bufA.desc(0, 1000)}),
                                                 xferList({bufB.desc(0, 1000)}), "B", w));
        ASSERT_EQ(NIXL_SUCCESS, runBoth(*a, *b, w));
        ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(w));
    }
    const std::string host = nixl_prom_test::hostName();
    auto labels = [&](const std::string &path) {
        return std::map<std::string, std::string>{
            {"hostname", host}, {"agent_name", "A"}, {"backend", "LIBFABRIC"}, {"path", path}};
    };
    std::string path;
    EXPECT_TRUE(waitFor([&] {
        const auto samples = scrape();
        for (const char *p : {"shm", "tcp"}) {
            if (findValue(samples, "agent_path_tx_requests_total", labels(p)) == 2.0) {
                path = p;
                return true;
            }
        }
        return false;
    })) << "no agent_path_tx_requests_total of 2 for A";
    const auto samples = scrape();
    const std::map<std::string, std::string> fb = {{"hostname", host},
                                                    {"agent_name", "A"},
                                                    {"backend", "LIBFABRIC"},
                                                    {"reason", "disabled_by_config"}};
    if (!tcpOnly && path != "shm") {
        GTEST_SKIP() << "no shm rail here: the pair met on " << path;
    }
    EXPECT_EQ(path, tcpOnly ? "tcp" : "shm");
    EXPECT_EQ(findValue(samples, "agent_path_tx_bytes_total", labels(path)), 2000.0);
    EXPECT_EQ(findValue(samples, "agent_path_fallbacks_total", fb),
              tcpOnly ? std::optional<double>(1.0) : std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(Providers,
                         PrometheusLfPathTest,
                         ::testing::Values("auto", "tcp;ofi_rxm"),
                         [](const auto &info) {
                             return std::string(info.param) == "auto" ? "Auto" : "TcpOnly";
                         });

} // namespace
