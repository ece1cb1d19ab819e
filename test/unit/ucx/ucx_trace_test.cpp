/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX backend as a trace-context carrier (issue 12 item 5): with NIXL_TRACE_BACKENDS=chrome
// in both processes, the initiator's phases of a WRITE with notification carry its request's
// trace id, and the target's NOTIF_RECEIVED and REMOTE_OBSERVED carry the same id, read back
// from the JSON files of both processes. In one process: a damaged context (fault injection on
// the sender) still delivers the notification, records the target's phase without a trace id
// and logs one line; with tracing off the phases are absent and nothing is carried.

#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "ucx_test_utils.h"
#include "../../common/scoped_env.h"

using namespace nixl_ucx_test;
using nixl_test::scopedEnv;

namespace {

/** Marks of a chrome trace file, one per line as the plugin writes them. */
struct traceFile {
    std::vector<std::string> lines;

    /** Lines of marks named name of the UCX backend. */
    std::vector<std::string>
    phases(const std::string &name) const {
        std::vector<std::string> out;
        for (const auto &l : lines) {
            if (l.find("\"name\":\"" + name + "\"") != std::string::npos &&
                l.find("\"nixl.phase.backend\":\"UCX\"") != std::string::npos) {
                out.push_back(l);
            }
        }
        return out;
    }
};

/** The string value of "name" in a line (up to its closing quote), "" when absent. */
std::string
stringOf(const std::string &line, const std::string &name) {
    const std::string key = "\"" + name + "\":\"";
    const size_t at = line.find(key);
    if (at == std::string::npos) {
        return "";
    }
    const size_t end = line.find('"', at + key.size());
    return end == std::string::npos ? "" : line.substr(at + key.size(), end - at - key.size());
}

/** The value of "nixl.phase.trace_id" in a line, "" when absent. */
std::string
traceIdOf(const std::string &line) {
    return stringOf(line, "nixl.phase.trace_id");
}

/** The trace file of process pid in dir; empty lines if there is none. */
traceFile
readTrace(const std::string &dir, pid_t pid) {
    traceFile t;
    const std::string prefix = "nixl-trace-" + std::to_string(pid) + "-";
    DIR *d = ::opendir(dir.c_str());
    if (d == nullptr) {
        return t;
    }
    while (dirent *e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n.rfind(prefix, 0) == 0) {
            std::ifstream in(dir + "/" + n);
            std::string line;
            while (std::getline(in, line)) {
                t.lines.push_back(line);
            }
        }
    }
    ::closedir(d);
    return t;
}

struct traceParam {
    const char *name;
    bool direct;
    bool progThread;
};

class ucxTraceTwoProcTest : public ::testing::TestWithParam<traceParam> {
protected:
    void
    SetUp() override {
#ifndef NIXL_UCX_TEST_CHROME
        GTEST_SKIP() << "the chrome trace plugin is not built";
#endif
        char tmpl[] = "/tmp/nixl-ucx-trace-XXXXXX";
        ASSERT_NE(nullptr, ::mkdtemp(tmpl));
        root_ = tmpl;
        dir_ = root_ + "/traces";
        backends_ = std::make_unique<scopedEnv>("NIXL_TRACE_BACKENDS", "chrome");
        traceDir_ = std::make_unique<scopedEnv>("NIXL_TRACE_DIR", dir_.c_str());
        // Every getNotifs is a span. Both sides poll at most once per poll_pace, so a thread
        // records at most 60,000 spans per minute (a hang deadline) of under 128 bytes each:
        // a 16 MiB ring holds two minutes of them even if the writer never ran, more than
        // the test can last, so no phase can be dropped for lack of room.
        buffer_ = std::make_unique<scopedEnv>("NIXL_TRACE_CHROME_BUFFER_BYTES", "16777216");
    }

    void
    TearDown() override {
        buffer_.reset();
        traceDir_.reset();
        backends_.reset();
        if (!root_.empty()) {
            EXPECT_EQ(0, std::system(("rm -rf '" + root_ + "'").c_str()));
        }
    }

    ucxSetup
    setup() const {
        ucxSetup s;
        s.params["ucx_direct_cma"] = GetParam().direct ? "yes" : "no";
        s.progThread = GetParam().progThread;
        return s;
    }

    std::string root_;
    std::string dir_;
    std::unique_ptr<scopedEnv> backends_;
    std::unique_ptr<scopedEnv> traceDir_;
    std::unique_ptr<scopedEnv> buffer_;
};

constexpr auto poll_pace = std::chrono::milliseconds(1);

TEST_P(ucxTraceTwoProcTest, TargetRecordsTheInitiatorsTraceId) {
    auto a = ucxAgent::make("A", setup());
    ASSERT_TRUE(a);
    testMem buf(1 << 20);
    ASSERT_EQ(a->registerDram(buf.addr(), buf.size()), NIXL_SUCCESS);
    peerConfig cfg;
    cfg.name = "B";
    cfg.bufSize = 1 << 20;
    cfg.setup = setup();
    cfg.env["NIXL_TRACE_BACKENDS"] = "chrome";
    cfg.env["NIXL_TRACE_DIR"] = dir_;
    // The child polls between commands too (a UCX-path target without a progress thread,
    // e.g. under UCX_TLS=tcp, must progress for the WRITE to complete), paced like the rest.
    cfg.pollWhileIdle = true;
    cfg.pollPaceUs = std::chrono::duration_cast<std::chrono::microseconds>(poll_pace).count();
    peerProcess b;
    std::string err;
    ASSERT_TRUE(b.start(cfg, err)) << err;
    std::string got;
    ASSERT_EQ(a->agent->loadRemoteMD(b.md(), got), NIXL_SUCCESS);
    ASSERT_TRUE(b.loadMD(a->md()));
    notifBox box;
    // Pacing, not synchronisation: the conditions are still awaited (see SetUp).
    auto pollA = [&] {
        box.poll(*a->agent);
        std::this_thread::sleep_for(poll_pace);
    };
    // One notification each way first (docs/backends/ucx.md, Limits): wireup done both ways.
    bool replied = false;
    ASSERT_EQ(b.cmd("expect A hello"), "ok");
    ASSERT_EQ(b.cmd("gennotif A hi"), "ok");
    ASSERT_EQ(b.cmdWhile("await hello",
                         [&] {
                             pollA();
                             if (!replied && box.count("B", "hi") == 1) {
                                 replied = a->agent->genNotif("B", "hello") == NIXL_SUCCESS;
                             }
                         }),
              "ok");

    const size_t len = 256 * 1024;
    fillPattern(buf.data(), len, 61);
    ASSERT_EQ(b.cmd("expect A traced 61 0 " + std::to_string(len)), "ok");
    nixl_opt_args_t extra;
    extra.notif = "traced";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a->agent->createXferReq(NIXL_WRITE, xferList({{buf.addr(), len}}),
                                      xferList({{b.bufAddr(), len}}), "B", req, &extra),
              NIXL_SUCCESS);
    ASSERT_EQ(runXfer(*a->agent, req, pollA), NIXL_SUCCESS);
    ASSERT_EQ(b.cmdWhile("await traced", pollA), "ok");
    ASSERT_EQ(a->agent->releaseXferReq(req), NIXL_SUCCESS);

    // The initiator goes first, then the target (the orderly teardown of the Limits section).
    a.reset();
    const pid_t bpid = b.pid();
    ASSERT_EQ(b.cmd("exit"), "bye");
    ASSERT_EQ(b.wait(), 0);

    const traceFile init = readTrace(dir_, ::getpid());
    const traceFile other = readTrace(dir_, bpid);
    ASSERT_FALSE(init.lines.empty());
    ASSERT_FALSE(other.lines.empty());

    // The initiator: one request, so one correlation id on all four of its phases, which
    // names the post span; that span carries the request's trace id (the phases do not repeat
    // it).
    std::set<std::string> corrs;
    for (const char *p : {"nixl::backend.submit", "nixl::backend.wire_submitted",
                          "nixl::backend.wire_completed", "nixl::backend.notif_sent"}) {
        const auto marks = init.phases(p);
        ASSERT_EQ(marks.size(), 1u) << p;
        EXPECT_EQ(traceIdOf(marks[0]), "") << marks[0];
        corrs.insert(stringOf(marks[0], "correlation_id"));
    }
    ASSERT_EQ(corrs.size(), 1u);
    ASSERT_NE(*corrs.begin(), "");
    std::string id;
    for (const auto &l : init.lines) {
        if (l.find("\"name\":\"nixl::postXferReq.write\"") != std::string::npos &&
            stringOf(l, "correlation_id") == *corrs.begin()) {
            id = stringOf(l, "trace_id");
        }
    }
    ASSERT_EQ(id.size(), 32u);
    EXPECT_NE(id, std::string(32, '0'));
    EXPECT_NE(init.phases("nixl::backend.submit")[0].find(
                  GetParam().direct && cmaInTls() ? "\"ucx.path\":\"direct\""
                                                   : "\"ucx.path\":\"ucx\""),
              std::string::npos);

    // The target: the handshake's "hello" came without a request, so without a trace id; the
    // transfer's notification under the initiator's id, received and then delivered.
    const auto received = other.phases("nixl::backend.notif_received");
    ASSERT_EQ(received.size(), 2u);
    std::vector<std::string> rids;
    for (const auto &l : received) {
        rids.push_back(traceIdOf(l));
    }
    std::sort(rids.begin(), rids.end()); // two threads may record them (progress thread)
    EXPECT_EQ(rids, (std::vector<std::string>{"", id}));
    const auto observed = other.phases("nixl::backend.remote_observed");
    ASSERT_EQ(observed.size(), 1u);
    EXPECT_EQ(traceIdOf(observed[0]), id);
    // Nothing was dropped in either file (the last counter says 0), so the counts above are
    // the phases recorded, not what happened to fit.
    for (const traceFile *f : {&init, &other}) {
        std::string last;
        for (const auto &l : f->lines) {
            if (l.find("\"nixl.dropped_events\"") != std::string::npos) {
                last = l;
            }
        }
        EXPECT_TRUE(last.empty() || last.find("\"dropped\":0") != std::string::npos) << last;
    }
    // Nothing of the target carries a trace id the initiator did not send.
    for (const auto &l : other.lines) {
        const std::string t = traceIdOf(l);
        EXPECT_TRUE(t.empty() || t == id) << l;
    }
}

INSTANTIATE_TEST_SUITE_P(Paths,
                         ucxTraceTwoProcTest,
                         ::testing::Values(traceParam{"direct", true, false},
                                           traceParam{"ucp_pt", false, true}),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
