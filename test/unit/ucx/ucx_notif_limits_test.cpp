/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Bounded notifications (docs/backends/ucx.md, Notifications): a receiver that does not call
// getNotifs holds at most notif_peer_max_bytes from one sender, genNotif pushes back with
// NIXL_ERR_REPOST_ACTIVE once notif_send_max_bytes are not sent yet, and what genNotif reported
// sent but was never sent is said in a line when the engine goes.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "../../common/log_capture.h"
#include "ucx_test_utils.h"

using namespace nixl_ucx_test;
using nixl_test::stderrReader;

namespace {

struct pair_t {
    std::unique_ptr<ucxAgent> a, b;
};

pair_t
makePair(const ucxSetup &sa, const ucxSetup &sb) {
    pair_t p{ucxAgent::make("A", sa), ucxAgent::make("B", sb)};
    if (p.a && p.b) {
        std::string name;
        EXPECT_EQ(p.a->agent->loadRemoteMD(p.b->md(), name), NIXL_SUCCESS);
        EXPECT_EQ(p.b->agent->loadRemoteMD(p.a->md(), name), NIXL_SUCCESS);
    }
    return p;
}

} // namespace

// B's progress thread receives; B's application never calls getNotifs until the limit was hit.
TEST(ucxNotifLimits, ReceiverHoldsAtMostThePeerLimitAndSaysWhatItDropped) {
    constexpr size_t limit = 16384;
    constexpr size_t msg_len = 1000;
    constexpr size_t fits = limit / (1 + msg_len + 256); // sender name, data, entry overhead
    ucxSetup sb;
    sb.progThread = true;
    sb.params["notif_peer_max_bytes"] = std::to_string(limit);
    stderrReader log;
    auto p = makePair(ucxSetup{}, sb);
    ASSERT_TRUE(p.a && p.b);
    const std::string msg(msg_len, 'n');
    for (size_t i = 0; i < 4 * fits; ++i) {
        ASSERT_EQ(p.a->agent->genNotif("B", msg), NIXL_SUCCESS) << i;
    }
    notifBox sender;
    ASSERT_TRUE(waitFor([&] {
        sender.poll(*p.a->agent); // moves A's queued sends
        return log.has("UCX dropped a 1000-byte notification from A");
    })) << log.text();
    nixl_notifs_t got;
    ASSERT_EQ(p.b->agent->getNotifs(got), NIXL_SUCCESS);
    EXPECT_LE(got["A"].size(), fits);
    // Room again once getNotifs takes them: a later message is delivered. A's earlier
    // messages may still be arriving and fill the queue between two calls, so it is resent
    // until one gets through.
    notifBox boxB;
    EXPECT_TRUE(waitFor([&] {
        EXPECT_EQ(p.a->agent->genNotif("B", "after"), NIXL_SUCCESS);
        sender.poll(*p.a->agent);
        boxB.poll(*p.b->agent);
        return boxB.count("A", "after") >= 1;
    }));
    log.restore();
}

// B makes no progress at all, so A's messages stay unsent once the transport's queue is full.
TEST(ucxNotifLimits, GenNotifPushesBackAndEveryAcceptedMessageArrives) {
    ucxSetup sa;
    sa.params["notif_send_max_bytes"] = "65536";
    auto p = makePair(sa, ucxSetup{});
    ASSERT_TRUE(p.a && p.b);
    const std::string msg(16384, 'm');
    size_t accepted = 0;
    nixl_status_t st = NIXL_SUCCESS;
    for (size_t i = 0; i < 20000 && st == NIXL_SUCCESS; ++i) {
        st = p.a->agent->genNotif("B", msg + std::to_string(i));
        accepted += st == NIXL_SUCCESS ? 1 : 0;
    }
    ASSERT_EQ(st, NIXL_ERR_REPOST_ACTIVE) << "after " << accepted << " messages";
    // Once B takes its messages, A can send again, and nothing A accepted was lost.
    notifBox boxA, boxB;
    ASSERT_TRUE(waitFor([&] {
        boxA.poll(*p.a->agent);
        boxB.poll(*p.b->agent);
        return p.a->agent->genNotif("B", "again") == NIXL_SUCCESS;
    }));
    // Rendezvous messages may still be arriving after "again": wait for all of them.
    ASSERT_TRUE(waitFor([&] {
        boxA.poll(*p.a->agent);
        boxB.poll(*p.b->agent);
        return boxB.from("A").size() >= accepted + 1;
    })) << "accepted " << accepted << ", received " << boxB.from("A").size();
    // UCX does not order a rendezvous message with later eager ones: compare as sets.
    const std::vector<std::string> fromA = boxB.from("A");
    std::multiset<std::string> want{"again"}, got(fromA.begin(), fromA.end());
    for (size_t i = 0; i < accepted; ++i) {
        want.insert(msg + std::to_string(i));
    }
    EXPECT_TRUE(got == want) << "accepted " << accepted << ", received " << got.size();
}

TEST(ucxNotifLimits, MessagesNeverSentAreSaidWhenTheEngineGoes) {
    ucxSetup sa;
    sa.params["notif_send_max_bytes"] = "65536";
    sa.params["ucx_release_timeout_ms"] = "0"; // no wait for them at the exit
    auto p = makePair(sa, ucxSetup{});
    ASSERT_TRUE(p.a && p.b);
    const std::string msg(16384, 'x');
    nixl_status_t st = NIXL_SUCCESS;
    for (size_t i = 0; i < 20000 && st == NIXL_SUCCESS; ++i) {
        st = p.a->agent->genNotif("B", msg);
    }
    ASSERT_EQ(st, NIXL_ERR_REPOST_ACTIVE);
    stderrReader log;
    p.a.reset();
    log.restore();
    EXPECT_TRUE(log.has("notification(s) that genNotif reported sent were lost")) << log.text();
}

TEST(ucxNotifLimits, LimitsAreParametersWithBoundedDefaults) {
    nixlAgentConfig cfg(false, false, 0, nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE, 1, 0);
    nixlAgent agent("P", cfg);
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(agent.getPluginParams("UCX", mems, params), NIXL_SUCCESS);
    EXPECT_EQ(params["notif_peer_max_bytes"], "268435456");
    EXPECT_EQ(params["notif_total_max_bytes"], "1073741824");
    EXPECT_EQ(params["notif_send_max_bytes"], "67108864");
    for (const char *key :
         {"notif_peer_max_bytes", "notif_total_max_bytes", "notif_send_max_bytes"}) {
        for (const char *v : {"100", "x", ""}) {
            ucxSetup s;
            s.params[key] = v;
            nixl_status_t st = NIXL_SUCCESS;
            EXPECT_EQ(ucxAgent::make("P2", s, &st), nullptr) << key << "=" << v;
            EXPECT_EQ(st, NIXL_ERR_INVALID_PARAM) << key << "=" << v;
        }
    }
}

// A 120 KB parameter value once reached the log whole: its line now carries 256 bytes of it
// and its length.
TEST(ucxParamsLog, HugeValueIsCutInItsLine) {
    const std::string huge(120 * 1024, '7');
    ucxSetup s;
    s.params["num_workers"] = huge;
    stderrReader log;
    nixl_status_t st = NIXL_SUCCESS;
    EXPECT_EQ(ucxAgent::make("P", s, &st), nullptr);
    log.restore();
    EXPECT_EQ(st, NIXL_ERR_INVALID_PARAM);
    const std::string text = log.text();
    EXPECT_NE(text.find("num_workers must be 1..64"), std::string::npos) << text;
    EXPECT_NE(text.find("(122880 bytes)"), std::string::npos) << text.substr(0, 2000);
    EXPECT_LT(text.size(), 4096u);
}
