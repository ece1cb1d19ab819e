/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The example readers (examples/python/telemetry_reader.py and examples/cpp/telemetry_reader)
// against rings written by the C++ code: they read what the producer wrote, resume when
// re-attached, hand their read position back to other readers, and refuse other layout versions
// cleanly. meson passes the interpreter, script and executable paths; each meson test selects
// one reader with --gtest_filter (*python* or *cpp*).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "nixl_xfer_path.h"
#include "common/shared_ring.h"
#include "nixl.h"
#include "ring_test_util.h"

namespace {

struct event {
    uint32_t type;
    uint32_t pad;
    uint64_t value;
};
using eventRing = nixlSharedRing<event>;

struct runResult {
    int status = -1;
    std::string out; // stdout and stderr
};

std::string
quote(const std::string &s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') {
            q += "'\\''";
        } else {
            q += c;
        }
    }
    return q + "'";
}

class readerTest : public ::testing::TestWithParam<std::string> {
protected:
    void
    SetUp() override {
        if (GetParam() == "python") {
            const char *py = std::getenv("NIXL_TEST_PYTHON");
            const char *script = std::getenv("NIXL_TEST_PY_READER");
            ASSERT_TRUE(py != nullptr && script != nullptr)
                << "run through meson: NIXL_TEST_PYTHON and NIXL_TEST_PY_READER are not set";
            python_ = py;
            script_ = script;
            reader_ = quote(python_) + " " + quote(script_);
        } else {
            const char *exe = std::getenv("NIXL_TEST_CPP_READER");
            ASSERT_TRUE(exe != nullptr) << "run through meson: NIXL_TEST_CPP_READER is not set";
            reader_ = quote(exe);
        }
    }

    runResult
    run(const std::string &args) {
        const std::string cmd = reader_ + " " + args + " 2>&1";
        runResult r;
        FILE *p = ::popen(cmd.c_str(), "r");
        if (p == nullptr) {
            return r;
        }
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) {
            r.out.append(buf, n);
        }
        const int st = ::pclose(p);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        return r;
    }

    runResult
    read(const std::string &path, int count, double timeout = 20) {
        std::ostringstream a;
        a << "--telemetry_path " << quote(path) << " --count " << count << " --timeout "
          << timeout << " --poll_interval 0.01";
        return run(a.str());
    }

    // The "<type> <name> <value>" lines of the output, as (type, value).
    static std::vector<std::pair<uint32_t, uint64_t>>
    events(const std::string &out) {
        std::vector<std::pair<uint32_t, uint64_t>> ev;
        std::istringstream in(out);
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == '#') {
                continue;
            }
            std::istringstream l(line);
            uint32_t type = 0;
            std::string name;
            uint64_t value = 0;
            if (l >> type >> name >> value) {
                ev.emplace_back(type, value);
            }
        }
        return ev;
    }

    std::string python_;
    std::string script_;
    std::string reader_; // shell command prefix
    ringTestDir dir_;
};

INSTANTIATE_TEST_SUITE_P(reader,
                         readerTest,
                         ::testing::Values("python", "cpp"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

class pythonReaderTest : public readerTest {};

INSTANTIATE_TEST_SUITE_P(reader,
                         pythonReaderTest,
                         ::testing::Values("python"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

TEST_P(readerTest, ReadsEventsAndResumesWhenReattached) {
    std::string error;
    auto producer = eventRing::create(dir_.path("agent"), 16, error);
    ASSERT_TRUE(producer) << error;
    for (uint64_t i = 0; i < 10; ++i) {
        ASSERT_TRUE(producer->push(event{uint32_t(i % 21), 0, 1000 + i}));
    }
    auto r1 = read(dir_.path("agent"), 4);
    ASSERT_EQ(r1.status, 0) << r1.out;
    auto e1 = events(r1.out);
    ASSERT_EQ(e1.size(), 4u) << r1.out;
    for (uint64_t i = 0; i < 4; ++i) {
        EXPECT_EQ(e1[i].first, i % 21);
        EXPECT_EQ(e1[i].second, 1000 + i);
    }
    EXPECT_NE(r1.out.find("0 agent_tx_bytes 1000"), std::string::npos) << r1.out;

    // More events across the wrap while no reader is attached; the next reader resumes.
    for (uint64_t i = 10; i < 19; ++i) {
        ASSERT_TRUE(producer->push(event{uint32_t(i % 21), 0, 1000 + i}));
    }
    auto r2 = read(dir_.path("agent"), 15);
    ASSERT_EQ(r2.status, 0) << r2.out;
    auto e2 = events(r2.out);
    ASSERT_EQ(e2.size(), 15u) << r2.out;
    for (uint64_t i = 0; i < 15; ++i) {
        EXPECT_EQ(e2[i].second, 1004 + i);
    }
    EXPECT_TRUE(producer->empty());

    // Nothing left: --count 1 times out with status 2 and no events.
    auto r3 = read(dir_.path("agent"), 1, 0.2);
    EXPECT_EQ(r3.status, 2) << r3.out;
    EXPECT_TRUE(events(r3.out).empty()) << r3.out;

    // The reader stored its position: a C++ ring object continues after it.
    ASSERT_TRUE(producer->push(event{20, 0, 77}));
    auto cpp = eventRing::attach(dir_.path("agent"), error);
    ASSERT_TRUE(cpp) << error;
    event ev{};
    ASSERT_TRUE(cpp->pop(ev));
    EXPECT_EQ(ev.value, 77u);
    EXPECT_FALSE(cpp->pop(ev));
}

TEST_P(readerTest, FollowsALiveProducer) {
    std::string error;
    auto producer = eventRing::create(dir_.path("live"), 8, error);
    ASSERT_TRUE(producer) << error;
    const std::string cmd = reader_ + " --telemetry_path " +
        quote(dir_.path("live")) + " --count 200 --timeout 60 --poll_interval 0.001 2>&1";
    FILE *p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    // 200 events through a ring of 7: only possible if the reader keeps freeing slots. The
    // deadline only bounds a broken reader; the loop ends as soon as the reader drained enough.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    uint64_t pushed = 0;
    while (pushed < 200 && std::chrono::steady_clock::now() < deadline) {
        if (producer->push(event{6, 0, pushed})) {
            ++pushed;
        } else {
            ::usleep(1000); // back off while the reader drains
        }
    }
    EXPECT_EQ(pushed, 200u);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) {
        out.append(buf, n);
    }
    const int st = ::pclose(p);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
    auto ev = events(out);
    ASSERT_EQ(ev.size(), 200u) << out;
    for (uint64_t i = 0; i < 200; ++i) {
        EXPECT_EQ(ev[i].second, i);
    }
}

TEST_P(readerTest, ReportsLostEvents) {
    std::string error;
    auto producer = eventRing::create(dir_.path("lossy"), 4, error);
    ASSERT_TRUE(producer) << error;
    producer->addLost(12);
    auto r = read(dir_.path("lossy"), 0, 0.05);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("lost_events 12"), std::string::npos) << r.out;
}

TEST_P(readerTest, Version5RingIsRefusedInOneLineNamingBothVersions) {
    // Version 5 has version 6's header but numbers "events dropped" 20, which is now
    // agent_trace_phases_dropped: the reader must refuse it, not print it under the new names.
    writeV5Ring(dir_.path("v5"), 16);
    auto r = read(dir_.path("v5"), 2, 1);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_TRUE(events(r.out).empty()) << r.out;
    ASSERT_FALSE(r.out.empty());
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line: " << r.out;
    EXPECT_NE(r.out.find(dir_.path("v5")), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("version mismatch: expected 6, got 5"), std::string::npos) << r.out;
}

TEST_P(readerTest, NamesTheTracePhaseCounter) {
    std::string error;
    auto producer = eventRing::create(dir_.path("phases"), 8, error);
    ASSERT_TRUE(producer) << error;
    ASSERT_TRUE(producer->push(event{20, 0, 7}));
    ASSERT_TRUE(producer->push(event{21, 0, 2}));
    auto r = read(dir_.path("phases"), 2);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("20 agent_trace_phases_dropped 7\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("21 agent_telemetry_events_dropped 2\n"), std::string::npos) << r.out;
}

// Issue 34: the word after the type carries the data path (and a fallback's reason); both
// readers print it after the value, and nothing for a zero word, so older lines are unchanged.
TEST_P(readerTest, PathWordIsPrintedByBothReaders) {
    std::string error;
    auto producer = eventRing::create(dir_.path("paths"), 8, error);
    ASSERT_TRUE(producer) << error;
    ASSERT_TRUE(producer->push(event{0, NIXL_XFER_PATH_UCX_DIRECT_MEMCPY, 4096}));
    ASSERT_TRUE(producer->push(event{2, NIXL_XFER_PATH_UCX_UCP |
                                            (NIXL_PATH_FALLBACK_DISABLED_BY_CONFIG
                                             << NIXL_TELEMETRY_FALLBACK_SHIFT),
                                     0}));
    ASSERT_TRUE(producer->push(event{1, NIXL_XFER_PATH_POSIX_URING, 7}));
    ASSERT_TRUE(producer->push(event{4, 0, 9}));
    // A reason and a path past the tables (a newer libnixl's): both readers print the reason as
    // "other" and the path by number, the same words.
    ASSERT_TRUE(producer->push(event{3, 200u | (201u << NIXL_TELEMETRY_FALLBACK_SHIFT), 0}));
    auto r = read(dir_.path("paths"), 5);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("0 agent_tx_bytes 4096 path=UCX/direct_memcpy\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("2 agent_tx_requests_num 0 fallback=UCX/ucp reason=disabled_by_config\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("1 agent_rx_bytes 7 path=POSIX/uring\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("4 agent_memory_registered 9\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("3 agent_rx_requests_num 0 fallback=path_200 reason=other\n"),
              std::string::npos)
        << r.out;
}

TEST_P(readerTest, OtherVersionsAndBadFilesFailCleanly) {
    writeV4Ring(dir_.path("v4"), 16);
    auto r4 = read(dir_.path("v4"), 1, 1);
    EXPECT_EQ(r4.status, 1) << r4.out;
    EXPECT_NE(r4.out.find("version mismatch: expected 6, got 4"), std::string::npos) << r4.out;
    EXPECT_EQ(r4.out.find("Traceback"), std::string::npos) << r4.out;

    std::vector<uint8_t> v7(1024 + 256, 0);
    putInt<int32_t>(v7, 16, 7);
    writeBytes(dir_.path("v7"), v7);
    auto r7 = read(dir_.path("v7"), 1, 1);
    EXPECT_EQ(r7.status, 1) << r7.out;
    EXPECT_NE(r7.out.find("version mismatch: expected 6, got 7"), std::string::npos) << r7.out;

    std::vector<uint8_t> shortFile(10, 0);
    writeBytes(dir_.path("short"), shortFile);
    auto rs = read(dir_.path("short"), 1, 1);
    EXPECT_EQ(rs.status, 1) << rs.out;
    EXPECT_NE(rs.out.find(dir_.path("short") + ": too small"), std::string::npos) << rs.out;

    std::string error;
    ASSERT_TRUE(eventRing::create(dir_.path("big"), 8, error)) << error;
    {
        std::vector<uint8_t> b = readBytes(dir_.path("big"));
        b.resize(b.size() + 16);
        writeBytes(dir_.path("big"), b);
    }
    auto rb = read(dir_.path("big"), 1, 1);
    EXPECT_EQ(rb.status, 1) << rb.out;
    EXPECT_NE(rb.out.find("needs 640 bytes but the file has 656"), std::string::npos) << rb.out;

    auto rm = read(dir_.path("missing"), 1, 1);
    EXPECT_EQ(rm.status, 1) << rm.out;
    EXPECT_EQ(rm.out.find("Traceback"), std::string::npos) << rm.out;
}

TEST_P(pythonReaderTest, LayoutCheckCatchesDrift) {
    // A mirror with two fields swapped keeps the size at 512; the offset check must catch it.
    const std::string dir = script_.substr(0, script_.rfind('/'));
    const std::string code =
        "import ctypes, sys\n"
        "sys.path.insert(0, " + quote(dir) + ")\n"
        "import telemetry_reader as t\n"
        "t.check_layout()\n"
        "f = list(t.RingHeader._fields_)\n"
        "f[1], f[2], f[3] = f[2], f[3], f[1]\n"
        "Drift = type('Drift', (ctypes.Structure,), {'_fields_': f})\n"
        "assert ctypes.sizeof(Drift) == 512\n"
        "try:\n"
        "    t.check_layout(Drift)\n"
        "except t.RingLayoutError as e:\n"
        "    print('caught:', e)\n"
        "    sys.exit(0)\n"
        "sys.exit(3)\n";
    const std::string cmd = quote(python_) + " -c " + quote(code) + " 2>&1";
    FILE *p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[1024];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) {
        out.append(buf, n);
    }
    const int st = ::pclose(p);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
    EXPECT_NE(out.find("caught: Drift.capacity is at byte"), std::string::npos) << out;
}

} // namespace

// agent_trace_phases_dropped end to end into the ring: two agents whose trace plugin throws
// from the marks of backend phases (test/unit/tracing/trace_markthrows_plugin.cpp), telemetry
// on with the BUFFER exporter. Every phase the TEST backend records is dropped by core's phase
// sink and counted; the count reaches each agent's ring as type 20, which the reader names.
namespace {

/** Sets (or unsets, with nullptr) a variable for the scope. */
class envVar {
public:
    envVar(const char *name, const char *value) : name_(name) {
        if (const char *old = std::getenv(name)) {
            old_ = old;
            had_ = true;
        }
        value != nullptr ? ::setenv(name, value, 1) : ::unsetenv(name);
    }

    ~envVar() {
        had_ ? ::setenv(name_.c_str(), old_.c_str(), 1) : ::unsetenv(name_.c_str());
    }

    envVar(const envVar &) = delete;
    envVar &
    operator=(const envVar &) = delete;

private:
    std::string name_;
    std::string old_;
    bool had_ = false;
};

nixl_xfer_dlist_t
oneDesc(const std::vector<uint8_t> &buf) {
    nixl_xfer_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0));
    return l;
}

nixl_reg_dlist_t
oneReg(const std::vector<uint8_t> &buf) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, ""));
    return l;
}

} // namespace

TEST_P(readerTest, TracePhasesDroppedByAnAgentReachItsRing) {
    const char *plugins = std::getenv("NIXL_TEST_BACKEND_PLUGIN_DIR");
    const char *traces = std::getenv("NIXL_TEST_TRACE_PLUGIN_DIR");
    ASSERT_TRUE(plugins != nullptr && traces != nullptr) << "run through meson test";
    const std::string pdir = dir_.path("plugins");
    const std::string tdir = dir_.path("telemetry");
    ASSERT_TRUE(std::filesystem::create_directory(pdir));
    ASSERT_TRUE(std::filesystem::create_directory(tdir));
    std::filesystem::create_symlink(std::string(plugins) + "/libplugin_TEST.so",
                                    pdir + "/libplugin_TEST.so");
    std::filesystem::create_symlink(std::string(traces) + "/libtrace_backend_markthrows.so",
                                    pdir + "/libtrace_backend_markthrows.so");
    {
        envVar plugin_dir("NIXL_PLUGIN_DIR", pdir.c_str());
        envVar backends("NIXL_TRACE_BACKENDS", "markthrows");
        envVar enable("NIXL_TELEMETRY_ENABLE", "y");
        envVar tel_dir("NIXL_TELEMETRY_DIR", tdir.c_str());
        envVar exporter("NIXL_TELEMETRY_EXPORTER", nullptr);
        std::vector<uint8_t> src(256, 1);
        std::vector<uint8_t> dst(256, 2);
        nixlAgent a("A", nixlAgentConfig());
        nixlAgent b("B", nixlAgentConfig());
        nixlBackendH *ha = nullptr;
        nixlBackendH *hb = nullptr;
        ASSERT_EQ(a.createBackend("TEST", {}, ha), NIXL_SUCCESS);
        ASSERT_EQ(b.createBackend("TEST", {}, hb), NIXL_SUCCESS);
        ASSERT_EQ(a.registerMem(oneReg(src)), NIXL_SUCCESS);
        ASSERT_EQ(b.registerMem(oneReg(dst)), NIXL_SUCCESS);
        nixl_blob_t md;
        ASSERT_EQ(b.getLocalMD(md), NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a.loadRemoteMD(md, name), NIXL_SUCCESS);
        nixl_opt_args_t extra;
        extra.notif = "n";
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a.createXferReq(NIXL_WRITE, oneDesc(src), oneDesc(dst), "B", req, &extra),
                  NIXL_SUCCESS);
        nixl_status_t st = a.postXferReq(req);
        for (int i = 0; i < 1000 && st == NIXL_IN_PROG; ++i) {
            st = a.getXferStatus(req);
        }
        ASSERT_EQ(st, NIXL_SUCCESS);
        ASSERT_EQ(a.releaseXferReq(req), NIXL_SUCCESS);
        nixl_notifs_t notifs;
        ASSERT_EQ(b.getNotifs(notifs), NIXL_SUCCESS);
        ASSERT_EQ(notifs["A"].size(), 1u);
        // Both agents are destroyed here: their final flush puts the count into the rings.
    }
    // Everything is in the rings already: the reader reads what there is and stops at its
    // timeout (count 0 = no target, exit 0).
    for (const auto &[agent, want] : {std::pair<std::string, uint64_t>{"A", 4}, {"B", 1}}) {
        auto r = read(tdir + "/" + agent, 0, 1);
        EXPECT_EQ(r.status, 0) << r.out;
        uint64_t dropped = 0;
        for (const auto &[type, value] : events(r.out)) {
            dropped += type == 20 ? value : 0;
        }
        // A: SUBMIT, WIRE_SUBMITTED, WIRE_COMPLETED, NOTIF_SENT; B: NOTIF_RECEIVED.
        EXPECT_EQ(dropped, want) << agent << ":\n" << r.out;
        EXPECT_NE(r.out.find(" agent_trace_phases_dropped "), std::string::npos) << r.out;
    }
}
