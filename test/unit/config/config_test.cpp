/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlConfig: lookup order (environment, NIXL_CONFIG_FILE, $HOME/.nixl.cfg, /etc/nixl.cfg),
// TOML value text and origins, typed getters and their one-line errors, the core-services
// lookup plugins use, the SDK helpers over it, and agent construction with a bad file.
// The system file is never /etc here: tests pass their own path through nixlConfigSources.

#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <chrono>

#include "../../common/scoped_env.h"
#include "config/config.h"
#include "nixl.h"
#include "nixl_plugin_sdk_common.h"
#include "plugin/plugin_loader.h"
#include "telemetry/telemetry_config.h"

namespace {

namespace fs = std::filesystem;
using nixl_test::scopedEnv;

class tempDir {
public:
    tempDir() {
        const char *base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
            "/nixl_config_test.XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        path_ = tmpl;
    }

    ~tempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }

    std::string
    write(const std::string &name, const std::string &content) const {
        const std::string p = path_ + "/" + name;
        std::ofstream(p) << content;
        return p;
    }

    const std::string &
    path() const {
        return path_;
    }

private:
    std::string path_;
};

size_t
countLines(const std::string &text, const std::string &needle) {
    size_t n = 0;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            end = text.size();
        }
        if (text.substr(start, end - start).find(needle) != std::string::npos) {
            ++n;
        }
        start = end + 1;
    }
    return n;
}

// Every test of the process configuration starts from a known state: no NIXL_CONFIG_FILE, a
// HOME without .nixl.cfg, and nothing loaded yet. A developer's own ~/.nixl.cfg never leaks in.
class configProcessTest : public ::testing::Test {
protected:
    void
    SetUp() override {
        nixlConfig::reloadForTesting();
    }

    void
    TearDown() override {
        nixlConfig::reloadForTesting();
    }

    tempDir dir_;
    scopedEnv home_{"HOME", dir_.path().c_str()};
    scopedEnv file_{"NIXL_CONFIG_FILE", nullptr};
    scopedEnv flag_{"NIXL_TEST_FLAG", nullptr};
    scopedEnv port_{"NIXL_TEST_PORT", nullptr};
};

// --- choosing and parsing the file -------------------------------------------------------

TEST(configFile, ExplicitFileBeatsHomeBeatsSystem) {
    tempDir d;
    nixlConfigSources src;
    src.explicitFile = d.write("explicit.toml", "NIXL_TEST_WHO = \"explicit\"\n");
    src.homeFile = d.write("home.cfg", "NIXL_TEST_WHO = \"home\"\n");
    src.systemFile = d.write("system.cfg", "NIXL_TEST_WHO = \"system\"\n");

    EXPECT_EQ(nixlConfigFile::load(src)->find("NIXL_TEST_WHO")->text, "explicit");
    src.explicitFile.clear();
    EXPECT_EQ(nixlConfigFile::load(src)->find("NIXL_TEST_WHO")->text, "home");
    fs::remove(src.homeFile);
    EXPECT_EQ(nixlConfigFile::load(src)->find("NIXL_TEST_WHO")->text, "system");
    fs::remove(src.systemFile);
    auto none = nixlConfigFile::load(src);
    EXPECT_TRUE(none->path().empty());
    EXPECT_FALSE(none->find("NIXL_TEST_WHO").has_value());
}

TEST(configFile, FilesAreNotMerged) {
    tempDir d;
    nixlConfigSources src;
    src.homeFile = d.write("home.cfg", "NIXL_TEST_A = 1\n");
    src.systemFile = d.write("system.cfg", "NIXL_TEST_A = 2\nNIXL_TEST_B = 3\n");
    auto f = nixlConfigFile::load(src);
    EXPECT_EQ(f->path(), src.homeFile);
    EXPECT_EQ(f->find("NIXL_TEST_A")->text, "1");
    EXPECT_FALSE(f->find("NIXL_TEST_B").has_value());
}

TEST(configFile, MissingExplicitFileIsAnError) {
    tempDir d;
    nixlConfigSources src;
    src.explicitFile = d.path() + "/no_such.toml";
    src.homeFile = d.write("home.cfg", "NIXL_TEST_A = 1\n");
    try {
        (void)nixlConfigFile::load(src);
        FAIL() << "a missing NIXL_CONFIG_FILE must be refused";
    }
    catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find(src.explicitFile), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    }
}

// Issue 29: what() carried a config value's control bytes raw; now escaped once, like the log.
TEST(configFile, ErrorTextEscapesControlBytesOnce) {
    tempDir d;
    nixlConfigSources src;
    src.explicitFile = d.path() + "/evil\x1b[2J.toml";
    std::string what;
    testing::internal::CaptureStderr();
    try {
        (void)nixlConfigFile::load(src);
    }
    catch (const std::invalid_argument &e) {
        what = e.what();
    }
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_FALSE(what.empty());
    EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
    EXPECT_NE(what.find("evil\\x1b[2J.toml"), std::string::npos) << what;
    EXPECT_EQ(err.find('\x1b'), std::string::npos) << err;
    EXPECT_NE(err.find("evil\\x1b[2J.toml"), std::string::npos) << err;
    EXPECT_EQ(err.find("\\\\x1b"), std::string::npos) << err; // not escaped twice
}

TEST(configFile, ParseErrorNamesFileLineAndReasonInOneLogLine) {
    tempDir d;
    nixlConfigSources src;
    src.homeFile = d.write("home.cfg", "NIXL_TEST_A = 1\n\nNIXL_TEST_B = = oops\n");
    testing::internal::CaptureStderr();
    std::string what;
    try {
        (void)nixlConfigFile::load(src);
    }
    catch (const std::invalid_argument &e) {
        what = e.what();
    }
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_FALSE(what.empty()) << "a file that does not parse must be refused";
    EXPECT_NE(what.find(src.homeFile + ":3:"), std::string::npos) << what;
    EXPECT_NE(what.find("not valid TOML"), std::string::npos) << what;
    EXPECT_EQ(countLines(err, src.homeFile), 1u) << err;
}

TEST(configFile, DirectoryInPlaceOfFileIsAnError) {
    tempDir d;
    nixlConfigSources src;
    src.homeFile = d.path();
    EXPECT_THROW((void)nixlConfigFile::load(src), std::invalid_argument);
}

TEST(configFile, ValueTextAndOrigin) {
    tempDir d;
    const std::string p = d.write("c.toml",
                                  "# comment\n"
                                  "NIXL_S = \"text\"\n"
                                  "NIXL_I = 33554432\n"
                                  "NIXL_B = true\n"
                                  "NIXL_F = 2.5\n"
                                  "NIXL_T = 00:00:05.5\n"
                                  "NIXL_A = [10, 25, 50]\n"
                                  "NIXL_G = [\"agent_tx_*\", \"agent_rx_*\"]\n"
                                  "[NIXL_TABLE]\n"
                                  "x = 1\n");
    auto f = nixlConfigFile::parse(p);
    EXPECT_EQ(f->find("NIXL_S")->text, "text");
    EXPECT_EQ(f->find("NIXL_S")->origin, p + ":2");
    EXPECT_EQ(f->find("NIXL_I")->text, "33554432");
    EXPECT_EQ(f->find("NIXL_B")->text, "true");
    EXPECT_EQ(f->find("NIXL_F")->text, "2.5");
    EXPECT_EQ(f->find("NIXL_T")->text, "5500");
    EXPECT_EQ(f->find("NIXL_A")->text, "10,25,50");
    EXPECT_EQ(f->find("NIXL_G")->text, "agent_tx_*,agent_rx_*");
    EXPECT_EQ(f->find("NIXL_G")->origin, p + ":8");
    EXPECT_FALSE(f->find("x").has_value()) << "keys inside tables are not options";
    EXPECT_THROW((void)f->find("NIXL_TABLE"), std::invalid_argument);
}

// --- what is read, and how (issue 29 item 8) ----------------------------------------------

// Runs body in a forked child under an alarm; the child's exit status, or 128 + the signal
// that ended it (SIGALRM when body blocked). Forked so that a blocked open or read on an old
// build fails the test instead of hanging the executable.
int
inChild(unsigned alarm_s, const std::function<int()> &body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::alarm(alarm_s);
        int rc = 3;
        try {
            rc = body();
        }
        catch (...) {
        }
        ::_exit(rc);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string
parseError(const std::string &path) {
    try {
        (void)nixlConfigFile::parse(path);
    }
    catch (const std::invalid_argument &e) {
        return e.what();
    }
    return {};
}

TEST(configFile, FileLargerThanTheLimitIsRefusedWithoutParsing) {
    tempDir d;
    // Comment lines only: valid TOML of any size, so only the cap can refuse it.
    const std::string line(63, '#');
    std::string body;
    while (body.size() + 64 <= nixl_config_max_file_bytes) {
        body += line + "\n";
    }
    body.append(nixl_config_max_file_bytes - body.size(), '#');
    const std::string at_limit = d.write("limit.toml", body);
    EXPECT_EQ(nixlConfigFile::parse(at_limit)->size(), 0u) << "a file of exactly the limit is read";

    const std::string over = d.write("over.toml", body + "\n");
    testing::internal::CaptureStderr();
    const std::string what = parseError(over);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(what.find(over + ": larger than the limit of 1048576 bytes (1048577 bytes)"),
              std::string::npos)
        << what;
    EXPECT_EQ(countLines(err, over), 1u) << err;
}

TEST(configFile, FifoSwappedInAfterTheTypeCheckNeverBlocks) {
    tempDir d;
    const std::string reg = d.write("reg.toml", "NIXL_TEST_A = 7\n");
    const std::string fifo = d.path() + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string cfg = d.path() + "/cfg";
    const std::string tmp = d.path() + "/tmp";
    ASSERT_EQ(::link(reg.c_str(), cfg.c_str()), 0);

    // Another process swaps cfg between the regular file and the FIFO as fast as it can;
    // rename() is atomic, so cfg always exists and is one or the other.
    const pid_t flipper = ::fork();
    if (flipper == 0) {
        for (bool to_fifo = true;; to_fifo = !to_fifo) {
            (void)::link(to_fifo ? fifo.c_str() : reg.c_str(), tmp.c_str());
            (void)::rename(tmp.c_str(), cfg.c_str());
        }
    }
    ASSERT_GT(flipper, 0);
    // Start once the swapping has: cfg has been the FIFO at least once.
    for (struct stat st{}; ::stat(cfg.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode);) {
        ::sched_yield();
    }
    // Each parse either reads the file or refuses the FIFO; before the fix an open that met
    // the FIFO after the stat() blocked for good (4 of 150 agent constructions).
    const int rc = inChild(30, [&] {
        size_t read = 0;
        size_t refused = 0;
        for (int i = 0; i < 20000; ++i) {
            try {
                if (nixlConfigFile::parse(cfg)->find("NIXL_TEST_A")->text != "7") {
                    return 2;
                }
                ++read;
            }
            catch (const std::invalid_argument &e) {
                if (std::string(e.what()).find("not a regular file") == std::string::npos) {
                    return 2;
                }
                ++refused;
            }
        }
        return read + refused == 20000 ? 0 : 2;
    });
    ::kill(flipper, SIGKILL);
    ::waitpid(flipper, nullptr, 0);
    EXPECT_NE(rc, 128 + SIGALRM) << "a parse blocked on the FIFO";
    EXPECT_EQ(rc, 0);
}

TEST(configFile, PseudoFilesAreRefusedWithoutReading) {
    // /proc files pass S_ISREG; /proc/kmsg blocks a read (and a read consumes the kernel log).
    const std::string what = parseError("/proc/self/status");
    EXPECT_NE(what.find("/proc/self/status: on a kernel pseudo file system"), std::string::npos)
        << what;
    if (::access("/proc/kmsg", R_OK) == 0) {
        const int rc = inChild(30, [] {
            return parseError("/proc/kmsg").find("pseudo file system") != std::string::npos ? 0 :
                                                                                            2;
        });
        EXPECT_EQ(rc, 0) << "/proc/kmsg: " << (rc == 128 + SIGALRM ? "blocked" : "not refused");
    }
}

TEST(configFile, SymlinkIsFollowed) {
    // A ~/.nixl.cfg linked into a dotfiles repository is legitimate (docs/configuration.md).
    tempDir d;
    const std::string target = d.write("real.toml", "NIXL_TEST_A = 5\n");
    nixlConfigSources src;
    src.homeFile = d.path() + "/.nixl.cfg";
    ASSERT_EQ(::symlink(target.c_str(), src.homeFile.c_str()), 0);
    EXPECT_EQ(nixlConfigFile::load(src)->find("NIXL_TEST_A")->text, "5");
}

// --- the process configuration ----------------------------------------------------------

TEST_F(configProcessTest, EnvironmentBeatsConfigFile) {
    const std::string p = dir_.write("c.toml", "NIXL_TEST_FLAG = \"off\"\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    {
        scopedEnv env("NIXL_TEST_FLAG", "Yes");
        auto v = nixlConfig::lookup("NIXL_TEST_FLAG");
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(v->origin, "environment");
        EXPECT_EQ(nixlConfig::getBool("NIXL_TEST_FLAG"), std::optional<bool>(true));
    }
    auto v = nixlConfig::lookup("NIXL_TEST_FLAG");
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->origin, p + ":1");
    EXPECT_EQ(nixlConfig::getBool("NIXL_TEST_FLAG"), std::optional<bool>(false));
}

TEST_F(configProcessTest, EmptyEnvironmentValueCountsAsUnset) {
    const std::string p = dir_.write("c.toml", "NIXL_TEST_FLAG = \"on\"\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    scopedEnv env("NIXL_TEST_FLAG", "");
    EXPECT_EQ(nixlConfig::getBool("NIXL_TEST_FLAG"), std::optional<bool>(true));
}

TEST_F(configProcessTest, ConfigFileBeatsHomeFile) {
    dir_.write(".nixl.cfg", "NIXL_TEST_PORT = 1111\n");
    const std::string p = dir_.write("c.toml", "NIXL_TEST_PORT = 2222\n");
    EXPECT_EQ(nixlConfig::getPort("NIXL_TEST_PORT"), std::optional<uint16_t>(1111));
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    nixlConfig::reloadForTesting();
    EXPECT_EQ(nixlConfig::getPort("NIXL_TEST_PORT"), std::optional<uint16_t>(2222));
}

TEST_F(configProcessTest, FileIsReadOnce) {
    const std::string p = dir_.write("c.toml", "NIXL_TEST_PORT = 1111\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    EXPECT_EQ(nixlConfig::getPort("NIXL_TEST_PORT"), std::optional<uint16_t>(1111));
    dir_.write("c.toml", "NIXL_TEST_PORT = 2222\n");
    EXPECT_EQ(nixlConfig::getPort("NIXL_TEST_PORT"), std::optional<uint16_t>(1111));
}

TEST_F(configProcessTest, FailedLoadIsRetried) {
    const std::string p = dir_.write("c.toml", "NIXL_TEST_PORT = \n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    testing::internal::CaptureStderr();
    EXPECT_THROW(nixlConfig::ensureLoaded(), std::invalid_argument);
    (void)testing::internal::GetCapturedStderr();
    dir_.write("c.toml", "NIXL_TEST_PORT = 3333\n");
    EXPECT_EQ(nixlConfig::getPort("NIXL_TEST_PORT"), std::optional<uint16_t>(3333));
}

TEST_F(configProcessTest, InvalidValueIsOneLineNamingOriginAndAcceptedWords) {
    const std::string p = dir_.write("c.toml", "\nNIXL_TEST_FLAG = \"maybe\"\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    testing::internal::CaptureStderr();
    std::string what;
    try {
        (void)nixlConfig::getBool("NIXL_TEST_FLAG", "agent A: ");
    }
    catch (const std::invalid_argument &e) {
        what = e.what();
    }
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_FALSE(what.empty());
    EXPECT_NE(what.find("agent A: NIXL_TEST_FLAG=maybe"), std::string::npos) << what;
    EXPECT_NE(what.find(p + ":2"), std::string::npos) << what;
    EXPECT_NE(what.find("y/yes/on/1/true/enable"), std::string::npos) << what;
    EXPECT_EQ(countLines(err, "NIXL_TEST_FLAG"), 1u) << err;
}

TEST_F(configProcessTest, TypedGettersApplyBounds) {
    scopedEnv env("NIXL_TEST_PORT", "0");
    EXPECT_THROW((void)nixlConfig::getPort("NIXL_TEST_PORT"), std::invalid_argument);
    EXPECT_THROW((void)nixlConfig::getUnsigned("NIXL_TEST_PORT", {}, 1, 10),
                 std::invalid_argument);
    EXPECT_EQ(nixlConfig::getUnsigned("NIXL_TEST_PORT"), std::optional<uint64_t>(0));
    scopedEnv env2("NIXL_TEST_PORT", "-3");
    EXPECT_EQ(nixlConfig::getSigned("NIXL_TEST_PORT"), std::optional<int64_t>(-3));
    EXPECT_THROW((void)nixlConfig::getSigned("NIXL_TEST_PORT", {}, 0, 5), std::invalid_argument);
    scopedEnv env3("NIXL_TEST_PORT", "250");
    EXPECT_EQ(nixlConfig::getMilliseconds("NIXL_TEST_PORT"),
              std::optional<std::chrono::milliseconds>(std::chrono::milliseconds(250)));
    EXPECT_EQ(nixlConfig::getString("NIXL_TEST_PORT"), std::optional<std::string>("250"));
    EXPECT_FALSE(nixlConfig::getString("NIXL_TEST_UNSET_OPTION").has_value());
}

// Core's telemetry settings come from the file too: a TOML hex integer, a time, a list.
TEST_F(configProcessTest, TelemetrySettingsFromTheFile) {
    const std::string p = dir_.write("c.toml",
                                     "NIXL_TELEMETRY_BUFFER_SIZE = 0x2000000\n"
                                     "NIXL_TELEMETRY_RUN_INTERVAL = 00:00:01.5\n"
                                     "NIXL_TELEMETRY_ENABLED_METRICS = [\"agent_tx_bytes\"]\n"
                                     "NIXL_TELEMETRY_DIR = \"/tmp/nixl-ring-dir\"\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    scopedEnv exporter("NIXL_TELEMETRY_EXPORTER", nullptr);
    scopedEnv ringDir("NIXL_TELEMETRY_DIR", nullptr);
    scopedEnv size("NIXL_TELEMETRY_BUFFER_SIZE", nullptr);
    scopedEnv interval("NIXL_TELEMETRY_RUN_INTERVAL", nullptr);
    scopedEnv metrics("NIXL_TELEMETRY_ENABLED_METRICS", nullptr);
    const auto cfg = nixlTelemetryConfig::fromEnvironment("A");
    EXPECT_EQ(cfg.bufferSize, 33554432u);
    EXPECT_EQ(cfg.runInterval, std::chrono::milliseconds(1500));
    EXPECT_EQ(std::count(cfg.enabled.begin(), cfg.enabled.end(), true), 1);
    EXPECT_EQ(cfg.exporter, "BUFFER") << "NIXL_TELEMETRY_DIR from the file selects BUFFER";
}

TEST_F(configProcessTest, PluginDirectoryFromTheFile) {
    const std::string p = dir_.write("c.toml", "NIXL_PLUGIN_DIR = \"/opt/nixl-plugins\"\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    scopedEnv dir("NIXL_PLUGIN_DIR", nullptr);
    EXPECT_EQ(nixlPluginLoader::instance().defaultDirectory(), "/opt/nixl-plugins");
    scopedEnv env("NIXL_PLUGIN_DIR", "/from/env");
    EXPECT_EQ(nixlPluginLoader::instance().defaultDirectory(), "/from/env");
}

// --- what plugins see --------------------------------------------------------------------

nixl_plugin_status_t
appendTo(void *ctx, const void *data, size_t len) {
    static_cast<std::string *>(ctx)->append(static_cast<const char *>(data), len);
    return NIXL_PLUGIN_SUCCESS;
}

TEST_F(configProcessTest, CoreServiceLookup) {
    const std::string p = dir_.write("c.toml", "NIXL_TEST_PORT = 4444\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    std::string value;
    std::string origin;
    const nixl_plugin_bytes_sink_t vs{&value, appendTo};
    const nixl_plugin_bytes_sink_t os{&origin, appendTo};
    const std::string name = "NIXL_TEST_PORT";
    EXPECT_EQ(nixlConfig::serviceLookup(nullptr, name.data(), name.size(), &vs, &os),
              NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(value, "4444");
    EXPECT_EQ(origin, p + ":1");
    const std::string unset = "NIXL_TEST_UNSET_OPTION";
    EXPECT_EQ(nixlConfig::serviceLookup(nullptr, unset.data(), unset.size(), &vs, nullptr),
              NIXL_PLUGIN_ERR_NOT_FOUND);
    EXPECT_EQ(nixlConfig::serviceLookup(nullptr, nullptr, 0, &vs, nullptr),
              NIXL_PLUGIN_ERR_INVALID_PARAM);

    dir_.write("c.toml", "NIXL_TEST_PORT = [\n");
    nixlConfig::reloadForTesting();
    testing::internal::CaptureStderr();
    EXPECT_EQ(nixlConfig::serviceLookup(nullptr, name.data(), name.size(), &vs, nullptr),
              NIXL_PLUGIN_ERR_INVALID_PARAM);
    (void)testing::internal::GetCapturedStderr();
}

class sdkServices {
public:
    sdkServices() {
        services_.size = sizeof(services_);
        services_.get_config = nixlConfig::serviceLookup;
        old_ = nixlSdk::coreServices().exchange(&services_);
    }

    ~sdkServices() {
        nixlSdk::coreServices().store(old_);
    }

private:
    nixl_plugin_core_services_t services_{};
    const nixl_plugin_core_services_t *old_ = nullptr;
};

TEST_F(configProcessTest, SdkHelpersReadTheFileThroughCore) {
    const std::string p = dir_.write("c.toml",
                                     "NIXL_TEST_FLAG = \"Enable\"\n"
                                     "NIXL_TEST_PORT = 70000\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    sdkServices core;
    EXPECT_EQ(nixlSdk::configBool("NIXL_TEST_FLAG"), std::optional<bool>(true));
    try {
        (void)nixlSdk::configPort("NIXL_TEST_PORT");
        FAIL() << "70000 is not a port";
    }
    catch (const std::invalid_argument &e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("NIXL_TEST_PORT=70000 (from " + p + ":2)"), std::string::npos)
            << what;
        EXPECT_NE(what.find("1..65535"), std::string::npos) << what;
    }
    EXPECT_FALSE(nixlSdk::configString("NIXL_TEST_UNSET_OPTION").has_value());
}

TEST_F(configProcessTest, SdkFallsBackToEnvironmentWithAnOldCore) {
    const std::string p = dir_.write("c.toml", "NIXL_TEST_FLAG = \"on\"\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    // A core whose services end before get_config.
    nixl_plugin_core_services_t old{};
    old.size = offsetof(nixl_plugin_core_services_t, get_config);
    old.get_config = nixlConfig::serviceLookup; // past size: must not be called
    const auto *prev = nixlSdk::coreServices().exchange(&old);
    EXPECT_FALSE(nixlSdk::configBool("NIXL_TEST_FLAG").has_value());
    {
        scopedEnv env("NIXL_TEST_FLAG", "no");
        EXPECT_EQ(nixlSdk::configBool("NIXL_TEST_FLAG"), std::optional<bool>(false));
    }
    nixlSdk::coreServices().store(prev);
}

// --- agents ------------------------------------------------------------------------------

TEST_F(configProcessTest, AgentConstructionFailsOnAFileThatDoesNotParse) {
    const std::string p = dir_.write("c.toml", "NIXL_TELEMETRY_ENABLE = yes\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    testing::internal::CaptureStderr();
    std::string what;
    try {
        nixlAgent agent("config_bad_file", nixlAgentConfig(false));
    }
    catch (const std::invalid_argument &e) {
        what = e.what();
    }
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_FALSE(what.empty()) << "nixlAgent must throw std::invalid_argument";
    EXPECT_NE(what.find(p + ":1:"), std::string::npos) << what;
    EXPECT_EQ(countLines(err, p), 1u) << err;
}

TEST_F(configProcessTest, AgentConstructionFailsOnAFifo) {
    const std::string p = dir_.path() + "/fifo.toml";
    ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    testing::internal::CaptureStderr();
    EXPECT_THROW(nixlAgent("config_fifo", nixlAgentConfig(false)), std::invalid_argument);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(countLines(err, "configuration file " + p + ": not a regular file"), 1u) << err;
}

TEST_F(configProcessTest, AgentReadsTelemetryEnableFromTheFile) {
    const std::string p = dir_.write("c.toml", "NIXL_TELEMETRY_ENABLE = \"maybe\"\n");
    scopedEnv file("NIXL_CONFIG_FILE", p.c_str());
    scopedEnv enable("NIXL_TELEMETRY_ENABLE", nullptr);
    testing::internal::CaptureStderr();
    EXPECT_THROW(nixlAgent("config_enable", nixlAgentConfig(false)), std::invalid_argument);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(countLines(err, "NIXL_TELEMETRY_ENABLE=maybe (from " + p + ":1)"), 1u) << err;
}

} // namespace

// Issue 29 item 16: a plugin's per-request error line (e.g. UCX reposting after the peer
// deregistered: 1,045,656 ERROR lines in 7 s) is rate-limited per call site. Every call is
// either written or counted in the "(suppressed N similar lines)" of a later line.
namespace {
std::vector<std::string> sdk_limited_lines;

void
sdkLimitedLog(void *, int32_t, const char *msg, size_t len) {
    sdk_limited_lines.emplace_back(msg, len);
}

int32_t
sdkLimitedEnabled(void *, int32_t) {
    return 1;
}

void
limitedSite(int i) {
    NIXL_SDK_ERROR_LIMITED("post " << i << " failed");
}

uint64_t
suppressedIn(const std::string &line) {
    const auto at = line.find("(suppressed ");
    return at == std::string::npos ? 0 : std::stoull(line.substr(at + 12));
}
} // namespace

TEST(sdkLogLimited, ASiteWritesAFewLinesASecondAndCountsTheRest) {
    nixl_plugin_core_services_t services{};
    services.size = sizeof(services);
    services.log = sdkLimitedLog;
    services.log_enabled = sdkLimitedEnabled;
    const auto *old = nixlSdk::coreServices().exchange(&services);
    sdk_limited_lines.clear();
    const auto t0 = std::chrono::steady_clock::now();
    int calls = 0;
    for (; calls < 5000; ++calls) {
        limitedSite(calls);
    }
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
    // At most `limit` lines in each second the loop touched (it touched secs + 1 or + 2).
    EXPECT_LE(sdk_limited_lines.size(), nixlSdk::logLimiter::limit * (secs + 2));
    ASSERT_GE(sdk_limited_lines.size(), 1u);
    EXPECT_EQ(sdk_limited_lines[0], "post 0 failed");
    // The next second's first line reports what was suppressed (awaited, not slept for).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (suppressedIn(sdk_limited_lines.back()) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
        const size_t before = sdk_limited_lines.size();
        limitedSite(calls++);
        if (sdk_limited_lines.size() == before) {
            std::this_thread::yield();
        }
    }
    ASSERT_GT(suppressedIn(sdk_limited_lines.back()), 0u) << sdk_limited_lines.back();
    uint64_t accounted = 0;
    for (const auto &l : sdk_limited_lines) {
        accounted += 1 + suppressedIn(l);
    }
    EXPECT_EQ(accounted, static_cast<uint64_t>(calls));
    nixlSdk::coreServices().store(old);
}
