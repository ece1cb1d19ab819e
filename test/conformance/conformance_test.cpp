/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Backend conformance: what every data backend must do through the agent API, whatever moves
// its bytes. One program, told which backend to create and with which parameters:
//
//   conformance_test --backend NAME [--param key=value]... [--in-process-only]
//                    [--progress-thread] [--target-mem FILE_SEG [--file-reg path|fd]]
//
// (plus gtest's own flags; --progress-thread gives the agents a progress thread). A backend
// the plugin directory lacks is skipped with the reason; --in-process-only skips the cases
// that need a peer in another process (a backend that moves data only between agents of one
// process). --target-mem FILE_SEG is for a local-only file backend: the target side is a
// temporary file of the agent itself, registered in path mode (metaInfo "rw:<path>") or fd
// mode; the cases such a backend can express run against it, the others (remote,
// notifications, metadata, peer) are skipped with the reason. docs/BackendGuide.md,
// "Conformance suite".

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "nixl.h"
#include "../common/log_capture.h"
#include "../common/xfer_test_utils.h"

using namespace nixl_test;

namespace {

struct conformanceConfig {
    std::string backend;
    nixl_b_params_t params;
    bool crossProcess = true;
    bool progressThread = false;
    nixl_mem_t targetMem = DRAM_SEG; // FILE_SEG: the target is a file of the agent itself
    bool filePathMode = true; // FILE_SEG targets registered by path (else by fd)
};

conformanceConfig &
config() {
    static conformanceConfig c;
    return c;
}

/** An agent with the backend under test, or null (and why). */
std::unique_ptr<nixlAgent>
makeAgent(const std::string &name,
          std::string &why,
          nixl_thread_sync_t sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_DEFAULT) {
    auto agent = std::make_unique<nixlAgent>(
        name, nixlAgentConfig(config().progressThread, false, default_comm_port, sync));
    nixlBackendH *h = nullptr;
    const nixl_status_t st = agent->createBackend(config().backend, config().params, h);
    if (st != NIXL_SUCCESS) {
        why = "createBackend(" + config().backend + ") returned " +
            nixlEnumStrings::statusStr(st);
        return nullptr;
    }
    return agent;
}

std::string
localMD(nixlAgent &a) {
    nixl_blob_t blob;
    EXPECT_EQ(a.getLocalMD(blob), NIXL_SUCCESS);
    return blob;
}

/** A heap buffer that frees itself. */
struct buffer {
    explicit buffer(size_t n) : bytes(n) {}
    uintptr_t
    addr(size_t off = 0) {
        return reinterpret_cast<uintptr_t>(bytes.data()) + off;
    }
    std::vector<uint8_t> bytes;
};

bool
backendInBuild() {
    std::vector<nixl_backend_t> plugins;
    nixlAgent probe("probe", nixlAgentConfig(false, false));
    EXPECT_EQ(probe.getAvailPlugins(plugins), NIXL_SUCCESS);
    for (const auto &p : plugins) {
        if (p == config().backend) {
            return true;
        }
    }
    return false;
}

class conformanceTest : public ::testing::Test {
protected:
    static constexpr size_t len = 1 << 20;

    void
    SetUp() override {
        if (!backendInBuild()) {
            GTEST_SKIP() << "backend " << config().backend
                         << " is not in this build's plugin directory";
        }
        if (config().targetMem == FILE_SEG) {
            const std::string name =
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
            GTEST_SKIP() << "--target-mem FILE_SEG: " << name
                         << " moves DRAM to DRAM (a remote agent, notifications or metadata), "
                            "which a local-only file backend does not do; the FILE_SEG cases "
                            "are in conformanceFileTest";
        }
    }

    /** A and B with the backend, each with one registered buffer, A holding B's metadata. */
    void
    makePair(nixl_thread_sync_t sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_DEFAULT) {
        std::string why;
        a_ = makeAgent("A", why, sync);
        ASSERT_NE(a_, nullptr) << why;
        b_ = makeAgent("B", why, sync);
        ASSERT_NE(b_, nullptr) << why;
        ASSERT_EQ(a_->registerMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
        ASSERT_EQ(b_->registerMem(regList(bbuf_.addr(), len)), NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a_->loadRemoteMD(localMD(*b_), name), NIXL_SUCCESS);
        ASSERT_EQ(name, "B");
    }

    void
    TearDown() override {
        if (a_) {
            EXPECT_EQ(a_->deregisterMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
        }
        if (b_) {
            EXPECT_EQ(b_->deregisterMem(regList(bbuf_.addr(), len)), NIXL_SUCCESS);
        }
        a_.reset();
        b_.reset();
    }

    /** Progress for both sides: without a progress thread some backends need the target to
     *  poll for data to land, and the sender to call in again to push a queued message. */
    std::function<void()>
    pollB() {
        return [this] {
            box_.poll(*b_);
            boxA_.poll(*a_);
        };
    }

    /** WRITE seed's pattern from A's [off, +n) to B's [off, +n), READ back another; both
     *  verified byte for byte. */
    void
    expectRoundTrip(size_t off, size_t n, uint32_t seed) {
        fillPattern(abuf_.bytes.data() + off, n, seed);
        ASSERT_EQ(transfer(*a_, NIXL_WRITE, abuf_.addr(off), bbuf_.addr(off), n, "B", pollB()),
                  NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(bbuf_.bytes.data() + off, n, seed), -1) << "WRITE";
        fillPattern(bbuf_.bytes.data() + off, n, seed + 1);
        std::memset(abuf_.bytes.data() + off, 0, n);
        ASSERT_EQ(transfer(*a_, NIXL_READ, abuf_.addr(off), bbuf_.addr(off), n, "B", pollB()),
                  NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(abuf_.bytes.data() + off, n, seed + 1), -1) << "READ";
    }

    buffer abuf_{len};
    buffer bbuf_{len};
    std::unique_ptr<nixlAgent> a_;
    std::unique_ptr<nixlAgent> b_;
    notifBox box_;
    notifBox boxA_;
};

TEST_F(conformanceTest, RegisterDeregister) {
    std::string why;
    a_ = makeAgent("A", why);
    ASSERT_NE(a_, nullptr) << why;
    buffer extra(3 * 4096);
    for (size_t i = 0; i < 3; ++i) {
        ASSERT_EQ(a_->registerMem(regList(extra.addr(i * 4096), 4096)), NIXL_SUCCESS) << i;
    }
    ASSERT_EQ(a_->registerMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
    EXPECT_FALSE(localMD(*a_).empty());
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(a_->deregisterMem(regList(extra.addr(i * 4096), 4096)), NIXL_SUCCESS) << i;
    }
    // Twice, or a range never registered: refused, with at most one log line.
    stderrCapture cap;
    EXPECT_EQ(a_->deregisterMem(regList(extra.addr(), 4096)), NIXL_ERR_NOT_FOUND);
    EXPECT_LE(errorLines(cap.stop()).size(), 1u);
    // Registered again after deregistration, and usable: the remaining buffer still moves data.
    ASSERT_EQ(a_->registerMem(regList(extra.addr(), 4096)), NIXL_SUCCESS);
    EXPECT_EQ(a_->deregisterMem(regList(extra.addr(), 4096)), NIXL_SUCCESS);
    EXPECT_EQ(a_->deregisterMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
    a_.reset();
}

// Transfers within one agent: remote_agent names the agent itself.
TEST_F(conformanceTest, LocalWriteRead) {
    std::string why;
    a_ = makeAgent("A", why);
    ASSERT_NE(a_, nullptr) << why;
    ASSERT_EQ(a_->registerMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
    const size_t half = len / 2;
    fillPattern(abuf_.bytes.data(), half, 1);
    ASSERT_EQ(transfer(*a_, NIXL_WRITE, abuf_.addr(), abuf_.addr(half), half, "A"), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(abuf_.bytes.data() + half, half, 1), -1) << "local WRITE";
    fillPattern(abuf_.bytes.data() + half, half, 2);
    ASSERT_EQ(transfer(*a_, NIXL_READ, abuf_.addr(), abuf_.addr(half), half, "A"), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(abuf_.bytes.data(), half, 2), -1) << "local READ";
}

TEST_F(conformanceTest, RemoteWriteRead) {
    makePair();
    expectRoundTrip(0, len, 3);
    expectRoundTrip(12345, 777, 5); // unaligned
    // Several descriptors in one request: element i moves to element i.
    fillPattern(abuf_.bytes.data(), len, 7);
    std::memset(bbuf_.bytes.data(), 0, len);
    nixlXferReqH *req = nullptr;
    const std::vector<std::pair<uintptr_t, size_t>> src = {
        {abuf_.addr(0), 4096}, {abuf_.addr(8192), 100}, {abuf_.addr(65536), 65536}};
    const std::vector<std::pair<uintptr_t, size_t>> dst = {
        {bbuf_.addr(0), 4096}, {bbuf_.addr(8192), 100}, {bbuf_.addr(65536), 65536}};
    ASSERT_EQ(a_->createXferReq(NIXL_WRITE, xferList(src), xferList(dst), "B", req),
              NIXL_SUCCESS);
    EXPECT_EQ(runXfer(*a_, req, pollB()), NIXL_SUCCESS);
    EXPECT_EQ(a_->releaseXferReq(req), NIXL_SUCCESS);
    for (const auto &[addr, n] : dst) {
        const size_t off = addr - bbuf_.addr();
        for (size_t i = 0; i < n; ++i) {
            ASSERT_EQ(bbuf_.bytes[off + i], patternByte(7, off + i)) << off + i;
        }
    }
    EXPECT_EQ(bbuf_.bytes[4096], 0) << "a byte between descriptors was written";
}

// A WRITE's notification arrives once, and the data is in place when it does.
TEST_F(conformanceTest, NotificationWithTransfer) {
    makePair();
    for (uint32_t round = 0; round < 3; ++round) {
        const std::string msg = "done-" + std::to_string(round);
        fillPattern(abuf_.bytes.data(), len, 10 + round);
        nixl_opt_args_t extra;
        extra.notifMsg = msg;
        extra.hasNotif = true;
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a_->createXferReq(NIXL_WRITE, xferList({{abuf_.addr(), len}}),
                                    xferList({{bbuf_.addr(), len}}), "B", req, &extra),
                  NIXL_SUCCESS);
        bool data_ok_at_notif = false;
        auto watch = [&] {
            const size_t before = box_.count("A", msg);
            pollB()();
            if (before == 0 && box_.count("A", msg) == 1) {
                data_ok_at_notif = firstMismatch(bbuf_.bytes.data(), len, 10 + round) == -1;
            }
        };
        EXPECT_EQ(runXfer(*a_, req, watch), NIXL_SUCCESS);
        EXPECT_TRUE(waitFor([&] {
            watch();
            return box_.count("A", msg) > 0;
        })) << "no notification";
        EXPECT_TRUE(data_ok_at_notif) << "the notification came before the data";
        EXPECT_EQ(a_->releaseXferReq(req), NIXL_SUCCESS);
        box_.poll(*b_);
        EXPECT_EQ(box_.count("A", msg), 1u);
    }
}

TEST_F(conformanceTest, GenNotif) {
    makePair();
    const std::string big = patternString(4000, 3);
    ASSERT_EQ(a_->genNotif("B", "hello"), NIXL_SUCCESS);
    ASSERT_EQ(a_->genNotif("B", ""), NIXL_SUCCESS); // an empty message is still a notification
    ASSERT_EQ(a_->genNotif("B", big), NIXL_SUCCESS);
    EXPECT_TRUE(waitFor([&] {
        pollB()();
        return box_.all.size() >= 3;
    }));
    EXPECT_EQ(box_.count("A", "hello"), 1u);
    EXPECT_EQ(box_.count("A", ""), 1u);
    EXPECT_EQ(box_.count("A", big), 1u);
    EXPECT_EQ(a_->genNotif("nobody", "x"), NIXL_ERR_NOT_FOUND);
}

// Threads posting to one peer at once (sync mode rw), each into its own slice, with
// notifications; the target is polled from every thread too.
TEST_F(conformanceTest, ManyThreads) {
    makePair(nixl_thread_sync_t::NIXL_THREAD_SYNC_RW);
    if (HasFatalFailure()) {
        return;
    }
    constexpr size_t threads = 4;
    constexpr int rounds = 25;
    const size_t slice = len / threads;
    std::mutex mu;
    notifBox shared;
    auto pollShared = [&] {
        nixl_notifs_t from_b;
        a_->getNotifs(from_b); // the sender's progress; B sends A nothing
        nixl_notifs_t n;
        if (b_->getNotifs(n) != NIXL_SUCCESS) {
            return;
        }
        std::lock_guard<std::mutex> g(mu);
        for (auto &[s, msgs] : n) {
            for (auto &m : msgs) {
                shared.all.emplace_back(s, m);
            }
        }
    };
    std::atomic<int> failures{0};
    std::vector<std::thread> ts;
    for (size_t t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r) {
                const uint32_t seed = static_cast<uint32_t>(t * 1000 + r);
                fillPattern(abuf_.bytes.data() + t * slice, slice, seed);
                nixl_opt_args_t extra;
                extra.notifMsg = "t" + std::to_string(t) + "r" + std::to_string(r);
                extra.hasNotif = true;
                const nixl_status_t st = transfer(*a_, NIXL_WRITE, abuf_.addr(t * slice),
                                                  bbuf_.addr(t * slice), slice, "B", pollShared,
                                                  &extra);
                if (st != NIXL_SUCCESS ||
                    firstMismatch(bbuf_.bytes.data() + t * slice, slice, seed) != -1) {
                    ++failures;
                }
            }
        });
    }
    for (auto &t : ts) {
        t.join();
    }
    EXPECT_EQ(failures.load(), 0);
    EXPECT_TRUE(waitFor([&] {
        pollShared();
        boxA_.poll(*a_);
        std::lock_guard<std::mutex> g(mu);
        return shared.all.size() >= threads * rounds;
    })) << shared.all.size() << " notifications";
    for (size_t t = 0; t < threads; ++t) {
        for (int r = 0; r < rounds; ++r) {
            EXPECT_EQ(shared.count("A", "t" + std::to_string(t) + "r" + std::to_string(r)), 1u);
        }
    }
}

// Threads on one agent (sync mode rw, where getNotifs shares the notification queue with the
// posting threads): posters WRITE within A with a notification each, one thread sends
// standalone notifications from A and from B, and drainers call A's getNotifs at once. Every
// notification is delivered exactly once, to exactly one drainer, and none arrives late.
TEST_F(conformanceTest, ConcurrentDrainsDeliverEveryNotificationOnce) {
    makePair(nixl_thread_sync_t::NIXL_THREAD_SYNC_RW);
    if (HasFatalFailure()) {
        return;
    }
    std::string name;
    ASSERT_EQ(b_->loadRemoteMD(localMD(*a_), name), NIXL_SUCCESS);
    constexpr int posters = 3;
    constexpr int drainers = 3;
    constexpr int rounds = 30;
    constexpr int standalone = 30;
    constexpr size_t slot_len = 64 << 10;
    static_assert(2 * posters * slot_len <= len);
    uint8_t *const mem = abuf_.bytes.data();
    const size_t expected = static_cast<size_t>(posters) * rounds + 2 * standalone;
    std::atomic<bool> go{false};
    std::atomic<size_t> delivered{0};
    std::atomic<bool> stop{false}; // all delivered, or a drainer gave up
    std::vector<std::string> failures(posters + 1 + drainers);
    std::vector<nixl_notifs_t> got(drainers);
    std::vector<std::thread> threads;
    auto waitGo = [&] {
        while (!go.load(std::memory_order_acquire)) {
        }
    };
    for (int t = 0; t < posters; ++t) {
        threads.emplace_back([&, t] {
            waitGo();
            const uintptr_t from = abuf_.addr(2 * t * slot_len);
            uint8_t *to = mem + (2 * t + 1) * slot_len;
            nixlXferReqH *req = nullptr;
            if (a_->createXferReq(NIXL_WRITE, xferList({{from, slot_len}}),
                                  xferList({{from + slot_len, slot_len}}), "A",
                                  req) != NIXL_SUCCESS) {
                failures[t] = "createXferReq";
                return;
            }
            for (int i = 0; i < rounds; ++i) {
                const uint32_t seed = static_cast<uint32_t>(100 * t + i);
                fillPattern(mem + 2 * t * slot_len, slot_len, seed);
                nixl_opt_args_t extra;
                extra.notif = "p" + std::to_string(t) + "." + std::to_string(i);
                const nixl_status_t st = runXfer(*a_, req, nullptr, &extra);
                if (st != NIXL_SUCCESS || firstMismatch(to, slot_len, seed) != -1) {
                    failures[t] = "transfer " + std::to_string(i) + ": " +
                        nixlEnumStrings::statusStr(st);
                    break;
                }
            }
            if (a_->releaseXferReq(req) != NIXL_SUCCESS) {
                failures[t] = "releaseXferReq";
            }
        });
    }
    threads.emplace_back([&] {
        waitGo();
        for (int i = 0; i < standalone; ++i) {
            if (a_->genNotif("A", "s" + std::to_string(i)) != NIXL_SUCCESS ||
                b_->genNotif("A", "y" + std::to_string(i)) != NIXL_SUCCESS) {
                failures[posters] = "genNotif " + std::to_string(i);
                break;
            }
        }
        // B's sends may still wait in its worker: keep B progressing until A has them all.
        nixl_notifs_t none;
        while (!stop.load(std::memory_order_acquire)) {
            if (b_->getNotifs(none) != NIXL_SUCCESS || !none.empty()) {
                failures[posters] = "B's getNotifs";
                break;
            }
        }
    });
    for (int d = 0; d < drainers; ++d) {
        threads.emplace_back([&, d] {
            waitGo();
            const bool all = waitFor([&] {
                if (stop.load(std::memory_order_acquire)) {
                    return true;
                }
                size_t before = 0;
                for (const auto &[k, v] : got[d]) {
                    before += v.size();
                }
                if (a_->getNotifs(got[d]) != NIXL_SUCCESS) {
                    failures[posters + 1 + d] = "getNotifs";
                    return true;
                }
                size_t after = 0;
                for (const auto &[k, v] : got[d]) {
                    after += v.size();
                }
                return delivered.fetch_add(after - before, std::memory_order_acq_rel) +
                    (after - before) >= expected;
            });
            if (!all) {
                failures[posters + 1 + d] = "not every notification arrived in time";
            }
            stop.store(true, std::memory_order_release);
        });
    }
    go.store(true, std::memory_order_release);
    for (auto &th : threads) {
        th.join();
    }
    for (size_t i = 0; i < failures.size(); ++i) {
        EXPECT_EQ("", failures[i]) << "thread " << i;
    }

    // A last drain finds nothing: nothing was delivered twice or late.
    nixl_notifs_t rest;
    ASSERT_EQ(a_->getNotifs(rest), NIXL_SUCCESS);
    std::map<std::string, int> seen; // "sender/message" -> times delivered
    auto count = [&](const nixl_notifs_t &m) {
        for (const auto &[sender, msgs] : m) {
            for (const nixl_blob_t &msg : msgs) {
                ++seen[sender + "/" + msg];
            }
        }
    };
    for (const nixl_notifs_t &m : got) {
        count(m);
    }
    count(rest);
    std::map<std::string, int> want;
    for (int t = 0; t < posters; ++t) {
        for (int i = 0; i < rounds; ++i) {
            want["A/p" + std::to_string(t) + "." + std::to_string(i)] = 1;
        }
    }
    for (int i = 0; i < standalone; ++i) {
        want["A/s" + std::to_string(i)] = 1;
        want["B/y" + std::to_string(i)] = 1;
    }
    EXPECT_EQ(want, seen);

    // Settle the A -> B direction before the agents go: B's queue drained of A's last send.
    ASSERT_EQ(a_->genNotif("B", "bye"), NIXL_SUCCESS);
    EXPECT_TRUE(waitFor([&] {
        pollB()();
        return box_.count("A", "bye") == 1;
    }));
}

// Releasing a posted request either aborts it (SUCCESS) or refuses while it runs; the agent
// keeps working either way.
TEST_F(conformanceTest, ReleaseWhilePosted) {
    makePair();
    for (int round = 0; round < 5; ++round) {
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a_->createXferReq(NIXL_WRITE, xferList({{abuf_.addr(), len}}),
                                    xferList({{bbuf_.addr(), len}}), "B", req),
                  NIXL_SUCCESS);
        const nixl_status_t posted = a_->postXferReq(req);
        ASSERT_TRUE(posted == NIXL_SUCCESS || posted == NIXL_IN_PROG)
            << nixlEnumStrings::statusStr(posted);
        if (a_->releaseXferReq(req) != NIXL_SUCCESS) {
            EXPECT_NE(waitXfer(*a_, req, pollB()), NIXL_IN_PROG);
            EXPECT_EQ(a_->releaseXferReq(req), NIXL_SUCCESS);
        }
    }
    expectRoundTrip(0, 65536, 20);
    // Posted and left: destroying the agent releases it (and its registration).
    nixlXferReqH *left = nullptr;
    ASSERT_EQ(a_->createXferReq(NIXL_READ, xferList({{abuf_.addr(), len}}),
                                xferList({{bbuf_.addr(), len}}), "B", left),
              NIXL_SUCCESS);
    const nixl_status_t posted = a_->postXferReq(left);
    EXPECT_TRUE(posted == NIXL_SUCCESS || posted == NIXL_IN_PROG);
    a_.reset();
}

// Bad descriptors are refused at creation with the documented status and at most one line.
TEST_F(conformanceTest, BadDescriptors) {
    makePair();
    buffer stray(4096);
    struct badCase {
        const char *what;
        nixl_xfer_dlist_t local;
        nixl_xfer_dlist_t remote;
        std::string agent;
        nixl_status_t want;
    };
    const std::vector<badCase> cases = {
        {"local range not registered", xferList({{stray.addr(), 4096}}),
         xferList({{bbuf_.addr(), 4096}}), "B", NIXL_ERR_NOT_FOUND},
        {"remote range past the registration", xferList({{abuf_.addr(), 4096}}),
         xferList({{bbuf_.addr(len - 1024), 4096}}), "B", NIXL_ERR_NOT_FOUND},
        {"lengths differ", xferList({{abuf_.addr(), 4096}}), xferList({{bbuf_.addr(), 2048}}),
         "B", NIXL_ERR_INVALID_PARAM},
        {"counts differ", xferList({{abuf_.addr(), 4096}, {abuf_.addr(4096), 4096}}),
         xferList({{bbuf_.addr(), 4096}}), "B", NIXL_ERR_INVALID_PARAM},
        {"unknown agent", xferList({{abuf_.addr(), 4096}}), xferList({{bbuf_.addr(), 4096}}),
         "nobody", NIXL_ERR_NOT_FOUND},
    };
    for (const auto &c : cases) {
        nixlXferReqH *req = nullptr;
        stderrCapture cap;
        EXPECT_EQ(a_->createXferReq(NIXL_WRITE, c.local, c.remote, c.agent, req), c.want)
            << c.what;
        EXPECT_LE(errorLines(cap.stop()).size(), 1u) << c.what;
    }
    // Malformed metadata is refused, and A still reaches B afterwards.
    std::string name;
    EXPECT_EQ(a_->loadRemoteMD("not metadata", name), NIXL_ERR_MISMATCH);
    std::string md = localMD(*b_);
    md.resize(md.size() / 2);
    EXPECT_NE(a_->loadRemoteMD(md, name), NIXL_SUCCESS);
    expectRoundTrip(0, 4096, 30);
}

TEST_F(conformanceTest, MetadataLoadInvalidate) {
    makePair();
    expectRoundTrip(0, 65536, 40);
    std::string name;
    ASSERT_EQ(a_->loadRemoteMD(localMD(*b_), name), NIXL_SUCCESS); // again: no change
    expectRoundTrip(0, 65536, 42);
    ASSERT_EQ(a_->invalidateRemoteMD("B"), NIXL_SUCCESS);
    nixlXferReqH *req = nullptr;
    EXPECT_EQ(a_->createXferReq(NIXL_WRITE, xferList({{abuf_.addr(), 4096}}),
                                xferList({{bbuf_.addr(), 4096}}), "B", req),
              NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(a_->genNotif("B", "gone"), NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(a_->invalidateRemoteMD("B"), NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(a_->invalidateRemoteMD("A"), NIXL_ERR_INVALID_PARAM);
    // Partial metadata of B's buffer (with connection info) is enough to transfer again.
    nixl_opt_args_t extra;
    extra.includeConnInfo = true;
    nixl_blob_t partial;
    ASSERT_EQ(b_->getLocalPartialMD(regList(bbuf_.addr(), len), partial, &extra), NIXL_SUCCESS);
    ASSERT_EQ(a_->loadRemoteMD(partial, name), NIXL_SUCCESS);
    EXPECT_EQ(name, "B");
    expectRoundTrip(0, 65536, 44);
}

// ---------------------------------------------------------------------------------------------
// --target-mem FILE_SEG: a local-only file backend. The agent moves its own memory to and from
// temporary files it registered (the file side's agent is the agent itself); each file is
// checked through the test's own fd, byte for byte.

/** A zero-filled temporary file of n bytes in $TMPDIR (or /tmp), removed on scope exit, and
 *  its FILE_SEG lists: path mode ("rw:<path>", devId = key) or fd mode (devId = its fd).
 *  Immutable after construction: any thread may build lists or pread/pwrite through it. */
class fileTarget {
public:
    fileTarget(size_t n, uint64_t key) : len_(n) {
        const char *dir = std::getenv("TMPDIR");
        path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
            "/nixl-conformance-XXXXXX";
        fd_ = ::mkstemp(path_.data());
        if (fd_ < 0 || ::ftruncate(fd_, static_cast<off_t>(n)) != 0) {
            throw std::runtime_error("temporary file " + path_ + ": " + std::strerror(errno));
        }
        dev_ = config().filePathMode ? key : static_cast<uint64_t>(fd_);
    }
    ~fileTarget() {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    fileTarget(const fileTarget &) = delete;
    fileTarget &
    operator=(const fileTarget &) = delete;

    /** The whole file as one registration. */
    nixl_reg_dlist_t
    reg() const {
        nixl_reg_dlist_t l(FILE_SEG);
        l.addDesc(nixlBlobDesc(0, len_, dev_, config().filePathMode ? "rw:" + path_ : ""));
        return l;
    }

    /** (file offset, length) ranges of this file. */
    nixl_xfer_dlist_t
    xfer(const std::vector<std::pair<uint64_t, size_t>> &ranges) const {
        nixl_xfer_dlist_t l(FILE_SEG);
        for (const auto &[off, n] : ranges) {
            l.addDesc(nixlBasicDesc(off, n, dev_));
        }
        return l;
    }

    /** The file's bytes [off, +n), read through the test's own fd. */
    std::vector<uint8_t>
    bytes(uint64_t off, size_t n) const {
        std::vector<uint8_t> out(n);
        size_t done = 0;
        while (done < n) {
            const ssize_t r = ::pread(fd_, out.data() + done, n - done,
                                      static_cast<off_t>(off + done));
            if (r <= 0) {
                ADD_FAILURE() << "pread " << path_ << " at " << off + done << ": "
                              << std::strerror(errno);
                break;
            }
            done += static_cast<size_t>(r);
        }
        return out;
    }

    /** Writes seed's pattern (as at offset 0) into [off, +n) through the test's own fd. */
    void
    fill(uint64_t off, size_t n, uint32_t seed) const {
        std::vector<uint8_t> data(n);
        fillPattern(data.data(), n, seed);
        ASSERT_EQ(::pwrite(fd_, data.data(), n, static_cast<off_t>(off)),
                  static_cast<ssize_t>(n))
            << path_;
    }

private:
    size_t len_;
    std::string path_;
    int fd_ = -1;
    uint64_t dev_ = 0;
};

class conformanceFileTest : public ::testing::Test {
protected:
    static constexpr size_t len = 1 << 20;
    static constexpr uint64_t firstKey = 1u << 20; // path-mode devIds, clear of any fd

    void
    SetUp() override {
        if (config().targetMem != FILE_SEG) {
            GTEST_SKIP() << "the FILE_SEG cases run with --target-mem FILE_SEG";
        }
        if (!backendInBuild()) {
            GTEST_SKIP() << "backend " << config().backend
                         << " is not in this build's plugin directory";
        }
        file_ = std::make_unique<fileTarget>(len, firstKey);
    }

    /** A with the backend, abuf_ and file_ registered. */
    void
    makeAgentWithFile(nixl_thread_sync_t sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_DEFAULT) {
        std::string why;
        a_ = makeAgent("A", why, sync);
        ASSERT_NE(a_, nullptr) << why;
        ASSERT_EQ(a_->registerMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
        ASSERT_EQ(a_->registerMem(file_->reg()), NIXL_SUCCESS);
        registered_ = true;
    }

    void
    TearDown() override {
        if (a_ && registered_) {
            EXPECT_EQ(a_->deregisterMem(file_->reg()), NIXL_SUCCESS);
            EXPECT_EQ(a_->deregisterMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
        }
        a_.reset();
    }

    /** One request moving abuf_ [moff, +n) to or from file_ [foff, +n). */
    nixl_status_t
    fileXfer(nixl_xfer_op_t op, size_t moff, uint64_t foff, size_t n) {
        nixlXferReqH *req = nullptr;
        nixl_status_t st = a_->createXferReq(op, xferList({{abuf_.addr(moff), n}}),
                                             file_->xfer({{foff, n}}), "A", req);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        st = runXfer(*a_, req);
        if (a_->releaseXferReq(req) != NIXL_SUCCESS && st == NIXL_SUCCESS) {
            st = NIXL_ERR_UNKNOWN;
        }
        return st;
    }

    /** WRITE seed's pattern from abuf_ [off, +n) to the file at off, READ another back; both
     *  verified byte for byte. */
    void
    expectRoundTrip(size_t off, size_t n, uint32_t seed) {
        fillPattern(abuf_.bytes.data() + off, n, seed);
        ASSERT_EQ(fileXfer(NIXL_WRITE, off, off, n), NIXL_SUCCESS);
        const std::vector<uint8_t> got = file_->bytes(off, n);
        EXPECT_EQ(firstMismatch(got.data(), n, seed), -1) << "WRITE";
        file_->fill(off, n, seed + 1);
        std::memset(abuf_.bytes.data() + off, 0, n);
        ASSERT_EQ(fileXfer(NIXL_READ, off, off, n), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(abuf_.bytes.data() + off, n, seed + 1), -1) << "READ";
    }

    buffer abuf_{len};
    std::unique_ptr<fileTarget> file_; // made in SetUp: none when the case is skipped
    bool registered_ = false;
    std::unique_ptr<nixlAgent> a_; // after file_: the agent goes first
};

TEST_F(conformanceFileTest, RegisterDeregister) {
    std::string why;
    a_ = makeAgent("A", why);
    ASSERT_NE(a_, nullptr) << why;
    std::vector<std::unique_ptr<fileTarget>> extra;
    for (uint64_t i = 0; i < 3; ++i) {
        extra.push_back(std::make_unique<fileTarget>(4096, firstKey + 1 + i));
        ASSERT_EQ(a_->registerMem(extra.back()->reg()), NIXL_SUCCESS) << i;
    }
    ASSERT_EQ(a_->registerMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
    ASSERT_EQ(a_->registerMem(file_->reg()), NIXL_SUCCESS);
    registered_ = true;
    for (const auto &f : extra) {
        EXPECT_EQ(a_->deregisterMem(f->reg()), NIXL_SUCCESS);
    }
    // Twice, or a file never registered: refused, with at most one log line.
    stderrCapture cap;
    EXPECT_EQ(a_->deregisterMem(extra[0]->reg()), NIXL_ERR_NOT_FOUND);
    EXPECT_LE(errorLines(cap.stop()).size(), 1u);
    // Registered again after deregistration; the remaining file still moves data.
    ASSERT_EQ(a_->registerMem(extra[0]->reg()), NIXL_SUCCESS);
    EXPECT_EQ(a_->deregisterMem(extra[0]->reg()), NIXL_SUCCESS);
    expectRoundTrip(0, 65536, 1);
}

// WRITE and READ between the agent's memory and its own file (remote agent = itself).
TEST_F(conformanceFileTest, LocalWriteRead) {
    makeAgentWithFile();
    if (HasFatalFailure()) {
        return;
    }
    expectRoundTrip(0, len, 3);
    expectRoundTrip(12345, 777, 5); // unaligned
    // Several descriptors in one request: element i moves to element i, to other offsets.
    fillPattern(abuf_.bytes.data(), len, 7);
    file_->fill(0, len, 0); // every byte known before the WRITE
    const std::vector<uint8_t> before = file_->bytes(0, len);
    const std::vector<std::pair<uintptr_t, size_t>> mem = {
        {abuf_.addr(0), 4096}, {abuf_.addr(8192), 100}, {abuf_.addr(65536), 65536}};
    const std::vector<std::pair<uint64_t, size_t>> fil = {
        {len - 4096, 4096}, {300000, 100}, {0, 65536}};
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(a_->createXferReq(NIXL_WRITE, xferList(mem), file_->xfer(fil), "A", req),
              NIXL_SUCCESS);
    EXPECT_EQ(runXfer(*a_, req), NIXL_SUCCESS);
    EXPECT_EQ(a_->releaseXferReq(req), NIXL_SUCCESS);
    const std::vector<uint8_t> after = file_->bytes(0, len);
    std::vector<uint8_t> want = before;
    for (size_t d = 0; d < mem.size(); ++d) {
        std::memcpy(want.data() + fil[d].first,
                    abuf_.bytes.data() + (mem[d].first - abuf_.addr()), fil[d].second);
    }
    for (size_t i = 0; i < len; ++i) {
        ASSERT_EQ(after[i], want[i]) << "file byte " << i;
    }
    // And back: the three file ranges into zeroed memory.
    std::memset(abuf_.bytes.data(), 0, len);
    ASSERT_EQ(a_->createXferReq(NIXL_READ, xferList(mem), file_->xfer(fil), "A", req),
              NIXL_SUCCESS);
    EXPECT_EQ(runXfer(*a_, req), NIXL_SUCCESS);
    EXPECT_EQ(a_->releaseXferReq(req), NIXL_SUCCESS);
    for (size_t d = 0; d < mem.size(); ++d) {
        const size_t moff = mem[d].first - abuf_.addr();
        EXPECT_EQ(std::memcmp(abuf_.bytes.data() + moff, want.data() + fil[d].first,
                              fil[d].second),
                  0)
            << "descriptor " << d;
    }
    EXPECT_EQ(abuf_.bytes[4096], 0) << "a byte between descriptors was read into";
}

// Threads posting at once (sync mode rw), each WRITE-then-READ of its own slice of one file.
TEST_F(conformanceFileTest, ManyThreads) {
    makeAgentWithFile(nixl_thread_sync_t::NIXL_THREAD_SYNC_RW);
    if (HasFatalFailure()) {
        return;
    }
    constexpr size_t threads = 4;
    constexpr int rounds = 25;
    const size_t slice = len / threads;
    buffer back(len);
    ASSERT_EQ(a_->registerMem(regList(back.addr(), len)), NIXL_SUCCESS);
    std::atomic<int> failures{0};
    std::vector<std::thread> ts;
    for (size_t t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
            const size_t off = t * slice;
            for (int r = 0; r < rounds; ++r) {
                const uint32_t seed = static_cast<uint32_t>(t * 1000 + r);
                fillPattern(abuf_.bytes.data() + off, slice, seed);
                std::memset(back.bytes.data() + off, 0, slice);
                nixlXferReqH *req = nullptr;
                nixl_status_t st = NIXL_ERR_UNKNOWN;
                if (a_->createXferReq(NIXL_WRITE, xferList({{abuf_.addr(off), slice}}),
                                      file_->xfer({{off, slice}}), "A", req) == NIXL_SUCCESS) {
                    st = runXfer(*a_, req);
                    a_->releaseXferReq(req);
                }
                if (st == NIXL_SUCCESS &&
                    a_->createXferReq(NIXL_READ, xferList({{back.addr(off), slice}}),
                                      file_->xfer({{off, slice}}), "A", req) == NIXL_SUCCESS) {
                    st = runXfer(*a_, req);
                    a_->releaseXferReq(req);
                } else {
                    st = NIXL_ERR_UNKNOWN;
                }
                if (st != NIXL_SUCCESS ||
                    firstMismatch(back.bytes.data() + off, slice, seed) != -1) {
                    ++failures;
                }
            }
        });
    }
    for (auto &t : ts) {
        t.join();
    }
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(a_->deregisterMem(regList(back.addr(), len)), NIXL_SUCCESS);
}

// Releasing a posted request either aborts it (SUCCESS) or refuses while it runs; the agent
// keeps working either way.
TEST_F(conformanceFileTest, ReleaseWhilePosted) {
    makeAgentWithFile();
    if (HasFatalFailure()) {
        return;
    }
    for (int round = 0; round < 5; ++round) {
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(a_->createXferReq(round % 2 == 0 ? NIXL_WRITE : NIXL_READ,
                                    xferList({{abuf_.addr(), len}}), file_->xfer({{0, len}}), "A",
                                    req),
                  NIXL_SUCCESS);
        const nixl_status_t posted = a_->postXferReq(req);
        ASSERT_TRUE(posted == NIXL_SUCCESS || posted == NIXL_IN_PROG)
            << nixlEnumStrings::statusStr(posted);
        if (a_->releaseXferReq(req) != NIXL_SUCCESS) {
            EXPECT_NE(waitXfer(*a_, req), NIXL_IN_PROG);
            EXPECT_EQ(a_->releaseXferReq(req), NIXL_SUCCESS);
        }
    }
    expectRoundTrip(0, 65536, 20);
    // Posted and left: destroying the agent releases it (and the registrations).
    nixlXferReqH *left = nullptr;
    ASSERT_EQ(a_->createXferReq(NIXL_READ, xferList({{abuf_.addr(), len}}),
                                file_->xfer({{0, len}}), "A", left),
              NIXL_SUCCESS);
    const nixl_status_t posted = a_->postXferReq(left);
    EXPECT_TRUE(posted == NIXL_SUCCESS || posted == NIXL_IN_PROG);
    a_.reset();
}

// Bad descriptors are refused at creation with the documented status and at most one line.
TEST_F(conformanceFileTest, BadDescriptors) {
    makeAgentWithFile();
    if (HasFatalFailure()) {
        return;
    }
    buffer stray(4096);
    fileTarget unregistered(4096, firstKey + 9);
    struct badCase {
        const char *what;
        nixl_xfer_dlist_t local;
        nixl_xfer_dlist_t remote;
        std::string agent;
        nixl_status_t want;
    };
    const std::vector<badCase> cases = {
        {"memory range not registered", xferList({{stray.addr(), 4096}}), file_->xfer({{0, 4096}}),
         "A", NIXL_ERR_NOT_FOUND},
        {"file range past the registration", xferList({{abuf_.addr(), 4096}}),
         file_->xfer({{len - 1024, 4096}}), "A", NIXL_ERR_NOT_FOUND},
        {"file not registered", xferList({{abuf_.addr(), 4096}}), unregistered.xfer({{0, 4096}}),
         "A", NIXL_ERR_NOT_FOUND},
        {"lengths differ", xferList({{abuf_.addr(), 4096}}), file_->xfer({{0, 2048}}), "A",
         NIXL_ERR_INVALID_PARAM},
        {"counts differ", xferList({{abuf_.addr(), 4096}, {abuf_.addr(4096), 4096}}),
         file_->xfer({{0, 4096}}), "A", NIXL_ERR_INVALID_PARAM},
        {"unknown agent", xferList({{abuf_.addr(), 4096}}), file_->xfer({{0, 4096}}), "nobody",
         NIXL_ERR_NOT_FOUND},
    };
    for (const auto &c : cases) {
        nixlXferReqH *req = nullptr;
        stderrCapture cap;
        EXPECT_EQ(a_->createXferReq(NIXL_WRITE, c.local, c.remote, c.agent, req), c.want)
            << c.what;
        EXPECT_LE(errorLines(cap.stop()).size(), 1u) << c.what;
    }
    expectRoundTrip(0, 4096, 30);
}

// ---------------------------------------------------------------------------------------------
// A peer in another process ("B"): registers a buffer filled with seed 7's pattern, sends its
// metadata and the buffer's address, then serves "check <off> <len> <seed>" and "notif <msg>"
// while polling its notifications.

int
peerMain(int fd) {
    std::string why;
    auto b = makeAgent("B", why);
    if (!b) {
        sendFrame(fd, "err " + why);
        return 0;
    }
    buffer buf(1 << 20);
    fillPattern(buf.bytes.data(), buf.bytes.size(), 7);
    if (b->registerMem(regList(buf.addr(), buf.bytes.size())) != NIXL_SUCCESS) {
        sendFrame(fd, "err registerMem");
        return 0;
    }
    sendFrame(fd, "ok");
    sendFrame(fd, localMD(*b));
    sendFrame(fd, std::to_string(buf.addr()));
    notifBox box;
    for (;;) {
        std::string line;
        if (!recvFrame(fd, line, [&] { box.poll(*b); })) {
            return 0;
        }
        std::istringstream in(line);
        std::string verb;
        in >> verb;
        std::string reply = "ok";
        if (verb == "check") {
            size_t off = 0;
            size_t n = 0;
            uint32_t seed = 0;
            in >> off >> n >> seed;
            const long long bad = firstMismatch(buf.bytes.data() + off, n, seed);
            reply = bad < 0 ? "ok" : "bad " + std::to_string(bad);
        } else if (verb == "notif") {
            std::string msg;
            in >> msg;
            reply = waitFor([&] {
                box.poll(*b);
                return box.count("A", msg) > 0;
            }) ?
                "ok" :
                "timeout";
        } else if (verb == "exit") {
            sendFrame(fd, "ok");
            return 0;
        }
        if (!sendFrame(fd, reply)) {
            return 0;
        }
    }
}

class conformancePeerTest : public conformanceTest {
protected:
    void
    SetUp() override {
        conformanceTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        if (!config().crossProcess) {
            GTEST_SKIP() << config().backend << " moves data only within one process";
        }
        // Forked before this process makes the agent A (no transport context crosses a fork).
        std::string err;
        ASSERT_TRUE(peer_.start(peerMain, err)) << err;
        const std::string hello = peer_.next();
        ASSERT_EQ(hello, "ok") << "the peer did not start";
        md_ = peer_.next();
        raddr_ = std::stoull(peer_.next());
        std::string why;
        a_ = makeAgent("A", why);
        ASSERT_NE(a_, nullptr) << why;
        ASSERT_EQ(a_->registerMem(regList(abuf_.addr(), len)), NIXL_SUCCESS);
        std::string name;
        ASSERT_EQ(a_->loadRemoteMD(md_, name), NIXL_SUCCESS);
        ASSERT_EQ(name, "B");
    }

    forkedPeer peer_;
    std::string md_;
    uintptr_t raddr_ = 0;
};

TEST_F(conformancePeerTest, WriteReadNotifyAndPeerDeath) {
    // READ the peer's initial pattern, WRITE another with a notification, check it there.
    ASSERT_EQ(transfer(*a_, NIXL_READ, abuf_.addr(), raddr_, 65536, "B"), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(abuf_.bytes.data(), 65536, 7), -1);
    fillPattern(abuf_.bytes.data(), 65536, 8);
    nixl_opt_args_t extra;
    extra.notifMsg = "written";
    extra.hasNotif = true;
    ASSERT_EQ(transfer(*a_, NIXL_WRITE, abuf_.addr(), raddr_, 65536, "B", nullptr, &extra),
              NIXL_SUCCESS);
    const auto pollA = [this] { boxA_.poll(*a_); };
    EXPECT_EQ(peer_.cmd("notif written", pollA), "ok");
    EXPECT_EQ(peer_.cmd("check 0 65536 8"), "ok");
    ASSERT_EQ(a_->genNotif("B", "standalone"), NIXL_SUCCESS);
    EXPECT_EQ(peer_.cmd("notif standalone", pollA), "ok");

    // The peer dies: the next transfer to it fails (at creation or when run), never hangs.
    peer_.kill();
    peer_.wait();
    nixlXferReqH *req = nullptr;
    nixl_status_t st = a_->createXferReq(NIXL_WRITE, xferList({{abuf_.addr(), 4096}}),
                                         xferList({{raddr_, 4096}}), "B", req);
    if (st == NIXL_SUCCESS) {
        st = runXfer(*a_, req);
        EXPECT_EQ(a_->releaseXferReq(req), NIXL_SUCCESS);
        EXPECT_EQ(st, NIXL_ERR_REMOTE_DISCONNECT) << nixlEnumStrings::statusStr(st);
    } else {
        EXPECT_TRUE(st == NIXL_ERR_REMOTE_DISCONNECT || st == NIXL_ERR_NOT_FOUND)
            << nixlEnumStrings::statusStr(st);
    }
    // The agent itself keeps working: a local transfer still moves data.
    fillPattern(abuf_.bytes.data(), 4096, 9);
    ASSERT_EQ(transfer(*a_, NIXL_WRITE, abuf_.addr(), abuf_.addr(len / 2), 4096, "A"),
              NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(abuf_.bytes.data() + len / 2, 4096, 9), -1);
}

void
usage() {
    std::cerr << "usage: conformance_test --backend NAME [--param key=value]... "
                 "[--in-process-only] [--progress-thread] "
                 "[--target-mem DRAM_SEG|FILE_SEG [--file-reg path|fd]] [gtest flags]\n";
}

} // namespace

int
main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    conformanceConfig &c = config();
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--backend" && i + 1 < argc) {
            c.backend = argv[++i];
        } else if (arg == "--param" && i + 1 < argc) {
            const std::string kv = argv[++i];
            const size_t eq = kv.find('=');
            if (eq == std::string::npos) {
                usage();
                return 2;
            }
            c.params[kv.substr(0, eq)] = kv.substr(eq + 1);
        } else if (arg == "--in-process-only") {
            c.crossProcess = false;
        } else if (arg == "--progress-thread") {
            c.progressThread = true;
        } else if (arg == "--target-mem" && i + 1 < argc) {
            const std::string mem = argv[++i];
            if (mem != "FILE_SEG" && mem != "DRAM_SEG") {
                usage();
                return 2;
            }
            c.targetMem = mem == "FILE_SEG" ? FILE_SEG : DRAM_SEG;
        } else if (arg == "--file-reg" && i + 1 < argc) {
            const std::string how = argv[++i];
            if (how != "path" && how != "fd") {
                usage();
                return 2;
            }
            c.filePathMode = how == "path";
        } else {
            usage();
            return 2;
        }
    }
    if (c.backend.empty()) {
        usage();
        return 2;
    }
    return RUN_ALL_TESTS();
}
