/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Drives libplugin_TEST.so through its C ABI only, the way libnixl does: dlopen it from
 * NIXL_PLUGIN_DIR, fetch the descriptor, create engines "A" and "B", exchange connection info
 * and public data, and move bytes. Every assertion is about behaviour (bytes, statuses,
 * notifications, log lines); nothing waits on time.
 * The tests are split by topic over test_backend_*_test.cpp; test_backend_fixture.h has what they
 * share. This file: descriptor, creation and parameters; transfers; notifications.
 */
#include <mutex>

#include "test_backend_fixture.h"

namespace nixlTestBackendUt {
namespace {

// ---------------------------------------------------------------------------------------------
// Descriptor, creation and parameters

TEST_F(testBackend, DescriptorNamesTestPluginWithDramOnly) {
    const nixl_backend_plugin_t *p = plugin();
    EXPECT_EQ(p->hdr.abi_version, NIXL_BACKEND_ABI_VERSION);
    EXPECT_EQ(p->hdr.kind, static_cast<uint32_t>(NIXL_PLUGIN_KIND_BACKEND));
    EXPECT_EQ(p->hdr.size, sizeof(nixl_backend_plugin_t));
    EXPECT_STREQ(p->hdr.name, "TEST");
    EXPECT_STREQ(p->hdr.version, "1.0.0");
    EXPECT_EQ(p->mem_mask, NIXL_BE_MEM_BIT(DRAM_SEG));
    ASSERT_NE(p->ops, nullptr);
    EXPECT_EQ(p->ops->size, sizeof(nixl_be_ops_t));

    kv_map_t defaults;
    nixl_plugin_kv_sink_t sink{&defaults, putKv};
    ASSERT_EQ(p->get_options(&sink), NIXL_PLUGIN_SUCCESS);
    const kv_map_t expected = {
        {"async", "false"},
        {"async_polls", "1"},
        {"fail_post_at", "0"},
        {"fail_register_at", "0"},
        {"disconnect_after", "0"},
        {"fail_release", "false"},
        {"fail_create", "false"},
        {"trace_phases", "true"},
        {"hold_notifs", "false"},
    };
    EXPECT_EQ(defaults, expected);
}

TEST_F(testBackend, CreateReportsCapabilitiesAndEffectiveParams) {
    testEngine a("A", {{"async_polls", "4"}, {"color", "blue"}});
    ASSERT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(a.info().caps, NIXL_BE_CAP_REMOTE | NIXL_BE_CAP_LOCAL | NIXL_BE_CAP_NOTIF);
    EXPECT_EQ(a.info().mem_mask, NIXL_BE_MEM_BIT(DRAM_SEG));

    kv_map_t params = a.params();
    EXPECT_EQ(params["color"], "blue"); // unknown keys are kept
    EXPECT_EQ(params["async_polls"], "4"); // given values win
    EXPECT_EQ(params["async"], "false"); // defaults are filled in
    EXPECT_EQ(params["disconnect_after"], "0");
    EXPECT_EQ(params["trace_sink"], "none"); // reported: core gave no trace sink
    EXPECT_EQ(params["trace_phases"], "true");
    EXPECT_EQ(params["hold_notifs"], "false");
    EXPECT_EQ(params.size(), 11u);
}

namespace {

/** A trace sink that records what the engine gives it: "phase label" and the timestamps. */
struct phaseLog {
    std::mutex lock;
    std::vector<std::string> phases;
    std::vector<uint64_t> ts;
    std::vector<size_t> attrCounts;
    nixl_be_trace_sink_t sink{sizeof(nixl_be_trace_sink_t), this, &phaseLog::record};

    static void
    record(void *ctx,
           const nixl_be_trace_ctx_t *,
           uint32_t phase,
           nixl_plugin_str_t label,
           uint64_t ts_us,
           const nixl_trace_attr_t *,
           size_t n_attrs) {
        auto *self = static_cast<phaseLog *>(ctx);
        std::lock_guard<std::mutex> guard(self->lock);
        self->phases.push_back(std::string(nixl_be_trace_phase_name(phase)) + " " +
                               std::string(label.data, label.len));
        self->ts.push_back(ts_us);
        self->attrCounts.push_back(n_attrs);
    }
};

} // namespace

TEST_F(testBackend, TraceSinkGivenIsReportedAndAsyncWriteRecordsItsPhases) {
    phaseLog logA, logB;
    pairSetup s({{"async", "true"}, {"async_polls", "1"}}, 4096, &logA.sink, &logB.sink);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s.a.params()["trace_sink"], "given");
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    const nixl_be_opt_args_t opt = notifArgs("hi");
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req, &opt), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(logA.phases, std::vector<std::string>{"submit test.post"}); // the copy waits
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(logA.phases,
              (std::vector<std::string>{"submit test.post", "wire_submitted test.copy",
                                        "wire_completed test.copy", "notif_sent test.notif"}));
    EXPECT_EQ(logA.attrCounts[0], 1u); // test.descs
    // Recorded as they happen: 0 leaves the time to core's trace clock (nixlTraceNow).
    EXPECT_EQ(logA.ts, std::vector<uint64_t>(logA.ts.size(), 0u));
    EXPECT_TRUE(logB.phases.empty()); // nothing delivered yet
    EXPECT_EQ(s.b.notifs().size(), 1u);
    EXPECT_EQ(logB.phases, std::vector<std::string>{"notif_received test.notif"});
    EXPECT_EQ(logB.ts[0], 0u);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, FailCreateFailsCreationWithLogLine) {
    size_t mark = logRecorder::instance().mark();
    testEngine a("A", {{"fail_create", "true"}});
    EXPECT_EQ(a.status(), NIXL_PLUGIN_ERR_BACKEND);
    EXPECT_EQ(a.get(), nullptr);
    expectOneError(mark, {"agent 'A'", "fail_create"});

    // The failed engine left nothing behind: an agent of the same name works.
    testEngine again("A");
    EXPECT_EQ(again.status(), NIXL_PLUGIN_SUCCESS);
}

using param_case_t = std::pair<const char *, const char *>;

class invalidParamTest : public testBackend,
                         public ::testing::WithParamInterface<param_case_t> {};

TEST_P(invalidParamTest, InvalidValueFailsCreationNamingKeyAndValue) {
    const auto &[key, value] = GetParam();
    size_t mark = logRecorder::instance().mark();
    testEngine a("A", {{key, value}});
    EXPECT_EQ(a.status(), NIXL_PLUGIN_ERR_BACKEND);
    const std::string quoted_key = std::string("'") + key + "'";
    const std::string quoted_value = std::string("'") + value + "'";
    expectOneError(mark, {"agent 'A'", quoted_key, quoted_value});
}

INSTANTIATE_TEST_SUITE_P(allKeys,
                         invalidParamTest,
                         ::testing::Values(std::make_pair("async", "maybe"),
                                           std::make_pair("async_polls", "abc"),
                                           std::make_pair("async_polls", "-1"),
                                           std::make_pair("fail_post_at", "1x"),
                                           std::make_pair("fail_register_at", ""),
                                           std::make_pair("disconnect_after", " 2"),
                                           std::make_pair("disconnect_after",
                                                          "99999999999999999999999"),
                                           std::make_pair("fail_release", "tru"),
                                           std::make_pair("fail_create", "2")));

// Flags take NIXL's boolean words in any case, like every NIXL_* option.
TEST_F(testBackend, FlagsAcceptNixlBooleanWords) {
    for (const char *word : {"Yes", "1", "ON", "enable", "y"}) {
        SCOPED_TRACE(word);
        size_t mark = logRecorder::instance().mark();
        testEngine a("A", {{"fail_create", word}});
        EXPECT_EQ(a.status(), NIXL_PLUGIN_ERR_BACKEND);
        expectOneError(mark, {"agent 'A'", "fail_create"});
    }
    for (const char *word : {"No", "0", "off", "DISABLE", "n"}) {
        SCOPED_TRACE(word);
        testEngine a("A", {{"fail_create", word}});
        EXPECT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    }
}

// ---------------------------------------------------------------------------------------------
// Data movement

TEST_F(testBackend, WriteThenReadMoveBytesExactly) {
    pairSetup s;
    ASSERT_TRUE(s.ok());

    // WRITE two descriptors A -> B at different offsets.
    xferLists w;
    w.add(s.bufA.data() + 100, s.mdA, s.bufB.data() + 1000, s.remoteB, 300);
    w.add(s.bufA.data() + 2000, s.mdA, s.bufB.data() + 3000, s.remoteB, 1096);
    std::vector<unsigned char> expectB = s.bufB;
    std::memcpy(expectB.data() + 1000, s.bufA.data() + 100, 300);
    std::memcpy(expectB.data() + 3000, s.bufA.data() + 2000, 1096);

    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_NE(req, nullptr);
    EXPECT_NE(s.bufB, expectB); // nothing moves before the post
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, expectB);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);

    // READ B -> A into a range that differs.
    fill(s.bufB, 9);
    std::vector<unsigned char> expectA = s.bufA;
    std::memcpy(expectA.data() + 512, s.bufB.data() + 7, 1024);
    xferLists r;
    r.add(s.bufA.data() + 512, s.mdA, s.bufB.data() + 7, s.remoteB, 1024);
    ASSERT_EQ(s.a.prep(NIXL_READ, r, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_READ, r, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufA, expectA);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, RepostMovesCurrentContents) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    for (unsigned round = 0; round < 3; ++round) {
        fill(s.bufA, 100 + round);
        ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(s.bufB, s.bufA) << "round " << round;
    }
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, LoopbackUsesLocalMetadata) {
    testEngine a("A");
    ASSERT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops().connect(a.get(), str(std::string("A"))), NIXL_PLUGIN_SUCCESS);
    std::vector<unsigned char> src(1000), dst(1000);
    fill(src, 5);
    fill(dst, 6);
    nixl_be_md_t *mdSrc = a.reg(src.data(), src.size());
    nixl_be_md_t *mdDst = a.reg(dst.data(), dst.size());
    nixl_be_md_t *selfDst = nullptr;
    ASSERT_EQ(ops().load_local_md(a.get(), mdDst, &selfDst), NIXL_PLUGIN_SUCCESS);

    xferLists w;
    w.add(src.data(), mdSrc, dst.data() + 10, selfDst, 990);
    nixl_be_req_t *req = nullptr;
    nixl_be_opt_args_t opt = notifArgs("self");
    ASSERT_EQ(a.prep(NIXL_WRITE, w, "A", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(a.post(NIXL_WRITE, w, "A", req, &opt), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(std::memcmp(dst.data() + 10, src.data(), 990), 0);
    EXPECT_EQ(a.notifs(), (notif_vec_t{{"A", "self"}}));
    EXPECT_EQ(a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().unload_md(a.get(), selfDst), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().deregister_mem(a.get(), mdSrc), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().deregister_mem(a.get(), mdDst), NIXL_PLUGIN_SUCCESS);
}

// ---------------------------------------------------------------------------------------------
// Notifications

TEST_F(testBackend, NotificationFollowsDataAndNamesSender) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_TRUE(s.b.notifs().empty());
    nixl_be_opt_args_t opt = notifArgs("written");
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.b.notifs(), (notif_vec_t{{"A", "written"}}));
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_TRUE(s.a.notifs().empty()); // the initiator gets nothing

    // READ also notifies the target (B), after the data reached A.
    fill(s.bufB, 77);
    xferLists r = slice(s, 0, 4096);
    nixl_be_req_t *rreq = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_READ, r, "B", &rreq), NIXL_PLUGIN_SUCCESS);
    nixl_be_opt_args_t ropt = notifArgs("read done");
    ASSERT_EQ(s.a.post(NIXL_READ, r, "B", rreq, &ropt), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.b.notifs(), (notif_vec_t{{"A", "read done"}}));
    EXPECT_EQ(s.bufA, s.bufB);

    // A post without the flag sends nothing, even with a message present.
    nixl_be_opt_args_t off = notifArgs("ignored");
    off.has_notif = 0;
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &off), NIXL_PLUGIN_SUCCESS);
    EXPECT_TRUE(s.b.notifs().empty());
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(rreq), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, NotificationsOfAnySizeAppendAndDrain) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 16);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    std::string big(1 << 20, '\0');
    for (size_t i = 0; i < big.size(); ++i) {
        big[i] = static_cast<char>(i % 251); // includes NUL bytes
    }
    const std::string empty;
    const std::string *msgs[] = {&big, &empty};
    for (const std::string *msg : msgs) {
        nixl_be_opt_args_t opt = notifArgs(*msg);
        ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_SUCCESS);
    }
    ASSERT_EQ(s.a.genNotif("B", "standalone"), NIXL_PLUGIN_SUCCESS);

    notif_vec_t got = {{"earlier", "entry"}};
    ASSERT_EQ(s.b.drainInto(got), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0], (std::pair<std::string, std::string>{"earlier", "entry"})); // appended
    EXPECT_EQ(got[1].first, "A");
    EXPECT_EQ(got[1].second, big);
    EXPECT_EQ(got[2], (std::pair<std::string, std::string>{"A", ""}));
    EXPECT_EQ(got[3], (std::pair<std::string, std::string>{"A", "standalone"}));
    EXPECT_TRUE(s.b.notifs().empty()); // drained
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, GenNotifNeedsAKnownPeer) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(s.b.genNotif("A", "hello"), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.notifs(), (notif_vec_t{{"B", "hello"}}));

    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.genNotif("Z", "x"), NIXL_PLUGIN_ERR_NOT_FOUND);
    expectOneError(mark, {"agent 'A'", "remote 'Z'", "genNotif"});
}

} // namespace
} // namespace nixlTestBackendUt
