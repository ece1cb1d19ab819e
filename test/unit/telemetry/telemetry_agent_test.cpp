/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Agents with the TEST backend exporting to the record test exporter
// (libtelemetry_exporter_record.so): what completed transfers, errors and registrations emit,
// the enable rules, the allowlist, misconfiguration, and the final flush at destruction.
//
// NIXL_PLUGIN_DIR is one directory, so the fixture makes one holding symlinks to
// libplugin_TEST.so and to the test exporters, and points the loader at it.

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>

#include "telemetry/telemetry_event.h"
#include "telemetry_test_utils.h"

namespace nixl_telemetry_test {
namespace {

using nixl_agent_test::agentConfig;
using nixl_agent_test::regList;
using nixl_agent_test::testBuffer;
using nixl_agent_test::xferList;
using type_t = nixl_telemetry_event_type_t;

namespace fs = std::filesystem;

struct rec {
    uint32_t kind; // record plugin: 0 begin, 1 event, 2 end, 3 created, 4 destroyed
    uint32_t type;
    uint64_t value;
};

/** The record exporter's test interface, found with dlsym. */
struct recorderApi {
    size_t (*count)(const char *) = nullptr;
    int (*get)(const char *, size_t, uint32_t *, uint32_t *, uint64_t *) = nullptr;
    int (*tableCheck)(const char *, char *, size_t) = nullptr;
    void (*clear)() = nullptr;
};

class telemetryAgentTest : public nixl_agent_test::agentTest {
protected:
    static void
    SetUpTestSuite() {
        const char *src = std::getenv("NIXL_PLUGIN_DIR");
        const char *mine = std::getenv("NIXL_TEST_TELEMETRY_PLUGIN_DIR");
        ASSERT_NE(nullptr, src) << "run through meson test";
        ASSERT_NE(nullptr, mine) << "run through meson test";
        char tmpl[] = "/tmp/nixl-telemetry-test-XXXXXX";
        ASSERT_NE(nullptr, ::mkdtemp(tmpl));
        dir_ = tmpl;
        fs::create_symlink(fs::path(src) / "libplugin_TEST.so",
                           fs::path(dir_) / "libplugin_TEST.so");
        for (const char *n : {"record", "noops", "broken"}) {
            const std::string file = std::string("libtelemetry_exporter_") + n + ".so";
            fs::create_symlink(fs::path(mine) / file, fs::path(dir_) / file);
        }
        // Same file as the loader will open, so the same loaded object and state.
        handle_ = ::dlopen((dir_ + "/libtelemetry_exporter_record.so").c_str(), RTLD_NOW);
        ASSERT_NE(nullptr, handle_) << ::dlerror();
        api_.count =
            reinterpret_cast<decltype(api_.count)>(::dlsym(handle_, "nixl_test_record_count"));
        api_.get = reinterpret_cast<decltype(api_.get)>(::dlsym(handle_, "nixl_test_record_get"));
        api_.tableCheck = reinterpret_cast<decltype(api_.tableCheck)>(
            ::dlsym(handle_, "nixl_test_record_table_check"));
        api_.clear =
            reinterpret_cast<decltype(api_.clear)>(::dlsym(handle_, "nixl_test_record_clear"));
        ASSERT_TRUE(api_.count && api_.get && api_.tableCheck && api_.clear);
    }

    static void
    TearDownTestSuite() {
        // The library stays loaded (the loader never unloads plugins); the links can go.
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    void
    SetUp() override {
        ASSERT_NE(nullptr, api_.clear);
        api_.clear();
    }

    /** Everything the record exporter saw from an agent. */
    static std::vector<rec>
    records(const std::string &agent) {
        std::vector<rec> out;
        const size_t n = api_.count(agent.c_str());
        for (size_t i = 0; i < n; ++i) {
            rec r{};
            if (api_.get(agent.c_str(), i, &r.kind, &r.type, &r.value) == 0) {
                out.push_back(r);
            }
        }
        return out;
    }

    /** Only the events, as (type, value). */
    static std::vector<std::pair<type_t, uint64_t>>
    events(const std::string &agent) {
        std::vector<std::pair<type_t, uint64_t>> out;
        for (const auto &r : records(agent)) {
            if (r.kind == 1) {
                out.emplace_back(static_cast<type_t>(r.type), r.value);
            }
        }
        return out;
    }

    static std::vector<std::pair<type_t, uint64_t>>
    only(const std::vector<std::pair<type_t, uint64_t>> &all, std::initializer_list<type_t> types) {
        std::vector<std::pair<type_t, uint64_t>> out;
        for (const auto &e : all) {
            if (std::find(types.begin(), types.end(), e.first) != types.end()) {
                out.push_back(e);
            }
        }
        return out;
    }

    /** A telemetry agent with the TEST backend and one registered buffer, MD sent to peer. */
    std::unique_ptr<nixlAgent>
    telemetryAgent(const std::string &name,
                   testBuffer &buf,
                   const nixl_b_params_t &params = {},
                   bool capture = true) {
        auto a = makeAgent(name, agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, capture));
        EXPECT_EQ(NIXL_SUCCESS, addTest(*a, params));
        EXPECT_EQ(NIXL_SUCCESS, a->registerMem(regList({buf.desc()})));
        return a;
    }

    /** B: a plain peer agent without telemetry holding peer_, its MD loaded into `into`. */
    void
    makePeer(nixlAgent &into) {
        peer_ = makeAgent("B");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*peer_));
        ASSERT_EQ(NIXL_SUCCESS, peer_->registerMem(regList({peerBuf_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*peer_, into));
    }

    static std::string dir_;
    static void *handle_;
    static recorderApi api_;

    // The environment scopes come first so that peer_ (and every agent) is gone before the
    // variables are put back.
    cleanTelemetryEnv clean_;
    scopedEnv pluginDir_{"NIXL_PLUGIN_DIR", dir_.c_str()};
    scopedEnv exporter_{"NIXL_TELEMETRY_EXPORTER", "record"};
    testBuffer peerBuf_{4096, 9};
    std::unique_ptr<nixlAgent> peer_;
};

std::string telemetryAgentTest::dir_;
void *telemetryAgentTest::handle_ = nullptr;
recorderApi telemetryAgentTest::api_;

TEST_F(telemetryAgentTest, CompletedWriteAndReadEmitOneBatchEach) {
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0);
    makePeer(*a);
    nixlXferReqH *w = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a->createXferReq(NIXL_WRITE, xferList({a0.desc(0, 1000)}),
                               xferList({peerBuf_.desc(0, 1000)}), "B", w));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a, w));
    EXPECT_EQ(NIXL_SUCCESS, a->getXferStatus(w)); // polling a finished request adds nothing
    nixl_xfer_telem_t telem{};
    ASSERT_EQ(NIXL_SUCCESS, a->getXferTelemetry(w, telem));
    nixlXferReqH *r = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a->createXferReq(NIXL_READ, xferList({a0.desc(1000, 300), a0.desc(2000, 200)}),
                               xferList({peerBuf_.desc(0, 300), peerBuf_.desc(500, 200)}), "B",
                               r));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a, r));
    EXPECT_TRUE(sameBytes(a0, 2000, peerBuf_, 500, 200));
    ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(w));
    ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(r));
    a.reset(); // final flush

    const auto ev = events("A");
    ASSERT_EQ(9u, ev.size());
    EXPECT_EQ(std::make_pair(type_t::AGENT_MEMORY_REGISTERED, uint64_t{4096}), ev[0]);
    // WRITE: post time, transfer time, TX bytes, one TX request.
    EXPECT_EQ(type_t::AGENT_XFER_POST_TIME, ev[1].first);
    EXPECT_EQ(uint64_t(telem.postDuration.count()), ev[1].second);
    EXPECT_EQ(type_t::AGENT_XFER_TIME, ev[2].first);
    EXPECT_EQ(uint64_t(telem.xferDuration.count()), ev[2].second);
    EXPECT_GE(ev[2].second, ev[1].second);
    EXPECT_EQ(std::make_pair(type_t::AGENT_TX_BYTES, uint64_t{1000}), ev[3]);
    EXPECT_EQ(std::make_pair(type_t::AGENT_TX_REQUESTS_NUM, uint64_t{1}), ev[4]);
    // READ: RX side, both descriptors' bytes.
    EXPECT_EQ(type_t::AGENT_XFER_POST_TIME, ev[5].first);
    EXPECT_EQ(type_t::AGENT_XFER_TIME, ev[6].first);
    EXPECT_EQ(std::make_pair(type_t::AGENT_RX_BYTES, uint64_t{500}), ev[7]);
    EXPECT_EQ(std::make_pair(type_t::AGENT_RX_REQUESTS_NUM, uint64_t{1}), ev[8]);

    // Exporter lifecycle: created first (with the whole table), destroyed last.
    const auto all = records("A");
    EXPECT_EQ(3u, all.front().kind);
    EXPECT_EQ(nixl_telemetry_event_type_count, all.front().type);
    EXPECT_EQ(4096u, all.front().value);
    EXPECT_EQ(4u, all.back().kind);
    char why[256];
    ASSERT_EQ(0, api_.tableCheck("A", why, sizeof(why)));
    EXPECT_STREQ("", why);
    // The peer has telemetry off: nothing from it.
    EXPECT_TRUE(records("B").empty());
}

TEST_F(telemetryAgentTest, AsyncCompletionIsCountedOnce) {
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0, {{"async", "true"}, {"async_polls", "3"}});
    makePeer(*a);
    nixlXferReqH *w = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({a0.desc(0, 64)}),
                                             xferList({peerBuf_.desc(0, 64)}), "B", w));
    for (int round = 0; round < 2; ++round) { // a repost after completion counts again
        ASSERT_EQ(NIXL_IN_PROG, a->postXferReq(w));
        ASSERT_EQ(NIXL_SUCCESS, waitXfer(*a, w));
        EXPECT_EQ(NIXL_SUCCESS, a->getXferStatus(w));
    }
    a.reset();
    const auto tx = only(events("A"), {type_t::AGENT_TX_BYTES, type_t::AGENT_TX_REQUESTS_NUM,
                                       type_t::AGENT_XFER_TIME});
    ASSERT_EQ(6u, tx.size());
    EXPECT_EQ(std::make_pair(type_t::AGENT_TX_BYTES, uint64_t{64}), tx[1]);
    EXPECT_EQ(std::make_pair(type_t::AGENT_TX_REQUESTS_NUM, uint64_t{1}), tx[5]);
}

TEST_F(telemetryAgentTest, PeriodicFlushDeliversWhileTheAgentLives) {
    scopedEnv interval("NIXL_TELEMETRY_RUN_INTERVAL", "1");
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0);
    EXPECT_TRUE(waitFor([&] {
        return !only(events("A"), {type_t::AGENT_MEMORY_REGISTERED}).empty();
    }));
    ASSERT_EQ(NIXL_SUCCESS, a->deregisterMem(regList({a0.desc()})));
    EXPECT_TRUE(waitFor([&] {
        return only(events("A"), {type_t::AGENT_MEMORY_DEREGISTERED}) ==
            std::vector<std::pair<type_t, uint64_t>>{{type_t::AGENT_MEMORY_DEREGISTERED, 4096}};
    }));
}

TEST_F(telemetryAgentTest, ErrorsOfEachCallEmitTheirStatus) {
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0, {{"fail_post_at", "1"}});
    makePeer(*a);
    {
        stderrCapture quiet; // every failure below logs its ERROR line
        nixlXferReqH *req = nullptr;
        // createXferReq: unknown agent.
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->createXferReq(NIXL_WRITE, xferList({a0.desc(0, 8)}),
                                                       xferList({peerBuf_.desc(0, 8)}), "Z", req));
        // prepXferDlist: unknown agent.
        nixlDlistH *dl = nullptr;
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->prepXferDlist("Z", xferList({a0.desc(0, 8)}), dl));
        // makeXferReq: null handles.
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM,
                  a->makeXferReq(NIXL_WRITE, nullptr, {0}, nullptr, {0}, req));
        // estimateXferCost: null request.
        std::chrono::microseconds d{}, m{};
        nixl_cost_t method{};
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->estimateXferCost(nullptr, d, m, method));
        // getXferStatus before any post: NOT_POSTED, once however often it is asked.
        ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({a0.desc(0, 8)}),
                                                 xferList({peerBuf_.desc(0, 8)}), "B", req));
        EXPECT_EQ(NIXL_ERR_NOT_POSTED, a->getXferStatus(req));
        EXPECT_EQ(NIXL_ERR_NOT_POSTED, a->getXferStatus(req));
        // postXferReq: the backend fails the first post; polling the failure adds nothing.
        EXPECT_EQ(NIXL_ERR_BACKEND, a->postXferReq(req));
        EXPECT_EQ(NIXL_ERR_BACKEND, a->getXferStatus(req));
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->postXferReq(nullptr));
        EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->getXferStatus(nullptr));
        // A successful second post.
        EXPECT_EQ(NIXL_SUCCESS, a->postXferReq(req));
        EXPECT_EQ(NIXL_SUCCESS, a->releaseXferReq(req));
    }
    a.reset();
    const auto errors =
        only(events("A"), {type_t::AGENT_ERR_NOT_FOUND, type_t::AGENT_ERR_INVALID_PARAM,
                           type_t::AGENT_ERR_NOT_POSTED, type_t::AGENT_ERR_BACKEND});
    const std::vector<std::pair<type_t, uint64_t>> expect = {
        {type_t::AGENT_ERR_NOT_FOUND, 1},     {type_t::AGENT_ERR_NOT_FOUND, 1},
        {type_t::AGENT_ERR_INVALID_PARAM, 1}, {type_t::AGENT_ERR_INVALID_PARAM, 1},
        {type_t::AGENT_ERR_NOT_POSTED, 1},    {type_t::AGENT_ERR_BACKEND, 1},
        {type_t::AGENT_ERR_INVALID_PARAM, 1}, {type_t::AGENT_ERR_INVALID_PARAM, 1},
    };
    EXPECT_EQ(expect, errors);
    EXPECT_EQ(1u, only(events("A"), {type_t::AGENT_TX_REQUESTS_NUM}).size());
}

TEST_F(telemetryAgentTest, RemoteDisconnectIsCounted) {
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0, {{"disconnect_after", "1"}});
    makePeer(*a);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({a0.desc(0, 8)}),
                                             xferList({peerBuf_.desc(0, 8)}), "B", req));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a, req));
    {
        stderrCapture quiet;
        EXPECT_EQ(NIXL_ERR_REMOTE_DISCONNECT, a->postXferReq(req));
        EXPECT_EQ(NIXL_ERR_REMOTE_DISCONNECT, a->getXferStatus(req));
    }
    a.reset();
    EXPECT_EQ(1u, only(events("A"), {type_t::AGENT_ERR_REMOTE_DISCONNECT}).size());
    EXPECT_EQ(1u, only(events("A"), {type_t::AGENT_TX_REQUESTS_NUM}).size());
}

TEST_F(telemetryAgentTest, AllowlistKeepsOnlyMatchingEvents) {
    scopedEnv metrics("NIXL_TELEMETRY_ENABLED_METRICS", "agent_tx_*");
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0);
    makePeer(*a);
    nixlXferReqH *w = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({a0.desc(0, 100)}),
                                             xferList({peerBuf_.desc(0, 100)}), "B", w));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a, w));
    a.reset();
    const std::vector<std::pair<type_t, uint64_t>> expect = {{type_t::AGENT_TX_BYTES, 100},
                                                             {type_t::AGENT_TX_REQUESTS_NUM, 1}};
    EXPECT_EQ(expect, events("A"));
}

// With no transfer event enabled, a post that completes inline is still timed for
// getXferTelemetry: the pipeline reads the post's return time whether or not it records events.
TEST_F(telemetryAgentTest, InlinePostIsTimedWithNoTransferEventEnabled) {
    scopedEnv metrics("NIXL_TELEMETRY_ENABLED_METRICS", "agent_err_*");
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0);
    makePeer(*a);
    nixlXferReqH *w = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({a0.desc(0, 100)}),
                                             xferList({peerBuf_.desc(0, 100)}), "B", w));
    const auto before = std::chrono::steady_clock::now();
    ASSERT_EQ(NIXL_SUCCESS, a->postXferReq(w)); // the TEST backend completes inside the post
    nixl_xfer_telem_t telem{};
    ASSERT_EQ(NIXL_SUCCESS, a->getXferTelemetry(w, telem));
    // An unset return time (0) would make the durations wrap to centuries.
    EXPECT_LT(telem.postDuration, std::chrono::hours(1));
    EXPECT_EQ(telem.postDuration, telem.xferDuration); // the return is the completion
    EXPECT_GT(telem.startTime, before - std::chrono::hours(1));
    EXPECT_EQ(100u, telem.totalBytes);
    ASSERT_EQ(NIXL_SUCCESS, a->releaseXferReq(w));
    a.reset();
    EXPECT_TRUE(only(events("A"), {type_t::AGENT_XFER_POST_TIME, type_t::AGENT_XFER_TIME,
                                   type_t::AGENT_TX_BYTES, type_t::AGENT_TX_REQUESTS_NUM})
                    .empty());
}

TEST_F(telemetryAgentTest, EnableVariableOverridesTheConfig) {
    testBuffer a0(4096, 1);
    {
        scopedEnv e("NIXL_TELEMETRY_ENABLE", "yes");
        telemetryAgent("on-by-env", a0, {}, false).reset();
    }
    {
        scopedEnv e("NIXL_TELEMETRY_ENABLE", "off");
        stderrCapture cap;
        telemetryAgent("off-by-env", a0, {}, true).reset();
        const auto w = logLines(cap.stop(), 'W');
        ASSERT_EQ(1u, w.size());
        EXPECT_NE(std::string::npos, w[0].find("captureTelemetry is ignored"));
    }
    telemetryAgent("on-by-config", a0, {}, true).reset();
    telemetryAgent("off-by-default", a0, {}, false).reset();
    EXPECT_FALSE(records("on-by-env").empty());
    EXPECT_TRUE(records("off-by-env").empty());
    EXPECT_FALSE(records("on-by-config").empty());
    EXPECT_TRUE(records("off-by-default").empty());
}

TEST_F(telemetryAgentTest, SettingsAreNotReadWhenTelemetryIsOff) {
    scopedEnv size("NIXL_TELEMETRY_BUFFER_SIZE", "0");
    scopedEnv exp("NIXL_TELEMETRY_EXPORTER", "nosuch");
    EXPECT_NO_THROW(nixlAgent("A", agentConfig()));
}

/** Agent construction with telemetry on must throw E whose text has every needle, after
 *  exactly one ERROR line. */
template<typename E>
void
expectAgentThrows(std::initializer_list<std::string> needles) {
    stderrCapture cap;
    try {
        nixlAgent agent("A", agentConfig(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, true));
        ADD_FAILURE() << "the agent was constructed";
    }
    catch (const E &e) {
        const std::string what = e.what();
        for (const auto &n : needles) {
            EXPECT_NE(std::string::npos, what.find(n)) << what;
        }
    }
    catch (const std::exception &e) {
        ADD_FAILURE() << "wrong exception type: " << e.what();
    }
    const std::string log = cap.stop();
    EXPECT_EQ(1u, logLines(log, 'E').size()) << log;
}

TEST_F(telemetryAgentTest, MisconfigurationFailsConstruction) {
    {
        scopedEnv e("NIXL_TELEMETRY_EXPORTER", "nosuch");
        expectAgentThrows<std::runtime_error>(
            {"agent A", "NIXL_TELEMETRY_EXPORTER=nosuch", "libtelemetry_exporter_nosuch.so"});
    }
    {
        scopedEnv e("NIXL_TELEMETRY_EXPORTER", "noops");
        expectAgentThrows<std::runtime_error>(
            {"agent A", "NIXL_TELEMETRY_EXPORTER=noops", "no operations table"});
    }
    {
        scopedEnv e("NIXL_TELEMETRY_EXPORTER", "x/y");
        expectAgentThrows<std::invalid_argument>({"agent A", "NIXL_TELEMETRY_EXPORTER=x/y"});
    }
    {
        scopedEnv e("NIXL_TELEMETRY_BUFFER_SIZE", "0");
        expectAgentThrows<std::invalid_argument>({"agent A", "NIXL_TELEMETRY_BUFFER_SIZE=0"});
    }
    {
        scopedEnv e("NIXL_TELEMETRY_BUFFER_SIZE", "many");
        expectAgentThrows<std::invalid_argument>({"NIXL_TELEMETRY_BUFFER_SIZE=many"});
    }
    {
        scopedEnv e("NIXL_TELEMETRY_RUN_INTERVAL", "0");
        expectAgentThrows<std::invalid_argument>({"agent A", "NIXL_TELEMETRY_RUN_INTERVAL=0"});
    }
    {
        scopedEnv e("NIXL_TELEMETRY_ENABLE", "perhaps");
        expectAgentThrows<std::invalid_argument>({"agent A", "NIXL_TELEMETRY_ENABLE=perhaps"});
    }
    {
        // The exporter's create fails: the SDK logs the cause once, core throws.
        scopedEnv e("NIXL_TEST_RECORD_CREATE", "fail");
        expectAgentThrows<std::runtime_error>(
            {"agent A", "NIXL_TELEMETRY_EXPORTER=record", "failed to start"});
    }
}

TEST_F(telemetryAgentTest, ExporterThatDeclinesLeavesAWorkingAgent) {
    scopedEnv e("NIXL_TEST_RECORD_CREATE", "unavailable");
    testBuffer a0(4096, 1);
    stderrCapture cap;
    auto a = telemetryAgent("A", a0);
    const std::string log = cap.stop();
    // The exporter's own line (the cause) and core's (the consequence); no error.
    EXPECT_TRUE(logLines(log, 'E').empty()) << log;
    size_t core_lines = 0;
    for (const auto &l : logLines(log, 'W')) {
        core_lines += l.find("declined to run") != std::string::npos ? 1 : 0;
    }
    EXPECT_EQ(1u, core_lines) << log;
    makePeer(*a);
    nixlXferReqH *w = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a->createXferReq(NIXL_WRITE, xferList({a0.desc(0, 100)}),
                                             xferList({peerBuf_.desc(0, 100)}), "B", w));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a, w));
    nixl_xfer_telem_t telem{};
    EXPECT_EQ(NIXL_SUCCESS, a->getXferTelemetry(w, telem)); // per-request telemetry still on
    EXPECT_EQ(100u, telem.totalBytes);
    a.reset();
    EXPECT_TRUE(records("A").empty());
}

TEST_F(telemetryAgentTest, RefusedEventsShowUpAsDropped) {
    // The first export_events call (the registration event) is refused; a later flush reports
    // the loss.
    scopedEnv refuse("NIXL_TEST_RECORD_REFUSE", "1");
    scopedEnv interval("NIXL_TELEMETRY_RUN_INTERVAL", "1");
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0);
    const std::vector<std::pair<type_t, uint64_t>> expect = {
        {type_t::AGENT_TELEMETRY_EVENTS_DROPPED, 1}};
    EXPECT_TRUE(waitFor([&] { return events("A") == expect; }));
    a.reset();
    EXPECT_EQ(expect, events("A"));
}

// --- exporters that break the contract (issue 29 item 10) --------------------------------

void *
brokenPlugin() {
    // The loader opened (or will open) the same file: the same object and state.
    static void *h = ::dlopen((std::string(std::getenv("NIXL_TEST_TELEMETRY_PLUGIN_DIR")) +
                               "/libtelemetry_exporter_broken.so")
                                  .c_str(),
                              RTLD_NOW);
    return h;
}

TEST_F(telemetryAgentTest, ExporterCreateThatThrowsIsNamedInTheError) {
    scopedEnv e("NIXL_TELEMETRY_EXPORTER", "broken");
    scopedEnv m("NIXL_TEST_BROKEN_MODE", "create_throws");
    expectAgentThrows<std::runtime_error>({"agent A", "telemetry exporter broken",
                                           "create threw across the plugin ABI",
                                           "broken exporter: create throws\\x1b[31m on request"});
}

TEST_F(telemetryAgentTest, ExporterDestroyThatThrowsIsLoggedNotFatal) {
    scopedEnv e("NIXL_TELEMETRY_EXPORTER", "broken");
    scopedEnv m("NIXL_TEST_BROKEN_MODE", "destroy_throws");
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0);
    stderrCapture cap;
    a.reset(); // before the fix: std::terminate
    const std::string log = cap.stop();
    const auto errors = logLines(log, 'E');
    ASSERT_EQ(1u, errors.size()) << log;
    EXPECT_NE(std::string::npos,
              errors[0].find("destroy threw across the plugin ABI: broken exporter: destroy "
                             "throws on request"))
        << log;
}

TEST_F(telemetryAgentTest, ExporterBlockedInExportIsAbandonedAtDestruction) {
    void *h = brokenPlugin();
    ASSERT_NE(nullptr, h) << ::dlerror();
    auto wait_blocked = reinterpret_cast<int (*)()>(::dlsym(h, "nixl_test_broken_wait_blocked"));
    auto release = reinterpret_cast<int (*)()>(::dlsym(h, "nixl_test_broken_release"));
    ASSERT_TRUE(wait_blocked && release);
    scopedEnv e("NIXL_TELEMETRY_EXPORTER", "broken");
    scopedEnv m("NIXL_TEST_BROKEN_MODE", "export_blocks");
    scopedEnv interval("NIXL_TELEMETRY_RUN_INTERVAL", "1");
    testBuffer a0(4096, 1);
    auto a = telemetryAgent("A", a0); // the registration event is exported, and blocks
    ASSERT_EQ(1, wait_blocked());
    stderrCapture cap;
    const auto t0 = std::chrono::steady_clock::now();
    a.reset(); // before the fix: forever
    const auto took = std::chrono::steady_clock::now() - t0;
    const std::string log = cap.stop();
    // The bound is 1 s (nixl_telemetry_shutdown_wait); 8 s leaves a loaded machine 7 s of
    // margin for what is two condition-variable waits, where the bug never returns at all.
    EXPECT_LT(took, std::chrono::seconds(8));
    const auto errors = logLines(log, 'E');
    ASSERT_EQ(1u, errors.size()) << log;
    EXPECT_NE(std::string::npos, errors[0].find("abandoned")) << log;
    // The abandoned call returns later, still reading the events it was given (ASan checks
    // that they are alive), and its thread then ends without touching the agent.
    EXPECT_EQ(1, release());
}

} // namespace
} // namespace nixl_telemetry_test
