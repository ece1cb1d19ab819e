/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlConfig: lookup order (environment, NIXL_CONFIG_FILE, $HOME/.nixl.cfg, /etc/nixl.cfg),
// TOML value text and origins, typed getters and their one-line errors, the core-services
// lookup plugins use, the SDK helpers over it, and agent construction with a bad file.
// The system file is never /etc here: tests pass their own path through nixlConfigSources.

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

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
