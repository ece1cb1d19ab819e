/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The progress thread over tcp;ofi_rxm, whose completion queue has a wait fd: idle, it sleeps
// in that fd and the engine's eventfd instead of waking every pthrDelay; a post wakes it, and so
// does traffic from a peer. progress_idle_ms is set to an hour, so a lost wake-up hangs the
// transfer and the test fails at its deadline instead of being rescued by the timeout. Also the
// teardown of an engine whose READ is still on the wire.

#include <gtest/gtest.h>

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "lf_test_utils.h"

using namespace nixl_lf_test;

namespace {

/** Voluntary context switches of every thread of this process named name, by tid. */
std::map<long, uint64_t>
switchesOfThreads(const std::string &name) {
    std::map<long, uint64_t> out;
    DIR *d = ::opendir("/proc/self/task");
    if (d == nullptr) {
        return out;
    }
    while (dirent *e = ::readdir(d)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        const std::string dir = std::string("/proc/self/task/") + e->d_name;
        std::ifstream comm(dir + "/comm");
        std::string c;
        if (!std::getline(comm, c) || c != name) {
            continue;
        }
        std::ifstream status(dir + "/status");
        std::string line;
        uint64_t n = 0;
        while (std::getline(status, line)) {
            // voluntary_ctxt_switches: every wait that ends (a wake-up) is one; a preemption
            // (nonvoluntary) is the machine's load, not the thread waking.
            const auto colon = line.find(':');
            if (colon != std::string::npos &&
                line.compare(0, colon, "voluntary_ctxt_switches") == 0) {
                n += std::stoull(line.substr(colon + 1));
            }
        }
        out[std::stol(e->d_name)] = n;
    }
    ::closedir(d);
    return out;
}

class lfProgressIdle : public ::testing::Test {
protected:
    static constexpr size_t buf_len = 1 << 20;

    void
    SetUp() override {
        lfSetup s;
        s.provider = "tcp;ofi_rxm";
        s.progThread = true;
        s.extra["progress_idle_ms"] = "3600000";
        a_ = lfAgent::make("A", s);
        b_ = lfAgent::make("B", s);
        ASSERT_TRUE(a_ && b_);
        src_.assign(buf_len, 0);
        dst_.assign(buf_len, 0);
        ASSERT_EQ(a_->registerDram(reinterpret_cast<uintptr_t>(src_.data()), buf_len),
                  NIXL_SUCCESS);
        ASSERT_EQ(b_->registerDram(reinterpret_cast<uintptr_t>(dst_.data()), buf_len),
                  NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
        ASSERT_EQ(b_->agent->loadRemoteMD(a_->md(), name), NIXL_SUCCESS);
    }

    /** WRITE of the whole buffer with a notification, awaited at A; then the notification at
     *  B. Neither agent is progressed by this thread: only their progress threads move it. */
    void
    writeAndCheck(uint32_t seed, const std::string &msg) {
        fillPattern(src_.data(), buf_len, seed);
        auto l = xferList({{reinterpret_cast<uintptr_t>(src_.data()), buf_len}});
        auto r = xferList({{reinterpret_cast<uintptr_t>(dst_.data()), buf_len}});
        nixl_opt_args_t extra;
        extra.notif = msg;
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a_->agent->createXferReq(NIXL_WRITE, l, r, "B", req, &extra), NIXL_SUCCESS);
        EXPECT_EQ(runXfer(*a_->agent, req), NIXL_SUCCESS);
        EXPECT_EQ(a_->agent->releaseXferReq(req), NIXL_SUCCESS);
        ASSERT_TRUE(waitFor([&] {
            box_.poll(*b_->agent);
            return box_.count("A", msg) > 0;
        }));
        EXPECT_EQ(firstMismatch(dst_.data(), buf_len, seed), -1);
    }

    std::unique_ptr<lfAgent> a_, b_;
    std::vector<uint8_t> src_, dst_;
    notifBox box_;
};

TEST_F(lfProgressIdle, PostsAndTrafficWakeTheIdleThread) {
    writeAndCheck(1, "first");
    // Both threads are idle now. The next transfer needs A's thread woken by the post and B's
    // by the data arriving on its socket; neither would wake for an hour on its own.
    writeAndCheck(2, "second");
    // A notification alone, the other way: genNotif wakes B's thread, the message A's.
    notifBox boxA;
    ASSERT_EQ(b_->agent->genNotif("A", "from B"), NIXL_SUCCESS);
    ASSERT_TRUE(waitFor([&] {
        boxA.poll(*a_->agent);
        return boxA.count("B", "from B") > 0;
    }));
    writeAndCheck(3, "third");
}

TEST_F(lfProgressIdle, IdleThreadDoesNotWakeEveryPthrDelay) {
    writeAndCheck(1, "warm");
    const auto before = switchesOfThreads("nixl_lf_prog");
    ASSERT_EQ(before.size(), 2u) << "one progress thread per agent";
    // An observation window, not a synchronisation: polling every pthrDelay (50 us) would
    // switch thousands of times in it; waiting on the fds, an idle thread does not switch.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto after = switchesOfThreads("nixl_lf_prog");
    for (const auto &[tid, n] : before) {
        ASSERT_TRUE(after.count(tid)) << "thread " << tid;
        EXPECT_LE(after.at(tid) - n, 20u) << "progress thread " << tid << " woke while idle";
    }
    writeAndCheck(2, "after");
}

// An agent destroyed while a READ it posted runs: its engine reads the completions of the
// operations still posted before it closes the endpoint (libfabric 1.17 faults closing an rxm
// endpoint whose READ is partly received), so the data is in place when the agent is gone.
// B's progress thread answers; A's is stopped, and only the teardown progresses A. The READ is
// large enough to be still on the wire when A's teardown ends (tens of ms on loopback).
TEST_F(lfProgressIdle, DestroyedWithReadPostedFinishesIt) {
    constexpr size_t big = size_t(64) << 20;
    std::vector<uint8_t> mine(big, 0), theirs(big);
    fillPattern(theirs.data(), big, 7);
    ASSERT_EQ(a_->registerDram(reinterpret_cast<uintptr_t>(mine.data()), big), NIXL_SUCCESS);
    ASSERT_EQ(b_->registerDram(reinterpret_cast<uintptr_t>(theirs.data()), big), NIXL_SUCCESS);
    std::string name;
    ASSERT_EQ(a_->agent->loadRemoteMD(b_->md(), name), NIXL_SUCCESS);
    writeAndCheck(1, "warm"); // connected
    auto l = xferList({{reinterpret_cast<uintptr_t>(mine.data()), big}});
    auto r = xferList({{reinterpret_cast<uintptr_t>(theirs.data()), big}});
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->agent->createXferReq(NIXL_READ, l, r, "B", req), NIXL_SUCCESS);
    const nixl_status_t posted = a_->agent->postXferReq(req);
    ASSERT_TRUE(posted == NIXL_SUCCESS || posted == NIXL_IN_PROG);
    a_.reset(); // releases req
    EXPECT_EQ(firstMismatch(mine.data(), big, 7), -1);
    b_.reset(); // before the buffer it registered goes
}

} // namespace
