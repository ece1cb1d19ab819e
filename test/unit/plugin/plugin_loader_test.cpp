/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Behaviour of nixlPluginLoader: which plugins it accepts, how each refusal is reported (status
 * and exactly one ERROR line naming the file), that refusals leave nothing loaded and the loader
 * usable, discovery, the plugin directory rules, caching and concurrent loads.
 *
 * The plugins come from test/plugins (NIXL_TEST_PLUGIN_DIR). Accepted plugins stay loaded for the
 * life of the process, so tests that need a first load copy the plugin into a fresh directory:
 * a new path is a new plugin to the loader.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <latch>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/nixl_log.h"
#include "nixl_backend_plugin.h"
#include "nixl_telemetry_exporter_plugin.h"
#include "nixl_trace_backend_plugin.h"
#include "backend/backend_engine.h"
#include "plugin/plugin_loader.h"
#include "../../common/scoped_env.h"

namespace {

namespace fs = std::filesystem;

using pluginPtr = std::shared_ptr<const nixlLoadedPlugin>;

constexpr nixl_plugin_kind_t kBackend = nixl_plugin_kind_t::BACKEND;
constexpr nixl_plugin_kind_t kExporter = nixl_plugin_kind_t::TELEMETRY_EXPORTER;
constexpr nixl_plugin_kind_t kTracer = nixl_plugin_kind_t::TRACE_BACKEND;

std::string
requiredEnv(const char *name) {
    const char *v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
}

std::vector<std::string>
lines(const std::string &text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        out.push_back(line);
    }
    return out;
}

/** Lines libnixl's logger wrote, each "[nixl <letter> ...] message". */
std::vector<std::string>
logLines(const std::string &captured) {
    std::vector<std::string> out;
    for (const std::string &l : lines(captured)) {
        if (l.rfind("[nixl ", 0) == 0) {
            out.push_back(l);
        }
    }
    return out;
}

bool
isErrorLine(const std::string &line) {
    return line.rfind("[nixl E ", 0) == 0;
}

/** True if the shared object at path is currently mapped in this process. */
bool
isResident(const std::string &path) {
    void *h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) {
        return false;
    }
    dlclose(h); // balance the reference RTLD_NOLOAD took
    return true;
}

struct loadResult {
    nixl_status_t status;
    pluginPtr plugin;
    std::string stderrText;
};

loadResult
loadCaptured(nixl_plugin_kind_t kind, const std::string &name, const std::string &dir) {
    loadResult r{NIXL_ERR_UNKNOWN, nullptr, {}};
    // A stale value in out must not survive a failed load.
    r.plugin = std::make_shared<const nixlLoadedPlugin>(kind, "sentinel", "", "", nullptr, nullptr);
    testing::internal::CaptureStderr();
    r.status = nixlPluginLoader::instance().load(kind, name, r.plugin, dir);
    r.stderrText = testing::internal::GetCapturedStderr();
    return r;
}

using nixl_test::scopedEnv;

/** A fresh directory, removed at the end of the test. */
class scratchDir {
public:
    scratchDir() {
        std::string tmpl = testing::TempDir() + "nixl_plugin_loader_XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (mkdtemp(buf.data()) != nullptr) {
            path_ = buf.data();
        }
    }

    ~scratchDir() {
        if (!path_.empty()) {
            std::error_code ec;
            fs::remove_all(path_, ec);
        }
    }

    scratchDir(const scratchDir &) = delete;
    scratchDir &
    operator=(const scratchDir &) = delete;

    const std::string &
    path() const {
        return path_;
    }

    /** Copies file from dir into this directory; returns the new path. */
    std::string
    copyFrom(const std::string &dir, const std::string &file) const {
        fs::path dst = fs::path(path_) / file;
        fs::copy_file(fs::path(dir) / file, dst, fs::copy_options::overwrite_existing);
        return dst.string();
    }

    /** Creates an empty regular file. */
    void
    touch(const std::string &file) const {
        fs::path p = fs::path(path_) / file;
        FILE *f = std::fopen(p.c_str(), "w");
        if (f != nullptr) {
            std::fclose(f);
        }
    }

private:
    std::string path_;
};

class nixlPluginLoaderTest : public testing::Test {
protected:
    void
    SetUp() override {
        // ERROR lines must be visible whatever NIXL_LOG_LEVEL the environment sets; INFO
        // lines (successful loads) must not be counted as noise.
        savedLevel_ = nixl::log::getLevel();
        nixl::log::setLevel(nixl::log::level::WARN);
        dir_ = requiredEnv("NIXL_TEST_PLUGIN_DIR");
        ASSERT_FALSE(dir_.empty()) << "NIXL_TEST_PLUGIN_DIR must name the test plugin directory";
        ASSERT_TRUE(fs::is_directory(dir_)) << dir_;
    }

    void
    TearDown() override {
        nixl::log::setLevel(savedLevel_);
    }

    std::string
    pathOf(const std::string &dir, nixl_plugin_kind_t kind, const std::string &name) const {
        return (fs::path(dir) / (std::string(nixlPluginKind(kind).prefix) + name + ".so"))
            .lexically_normal()
            .string();
    }

    std::string dir_;
    nixl::log::level savedLevel_ = nixl::log::level::WARN;
};

/*
 * Refusals. Each case: the status, the one ERROR line naming the file, the cause in that line,
 * nothing left behind (no plugin handed out, C plugins no longer mapped).
 */
struct refusalCase {
    const char *name;
    nixl_status_t status;
    std::vector<std::string> mustMention;
    bool checkUnmapped; ///< C plugins are unmapped by dlclose; C++ ones may be pinned by libstdc++
};

void
PrintTo(const refusalCase &c, std::ostream *os) {
    *os << c.name;
}

std::string
versionLine(const std::string &path, unsigned got) {
    std::ostringstream os;
    os << path << ": backend plugin ABI version " << got << ", expected "
       << NIXL_BACKEND_ABI_VERSION;
    return os.str();
}

std::vector<refusalCase>
refusalCases() {
    return {
        // The exact version line is checked separately below; here, both numbers.
        {"STALE",
         NIXL_ERR_MISMATCH,
         {"ABI version 0, expected " + std::to_string(NIXL_BACKEND_ABI_VERSION)},
         true},
        {"FUTURE",
         NIXL_ERR_MISMATCH,
         {"ABI version 99, expected " + std::to_string(NIXL_BACKEND_ABI_VERSION)},
         true},
        {"NOENTRY",
         NIXL_ERR_BACKEND,
         {"is not a libnixl backend plugin: no symbol nixl_backend_plugin_get"},
         true},
        {"NULLENTRY", NIXL_ERR_BACKEND, {"nixl_backend_plugin_get", "no descriptor"}, true},
        {"THROWS", NIXL_ERR_BACKEND, {"threw", "THROWS plugin cannot initialise"}, false},
        {"WRONGKIND", NIXL_ERR_MISMATCH, {"kind 2", "telemetry exporter", "expected 1"}, true},
        {"WRONGNAME", NIXL_ERR_MISMATCH, {"\"OTHER\"", "\"WRONGNAME\""}, true},
        {"NONAME", NIXL_ERR_MISMATCH, {"no name"}, true},
        {"NOOPS", NIXL_ERR_MISMATCH, {"post_xfer, check_xfer"}, true},
        {"SMALLDESC", NIXL_ERR_MISMATCH, {"descriptor is", "expected at least"}, true},
        {"SHORTOPS", NIXL_ERR_MISMATCH, {"operations table is", "expected at least"}, true},
        {"NOCREATE", NIXL_ERR_MISMATCH, {"create_engine"}, true},
        {"NOTELF", NIXL_ERR_BACKEND, {"cannot load backend plugin"}, true},
        {"UNDEFSYM", NIXL_ERR_BACKEND, {"nixl_test_symbol_nobody_defines"}, true},
        {"MISSINGDEP", NIXL_ERR_BACKEND, {"libnixl_test_absent.so"}, true},
        {"ABSENT", NIXL_ERR_NOT_FOUND, {"not found"}, true},
    };
}

class nixlPluginRefusalTest : public nixlPluginLoaderTest,
                              public testing::WithParamInterface<refusalCase> {};

TEST_P(nixlPluginRefusalTest, RefusedWithOneErrorLineNamingTheFile) {
    const refusalCase &c = GetParam();
    const std::string path = pathOf(dir_, kBackend, c.name);

    // Twice: a refusal is not cached, and the second attempt is reported just like the first.
    for (int attempt = 0; attempt < 2; ++attempt) {
        SCOPED_TRACE("attempt " + std::to_string(attempt));
        loadResult r = loadCaptured(kBackend, c.name, dir_);
        EXPECT_EQ(r.status, c.status);
        EXPECT_EQ(r.plugin, nullptr);

        std::vector<std::string> log = logLines(r.stderrText);
        ASSERT_EQ(log.size(), 1u) << r.stderrText;
        EXPECT_TRUE(isErrorLine(log[0])) << log[0];
        EXPECT_NE(log[0].find(path), std::string::npos) << log[0];
        for (const std::string &m : c.mustMention) {
            EXPECT_NE(log[0].find(m), std::string::npos) << "missing '" << m << "' in " << log[0];
        }
        if (c.checkUnmapped) {
            EXPECT_FALSE(isResident(path)) << path << " stayed loaded after its refusal";
        }
    }

    std::vector<std::string> loaded = nixlPluginLoader::instance().loaded(kBackend);
    EXPECT_EQ(std::count(loaded.begin(), loaded.end(), std::string(c.name)), 0);
}

INSTANTIATE_TEST_SUITE_P(Refusals,
                         nixlPluginRefusalTest,
                         testing::ValuesIn(refusalCases()),
                         [](const testing::TestParamInfo<refusalCase> &info) {
                             return std::string(info.param.name);
                         });

TEST_F(nixlPluginLoaderTest, VersionRefusalLineHasExactForm) {
    for (const auto &[name, got] : {std::pair<const char *, unsigned>{"STALE", 0u},
                                    std::pair<const char *, unsigned>{"FUTURE", 99u}}) {
        const std::string path = pathOf(dir_, kBackend, name);
        loadResult r = loadCaptured(kBackend, name, dir_);
        EXPECT_EQ(r.status, NIXL_ERR_MISMATCH);
        std::vector<std::string> log = logLines(r.stderrText);
        ASSERT_EQ(log.size(), 1u) << r.stderrText;
        // The message is everything after the "[nixl E ... file:line] " prefix.
        const size_t start = log[0].find("] ");
        ASSERT_NE(start, std::string::npos) << log[0];
        EXPECT_EQ(log[0].substr(start + 2), versionLine(path, got));
    }
}

// A real plugin built before backend ABI v2 (against the frozen version-1 header in
// test/plugins/abi_v1), not a faked number: refused with one line naming both versions.
TEST_F(nixlPluginLoaderTest, PluginBuiltAgainstAbiV1IsRefusedNamingBothVersions) {
    static_assert(NIXL_BACKEND_ABI_VERSION == 2u, "update this test with the next bump");
    const std::string path = pathOf(dir_, kBackend, "ABIV1");
    for (int attempt = 0; attempt < 2; ++attempt) { // a refusal is not cached
        loadResult r = loadCaptured(kBackend, "ABIV1", dir_);
        EXPECT_EQ(r.status, NIXL_ERR_MISMATCH);
        EXPECT_EQ(r.plugin, nullptr);
        std::vector<std::string> log = logLines(r.stderrText);
        ASSERT_EQ(log.size(), 1u) << r.stderrText;
        EXPECT_TRUE(isErrorLine(log[0]));
        const size_t start = log[0].find("] ");
        ASSERT_NE(start, std::string::npos) << log[0];
        EXPECT_EQ(log[0].substr(start + 2),
                  path + ": backend plugin ABI version 1, expected 2");
        EXPECT_FALSE(isResident(path));
    }
}

TEST_F(nixlPluginLoaderTest, StaleTelemetryExporterRefusedLikeABackend) {
    const std::string path = pathOf(dir_, kExporter, "stale");
    loadResult r = loadCaptured(kExporter, "stale", dir_);
    EXPECT_EQ(r.status, NIXL_ERR_MISMATCH);
    EXPECT_EQ(r.plugin, nullptr);
    std::vector<std::string> log = logLines(r.stderrText);
    ASSERT_EQ(log.size(), 1u) << r.stderrText;
    EXPECT_TRUE(isErrorLine(log[0]));
    EXPECT_NE(log[0].find(path + ": telemetry exporter plugin ABI version 0, expected " +
                          std::to_string(NIXL_TELEMETRY_EXPORTER_ABI_VERSION)),
              std::string::npos)
        << log[0];
    EXPECT_FALSE(isResident(path));
}

// ABI 3 renumbered the event table (issue 12): an exporter built for 2 is refused in one line
// naming both versions.
TEST_F(nixlPluginLoaderTest, PreviousTelemetryExporterAbiRefused) {
    const std::string path = pathOf(dir_, kExporter, "previous");
    loadResult r = loadCaptured(kExporter, "previous", dir_);
    EXPECT_EQ(r.status, NIXL_ERR_MISMATCH);
    EXPECT_EQ(r.plugin, nullptr);
    std::vector<std::string> log = logLines(r.stderrText);
    ASSERT_EQ(log.size(), 1u) << r.stderrText;
    EXPECT_TRUE(isErrorLine(log[0]));
    EXPECT_NE(log[0].find(path + ": telemetry exporter plugin ABI version " +
                          std::to_string(NIXL_TELEMETRY_EXPORTER_ABI_VERSION - 1) + ", expected " +
                          std::to_string(NIXL_TELEMETRY_EXPORTER_ABI_VERSION)),
              std::string::npos)
        << log[0];
    EXPECT_FALSE(isResident(path));
}

TEST_F(nixlPluginLoaderTest, InvalidNamesRefusedBeforeTouchingTheFilesystem) {
    for (const std::string &name : {std::string(""),
                                   std::string("a/b"),
                                   std::string("../plugin_CMIN"),
                                   std::string("/CMIN"),
                                   std::string("CMIN/"),
                                   std::string("CM\0IN", 5)}) {
        SCOPED_TRACE("name '" + name + "'");
        loadResult r = loadCaptured(kBackend, name, dir_);
        EXPECT_EQ(r.status, NIXL_ERR_INVALID_PARAM);
        EXPECT_EQ(r.plugin, nullptr);
        std::vector<std::string> log = logLines(r.stderrText);
        ASSERT_EQ(log.size(), 1u) << r.stderrText;
        EXPECT_TRUE(isErrorLine(log[0])) << log[0];
    }
}

TEST_F(nixlPluginLoaderTest, KindTableMatchesTheCHeaders) {
    const nixlPluginKindInfo &b = nixlPluginKind(kBackend);
    EXPECT_EQ(b.kind, kBackend);
    EXPECT_EQ(b.cKind, static_cast<uint32_t>(NIXL_PLUGIN_KIND_BACKEND));
    EXPECT_STREQ(b.prefix, "libplugin_");
    EXPECT_STREQ(b.entry, NIXL_BACKEND_PLUGIN_ENTRY);
    EXPECT_EQ(b.abiVersion, NIXL_BACKEND_ABI_VERSION);
    EXPECT_EQ(b.descriptorSize, sizeof(nixl_backend_plugin_t));

    const nixlPluginKindInfo &t = nixlPluginKind(kExporter);
    EXPECT_EQ(t.kind, kExporter);
    EXPECT_EQ(t.cKind, static_cast<uint32_t>(NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER));
    EXPECT_STREQ(t.prefix, "libtelemetry_exporter_");
    EXPECT_STREQ(t.entry, NIXL_TELEMETRY_EXPORTER_PLUGIN_ENTRY);
    EXPECT_EQ(t.abiVersion, NIXL_TELEMETRY_EXPORTER_ABI_VERSION);
    EXPECT_EQ(t.descriptorSize, sizeof(nixl_telemetry_exporter_plugin_t));

    const nixlPluginKindInfo &r = nixlPluginKind(kTracer);
    EXPECT_EQ(r.kind, kTracer);
    EXPECT_EQ(r.cKind, static_cast<uint32_t>(NIXL_PLUGIN_KIND_TRACE_BACKEND));
    EXPECT_STREQ(r.prefix, "libtrace_backend_");
    EXPECT_STREQ(r.entry, NIXL_TRACE_BACKEND_PLUGIN_ENTRY);
    EXPECT_EQ(r.abiVersion, NIXL_TRACE_BACKEND_ABI_VERSION);
    EXPECT_EQ(r.descriptorSize, sizeof(nixl_trace_backend_plugin_t));
}

// A plain C plugin is accepted after a run of refusals, and what it exports works.
TEST_F(nixlPluginLoaderTest, GoodCPluginLoadsAfterRefusals) {
    for (const char *bad : {"STALE", "NOTELF", "THROWS", "NOENTRY", "NOOPS"}) {
        loadResult r = loadCaptured(kBackend, bad, dir_);
        ASSERT_NE(r.status, NIXL_SUCCESS) << bad;
    }

    scratchDir fresh;
    ASSERT_FALSE(fresh.path().empty());
    const std::string path = fresh.copyFrom(dir_, "libplugin_CMIN.so");
    ASSERT_FALSE(isResident(path));

    loadResult r = loadCaptured(kBackend, "CMIN", fresh.path());
    ASSERT_EQ(r.status, NIXL_SUCCESS) << r.stderrText;
    EXPECT_TRUE(logLines(r.stderrText).empty()) << r.stderrText;
    ASSERT_NE(r.plugin, nullptr);
    EXPECT_EQ(r.plugin->kind(), kBackend);
    EXPECT_EQ(r.plugin->name(), "CMIN");
    EXPECT_EQ(r.plugin->version(), "1.0.0");
    EXPECT_EQ(r.plugin->path(), path);
    EXPECT_TRUE(isResident(path));

    // The descriptor is the plugin's own: creating and destroying an engine goes through it.
    const nixl_backend_plugin_t *desc = r.plugin->as<nixl_backend_plugin_t>();
    ASSERT_NE(desc, nullptr);
    EXPECT_STREQ(desc->hdr.name, "CMIN");
    nixl_be_init_params_t params{};
    params.size = sizeof(params);
    nixl_be_engine_info_t info{};
    info.size = sizeof(info);
    nixl_be_engine_t *engine = nullptr;
    ASSERT_EQ(desc->create_engine(&params, &engine, &info), NIXL_PLUGIN_SUCCESS);
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(info.caps, NIXL_BE_CAP_LOCAL);
    desc->ops->destroy_engine(engine);

    std::vector<std::string> loaded = nixlPluginLoader::instance().loaded(kBackend);
    EXPECT_NE(std::find(loaded.begin(), loaded.end(), "CMIN"), loaded.end());
}

// Entries appended to nixl_be_ops_t are optional: a table that ends before them (a plugin
// built before they were appended) loads, and the agent answers NOT_SUPPORTED for them.
TEST_F(nixlPluginLoaderTest, OperationsTableWithoutAppendedEntriesLoads) {
    loadResult r = loadCaptured(kBackend, "PREINTEROP", dir_);
    ASSERT_EQ(r.status, NIXL_SUCCESS) << r.stderrText;
    EXPECT_TRUE(logLines(r.stderrText).empty()) << r.stderrText;
    ASSERT_NE(r.plugin, nullptr);
    const nixl_backend_plugin_t *desc = r.plugin->as<nixl_backend_plugin_t>();
    ASSERT_NE(desc, nullptr);
    EXPECT_EQ(desc->ops->size, NIXL_BE_OPS_MIN_SIZE);
    EXPECT_LT(NIXL_BE_OPS_MIN_SIZE, sizeof(nixl_be_ops_t));
    // The proxy does not read past the plugin's table: the appended entries are absent.
    std::unique_ptr<nixlBackendEngineProxy> engine;
    ASSERT_EQ(nixlBackendEngineProxy::create(r.plugin, "A", {}, nixlAgentConfig(), false, engine),
              NIXL_SUCCESS);
    std::string out = "unchanged";
    EXPECT_EQ(engine->getConnInfoNixl(out), NIXL_ERR_NOT_SUPPORTED);
    EXPECT_EQ(engine->getPublicDataNixl(nullptr, out), NIXL_ERR_NOT_SUPPORTED);
    EXPECT_EQ(out, "unchanged");
}

TEST_F(nixlPluginLoaderTest, SamePathGivesSameObjectOtherPathAnother) {
    scratchDir a;
    scratchDir b;
    a.copyFrom(dir_, "libplugin_CMIN.so");
    b.copyFrom(dir_, "libplugin_CMIN.so");

    loadResult first = loadCaptured(kBackend, "CMIN", a.path());
    loadResult again = loadCaptured(kBackend, "CMIN", a.path() + "/.");
    loadResult other = loadCaptured(kBackend, "CMIN", b.path());
    ASSERT_EQ(first.status, NIXL_SUCCESS) << first.stderrText;
    ASSERT_EQ(again.status, NIXL_SUCCESS) << again.stderrText;
    ASSERT_EQ(other.status, NIXL_SUCCESS) << other.stderrText;
    EXPECT_EQ(first.plugin.get(), again.plugin.get());
    EXPECT_NE(first.plugin.get(), other.plugin.get());
    EXPECT_NE(first.plugin->path(), other.plugin->path());

    // Accepted plugins are never unloaded: removing the file does not matter any more.
    fs::remove(first.plugin->path());
    loadResult cached = loadCaptured(kBackend, "CMIN", a.path());
    ASSERT_EQ(cached.status, NIXL_SUCCESS) << cached.stderrText;
    EXPECT_EQ(cached.plugin.get(), first.plugin.get());
}

TEST_F(nixlPluginLoaderTest, OneMechanismForAllThreeKinds) {
    loadResult exporter = loadCaptured(kExporter, "dummy", dir_);
    ASSERT_EQ(exporter.status, NIXL_SUCCESS) << exporter.stderrText;
    EXPECT_EQ(exporter.plugin->kind(), kExporter);
    EXPECT_EQ(exporter.plugin->path(), pathOf(dir_, kExporter, "dummy"));
    EXPECT_EQ(exporter.plugin->as<nixl_telemetry_exporter_plugin_t>()->hdr.kind,
              static_cast<uint32_t>(NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER));

    loadResult tracer = loadCaptured(kTracer, "dummy", dir_);
    ASSERT_EQ(tracer.status, NIXL_SUCCESS) << tracer.stderrText;
    EXPECT_EQ(tracer.plugin->kind(), kTracer);
    EXPECT_EQ(tracer.plugin->path(), pathOf(dir_, kTracer, "dummy"));
    // Same name, different kind: different files, different plugins.
    EXPECT_NE(tracer.plugin.get(), exporter.plugin.get());

    // A name only exists within its kind's prefix.
    loadResult wrong = loadCaptured(kExporter, "CMIN", dir_);
    EXPECT_EQ(wrong.status, NIXL_ERR_NOT_FOUND);
    std::vector<std::string> log = logLines(wrong.stderrText);
    ASSERT_EQ(log.size(), 1u) << wrong.stderrText;
    EXPECT_NE(log[0].find(pathOf(dir_, kExporter, "CMIN")), std::string::npos) << log[0];

    std::vector<std::string> ex = nixlPluginLoader::instance().loaded(kExporter);
    std::vector<std::string> tr = nixlPluginLoader::instance().loaded(kTracer);
    EXPECT_NE(std::find(ex.begin(), ex.end(), "dummy"), ex.end());
    EXPECT_NE(std::find(tr.begin(), tr.end(), "dummy"), tr.end());
}

// Plugins whose create_engine misbehaves are the backend proxy's problem, not the loader's.
TEST_F(nixlPluginLoaderTest, LoaderDoesNotCallCreateEngine) {
    for (const char *name : {"FACTORYTHROWS", "FACTORYNULL"}) {
        loadResult r = loadCaptured(kBackend, name, dir_);
        EXPECT_EQ(r.status, NIXL_SUCCESS) << name << ": " << r.stderrText;
        EXPECT_TRUE(logLines(r.stderrText).empty()) << r.stderrText;
    }
}

TEST_F(nixlPluginLoaderTest, DiscoverListsEachKindSorted) {
    nixlPluginLoader &loader = nixlPluginLoader::instance();
    std::vector<std::string> backends = loader.discover(kBackend, dir_);
    EXPECT_TRUE(std::is_sorted(backends.begin(), backends.end()));
    for (const char *n : {"CMIN", "FACTORYNULL", "FACTORYTHROWS", "FUTURE", "MISSINGDEP",
                          "NOENTRY", "NOTELF", "NOOPS", "STALE", "THROWS", "WRONGKIND",
                          "WRONGNAME"}) {
        EXPECT_NE(std::find(backends.begin(), backends.end(), n), backends.end()) << n;
    }
    // Plugins of other kinds are not backends.
    for (const std::string &n : backends) {
        EXPECT_NE(n, "dummy");
        EXPECT_NE(n, "stale");
        EXPECT_NE(n, "previous");
    }

    std::vector<std::string> exporters = loader.discover(kExporter, dir_);
    EXPECT_EQ(exporters, (std::vector<std::string>{"dummy", "previous", "stale"}));
    std::vector<std::string> tracers = loader.discover(kTracer, dir_);
    EXPECT_EQ(tracers, (std::vector<std::string>{"dummy"}));
}

TEST_F(nixlPluginLoaderTest, DiscoverListsOnlyRegularFilesWithTheExactShape) {
    scratchDir d;
    d.touch("libplugin_Zeta.so");
    d.touch("libplugin_Alpha.so");
    fs::create_symlink("libplugin_Alpha.so", fs::path(d.path()) / "libplugin_Link.so");
    fs::create_symlink("nowhere.so", fs::path(d.path()) / "libplugin_Dangling.so");
    fs::create_directory(fs::path(d.path()) / "libplugin_Dir.so");
    d.touch("libplugin_.so"); // empty name
    d.touch("libplugin_Versioned.so.1");
    d.touch("libplugin_Text.txt");
    d.touch("plugin_NoLib.so");
    d.touch("libtelemetry_exporter_prom.so");
    d.touch("libtrace_backend_nvtx.so");
    d.touch("README");

    nixlPluginLoader &loader = nixlPluginLoader::instance();
    testing::internal::CaptureStderr();
    std::vector<std::string> backends = loader.discover(kBackend, d.path());
    std::vector<std::string> exporters = loader.discover(kExporter, d.path());
    std::vector<std::string> tracers = loader.discover(kTracer, d.path());
    std::vector<std::string> none = loader.discover(kBackend, d.path() + "/does-not-exist");
    std::string err = testing::internal::GetCapturedStderr();

    EXPECT_EQ(backends, (std::vector<std::string>{"Alpha", "Link", "Zeta"}));
    EXPECT_EQ(exporters, (std::vector<std::string>{"prom"}));
    EXPECT_EQ(tracers, (std::vector<std::string>{"nvtx"}));
    EXPECT_TRUE(none.empty());
    // A missing directory is a normal setup, not an error.
    EXPECT_TRUE(logLines(err).empty()) << err;
}

TEST_F(nixlPluginLoaderTest, PluginDirEnvironmentOverridesAndIsReadAtEachCall) {
    scratchDir one;
    scratchDir two;
    one.copyFrom(dir_, "libplugin_CMIN.so");
    two.touch("libplugin_OnlyInTwo.so");

    nixlPluginLoader &loader = nixlPluginLoader::instance();
    {
        scopedEnv env("NIXL_PLUGIN_DIR", one.path().c_str());
        EXPECT_EQ(loader.defaultDirectory(), one.path());
        EXPECT_EQ(loader.discover(kBackend), (std::vector<std::string>{"CMIN"}));

        loadResult r = loadCaptured(kBackend, "CMIN", "");
        ASSERT_EQ(r.status, NIXL_SUCCESS) << r.stderrText;
        EXPECT_EQ(r.plugin->path(), pathOf(one.path(), kBackend, "CMIN"));
    }
    {
        scopedEnv env("NIXL_PLUGIN_DIR", two.path().c_str());
        EXPECT_EQ(loader.defaultDirectory(), two.path());
        EXPECT_EQ(loader.discover(kBackend), (std::vector<std::string>{"OnlyInTwo"}));

        // The name is looked up in the new directory, where CMIN is absent.
        loadResult r = loadCaptured(kBackend, "CMIN", "");
        EXPECT_EQ(r.status, NIXL_ERR_NOT_FOUND);
        std::vector<std::string> log = logLines(r.stderrText);
        ASSERT_EQ(log.size(), 1u) << r.stderrText;
        EXPECT_NE(log[0].find(pathOf(two.path(), kBackend, "CMIN")), std::string::npos)
            << log[0];
    }
    {
        // An explicit directory wins over the variable.
        scopedEnv env("NIXL_PLUGIN_DIR", two.path().c_str());
        loadResult r = loadCaptured(kBackend, "CMIN", one.path());
        ASSERT_EQ(r.status, NIXL_SUCCESS) << r.stderrText;
        EXPECT_EQ(r.plugin->path(), pathOf(one.path(), kBackend, "CMIN"));
    }
}

TEST_F(nixlPluginLoaderTest, DefaultDirectoryIsNextToLibnixl) {
    const std::string libdir = requiredEnv("NIXL_TEST_LIBNIXL_DIR");
    ASSERT_FALSE(libdir.empty()) << "NIXL_TEST_LIBNIXL_DIR must name the directory of libnixl";
    // Compared after resolving symlinks: the dynamic loader and meson may spell the build
    // directory differently.
    const fs::path expected = fs::weakly_canonical(fs::path(libdir) / "plugins");

    nixlPluginLoader &loader = nixlPluginLoader::instance();
    {
        scopedEnv env("NIXL_PLUGIN_DIR", nullptr);
        const std::string got = loader.defaultDirectory();
        EXPECT_TRUE(fs::path(got).is_absolute()) << got;
        EXPECT_EQ(fs::weakly_canonical(got), expected) << got;
    }
    {
        // Set but empty means unset: an empty path would silently mean the working directory.
        scopedEnv env("NIXL_PLUGIN_DIR", "");
        EXPECT_EQ(fs::weakly_canonical(loader.defaultDirectory()), expected);
    }
}

TEST_F(nixlPluginLoaderTest, ConcurrentLoadsOfOnePluginShareOneObject) {
    scratchDir fresh;
    const std::string path = fresh.copyFrom(dir_, "libplugin_CMIN.so");
    ASSERT_FALSE(isResident(path));

    constexpr int kThreads = 8;
    std::vector<pluginPtr> got(kThreads);
    std::vector<nixl_status_t> status(kThreads, NIXL_ERR_UNKNOWN);
    std::vector<nixl_status_t> badStatus(kThreads, NIXL_SUCCESS);
    std::latch start(kThreads);

    testing::internal::CaptureStderr();
    {
        std::vector<std::jthread> threads;
        for (int i = 0; i < kThreads; ++i) {
            threads.emplace_back([&, i] {
                start.arrive_and_wait();
                nixlPluginLoader &loader = nixlPluginLoader::instance();
                status[i] = loader.load(kBackend, "CMIN", got[i], fresh.path());
                // Refusals racing with the good load must not disturb it.
                pluginPtr ignored;
                badStatus[i] = loader.load(kBackend, "STALE", ignored, dir_);
            });
        }
    }
    std::string err = testing::internal::GetCapturedStderr();

    for (int i = 0; i < kThreads; ++i) {
        ASSERT_EQ(status[i], NIXL_SUCCESS) << "thread " << i << ": " << err;
        EXPECT_EQ(got[i].get(), got[0].get()) << "thread " << i;
        EXPECT_EQ(badStatus[i], NIXL_ERR_MISMATCH) << "thread " << i;
    }
    EXPECT_EQ(got[0]->path(), path);

    // One refusal line per STALE attempt, none for CMIN.
    std::vector<std::string> log = logLines(err);
    EXPECT_EQ(log.size(), static_cast<size_t>(kThreads)) << err;
    for (const std::string &l : log) {
        EXPECT_TRUE(isErrorLine(l)) << l;
        EXPECT_NE(l.find("libplugin_STALE.so"), std::string::npos) << l;
    }
}

} // namespace
