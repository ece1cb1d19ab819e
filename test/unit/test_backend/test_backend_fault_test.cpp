/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * TEST plugin through its C ABI (see test_backend_test.cpp): asynchronous completion and the
 * fault-injection parameters.
 */
#include "test_backend_fixture.h"

namespace nixlTestBackendUt {
namespace {

// ---------------------------------------------------------------------------------------------
// Asynchronous mode

TEST_F(testBackend, AsyncCompletesAfterConfiguredPolls) {
    pairSetup s({{"async", "true"}, {"async_polls", "3"}});
    ASSERT_TRUE(s.ok());
    const std::vector<unsigned char> before = s.bufB;
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    for (unsigned round = 0; round < 2; ++round) {
        fill(s.bufA, 40 + round);
        std::vector<unsigned char> previous = s.bufB;
        const std::string msg = "round " + std::to_string(round);
        nixl_be_opt_args_t opt = notifArgs(msg);
        ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_IN_PROG);
        for (int poll = 0; poll < 3; ++poll) {
            EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_IN_PROG) << "poll " << poll;
            EXPECT_EQ(s.bufB, previous); // nothing moved yet
            EXPECT_TRUE(s.b.notifs().empty()); // and nothing announced
        }
        EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(s.bufB, s.bufA);
        EXPECT_EQ(s.b.notifs(), (notif_vec_t{{"A", msg}}));
        EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS); // stays complete
    }
    EXPECT_NE(s.bufB, before);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, AsyncWithZeroPollsCompletesOnFirstCheck) {
    pairSetup s({{"async", "true"}, {"async_polls", "0"}});
    ASSERT_TRUE(s.ok());
    xferLists r = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_READ, r, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_READ, r, "B", req), NIXL_PLUGIN_IN_PROG);
    EXPECT_NE(s.bufA, s.bufB);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufA, s.bufB);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, CheckBeforePostAndRepostWhileRunningAreErrors) {
    pairSetup s({{"async", "true"}});
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 64);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_NOT_POSTED);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "never posted"});

    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_IN_PROG);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_REPOST_ACTIVE);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "still running"});
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, ReleaseAbortsRunningRequest) {
    pairSetup s({{"async", "true"}});
    ASSERT_TRUE(s.ok());
    const std::vector<unsigned char> before = s.bufB;
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    nixl_be_opt_args_t opt = notifArgs("never");
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, before);
    EXPECT_TRUE(s.b.notifs().empty());
}

// ---------------------------------------------------------------------------------------------
// Fault injection

TEST_F(testBackend, FailPostAtFailsExactlyThatPost) {
    pairSetup s({{"fail_post_at", "2"}});
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    fill(s.bufA, 11);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, s.bufA);

    const std::vector<unsigned char> kept = s.bufB;
    fill(s.bufA, 12);
    size_t mark = logRecorder::instance().mark();
    nixl_be_opt_args_t opt = notifArgs("lost");
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_ERR_BACKEND);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "fail_post_at=2"});
    EXPECT_EQ(s.bufB, kept); // nothing moved
    EXPECT_TRUE(s.b.notifs().empty()); // nothing announced
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_BACKEND);

    fill(s.bufA, 13);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS); // only the 2nd fails
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, FailRegisterAtFailsExactlyThatRegistration) {
    testEngine a("A", {{"fail_register_at", "2"}});
    ASSERT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    std::vector<unsigned char> buf(300);
    nixl_be_md_t *md1 = nullptr;
    nixl_be_md_t *md2 = nullptr;
    nixl_be_md_t *md3 = nullptr;
    EXPECT_EQ(a.registerMem(buf.data(), 100, &md1), NIXL_PLUGIN_SUCCESS);
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(a.registerMem(buf.data() + 100, 100, &md2), NIXL_PLUGIN_ERR_BACKEND);
    expectOneError(mark, {"agent 'A'", "fail_register_at=2"});
    EXPECT_EQ(md2, nullptr);
    EXPECT_EQ(a.registerMem(buf.data() + 200, 100, &md3), NIXL_PLUGIN_SUCCESS);

    // The failed registration left no trace: its range is not registered.
    nixl_be_desc_t q[3] = {{reinterpret_cast<uintptr_t>(buf.data()), 100, 0, {nullptr, 0}},
                           {reinterpret_cast<uintptr_t>(buf.data()) + 100, 100, 0, {nullptr, 0}},
                           {reinterpret_cast<uintptr_t>(buf.data()) + 200, 100, 0, {nullptr, 0}}};
    query_answer_t answer;
    nixl_be_query_sink_t sink{&answer, putQuery};
    ASSERT_EQ(ops().query_mem(a.get(), q, 3, DRAM_SEG, &sink), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(answer.count(0), 1u);
    EXPECT_EQ(answer.count(1), 0u);
    EXPECT_EQ(answer.count(2), 1u);
    EXPECT_EQ(ops().deregister_mem(a.get(), md1), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().deregister_mem(a.get(), md3), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, DisconnectAfterDropsThePeerUntilReconnected) {
    pairSetup s({{"disconnect_after", "2"}});
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);

    fill(s.bufA, 21);
    const std::vector<unsigned char> kept = s.bufB;
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "disconnect_after"});
    EXPECT_EQ(s.bufB, kept);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.genNotif("B", "x"), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);

    // What libnixl does on REMOTE_DISCONNECT: drop the remote, later load it again.
    EXPECT_EQ(ops().disconnect(s.a.get(), str(std::string("B"))), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().unload_md(s.a.get(), s.remoteB), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.loadConn("B", s.b.connInfo()), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.loadRemoteMD(s.bufB.data(), s.bufB.size(), s.b.publicData(s.mdB), "B",
                               &s.remoteB),
              NIXL_PLUGIN_SUCCESS);
    xferLists again = slice(s, 0, 4096);
    ASSERT_EQ(s.a.prep(NIXL_WRITE, again, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_WRITE, again, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, DisconnectAfterFailsChecksOfRunningRequests) {
    pairSetup s({{"async", "true"}, {"disconnect_after", "1"}});
    ASSERT_TRUE(s.ok());
    const std::vector<unsigned char> before = s.bufB;
    xferLists w1 = slice(s, 0, 100);
    xferLists w2 = slice(s, 100, 100);
    nixl_be_req_t *r1 = nullptr;
    nixl_be_req_t *r2 = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w1, "B", &r1), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w2, "B", &r2), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w1, "B", r1), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.post(NIXL_WRITE, w2, "B", r2), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.check(r1), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "dropped"});
    EXPECT_EQ(s.bufB, before);
    EXPECT_EQ(s.a.release(r1), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(r2), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, FailReleaseKeepsRunningRequest) {
    pairSetup s({{"async", "true"}, {"fail_release", "true"}});
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    // Not running: released normally.
    nixl_be_req_t *idle = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &idle), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(idle), NIXL_PLUGIN_SUCCESS);

    nixl_be_opt_args_t opt = notifArgs("kept");
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_IN_PROG);
    size_t mark = logRecorder::instance().mark();
    nixl_plugin_status_t st = s.a.release(req);
    EXPECT_LT(st, 0);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "fail_release"});

    // The request survived and still completes.
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_EQ(s.b.notifs(), (notif_vec_t{{"A", "kept"}}));
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

} // namespace
} // namespace nixlTestBackendUt
