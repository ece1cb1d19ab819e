/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Real processes: ranks forked from a single-threaded parent load the plugin, elect an owner
// and export; the parent scrapes the owner over HTTP, kills a writer and then the owner with
// SIGKILL, and checks the series, reaping and failover.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "mp_test_utils.h"

namespace {

constexpr const char *kDirVar = "NIXL_TELEMETRY_MULTIPROC_DIR";

struct rank {
    pid_t pid = -1;
    int ctl = -1; ///< write end; closing it tells the rank to exit cleanly
    int index = 0;
};

/** Body of a forked rank: export every 20 ms until the control pipe closes. Never returns. */
[[noreturn]] void
runRank(const mpTest::pluginHandle &plugin, int index, int ctl) {
    setenv("LOCAL_RANK", std::to_string(index).c_str(), 1);
    nixl_telemetry_exporter_t *e = nullptr;
    if (plugin.create(mpTest::globalLog(), "rank" + std::to_string(index), &e) !=
        NIXL_PLUGIN_SUCCESS) {
        _exit(3);
    }
    const nixl_telemetry_exporter_ops_t &ops = *plugin.plugin()->ops;
    while (true) {
        const nixl_telemetry_event_abi_t ev[] = {
            {mpTest::kTx, 0, static_cast<uint64_t>(index + 1)},
            {mpTest::kTxReq, 0, 1},
            {mpTest::kXferTime, 0, 100u * static_cast<uint64_t>(index + 1)}};
        ops.batch_begin(e);
        ops.export_events(e, ev, 3);
        ops.batch_end(e);
        pollfd p{ctl, POLLIN, 0};
        if (poll(&p, 1, 20) > 0) {
            break; // EOF: the parent is done
        }
    }
    ops.destroy(e);
    _exit(0);
}

bool
hasStoreOf(const std::string &dir, pid_t pid) {
    const std::string prefix = "nixl." + std::to_string(pid) + ".";
    for (const auto &e : std::filesystem::directory_iterator(dir)) {
        if (e.path().filename().string().starts_with(prefix)) {
            return true;
        }
    }
    return false;
}

std::string
pidLabel(pid_t pid) {
    return "pid=\"" + std::to_string(pid) + "\"";
}

} // namespace

TEST(PromMpE2e, RanksAggregateReapAndFailOver) {
    static mpTest::pluginHandle plugin;
    ASSERT_NE(plugin.plugin(), nullptr) << plugin.path() << ": " << plugin.error();
    mpTest::tempDir dir;
    const uint16_t port = mpTest::freePort();
    mpTest::envGuard env;
    env.set(kDirVar, dir.path());
    env.set("NIXL_TELEMETRY_PROMETHEUS_PORT", std::to_string(port));
    env.set("NIXL_TELEMETRY_PROMETHEUS_LOCAL", "true");
    env.set("NIXL_TELEMETRY_MP_STALE_TTL", "1");
    env.unset("NIXL_TELEMETRY_RANK_ENV");
    env.unset("NIXL_TELEMETRY_HISTOGRAM_BUCKETS_US");

    constexpr int kRanks = 3;
    std::vector<rank> ranks;
    for (int i = 0; i < kRanks; ++i) {
        int fds[2];
        ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            close(fds[1]);
            for (const rank &r : ranks) {
                close(r.ctl);
            }
            runRank(plugin, i, fds[0]);
        }
        close(fds[0]);
        ranks.push_back({pid, fds[1], i});
    }
    // Also run on every early return (a failed ASSERT), so no rank outlives the test.
    struct onExit {
        std::function<void()> f;
        ~onExit() {
            f();
        }
    };
    auto cleanup = [&] {
        for (rank &r : ranks) {
            if (r.pid > 0) {
                kill(r.pid, SIGKILL);
                waitpid(r.pid, nullptr, 0);
                r.pid = -1;
            }
            if (r.ctl >= 0) {
                close(r.ctl);
                r.ctl = -1;
            }
        }
    };
    const onExit guard{cleanup};

    // Every rank, with its histogram, behind one endpoint.
    std::string text;
    const bool allSeen = mpTest::waitFor([&] {
        auto body = mpTest::httpGet(port);
        if (!body) {
            return false;
        }
        text = *body;
        for (int i = 0; i < kRanks; ++i) {
            const std::string lr = "local_rank=\"" + std::to_string(i) + "\"";
            if (mpTest::countLines(text, "agent_tx_bytes_total{", {lr}) != 1 ||
                mpTest::countLines(text, "agent_xfer_time_seconds_count{", {lr}) != 1 ||
                mpTest::countLines(text, "agent_xfer_time_seconds_sum{", {lr}) != 1 ||
                mpTest::countLines(text, "agent_xfer_time_seconds_bucket{", {lr, "le=\"+Inf\""}) !=
                    1) {
                return false;
            }
        }
        return true;
    });
    if (!allSeen) {
        cleanup();
        FAIL() << "not every rank appeared; last scrape:\n" << text;
    }
    for (const rank &r : ranks) {
        EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {pidLabel(r.pid)}), 1u);
    }
    std::string out;
    EXPECT_EQ(mpTest::promtoolCheck(text, &out), 0) << out;
    EXPECT_EQ(out, "") << text;

    const auto ownerValue = mpTest::sampleValue(text, "nixl_mp_owner_pid");
    ASSERT_TRUE(ownerValue.has_value());
    const pid_t owner = static_cast<pid_t>(*ownerValue);
    auto ownerIt =
        std::find_if(ranks.begin(), ranks.end(), [&](const rank &r) { return r.pid == owner; });
    if (ownerIt == ranks.end()) {
        cleanup();
        FAIL() << "owner pid " << owner << " is not a rank";
    }

    // A writer dies: its series go and its file is reaped once the TTL has passed.
    auto victimIt =
        std::find_if(ranks.begin(), ranks.end(), [&](const rank &r) { return r.pid != owner; });
    const pid_t victim = victimIt->pid;
    ASSERT_TRUE(hasStoreOf(dir.path(), victim));
    kill(victim, SIGKILL);
    waitpid(victim, nullptr, 0);
    victimIt->pid = -1;
    const bool reaped = mpTest::waitFor([&] {
        auto body = mpTest::httpGet(port);
        if (!body) {
            return false;
        }
        text = *body;
        return text.find(pidLabel(victim)) == std::string::npos && !hasStoreOf(dir.path(), victim);
    });
    EXPECT_TRUE(reaped) << "killed rank " << victim << " still published or on disk:\n" << text;
    EXPECT_GE(mpTest::sampleValue(text, "nixl_mp_stores_reaped_total").value_or(0), 1.0);

    // The owner dies: the surviving rank takes the endpoint over.
    kill(owner, SIGKILL);
    waitpid(owner, nullptr, 0);
    ownerIt->pid = -1;
    pid_t survivor = -1;
    for (const rank &r : ranks) {
        if (r.pid > 0) {
            survivor = r.pid;
        }
    }
    ASSERT_GT(survivor, 0);
    const bool failedOver = mpTest::waitFor([&] {
        auto body = mpTest::httpGet(port);
        if (!body) {
            return false;
        }
        text = *body;
        return mpTest::sampleValue(text, "nixl_mp_owner_pid") == static_cast<double>(survivor) &&
            mpTest::countLines(text, "agent_tx_bytes_total{", {pidLabel(survivor)}) == 1;
    });
    EXPECT_TRUE(failedOver) << "no failover to " << survivor << "; last scrape:\n" << text;
    // The dead owner's store is reaped by its successor.
    EXPECT_TRUE(mpTest::waitFor([&] {
        auto body = mpTest::httpGet(port);
        return body && body->find(pidLabel(owner)) == std::string::npos &&
            !hasStoreOf(dir.path(), owner);
    }));

    // Clean exit of the last rank.
    for (rank &r : ranks) {
        if (r.pid > 0) {
            close(r.ctl);
            r.ctl = -1;
            int status = 0;
            ASSERT_EQ(waitpid(r.pid, &status, 0), r.pid);
            EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
            r.pid = -1;
        }
    }
    cleanup();
}
