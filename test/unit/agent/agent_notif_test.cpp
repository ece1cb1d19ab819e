/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: notifications with transfers (override rules), getNotifs, genNotif.

#include "agent_test_utils.h"

namespace nixl_agent_test {
namespace {

using msgs_t = std::vector<nixl_blob_t>;

class agentNotifTest : public agentTest {
protected:
    void
    setUpAgents(const nixl_b_params_t &a_params) {
        a_ = makeAgent("A");
        b_ = makeAgent("B");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a_, a_params));
        ASSERT_EQ(NIXL_SUCCESS, addTest(*b_));
        ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({aBuf_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, b_->registerMem(regList({bBuf_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*a_, *b_));
    }

    void
    SetUp() override {
        setUpAgents({});
    }

    /** Posts req with extra, completes it, and returns what B received from A. */
    msgs_t
    postAndCollect(nixlXferReqH *req, const nixl_opt_args_t *extra, uint32_t seed) {
        aBuf_.fill(seed);
        EXPECT_EQ(NIXL_SUCCESS, runXfer(*a_, req, extra));
        EXPECT_TRUE(holdsPattern(bBuf_, seed));
        nixl_notifs_t map = drain(*b_);
        EXPECT_LE(map.size(), 1u);
        auto it = map.find("A");
        return it == map.end() ? msgs_t{} : it->second;
    }

    testBuffer aBuf_{256, 1};
    testBuffer bBuf_{256, 2};
    std::unique_ptr<nixlAgent> a_;
    std::unique_ptr<nixlAgent> b_;
};

TEST_F(agentNotifTest, NotifOverrideRules) {
    nixl_opt_args_t create_args;
    create_args.notif = "created";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(NIXL_WRITE, xferList({aBuf_.desc()}), xferList({bBuf_.desc()}),
                                "B", req, &create_args));

    // Null extra params keep the notification given at creation, on every post.
    EXPECT_EQ(msgs_t{"created"}, postAndCollect(req, nullptr, 10));
    EXPECT_EQ(msgs_t{"created"}, postAndCollect(req, nullptr, 11));

    // notif engaged replaces it.
    nixl_opt_args_t over;
    over.notif = "override";
    EXPECT_EQ(msgs_t{"override"}, postAndCollect(req, &over, 12));

    // Legacy fields, used when notif is not engaged.
    nixl_opt_args_t legacy;
    legacy.hasNotif = true;
    legacy.notifMsg = "legacy";
    EXPECT_EQ(msgs_t{"legacy"}, postAndCollect(req, &legacy, 13));

    // notif wins over the legacy fields.
    nixl_opt_args_t both;
    both.notif = "modern";
    both.hasNotif = true;
    both.notifMsg = "old";
    EXPECT_EQ(msgs_t{"modern"}, postAndCollect(req, &both, 14));

    // An engaged empty notif is delivered as an empty message.
    nixl_opt_args_t empty;
    empty.notif = "";
    EXPECT_EQ(msgs_t{""}, postAndCollect(req, &empty, 15));

    // Legacy message without hasNotif is not a notification; neither field set clears it.
    nixl_opt_args_t cleared;
    cleared.notifMsg = "ignored";
    EXPECT_EQ(msgs_t{}, postAndCollect(req, &cleared, 16));
    EXPECT_EQ(msgs_t{}, postAndCollect(req, nullptr, 17));

    // And it can be set again.
    EXPECT_EQ(msgs_t{"override"}, postAndCollect(req, &over, 18));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentNotifTest, RequestWithoutNotifSendsNone) {
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(
                  NIXL_WRITE, xferList({aBuf_.desc()}), xferList({bBuf_.desc()}), "B", req));
    EXPECT_EQ(msgs_t{}, postAndCollect(req, nullptr, 20));
    nixl_opt_args_t legacy;
    legacy.hasNotif = true;
    legacy.notifMsg = "now";
    EXPECT_EQ(msgs_t{"now"}, postAndCollect(req, &legacy, 21));
    // The override is stored: a later null post keeps it.
    EXPECT_EQ(msgs_t{"now"}, postAndCollect(req, nullptr, 22));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentNotifTest, MakeXferReqNotification) {
    nixlDlistH *local = nullptr;
    nixlDlistH *remote = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist(xferList({aBuf_.desc()}), local));
    ASSERT_EQ(NIXL_SUCCESS, a_->prepXferDlist("B", xferList({bBuf_.desc()}), remote));
    nixl_opt_args_t args;
    args.hasNotif = true;
    args.notifMsg = "made";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a_->makeXferReq(NIXL_WRITE, local, {0}, remote, {0}, req, &args));
    EXPECT_EQ(msgs_t{"made"}, postAndCollect(req, nullptr, 30));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(local));
    EXPECT_EQ(NIXL_SUCCESS, a_->releasedDlistH(remote));
}

TEST_F(agentNotifTest, ReadNotificationReachesTarget) {
    nixl_opt_args_t args;
    args.notif = "read done";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(NIXL_READ, xferList({aBuf_.desc()}), xferList({bBuf_.desc()}),
                                "B", req, &args));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(aBuf_, 2));
    nixl_notifs_t map = drain(*b_);
    EXPECT_EQ((nixl_notifs_t{{"A", {"read done"}}}), map);
    EXPECT_TRUE(drain(*a_).empty());
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentNotifTest, AsyncNotificationArrivesOnlyWithTheData) {
    setUpAgents({{"async", "true"}, {"async_polls", "2"}});
    nixl_opt_args_t args;
    args.notif = "async";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(NIXL_WRITE, xferList({aBuf_.desc()}), xferList({bBuf_.desc()}),
                                "B", req, &args));
    ASSERT_EQ(NIXL_IN_PROG, a_->postXferReq(req));
    // Still running: neither the data nor the notification may be visible at B.
    EXPECT_TRUE(drain(*b_).empty());
    EXPECT_TRUE(holdsPattern(bBuf_, 2));
    ASSERT_EQ(NIXL_SUCCESS, waitXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(bBuf_, 1));
    EXPECT_EQ((nixl_notifs_t{{"A", {"async"}}}), drain(*b_));
    // An override given at re-post applies to that post.
    nixl_opt_args_t over;
    over.notif = "second";
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req, &over));
    EXPECT_EQ((nixl_notifs_t{{"A", {"second"}}}), drain(*b_));
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

TEST_F(agentNotifTest, GetNotifsAppendsAndKeysBySender) {
    auto c = makeAgent("C");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*c));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *c));

    ASSERT_EQ(NIXL_SUCCESS, a_->genNotif("B", "a1"));
    ASSERT_EQ(NIXL_SUCCESS, c->genNotif("B", "c1"));
    ASSERT_EQ(NIXL_SUCCESS, a_->genNotif("B", "a2"));

    nixl_notifs_t map{{"X", {"kept"}}, {"A", {"earlier"}}};
    ASSERT_EQ(NIXL_SUCCESS, b_->getNotifs(map));
    EXPECT_EQ((msgs_t{"kept"}), map["X"]);
    EXPECT_EQ((msgs_t{"earlier", "a1", "a2"}), map["A"]);
    EXPECT_EQ((msgs_t{"c1"}), map["C"]);
    EXPECT_EQ(3u, map.size());

    // Drained: a second call adds nothing and clears nothing.
    ASSERT_EQ(NIXL_SUCCESS, b_->getNotifs(map));
    EXPECT_EQ((msgs_t{"earlier", "a1", "a2"}), map["A"]);
    EXPECT_EQ(3u, map.size());
    ASSERT_EQ(NIXL_SUCCESS, c->genNotif("B", "c2"));
    ASSERT_EQ(NIXL_SUCCESS, b_->getNotifs(map));
    EXPECT_EQ((msgs_t{"c1", "c2"}), map["C"]);
}

TEST_F(agentNotifTest, GenNotif) {
    // Binary payloads survive.
    const nixl_blob_t binary("\0\x01\xff zero", 8);
    ASSERT_EQ(NIXL_SUCCESS, a_->genNotif("B", binary));
    ASSERT_EQ(NIXL_SUCCESS, a_->genNotif("B", ""));
    EXPECT_EQ((nixl_notifs_t{{"A", {binary, ""}}}), drain(*b_));

    // Loopback.
    ASSERT_EQ(NIXL_SUCCESS, a_->genNotif("A", "to myself"));
    EXPECT_EQ((nixl_notifs_t{{"A", {"to myself"}}}), drain(*a_));

    // With a backend hint.
    nixlBackendH *h = nullptr;
    {
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(NIXL_SUCCESS,
                  a_->createXferReq(
                      NIXL_WRITE, xferList({aBuf_.desc()}), xferList({bBuf_.desc()}), "B", req));
        ASSERT_EQ(NIXL_SUCCESS, a_->queryXferBackend(req, h));
        ASSERT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
    }
    nixl_opt_args_t hint;
    hint.backends = {h};
    ASSERT_EQ(NIXL_SUCCESS, a_->genNotif("B", "hinted", &hint));
    EXPECT_EQ((nixl_notifs_t{{"A", {"hinted"}}}), drain(*b_));

    // Unknown agent.
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->genNotif("nobody", "lost"));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "nobody"}));
    // After invalidation B is unknown too.
    ASSERT_EQ(NIXL_SUCCESS, a_->invalidateRemoteMD("B"));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->genNotif("B", "lost"));
    EXPECT_TRUE(drain(*b_).empty());
}

TEST_F(agentNotifTest, NoNotificationBackend) {
    auto lone = makeAgent("L");
    nixl_notifs_t map;
    EXPECT_EQ(NIXL_ERR_BACKEND, lone->getNotifs(map));
    EXPECT_EQ(NIXL_ERR_BACKEND, lone->genNotif("L", "x"));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, lone->genNotif("B", "x"));
}

TEST_F(agentNotifTest, LoopbackTransferNotification) {
    testBuffer other(256, 40);
    ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({other.desc()})));
    nixl_opt_args_t args;
    args.notif = "self";
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a_->createXferReq(NIXL_WRITE, xferList({aBuf_.desc()}), xferList({other.desc()}),
                                "A", req, &args));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a_, req));
    EXPECT_TRUE(holdsPattern(other, 1));
    EXPECT_EQ((nixl_notifs_t{{"A", {"self"}}}), drain(*a_));
    EXPECT_TRUE(drain(*b_).empty());
    EXPECT_EQ(NIXL_SUCCESS, a_->releaseXferReq(req));
}

} // namespace
} // namespace nixl_agent_test
