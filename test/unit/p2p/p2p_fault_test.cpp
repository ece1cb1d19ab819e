/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Bad input and faults on the P2P port, from raw sockets: garbage, truncated, oversized and
// slow frames, a peer leaving mid-frame, too many connections. Each costs the listener one log
// line and the connection; the agent keeps serving other peers. And the client side: a fake
// listener that answers garbage, half a frame, or nothing.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "metadata/p2p/p2p_frame.h"
#include "p2p_test_utils.h"

using namespace nixl_p2p_test;

namespace {

class p2pFaultTest : public ::testing::Test {
protected:
    p2pFaultTest()
        : bind_("NIXL_P2P_BIND_ADDR", "127.0.0.1"),
          token_("NIXL_P2P_TOKEN", nullptr),
          timeout_("NIXL_P2P_TIMEOUT_MS", nullptr),
          maxFrame_("NIXL_P2P_MAX_FRAME", nullptr),
          maxConns_("NIXL_P2P_MAX_CONNECTIONS", nullptr),
          telemetry_("NIXL_TELEMETRY_ENABLE", nullptr) {}

    static std::unique_ptr<nixlAgent>
    agent(const std::string &name, const nixlAgentConfig &cfg = listenConfig()) {
        auto a = std::make_unique<nixlAgent>(name, cfg);
        nixlBackendH *h = nullptr;
        EXPECT_EQ(NIXL_SUCCESS, a->createBackend("TEST", {}, h));
        return a;
    }

    /** A well-behaved peer can still push to a after whatever the test did. */
    static void
    expectStillServing(nixlAgent &a) {
        auto good = agent("good", nixlAgentConfig());
        nixl_opt_args_t to_a = at(portOf(a));
        ASSERT_EQ(NIXL_SUCCESS, good->sendLocalMD(&to_a));
        ASSERT_TRUE(idle(*good));
        EXPECT_EQ(nixlAgentInternals::p2pStats(*good).opsFailed, 0u);
        EXPECT_EQ(NIXL_SUCCESS, a.checkRemoteMD("good", nixl_xfer_dlist_t(DRAM_SEG)));
    }

    static std::string
    hello(const std::string &name = "raw") {
        return nixlP2P::encodeFrame(nixl_p2p_type_t::HELLO, nixlP2P::encodeHello(name, ""));
    }

    /** Sends bytes on a new connection, optionally half-closes, and waits for the listener to
     *  close it; returns what the listener sent. */
    static std::string
    exchange(uint16_t port, const std::string &bytes, bool half_close) {
        const int fd = connectTo(port);
        EXPECT_GE(fd, 0);
        if (fd < 0) {
            return {};
        }
        EXPECT_TRUE(sendAll(fd, bytes));
        if (half_close) {
            ::shutdown(fd, SHUT_WR);
        }
        std::string got;
        EXPECT_TRUE(readToEof(fd, &got));
        ::close(fd);
        return got;
    }

    scopedEnv bind_;
    scopedEnv token_;
    scopedEnv timeout_;
    scopedEnv maxFrame_;
    scopedEnv maxConns_;
    scopedEnv telemetry_;
};

TEST_F(p2pFaultTest, GarbageIsRefusedWithOneLineAndAnAnswer) {
    auto a = agent("A");
    stderrCapture cap;
    const std::string got = exchange(portOf(*a), "GET / HTTP/1.1\r\nHost: x\r\n\r\n", false);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A: P2P listener: peer 127.0.0.1:", "bad magic",
                                          "first bytes \"GET / HT\"", "connection closed"}));
    // The listener says what it is before closing (best effort: the answer may be lost to
    // the reset of unread input, so only check it when it arrived).
    if (!got.empty()) {
        nixlP2PParser p(4096);
        size_t used = 0;
        ASSERT_EQ(p.feed(got.data(), got.size(), used), nixlP2PParser::result_t::FRAME);
        EXPECT_EQ(p.type(), nixl_p2p_type_t::STATUS);
    }
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).badPeers, 1u);
    expectStillServing(*a);
}

TEST_F(p2pFaultTest, TruncatedFrameFromAPeerLeavingMidFrame) {
    auto a = agent("A");
    const std::string load = nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD, std::string(1000, 'm'));
    {
        stderrCapture cap;
        exchange(portOf(*a), hello() + load.substr(0, 300), true);
        EXPECT_TRUE(oneErrorLine(cap.stop(),
                                 {"peer 127.0.0.1:", "(agent raw)",
                                  "in the middle of a frame: 300 of 1016 bytes received",
                                  "truncated"}));
    }
    {
        // Inside the header.
        stderrCapture cap;
        exchange(portOf(*a), load.substr(0, 9), true);
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"9 of 16 (header) bytes received"}));
    }
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("raw", nixl_xfer_dlist_t(DRAM_SEG)));
    expectStillServing(*a);
}

TEST_F(p2pFaultTest, OversizedFrameIsRefusedAtItsHeader) {
    scopedEnv limit("NIXL_P2P_MAX_FRAME", "65536");
    auto a = agent("A");
    std::string header = nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD, "");
    header[12] = '\x01';
    header[14] = '\x01'; // 65537 bytes claimed
    stderrCapture cap;
    const std::string got = exchange(portOf(*a), hello() + header, false);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"LOAD frame of 65537 bytes, over the limit of 65536 "
                                          "(NIXL_P2P_MAX_FRAME)"}));
    nixlP2PParser p(4096);
    size_t used = 0;
    ASSERT_EQ(p.feed(got.data(), got.size(), used), nixlP2PParser::result_t::FRAME);
    nixl_status_t st = NIXL_SUCCESS;
    std::string msg;
    std::string err;
    ASSERT_TRUE(nixlP2P::decodeStatus(p.payload(), st, msg, err));
    EXPECT_EQ(st, NIXL_ERR_MISMATCH);
    expectStillServing(*a);
}

TEST_F(p2pFaultTest, SlowFrameTimesOut) {
    scopedEnv timeout("NIXL_P2P_TIMEOUT_MS", "300");
    auto a = agent("A");
    stderrCapture cap;
    // Five bytes of a header, then nothing: the listener closes at its deadline. (How many
    // bytes it saw by then is not checked: a busy machine may run the deadline first.)
    exchange(portOf(*a), hello().substr(0, 5), false);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"no complete request within 300 ms (NIXL_P2P_TIMEOUT_MS)",
                                          "of 16 (header) bytes", "slow or stalled peer"}));
}

TEST_F(p2pFaultTest, StalledPeersDoNotHoldUpOthers) {
    auto a = agent("A");
    // Two connections that stall in the middle of a frame stay open while a good peer is
    // served: the listener never waits on one connection.
    const int s1 = connectTo(portOf(*a));
    const int s2 = connectTo(portOf(*a));
    ASSERT_GE(s1, 0);
    ASSERT_GE(s2, 0);
    ASSERT_TRUE(sendAll(s1, hello().substr(0, 7)));
    ASSERT_TRUE(sendAll(s2, hello() + nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD,
                                                           std::string(100, 'x'))
                                          .substr(0, 40)));
    expectStillServing(*a);
    ::close(s1);
    ::close(s2);
}

TEST_F(p2pFaultTest, WrongFrameOrderAndBadHelloAreRefused) {
    auto a = agent("A");
    struct badCase {
        std::string bytes;
        const char *needle;
    };
    const badCase cases[] = {
        {nixlP2P::encodeFrame(nixl_p2p_type_t::FETCH, "A"), "the first frame is FETCH, expected HELLO"},
        {nixlP2P::encodeFrame(nixl_p2p_type_t::HELLO, "xx"), "HELLO"},
        {hello() + hello(), "unexpected HELLO frame after HELLO"},
        {hello("raw") + nixlP2P::encodeFrame(nixl_p2p_type_t::INVALIDATE, "A"),
         "INVALIDATE names agent A, not the agent of its HELLO"},
        {hello() + nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD, "not a blob"), nullptr},
    };
    for (const auto &c : cases) {
        stderrCapture cap;
        exchange(portOf(*a), c.bytes, false);
        const std::string log = cap.stop();
        if (c.needle != nullptr) {
            EXPECT_TRUE(oneErrorLine(log, {c.needle}));
        } else {
            // A blob that does not decode: loadRemoteMD's own line, and a STATUS answer.
            EXPECT_TRUE(oneErrorLine(log, {"agent A: loadRemoteMD: rejected a 10-byte metadata blob"}));
        }
    }
    expectStillServing(*a);
}

TEST_F(p2pFaultTest, ConnectionsOverTheLimitAreRefused) {
    scopedEnv limit("NIXL_P2P_MAX_CONNECTIONS", "2");
    scopedEnv patient("NIXL_P2P_TIMEOUT_MS", "60000"); // the two must not time out first
    auto a = agent("A");
    const int s1 = connectTo(portOf(*a));
    const int s2 = connectTo(portOf(*a));
    ASSERT_GE(s1, 0);
    ASSERT_GE(s2, 0);
    stderrCapture cap;
    exchange(portOf(*a), "", false);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"refused peer 127.0.0.1:", "2 connections are open",
                                          "NIXL_P2P_MAX_CONNECTIONS"}));
    // Let the listener close the two (garbage), so that its count is down when we see the
    // close: a good peer connecting next must find a free slot.
    for (int fd : {s1, s2}) {
        // Garbage in both framings: one byte could still start a NIXLCOMM length.
        ASSERT_TRUE(sendAll(fd, "GET / HTTP/1.1\r\n"));
        ASSERT_TRUE(readToEof(fd));
        ::close(fd);
    }
    expectStillServing(*a);
}

/** A fake listener: accepts one connection, reads the request, then does what reply says. */
void
fakeListener(deadPort &port, const std::string &reply, bool stall) {
    const int fd = port.acceptOne();
    ASSERT_GE(fd, 0);
    // The client sends HELLO + FETCH at once; read until both frames are in.
    nixlP2PParser p(4096);
    int frames = 0;
    char buf[4096];
    while (frames < 2) {
        const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        ASSERT_GT(n, 0);
        size_t off = 0;
        while (off < static_cast<size_t>(n)) {
            size_t used = 0;
            if (p.feed(buf + off, n - off, used) == nixlP2PParser::result_t::FRAME) {
                ++frames;
            }
            off += used;
        }
    }
    sendAll(fd, reply);
    if (stall) {
        readToEof(fd); // until the client gives up
    }
    ::close(fd);
}

TEST_F(p2pFaultTest, FetchAnswersThatAreNotValidLoadNothing) {
    auto a = agent("A");
    std::unique_ptr<nixlAgent> impatient; // only the stalling case may time out
    {
        scopedEnv timeout("NIXL_P2P_TIMEOUT_MS", "300");
        impatient = agent("A");
    }
    struct replyCase {
        std::string reply;
        bool stall;
        const char *needle;
    };
    const std::string load = nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD, std::string(500, 'z'));
    const replyCase cases[] = {
        {"HTTP/1.1 400 Bad Request\r\n\r\n", false, "the answer is not valid: bad magic"},
        {load.substr(0, 100), false, "closed the connection without answering"},
        {"", true, "no answer within 300 ms"},
        {nixlP2P::encodeFrame(nixl_p2p_type_t::STATUS, nixlP2P::encodeStatus(NIXL_SUCCESS, "")),
         false, "the peer answered NIXL_SUCCESS"},
        {nixlP2P::encodeFrame(nixl_p2p_type_t::FETCH, ""), false, "unexpected FETCH frame"},
    };
    for (const auto &c : cases) {
        deadPort fake;
        ASSERT_TRUE(fake.listen());
        nixl_opt_args_t there = at(fake.port());
        nixlAgent &x = c.stall ? *impatient : *a;
        stderrCapture cap;
        ASSERT_EQ(NIXL_SUCCESS, x.fetchRemoteMD("B", &there));
        std::thread t([&] { fakeListener(fake, c.reply, c.stall); });
        ASSERT_TRUE(idle(x));
        t.join();
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"fetchRemoteMD(B) via 127.0.0.1:", c.needle}));
        EXPECT_EQ(NIXL_ERR_NOT_FOUND, x.checkRemoteMD("B", nixl_xfer_dlist_t(DRAM_SEG)));
    }
}

TEST_F(p2pFaultTest, FetchAnswerWithAnotherAgentsMetadataIsNotLoaded) {
    auto a = agent("A");
    auto c = agent("C", nixlAgentConfig());
    nixl_blob_t blob;
    ASSERT_EQ(NIXL_SUCCESS, c->getLocalMD(blob));
    deadPort fake;
    ASSERT_TRUE(fake.listen());
    nixl_opt_args_t there = at(fake.port());
    stderrCapture cap;
    ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("B", &there));
    std::thread t([&] { fakeListener(fake, nixlP2P::encodeFrame(nixl_p2p_type_t::LOAD, blob), false); });
    ASSERT_TRUE(idle(*a));
    t.join();
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"fetchRemoteMD(B): the peer sent the metadata of agent C"}));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->checkRemoteMD("C", nixl_xfer_dlist_t(DRAM_SEG)));
}

// Issue 29 item 14: accept() failing with EMFILE left the connection pending and the listen fd
// readable, and the listener retried at once (30,000 failures/s). Run in a child process: it
// lowers its own RLIMIT_NOFILE, which must not touch the test process.
TEST_F(p2pFaultTest, AcceptOutOfDescriptorsBacksOffAndRecovers) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int rc = 0;
        {
            auto a = agent("A");
            const uint16_t port = portOf(*a);
            rlimit lim{};
            ::getrlimit(RLIMIT_NOFILE, &lim);
            lim.rlim_cur = 256;
            if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
                ::_exit(10);
            }
            std::vector<int> hog;
            for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) {
                hog.push_back(fd);
            }
            // One descriptor for our end of the connection; the listener has none left.
            ::close(hog.back());
            hog.pop_back();
            const int c = connectTo(port);
            if (c < 0) {
                ::_exit(11);
            }
            const auto failures = [&] { return nixlAgentInternals::p2pStats(*a).acceptFailures; };
            const auto t0 = std::chrono::steady_clock::now();
            while (failures() == 0) {
                if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(30)) {
                    ::_exit(12);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            // A window in which to count the retries (not a synchronisation): with the backoff
            // (10 ms doubling to 1 s) about 8 fit in 2 s, and a busier machine only fewer;
            // without it, tens of thousands.
            std::this_thread::sleep_for(std::chrono::seconds(2));
            const uint64_t n = failures();
            std::fprintf(stderr, "accept failures in the window: %llu\n",
                         static_cast<unsigned long long>(n));
            if (n > 50) {
                rc = 13;
            }
            for (int fd : hog) {
                ::close(fd);
            }
            // The pending connection is accepted once the backoff ends, and peers are served.
            ::close(c);
            auto good = agent("good", nixlAgentConfig());
            nixl_opt_args_t to_a = at(port);
            if (rc == 0 && (good->sendLocalMD(&to_a) != NIXL_SUCCESS || !idle(*good) ||
                            nixlAgentInternals::p2pStats(*good).opsFailed != 0 ||
                            a->checkRemoteMD("good", nixl_xfer_dlist_t(DRAM_SEG)) !=
                                NIXL_SUCCESS)) {
                rc = 14;
            }
        }
        ::_exit(rc);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "10 setrlimit, 11 connect, 12 no failure seen, 13 too many accept failures (busy "
           "loop), 14 not serving after the descriptors came back";
}

// Issue 29 item 9: ~nixlAgent waited NIXL_P2P_TIMEOUT_MS for every queued operation to a peer
// that accepts and never answers (3 fetches at the 5 s default: 15 s). The shutdown has one
// budget (nixl_p2p_shutdown_budget, 2 s): the running fetch is cut at it, the rest dropped.
TEST_F(p2pFaultTest, DestructorBoundedWithOperationsQueuedToAStalledPeer) {
    // The stalled peer: a listening socket never accept()ed; the kernel completes the
    // connections into its backlog, and nothing is ever answered.
    const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(l, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof(sa);
    ASSERT_EQ(::bind(l, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), 0);
    ASSERT_EQ(::listen(l, 16), 0);
    ASSERT_EQ(::getsockname(l, reinterpret_cast<sockaddr *>(&sa), &alen), 0);
    const uint16_t port = ntohs(sa.sin_port);

    auto a = agent("A");
    nixl_opt_args_t to_stalled = at(port);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("S", &to_stalled));
    }
    stderrCapture cap;
    const auto t0 = std::chrono::steady_clock::now();
    a.reset();
    const auto took = std::chrono::steady_clock::now() - t0;
    const std::string log = cap.stop();
    ::close(l);
    // The budget is 2 s and the thread's waits are poll() timeouts computed from it, so only
    // scheduling delay adds to it: 8 s leaves 6 s of it, where the bug took 15 s.
    EXPECT_LT(took, std::chrono::seconds(8)) << log;
    EXPECT_NE(log.find("2 queued operation(s) not started within the 2000 ms shutdown budget"),
              std::string::npos)
        << log;
}

} // namespace
