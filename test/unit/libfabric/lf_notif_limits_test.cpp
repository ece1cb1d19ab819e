/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The sending side of bounded notifications (docs/backends/libfabric.md, Notifications):
// genNotif pushes back with NIXL_ERR_REPOST_ACTIVE once notif_send_max_bytes to a peer are not
// sent yet, every message it accepted arrives once the peer reads, and what it accepted but
// never sent is said when the engine goes. The receiving side: lf_notif_test.cpp.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../common/log_capture.h"
#include "lf_test_utils.h"

using namespace nixl_lf_test;
using nixl_test::stderrReader;

namespace {

struct provParam {
    const char *name;
    const char *provider;
};

class lfNotifLimitsTest : public ::testing::TestWithParam<provParam> {
protected:
    /** A sends with a 64 KiB budget; B makes no progress unless the test polls it. */
    void
    SetUp() override {
        lfSetup sa;
        sa.provider = GetParam().provider;
        sa.extra["notif_send_max_bytes"] = "65536";
        sa.extra["release_timeout_ms"] = "0"; // no wait for unsent messages at the exit
        lfSetup sb;
        sb.provider = GetParam().provider;
        a_ = lfAgent::make("A", sa);
        b_ = lfAgent::make("B", sb);
        ASSERT_TRUE(a_ && b_);
        std::string name;
        ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
        ASSERT_EQ(b_->agent->loadRemoteMD(a_->md(), name), NIXL_SUCCESS);
    }

    /** genNotif of 16 KiB messages until refused; the messages accepted. */
    std::vector<std::string>
    fillUntilRefused() {
        std::vector<std::string> sent;
        nixl_status_t st = NIXL_SUCCESS;
        for (size_t i = 0; i < 20000 && st == NIXL_SUCCESS; ++i) {
            std::string msg = std::string(16384, 'm') + std::to_string(i);
            st = a_->agent->genNotif("B", msg);
            if (st == NIXL_SUCCESS) {
                sent.push_back(std::move(msg));
            }
        }
        EXPECT_EQ(st, NIXL_ERR_REPOST_ACTIVE) << "after " << sent.size() << " messages";
        return sent;
    }

    std::unique_ptr<lfAgent> a_;
    std::unique_ptr<lfAgent> b_;
};

TEST_P(lfNotifLimitsTest, GenNotifPushesBackAndEveryAcceptedMessageArrives) {
    std::vector<std::string> want = fillUntilRefused();
    ASSERT_FALSE(HasFailure());
    // Once B reads, A can send again; nothing A accepted is lost, and order is kept.
    notifBox boxA, boxB;
    ASSERT_TRUE(waitFor([&] {
        boxA.poll(*a_->agent);
        boxB.poll(*b_->agent);
        return a_->agent->genNotif("B", "again") == NIXL_SUCCESS;
    }));
    want.push_back("again");
    ASSERT_TRUE(waitFor([&] {
        boxA.poll(*a_->agent);
        boxB.poll(*b_->agent);
        return boxB.count("A", "again") == 1;
    }));
    std::vector<std::string> got;
    for (const auto &[sender, msg] : boxB.all) {
        EXPECT_EQ(sender, "A");
        got.push_back(msg);
    }
    EXPECT_TRUE(got == want) << "accepted " << want.size() << ", received " << got.size();
}

TEST_P(lfNotifLimitsTest, MessagesNeverSentAreSaidWhenTheEngineGoes) {
    fillUntilRefused();
    ASSERT_FALSE(HasFailure());
    stderrReader log;
    a_.reset();
    log.restore();
    EXPECT_TRUE(log.has("notification(s) that genNotif reported sent were lost")) << log.text();
}

INSTANTIATE_TEST_SUITE_P(providers,
                         lfNotifLimitsTest,
                         ::testing::Values(provParam{"shm", "shm"},
                                           provParam{"tcp", "tcp;ofi_rxm"}),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace

TEST(lfParamsLog, HugeValueIsCutInItsLine) {
    const std::string huge(120 * 1024, '7');
    lfSetup s;
    s.extra["split_batch_size"] = huge;
    stderrReader log;
    nixl_status_t st = NIXL_SUCCESS;
    EXPECT_EQ(lfAgent::make("P", s, &st), nullptr);
    log.restore();
    EXPECT_EQ(st, NIXL_ERR_INVALID_PARAM);
    const std::string text = log.text();
    EXPECT_NE(text.find("split_batch_size"), std::string::npos) << text.substr(0, 2000);
    EXPECT_NE(text.find("(122880 bytes)"), std::string::npos) << text.substr(0, 2000);
    EXPECT_LT(text.size(), 4096u);
}
