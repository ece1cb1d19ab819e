/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Election outcomes and failover (nixlMpEndpoint), configuration and directory rules, and the
// plugin through its C entry point and operations table.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include "mp_exporter.h"
#include "mp_test_utils.h"
#include "nixl_plugin_sdk_common.h"

using namespace nixlPromMp;

namespace {

/** The classes compiled into this binary log through the same capture as the plugin. */
class logEnvironment : public ::testing::Environment {
public:
    void
    SetUp() override {
        nixlSdk::coreServices().store(mpTest::globalLog().services());
    }
};

const auto *const kLogEnv = ::testing::AddGlobalTestEnvironment(new logEnvironment);

bool
lockIsFree(const std::string &path) {
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) {
        return true;
    }
    const bool free = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return free;
}

class PromMpElection : public ::testing::Test {
protected:
    std::shared_ptr<nixlMpEndpoint>
    endpoint(uint16_t port) {
        auto c = std::make_shared<nixlMpCollector>(dir_.path(), schema_, 30);
        return std::make_shared<nixlMpEndpoint>(dir_.path(), "127.0.0.1", port, c);
    }

    std::shared_ptr<const nixlMpSchema> schema_ =
        std::make_shared<const nixlMpSchema>(mpTest::eventTable());
    mpTest::tempDir dir_;
};

} // namespace

TEST_F(PromMpElection, FirstServesSecondSeesSibling) {
    const uint16_t port = mpTest::freePort();
    auto a = endpoint(port);
    auto b = endpoint(port);
    EXPECT_EQ(a->elect(), nixlMpElection::SERVING);
    EXPECT_EQ(a->boundPort(), port);
    EXPECT_EQ(b->elect(), nixlMpElection::SIBLING_OWNS);
    EXPECT_EQ(b->boundPort(), 0);
    std::string status;
    const auto body = mpTest::httpGet(port, "/metrics", &status);
    ASSERT_TRUE(body.has_value());
    EXPECT_NE(status.find("200"), std::string::npos) << status;
    EXPECT_NE(body->find(kOwnerPidMetric), std::string::npos);
    mpTest::httpGet(port, "/other", &status);
    EXPECT_NE(status.find("404"), std::string::npos) << status;
}

TEST_F(PromMpElection, ReElectingWhileServingKeepsTheLock) {
    const uint16_t port = mpTest::freePort();
    auto a = endpoint(port);
    ASSERT_EQ(a->elect(), nixlMpElection::SERVING);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(a->elect(), nixlMpElection::SERVING);
        EXPECT_EQ(a->maybeElect(), nixlMpElection::SERVING);
    }
    EXPECT_FALSE(lockIsFree(a->lockPath()));
    EXPECT_TRUE(mpTest::httpGet(port).has_value());
    EXPECT_EQ(endpoint(port)->elect(), nixlMpElection::SIBLING_OWNS);
}

TEST_F(PromMpElection, PortHeldFromOutsideConcedesAndFreesTheEndpoint) {
    const uint16_t port = mpTest::freePort();
    const int held = mpTest::holdPort(port);
    ASSERT_GE(held, 0);
    auto a = endpoint(port);
    mpTest::globalLog().clear();
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(a->elect(), nixlMpElection::PORT_TAKEN);
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, "cannot bind"), 1u)
        << mpTest::globalLog().all();
    // Conceded: the lock is free for a sibling.
    EXPECT_TRUE(lockIsFree(a->lockPath()));
    close(held);
    // Backing off: even with the port free again, no retry before the backoff has passed.
    const nixlMpElection again = a->maybeElect();
    if (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4)) {
        EXPECT_EQ(again, nixlMpElection::PORT_TAKEN);
        EXPECT_EQ(a->boundPort(), 0);
    }
    a.reset();
    auto b = endpoint(port);
    EXPECT_EQ(b->elect(), nixlMpElection::SERVING);
    EXPECT_EQ(endpoint(port)->elect(), nixlMpElection::SIBLING_OWNS);
}

TEST_F(PromMpElection, WriterPromotesItselfWhenTheOwnerExits) {
    const uint16_t port = mpTest::freePort();
    auto a = endpoint(port);
    auto b = endpoint(port);
    ASSERT_EQ(a->elect(), nixlMpElection::SERVING);
    ASSERT_EQ(b->elect(), nixlMpElection::SIBLING_OWNS);
    a.reset();
    EXPECT_TRUE(mpTest::waitFor([&] { return b->maybeElect() == nixlMpElection::SERVING; }));
    EXPECT_TRUE(mpTest::httpGet(port).has_value());
}

TEST_F(PromMpElection, UnusableLockFileFallsBackToTheBind) {
    const uint16_t port = mpTest::freePort();
    auto a = endpoint(port);
    // A directory where the lock file should be: not a regular file.
    ASSERT_EQ(mkdir(a->lockPath().c_str(), 0700), 0);
    mpTest::globalLog().clear();
    EXPECT_EQ(a->elect(), nixlMpElection::SERVING);
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, "unusable"), 1u);
    auto b = endpoint(port);
    EXPECT_EQ(b->elect(), nixlMpElection::SIBLING_OWNS);
}

TEST_F(PromMpElection, SecondOwnerOnAnotherPortIsReported) {
    auto a = endpoint(mpTest::freePort());
    ASSERT_EQ(a->elect(), nixlMpElection::SERVING);
    auto b = endpoint(mpTest::freePort());
    mpTest::globalLog().clear();
    ASSERT_EQ(b->elect(), nixlMpElection::SERVING);
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, "disagree"), 1u)
        << mpTest::globalLog().all();
}

// ---- configuration and directory ----

TEST(PromMpConfig, DefaultsAndOverrides) {
    mpTest::envGuard env;
    env.set(kDirVar, "/tmp/somewhere/");
    for (const char *v : {kPortVar, kLocalVar, kTtlVar, kRankEnvVar, nixlProm::kBucketsVar}) {
        env.unset(v);
    }
    env.unset("LOCAL_RANK");
    nixlMpConfig c = parseConfig();
    EXPECT_EQ(c.dir, "/tmp/somewhere");
    EXPECT_EQ(c.addr, "0.0.0.0");
    EXPECT_EQ(c.port, 9090);
    EXPECT_EQ(c.ttlSeconds, 30.0);
    EXPECT_EQ(c.boundsUs, nixlProm::defaultBucketBoundsUs());
    EXPECT_FALSE(c.localRank.has_value());

    env.set(kPortVar, "19091");
    env.set(kLocalVar, "true");
    env.set(kTtlVar, "1.5");
    env.set("LOCAL_RANK", "5");
    c = parseConfig();
    EXPECT_EQ(c.port, 19091);
    EXPECT_EQ(c.addr, "127.0.0.1");
    EXPECT_EQ(c.ttlSeconds, 1.5);
    EXPECT_EQ(c.localRank, "5");

    env.set(kRankEnvVar, "MY_RANK");
    env.set("MY_RANK", "7");
    EXPECT_EQ(parseConfig().localRank, "7");
}

// NIXL's boolean words and the one port rule (1..65535) shared with every NIXL_* option.
TEST(PromMpConfig, NixlBooleanWordsAndPortRule) {
    mpTest::envGuard env;
    env.set(kDirVar, "/tmp/x");
    for (const char *w : {"y", "Enable", "ON"}) {
        env.set(kLocalVar, w);
        EXPECT_EQ(parseConfig().addr, "127.0.0.1") << w;
    }
    for (const char *w : {"n", "DISABLE", "off"}) {
        env.set(kLocalVar, w);
        EXPECT_EQ(parseConfig().addr, "0.0.0.0") << w;
    }
    env.set(kPortVar, "0");
    EXPECT_THROW(parseConfig(), std::runtime_error);
}

TEST(PromMpConfig, BadValuesNameTheVariableAndValue) {
    mpTest::envGuard env;
    env.set(kDirVar, "/tmp/x");
    auto expectBad = [&](const char *var, const char *value) {
        mpTest::envGuard inner;
        inner.set(var, value);
        try {
            parseConfig();
            ADD_FAILURE() << var << "=" << value << " accepted";
        }
        catch (const std::runtime_error &e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(var), std::string::npos) << what;
            EXPECT_NE(what.find(value), std::string::npos) << what;
        }
    };
    expectBad(kPortVar, "70000");
    expectBad(kPortVar, "http");
    expectBad(kLocalVar, "maybe");
    expectBad(kTtlVar, "-1");
    expectBad(kTtlVar, "soon");
    expectBad(nixlProm::kBucketsVar, "10,5");
    std::string many;
    for (int i = 1; i <= 33; ++i) {
        many += (i > 1 ? "," : "") + std::to_string(i);
    }
    expectBad(nixlProm::kBucketsVar, many.c_str());
    env.unset(kDirVar);
    try {
        parseConfig();
        ADD_FAILURE() << "missing directory accepted";
    }
    catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find(kDirVar), std::string::npos) << e.what();
    }
}

TEST(PromMpDir, CreatedDirectoryIsPrivate) {
    mpTest::tempDir base;
    const std::string dir = base.path() + "/new/sub";
    ASSERT_FALSE(std::filesystem::exists(dir));
    const mode_t old = umask(0);
    prepareDir(dir);
    umask(old);
    struct stat st{};
    ASSERT_EQ(stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST(PromMpDir, LooseOrForeignDirectoriesWarn) {
    for (mode_t mode : {0720, 0702}) {
        mpTest::tempDir base;
        const std::string dir = base.path() + "/loose";
        ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
        ASSERT_EQ(chmod(dir.c_str(), mode), 0);
        mpTest::globalLog().clear();
        prepareDir(dir);
        EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, dir), 1u)
            << std::oct << mode << "\n"
            << mpTest::globalLog().all();
        struct stat st{};
        ASSERT_EQ(stat(dir.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, mode) << "an existing directory is left alone";
    }
    mpTest::tempDir base;
    mpTest::globalLog().clear();
    prepareDir(base.path());
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, base.path()), 0u);
    if (geteuid() == 0) {
        ASSERT_EQ(chown(base.path().c_str(), 65534, 65534), 0);
        prepareDir(base.path());
        EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, "owned by uid 65534"), 1u);
    }
}

TEST(PromMpDir, NotADirectoryFails) {
    mpTest::tempDir base;
    const std::string file = base.path() + "/file";
    close(open(file.c_str(), O_CREAT | O_WRONLY, 0600));
    EXPECT_THROW(prepareDir(file), std::runtime_error);
}

// ---- the plugin through its C ABI ----

class PromMpPlugin : public ::testing::Test {
protected:
    void
    SetUp() override {
        ASSERT_NE(plugin().plugin(), nullptr) << plugin().path() << ": " << plugin().error();
        env_.set(kDirVar, dir_.path());
        port_ = mpTest::freePort();
        env_.set(kPortVar, std::to_string(port_));
        env_.set(kLocalVar, "1");
        env_.unset(kTtlVar);
        env_.unset(kRankEnvVar);
        env_.unset("LOCAL_RANK");
        env_.unset(nixlProm::kBucketsVar);
    }

    static const mpTest::pluginHandle &
    plugin() {
        static mpTest::pluginHandle h;
        return h;
    }

    const nixl_telemetry_exporter_ops_t &
    ops() const {
        return *plugin().plugin()->ops;
    }

    mpTest::envGuard env_;
    mpTest::tempDir dir_;
    uint16_t port_ = 0;
};

TEST_F(PromMpPlugin, DescriptorNamesThePlugin) {
    const auto *p = plugin().plugin();
    EXPECT_EQ(p->hdr.abi_version, NIXL_TELEMETRY_EXPORTER_ABI_VERSION);
    EXPECT_EQ(p->hdr.kind, static_cast<uint32_t>(NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER));
    EXPECT_STREQ(p->hdr.name, "prometheus_mp");
    EXPECT_STREQ(p->hdr.version, "1.0.0");
    EXPECT_GE(p->ops->size, sizeof(nixl_telemetry_exporter_ops_t));
}

TEST_F(PromMpPlugin, ExportsThroughTheOwnerEndpoint) {
    env_.set("LOCAL_RANK", "4");
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(plugin().create(mpTest::globalLog(), "abi-agent", &e), NIXL_PLUGIN_SUCCESS)
        << mpTest::globalLog().all();
    const nixl_telemetry_event_abi_t events[] = {
        {mpTest::kTx, 0, 1000}, {mpTest::kTxReq, 0, 1}, {mpTest::kXferTime, 0, 20}};
    ops().batch_begin(e);
    EXPECT_EQ(ops().export_events(e, events, 3), NIXL_PLUGIN_SUCCESS);
    ops().batch_end(e);
    const auto text = mpTest::httpGet(port_);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(mpTest::sampleValue(*text,
                                  "agent_tx_bytes_total",
                                  {"agent_name=\"abi-agent\"", "local_rank=\"4\""}),
              1000.0)
        << *text;
    EXPECT_EQ(mpTest::sampleValue(*text, "agent_xfer_time_seconds_count"), 1.0);
    std::string out;
    EXPECT_EQ(mpTest::promtoolCheck(*text, &out), 0) << out;
    EXPECT_EQ(out, "");
    ops().destroy(e);
    EXPECT_FALSE(mpTest::httpGet(port_).has_value()) << "the endpoint closes with its last agent";
}

// Issue 34: the path in the reserved word of the transfer events becomes per-path series with
// bounded labels; a fallback marker (a request event of value 0 with a reason) counts once and
// leaves the request total alone; a path or reason newer than the plugin stays in the totals.
TEST_F(PromMpPlugin, PathsAndFallbacksBecomeLabelledCountersPromtoolClean) {
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(plugin().create(mpTest::globalLog(), "paths", &e), NIXL_PLUGIN_SUCCESS)
        << mpTest::globalLog().all();
    constexpr uint32_t kRx = 1, kRxReq = 3;
    const uint32_t fb = NIXL_XFER_PATH_UCX_UCP |
        (NIXL_PATH_FALLBACK_PEER_OTHER_HOST << NIXL_TELEMETRY_FALLBACK_SHIFT);
    const nixl_telemetry_event_abi_t events[] = {
        {mpTest::kTx, NIXL_XFER_PATH_UCX_DIRECT_CMA, 100},
        {mpTest::kTxReq, NIXL_XFER_PATH_UCX_DIRECT_CMA, 1},
        {mpTest::kTxReq, fb, 0},
        {mpTest::kTx, NIXL_XFER_PATH_UCX_UCP, 40},
        {mpTest::kTxReq, NIXL_XFER_PATH_UCX_UCP, 1},
        {kRx, NIXL_XFER_PATH_LIBFABRIC_SHM, 7},
        {kRxReq, NIXL_XFER_PATH_LIBFABRIC_SHM, 1},
        {kRx, NIXL_XFER_PATH_POSIX_URING, 9},
        {kRxReq, NIXL_XFER_PATH_POSIX_URING, 1},
        {mpTest::kTx, 200, 5}, // a path this plugin does not know
        {mpTest::kTxReq, 200, 1},
    };
    ops().batch_begin(e);
    EXPECT_EQ(ops().export_events(e, events, std::size(events)), NIXL_PLUGIN_SUCCESS);
    ops().batch_end(e);
    const auto text = mpTest::httpGet(port_);
    ASSERT_TRUE(text.has_value());
    auto v = [&](const char *name, std::vector<std::string> needles) {
        return mpTest::sampleValue(*text, name, needles);
    };
    EXPECT_EQ(v("agent_path_tx_bytes_total", {"backend=\"UCX\"", "path=\"direct_cma\""}), 100.0)
        << *text;
    EXPECT_EQ(v("agent_path_tx_bytes_total", {"backend=\"UCX\"", "path=\"ucp\""}), 40.0);
    EXPECT_EQ(v("agent_path_tx_requests_total", {"path=\"ucp\""}), 1.0);
    EXPECT_EQ(v("agent_path_rx_bytes_total", {"backend=\"LIBFABRIC\"", "path=\"shm\""}), 7.0);
    EXPECT_EQ(v("agent_path_rx_bytes_total", {"backend=\"POSIX\"", "path=\"uring\""}), 9.0);
    EXPECT_EQ(v("agent_path_rx_requests_total", {"path=\"uring\""}), 1.0);
    EXPECT_EQ(v("agent_path_fallbacks_total", {"backend=\"UCX\"", "reason=\"peer_other_host\""}),
              1.0);
    EXPECT_EQ(mpTest::countLines(*text, "agent_path_fallbacks_total{"), 1u);
    // Totals: every event, the unknown path's included; the fallback marker adds 0.
    EXPECT_EQ(v("agent_tx_bytes_total", {}), 145.0);
    EXPECT_EQ(v("agent_tx_requests_total", {}), 3.0);
    EXPECT_EQ(mpTest::countLines(*text, "agent_path_tx_bytes_total{"), 2u);
    std::string out;
    EXPECT_EQ(mpTest::promtoolCheck(*text, &out), 0) << out;
    EXPECT_EQ(out, "") << *text;
    ops().destroy(e);
}

TEST_F(PromMpPlugin, UnknownEventTypesAreIgnoredWithOneWarning) {
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(plugin().create(mpTest::globalLog(), "a", &e), NIXL_PLUGIN_SUCCESS);
    mpTest::globalLog().clear();
    const nixl_telemetry_event_abi_t events[] = {{99, 0, 1}, {mpTest::kTx, 0, 5}, {100, 0, 1}};
    EXPECT_EQ(ops().export_events(e, events, 3), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().export_events(e, events, 3), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, "outside the event table"), 1u);
    const auto text = mpTest::httpGet(port_);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(mpTest::sampleValue(*text, "agent_tx_bytes_total"), 10.0);
    ops().destroy(e);
}

TEST_F(PromMpPlugin, AgentsOfOneProcessShareTheEndpoint) {
    nixl_telemetry_exporter_t *a = nullptr, *b = nullptr;
    ASSERT_EQ(plugin().create(mpTest::globalLog(), "first", &a), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(plugin().create(mpTest::globalLog(), "second", &b), NIXL_PLUGIN_SUCCESS);
    const auto text = mpTest::httpGet(port_);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(mpTest::sampleValue(*text, kStoresMetric, {"state=\"live\""}), 2.0);
    ops().destroy(a);
    EXPECT_TRUE(mpTest::httpGet(port_).has_value());
    ops().destroy(b);
}

TEST_F(PromMpPlugin, MissingDirectoryFailsCreate) {
    env_.unset(kDirVar);
    mpTest::globalLog().clear();
    nixl_telemetry_exporter_t *e = nullptr;
    const nixl_plugin_status_t st = plugin().create(mpTest::globalLog(), "a", &e);
    EXPECT_NE(st, NIXL_PLUGIN_SUCCESS);
    EXPECT_NE(st, NIXL_PLUGIN_ERR_NOT_ALLOWED) << "must fail agent construction, not degrade";
    EXPECT_EQ(e, nullptr);
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_ERROR, kDirVar), 1u)
        << mpTest::globalLog().all();
}

TEST_F(PromMpPlugin, MoreThan32BoundsFailCreate) {
    std::string many;
    for (int i = 1; i <= 33; ++i) {
        many += (i > 1 ? "," : "") + std::to_string(i * 10);
    }
    env_.set(nixlProm::kBucketsVar, many);
    mpTest::globalLog().clear();
    nixl_telemetry_exporter_t *e = nullptr;
    const nixl_plugin_status_t st = plugin().create(mpTest::globalLog(), "a", &e);
    EXPECT_NE(st, NIXL_PLUGIN_SUCCESS);
    EXPECT_NE(st, NIXL_PLUGIN_ERR_NOT_ALLOWED);
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_ERROR, nixlProm::kBucketsVar), 1u)
        << mpTest::globalLog().all();
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_ERROR, many), 1u);
}

TEST_F(PromMpPlugin, LooseDirectoriesWarnAndStillServe) {
    for (mode_t mode : {0720, 0702}) {
        const std::string dir = dir_.path() + "/mode" + std::to_string(mode);
        ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
        ASSERT_EQ(chmod(dir.c_str(), mode), 0);
        env_.set(kDirVar, dir);
        mpTest::globalLog().clear();
        nixl_telemetry_exporter_t *e = nullptr;
        ASSERT_EQ(plugin().create(mpTest::globalLog(), "loose", &e), NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, "group- or world-writable"), 1u)
            << mpTest::globalLog().all();
        const auto text = mpTest::httpGet(port_);
        ASSERT_TRUE(text.has_value());
        EXPECT_EQ(mpTest::countLines(*text, "agent_tx_bytes_total{", {"agent_name=\"loose\""}),
                  1u);
        ops().destroy(e);
    }
}

TEST_F(PromMpPlugin, CreatedDirectoryIsPrivate) {
    const std::string dir = dir_.path() + "/fresh";
    env_.set(kDirVar, dir);
    const mode_t old = umask(0022);
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(plugin().create(mpTest::globalLog(), "a", &e), NIXL_PLUGIN_SUCCESS);
    umask(old);
    struct stat st{};
    ASSERT_EQ(stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    ops().destroy(e);
}

TEST_F(PromMpPlugin, PortHeldOutsideStillGivesAWriter) {
    const int held = mpTest::holdPort(port_);
    ASSERT_GE(held, 0);
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(plugin().create(mpTest::globalLog(), "writer", &e), NIXL_PLUGIN_SUCCESS);
    const nixl_telemetry_event_abi_t ev = {mpTest::kTx, 0, 9};
    EXPECT_EQ(ops().export_events(e, &ev, 1), NIXL_PLUGIN_SUCCESS);
    // Its store is written even though nobody in this process serves it.
    auto schema = std::make_shared<const nixlMpSchema>(mpTest::eventTable());
    nixlMpCollector c(dir_.path(), schema, 30);
    EXPECT_EQ(mpTest::sampleValue(c.scrape(), "agent_tx_bytes_total", {"agent_name=\"writer\""}),
              9.0);
    ops().destroy(e);
    close(held);
}

// ---- NIXL_TELEMETRY_PROMETHEUS_NAMES ----

namespace {

/** The agent_* TYPE and sample lines of a scrape (HELP is core's text, not the contract), with
 *  the per-run label values (hostname, pid, agent_instance) replaced by H, P and I. */
std::string
agentSeriesLines(const std::string &text) {
    auto blank = [](std::string &line, const std::string &label, const char *with) {
        const std::string key = label + "=\"";
        const size_t at = line.find(key);
        if (at == std::string::npos) {
            return;
        }
        const size_t from = at + key.size();
        line.replace(from, line.find('"', from) - from, with);
    };
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        end = end == std::string::npos ? text.size() : end;
        std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.rfind("# TYPE agent_", 0) != 0 && line.rfind("agent_", 0) != 0) {
            continue;
        }
        blank(line, "hostname", "H");
        blank(line, "pid", "P");
        blank(line, "agent_instance", "I");
        out += line + "\n";
    }
    return out;
}

/** NIXL 1.4's series for one 4 KiB write of 150 us (post 7 us), bounds 100,1000 us. */
std::string
nixlOneTransferLines() {
    const std::string l = "{hostname=\"H\",agent_name=\"A\",pid=\"P\",agent_instance=\"I\"";
    const std::string one = l + "}";
    std::string s;
    auto family = [&](const std::string &name, const char *type, const char *value) {
        s += "# TYPE " + name + " " + type + "\n" + name + one + " " + value + "\n";
    };
    family("agent_tx_bytes_total", "counter", "4096");
    family("agent_tx_last_bytes", "gauge", "4096");
    family("agent_rx_bytes_total", "counter", "0");
    family("agent_rx_last_bytes", "gauge", "0");
    family("agent_tx_requests_num_total", "counter", "1");
    family("agent_rx_requests_num_total", "counter", "0");
    family("agent_memory_registered_total", "counter", "8192");
    family("agent_memory_registered_last_bytes", "gauge", "8192");
    family("agent_memory_deregistered_total", "counter", "0");
    family("agent_memory_deregistered_last_bytes", "gauge", "0");
    auto duration = [&](const std::string &base, const char *us, int le100) {
        family(base + "_total", "counter", us);
        s += "# TYPE " + base + "_us histogram\n";
        s += base + "_us_count" + one + " 1\n";
        s += base + "_us_sum" + one + " " + us + "\n";
        s += base + "_us_bucket" + l + ",le=\"100\"} " + std::to_string(le100) + "\n";
        s += base + "_us_bucket" + l + ",le=\"1000\"} 1\n";
        s += base + "_us_bucket" + l + ",le=\"+Inf\"} 1\n";
        family(base, "gauge", us);
    };
    duration("agent_xfer_time", "150", 0);
    duration("agent_xfer_post_time", "7", 1);
    s += "# TYPE agent_errors_total counter\n";
    for (const char *status : {"not_posted", "invalid_param", "backend", "not_found", "mismatch",
                               "not_allowed", "repost_active", "unknown", "not_supported",
                               "remote_disconnect", "canceled", "no_telemetry"}) {
        s += "agent_errors_total" + l + ",status=\"" + status + "\"} " +
            (std::string(status) == "backend" ? "1" : "0") + "\n";
    }
    // No agent_trace_phases_dropped_total: NIXL 1.4 has no such series.
    family("agent_telemetry_events_dropped_total", "counter", "0");
    return s;
}

const nixl_telemetry_event_abi_t kOneTransfer[] = {
    {4, 0, 8192},  {7, 0, 7}, {mpTest::kXferTime, 0, 150},     {mpTest::kTx, 0, 4096},
    {mpTest::kTxReq, 0, 1}, {mpTest::kErrBackend, 0, 1}, {mpTest::kTracePhases, 0, 3}};

} // namespace

TEST(PromMpConfig, NamesStyleDefaultsToLibnixlAndUnknownValuesMeanLibnixl) {
    mpTest::envGuard env;
    env.set(kDirVar, "/tmp/x");
    env.unset(nixlProm::kNamesVar);
    EXPECT_EQ(parseConfig().names, nixlProm::nameStyle_t::LIBNIXL);
    env.set(nixlProm::kNamesVar, "NIXL");
    EXPECT_EQ(parseConfig().names, nixlProm::nameStyle_t::NIXL);
    env.set(nixlProm::kNamesVar, "libnixl");
    EXPECT_EQ(parseConfig().names, nixlProm::nameStyle_t::LIBNIXL);
    env.set(nixlProm::kNamesVar, "nixl14");
    EXPECT_EQ(parseConfig().names, nixlProm::nameStyle_t::LIBNIXL) << "unknown => the default";
}

TEST_F(PromMpPlugin, NixlNamesModeEmitsNixl14SeriesExactly) {
    env_.set(nixlProm::kNamesVar, "nixl");
    env_.set(nixlProm::kBucketsVar, "100,1000");
    mpTest::globalLog().clear();
    nixl_telemetry_exporter_t *e = nullptr;
    ASSERT_EQ(plugin().create(mpTest::globalLog(), "A", &e), NIXL_PLUGIN_SUCCESS)
        << mpTest::globalLog().all();
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, ""), 0u) << mpTest::globalLog().all();
    ops().batch_begin(e);
    EXPECT_EQ(ops().export_events(e, kOneTransfer, std::size(kOneTransfer)), NIXL_PLUGIN_SUCCESS);
    ops().batch_end(e);
    const auto text = mpTest::httpGet(port_);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(agentSeriesLines(*text), nixlOneTransferLines()) << *text;
    // promtool's remarks in this mode: only NIXL 1.4's abbreviated unit, as the docs list.
    std::string out;
    const int rc = mpTest::promtoolCheck(*text, &out); // a wait status: exit 3 = lint remarks
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 3) << rc << " " << out;
    EXPECT_EQ(out,
              "agent_xfer_post_time_us metric names should not contain abbreviated units\n"
              "agent_xfer_time_us metric names should not contain abbreviated units\n");
    ops().destroy(e);
}

TEST_F(PromMpPlugin, NamesDefaultKeepsLibnixlNamesAndUnknownStyleWarnsOnce) {
    for (const char *value : {static_cast<const char *>(nullptr), "nixl14"}) {
        SCOPED_TRACE(value == nullptr ? "(unset)" : value);
        if (value == nullptr) {
            env_.unset(nixlProm::kNamesVar);
        } else {
            env_.set(nixlProm::kNamesVar, value);
        }
        mpTest::globalLog().clear();
        nixl_telemetry_exporter_t *e = nullptr;
        ASSERT_EQ(plugin().create(mpTest::globalLog(), "A", &e), NIXL_PLUGIN_SUCCESS)
            << mpTest::globalLog().all();
        EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, nixlProm::kNamesVar),
                  value == nullptr ? 0u : 1u)
            << mpTest::globalLog().all();
        if (value != nullptr) {
            EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, value), 1u);
        }
        EXPECT_EQ(ops().export_events(e, kOneTransfer, std::size(kOneTransfer)),
                  NIXL_PLUGIN_SUCCESS);
        const auto text = mpTest::httpGet(port_);
        ASSERT_TRUE(text.has_value());
        EXPECT_EQ(mpTest::sampleValue(*text, "agent_tx_requests_total"), 1.0) << *text;
        EXPECT_EQ(mpTest::sampleValue(*text, "agent_memory_registered_bytes_total"), 8192.0);
        EXPECT_EQ(mpTest::sampleValue(*text, "agent_xfer_time_seconds_count"), 1.0);
        EXPECT_EQ(mpTest::sampleValue(*text, "agent_trace_phases_dropped_total"), 3.0);
        EXPECT_EQ(text->find("agent_tx_requests_num_total"), std::string::npos);
        EXPECT_EQ(text->find("agent_xfer_time_us"), std::string::npos);
        ops().destroy(e);
    }
}
