/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// NIXL 1.4's P2P protocol (NIXLCOMM, nixl-wire.md section 4.2) against libnixl: a NIXL peer
// written here from the specification as raw socket bytes talks to our listener (SEND, LOAD,
// INVL on one cached connection, bad frames, a token), and our client talks to a fake NIXL
// listener (forced with NIXL_P2P_PROTOCOL=nixl, and found by itself in auto mode). The frames
// are built by hand here, not with p2p_frame's encoder, so the test checks the encoder too.

#include <gtest/gtest.h>

#include "metadata/p2p/p2p_frame.h"
#include "p2p_test_utils.h"

using namespace nixl_p2p_test;

namespace {

/** A NIXLCOMM frame as the specification lays it out: LE64 body length, "NIXLCOMM:", CMD, ARG. */
std::string
commFrame(const std::string &cmd, const std::string &arg) {
    const std::string body = "NIXLCOMM:" + cmd + arg;
    std::string out;
    uint64_t len = body.size();
    for (int i = 0; i < 8; ++i) {
        out.push_back(static_cast<char>(len & 0xff));
        len >>= 8;
    }
    return out + body;
}

/** Reads exactly n bytes (bounded by the hang deadline); false on close or timeout. */
bool
readExactly(int fd, size_t n, std::string &out) {
    const auto end = std::chrono::steady_clock::now() + hang_deadline;
    out.clear();
    char buf[4096];
    while (out.size() < n && std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 1000) <= 0) {
            continue;
        }
        const ssize_t r = ::recv(fd, buf, std::min(sizeof(buf), n - out.size()), 0);
        if (r <= 0) {
            return false;
        }
        out.append(buf, static_cast<size_t>(r));
    }
    return out.size() == n;
}

/** Reads one NIXLCOMM frame: its command and argument. */
bool
readCommFrame(int fd, std::string &cmd, std::string &arg) {
    std::string len_bytes;
    if (!readExactly(fd, 8, len_bytes)) {
        return false;
    }
    uint64_t len = 0;
    for (int i = 7; i >= 0; --i) {
        len = (len << 8) | static_cast<uint8_t>(len_bytes[i]);
    }
    if (len < 13 || len > (1u << 24)) {
        return false;
    }
    std::string body;
    if (!readExactly(fd, len, body) || body.compare(0, 9, "NIXLCOMM:") != 0) {
        return false;
    }
    cmd = body.substr(9, 4);
    arg = body.substr(13);
    return true;
}

class p2pNixlcommTest : public ::testing::Test {
protected:
    p2pNixlcommTest()
        : bind_("NIXL_P2P_BIND_ADDR", "127.0.0.1"),
          token_("NIXL_P2P_TOKEN", nullptr),
          timeout_("NIXL_P2P_TIMEOUT_MS", nullptr),
          maxFrame_("NIXL_P2P_MAX_FRAME", nullptr),
          maxConns_("NIXL_P2P_MAX_CONNECTIONS", nullptr),
          protocol_("NIXL_P2P_PROTOCOL", nullptr),
          telemetry_("NIXL_TELEMETRY_ENABLE", nullptr) {}

    static std::unique_ptr<nixlAgent>
    agent(const std::string &name, const nixlAgentConfig &cfg = listenConfig()) {
        auto a = std::make_unique<nixlAgent>(name, cfg);
        nixlBackendH *h = nullptr;
        EXPECT_EQ(NIXL_SUCCESS, a->createBackend("TEST", {}, h));
        return a;
    }

    static bool
    knows(const nixlAgent &a, const std::string &name) {
        return a.checkRemoteMD(name, nixl_xfer_dlist_t(DRAM_SEG)) == NIXL_SUCCESS;
    }

    scopedEnv bind_;
    scopedEnv token_;
    scopedEnv timeout_;
    scopedEnv maxFrame_;
    scopedEnv maxConns_;
    scopedEnv protocol_;
    scopedEnv telemetry_;
};

TEST_F(p2pNixlcommTest, EncoderWritesTheSpecifiedBytes) {
    const std::string send = nixlP2P::encodeComm(nixl_p2p_type_t::FETCH, "");
    EXPECT_EQ(send, std::string("\x0d\0\0\0\0\0\0\0NIXLCOMM:SEND", 21));
    EXPECT_EQ(nixlP2P::encodeComm(nixl_p2p_type_t::INVALIDATE, "A"), commFrame("INVL", "A"));
    EXPECT_EQ(nixlP2P::encodeComm(nixl_p2p_type_t::LOAD, std::string(300, 'b')),
              commFrame("LOAD", std::string(300, 'b')));
}

TEST_F(p2pNixlcommTest, ParserReadsNixlcommFramesInAnyPieces) {
    const std::string stream = commFrame("SEND", "") + commFrame("LOAD", std::string(70000, 'x')) +
        commFrame("INVL", "agentB");
    for (size_t step : {size_t{1}, size_t{5}, size_t{4096}, stream.size()}) {
        nixlP2PParser p(nixlP2P::default_load_limit, true);
        std::vector<std::pair<nixl_p2p_type_t, std::string>> got;
        size_t off = 0;
        while (off < stream.size()) {
            size_t used = 0;
            const size_t n = std::min(step, stream.size() - off);
            const auto r = p.feed(stream.data() + off, n, used);
            ASSERT_NE(r, nixlP2PParser::result_t::ERROR) << p.error();
            off += used;
            if (r == nixlP2PParser::result_t::FRAME) {
                got.emplace_back(p.type(), p.payload());
            }
        }
        EXPECT_EQ(p.dialect(), nixl_p2p_dialect_t::NIXLCOMM);
        ASSERT_EQ(got.size(), 3u) << "step " << step;
        EXPECT_EQ(got[0].first, nixl_p2p_type_t::FETCH);
        EXPECT_EQ(got[0].second, "");
        EXPECT_EQ(got[1].first, nixl_p2p_type_t::LOAD);
        EXPECT_EQ(got[1].second, std::string(70000, 'x'));
        EXPECT_EQ(got[2].first, nixl_p2p_type_t::INVALIDATE);
        EXPECT_EQ(got[2].second, "agentB");
    }
}

TEST_F(p2pNixlcommTest, ParserRefusesBadNixlcommFrames) {
    std::string too_long = commFrame("LOAD", "");
    too_long[0] = 0x71; // a body of 0x1071 = 4209 bytes: over 13 + a 4096-byte limit
    too_long[1] = 0x10;
    const struct {
        std::string bytes;
        const char *needle;
    } cases[] = {
        {commFrame("XXXX", ""), "unknown NIXLCOMM command \"XXXX\""},
        {std::string("\x20\0\0\0\0\0\0\0NIXLCOMX:LOAD", 21), "does not start with \"NIXLCOMM:\""},
        {too_long, "over the limit"},
        {std::string("\x05\0\0\0\0\0\0\0", 8), "shorter than"},
        {commFrame("INVL", std::string(2000, 'n')), "argument of 2000 bytes, over the limit"},
        {"GET / HTTP/1.1\r\n", "nor a NIXL 1.4 NIXLCOMM frame"},
    };
    for (const auto &c : cases) {
        nixlP2PParser p(4096, true);
        size_t used = 0;
        EXPECT_EQ(p.feed(c.bytes.data(), c.bytes.size(), used), nixlP2PParser::result_t::ERROR);
        EXPECT_NE(p.error().find(c.needle), std::string::npos) << p.error();
    }
    // The same line of text fed a byte at a time: NIXLCOMM was guessed from the first byte,
    // and the head is still reported as neither framing.
    {
        nixlP2PParser p(4096, true);
        const std::string text = "GET / HTTP/1.1\r\n";
        nixlP2PParser::result_t r = nixlP2PParser::result_t::NEED_MORE;
        for (size_t i = 0; i < text.size() && r == nixlP2PParser::result_t::NEED_MORE; ++i) {
            size_t used = 0;
            r = p.feed(text.data() + i, 1, used);
        }
        EXPECT_EQ(r, nixlP2PParser::result_t::ERROR);
        EXPECT_NE(p.error().find("nor a NIXL 1.4 NIXLCOMM frame"), std::string::npos) << p.error();
        EXPECT_NE(p.error().find("bad magic"), std::string::npos) << p.error();
    }
    // Without allow_comm a NIXLCOMM frame is bad magic, as before.
    nixlP2PParser strict(4096);
    const std::string send = commFrame("SEND", "");
    size_t used = 0;
    EXPECT_EQ(strict.feed(send.data(), send.size(), used), nixlP2PParser::result_t::ERROR);
    EXPECT_NE(strict.error().find("bad magic"), std::string::npos);
}

TEST_F(p2pNixlcommTest, NixlPeerFetchesPushesAndInvalidatesOnOneConnection) {
    auto a = agent("A");
    auto b = agent("B", nixlAgentConfig());
    auto c = agent("C", nixlAgentConfig());
    nixl_blob_t b_md;
    ASSERT_EQ(NIXL_SUCCESS, b->getLocalMD(b_md));
    const int fd = connectTo(portOf(*a));
    ASSERT_GE(fd, 0);
    stderrCapture cap;
    // nixl_test's order: SEND then LOAD, back to back on the same connection.
    ASSERT_TRUE(sendAll(fd, commFrame("SEND", "") + commFrame("LOAD", b_md)));
    std::string cmd;
    std::string arg;
    ASSERT_TRUE(readCommFrame(fd, cmd, arg));
    EXPECT_EQ(cmd, "LOAD");
    std::string name;
    ASSERT_EQ(NIXL_SUCCESS, c->loadRemoteMD(arg, name));
    EXPECT_EQ(name, "A");
    ASSERT_TRUE(waitFor([&] { return knows(*a, "B"); }));
    // The connection stays open (NIXL caches it): a second SEND is answered on it.
    ASSERT_TRUE(sendAll(fd, commFrame("SEND", "")));
    ASSERT_TRUE(readCommFrame(fd, cmd, arg));
    EXPECT_EQ(cmd, "LOAD");
    ASSERT_TRUE(sendAll(fd, commFrame("INVL", "B")));
    ASSERT_TRUE(waitFor([&] { return !knows(*a, "B"); }));
    ::close(fd);
    EXPECT_TRUE(errorLines(cap.stop()).empty());
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).badPeers, 0u);
}

TEST_F(p2pNixlcommTest, BadNixlcommFramesCostTheConnectionAndOneLine) {
    scopedEnv max_frame("NIXL_P2P_MAX_FRAME", "4096");
    scopedEnv timeout("NIXL_P2P_TIMEOUT_MS", "300");
    auto a = agent("A");
    const std::string load = commFrame("LOAD", std::string(1000, 'z'));
    const struct {
        std::string bytes;
        bool half_close;
        const char *needle;
    } cases[] = {
        {load.substr(0, 100), true, "100 of 1021 bytes received (truncated frame)"},
        {commFrame("LOAD", std::string(5000, 'z')), false, "over the limit of 13 + 4096"},
        {commFrame("ABCD", ""), false, "unknown NIXLCOMM command"},
        {load.substr(0, 30), false, "no complete request within 300 ms"},
    };
    for (const auto &c : cases) {
        const int fd = connectTo(portOf(*a));
        ASSERT_GE(fd, 0);
        stderrCapture cap;
        sendAll(fd, c.bytes);
        if (c.half_close) {
            ::shutdown(fd, SHUT_WR);
        }
        std::string got;
        EXPECT_TRUE(readToEof(fd, &got));
        ::close(fd);
        EXPECT_TRUE(got.empty()) << c.needle; // no STATUS frame: a NIXL peer could not read one
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A: P2P listener: peer 127.0.0.1:", c.needle,
                                              "connection closed"}));
    }
    // Still serving a NIXL peer.
    const int fd = connectTo(portOf(*a));
    ASSERT_TRUE(sendAll(fd, commFrame("SEND", "")));
    std::string cmd;
    std::string arg;
    EXPECT_TRUE(readCommFrame(fd, cmd, arg));
    ::close(fd);
}

TEST_F(p2pNixlcommTest, SendThatCannotBeAnsweredCostsTheConnectionAndOneLine) {
    scopedEnv max_frame("NIXL_P2P_MAX_FRAME", "4096");
    auto a = agent("A");
    // Metadata over NIXL_P2P_MAX_FRAME: many registrations.
    std::vector<char> buf(512 * 64);
    nixl_reg_dlist_t regs(DRAM_SEG);
    for (size_t i = 0; i < 512; ++i) {
        regs.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()) + i * 64, 64, 0, ""));
    }
    ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regs));
    nixl_blob_t md;
    ASSERT_EQ(NIXL_SUCCESS, a->getLocalMD(md));
    ASSERT_GT(md.size(), 4096u);
    const int fd = connectTo(portOf(*a));
    ASSERT_GE(fd, 0);
    stderrCapture cap;
    // Repeated SENDs cost one line, not one per frame: the first closes the connection.
    std::string sends;
    for (int i = 0; i < 20; ++i) {
        sends += commFrame("SEND", "");
    }
    sendAll(fd, sends);
    std::string got;
    EXPECT_TRUE(readToEof(fd, &got));
    ::close(fd);
    EXPECT_TRUE(got.empty());
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A: P2P listener: peer 127.0.0.1:",
                                          "NIXLCOMM SEND not answered: the metadata is",
                                          "over NIXL_P2P_MAX_FRAME (4096)",
                                          "connection closed"}));
}

TEST_F(p2pNixlcommTest, ListenerWithATokenRefusesNixlcomm) {
    scopedEnv token("NIXL_P2P_TOKEN", "secret");
    auto a = agent("A");
    const int fd = connectTo(portOf(*a));
    ASSERT_GE(fd, 0);
    stderrCapture cap;
    ASSERT_TRUE(sendAll(fd, commFrame("SEND", "")));
    std::string got;
    EXPECT_TRUE(readToEof(fd, &got));
    ::close(fd);
    EXPECT_TRUE(got.empty());
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A: P2P listener: peer 127.0.0.1:",
                                          "refused NIXL 1.4 NIXLCOMM frames",
                                          "NIXL_P2P_TOKEN is set"}));
}

TEST_F(p2pNixlcommTest, IdleNixlConnectionMakesRoomAtTheConnectionLimit) {
    scopedEnv limit("NIXL_P2P_MAX_CONNECTIONS", "1");
    auto a = agent("A");
    const int fd = connectTo(portOf(*a));
    ASSERT_TRUE(sendAll(fd, commFrame("SEND", "")));
    std::string cmd;
    std::string arg;
    ASSERT_TRUE(readCommFrame(fd, cmd, arg)); // now idle, kept open
    stderrCapture cap;
    auto good = agent("good", nixlAgentConfig());
    nixl_opt_args_t to_a = at(portOf(*a));
    ASSERT_EQ(NIXL_SUCCESS, good->sendLocalMD(&to_a));
    ASSERT_TRUE(idle(*good));
    EXPECT_EQ(nixlAgentInternals::p2pStats(*good).opsFailed, 0u);
    EXPECT_TRUE(knows(*a, "good"));
    EXPECT_TRUE(readToEof(fd)); // the idle one was closed for it
    ::close(fd);
    EXPECT_TRUE(errorLines(cap.stop()).empty());
}

/** A fake NIXL 1.4 listener: the frames of each accepted connection, one connection at a time.
 *  answer_send: the blob to answer SEND with. */
struct fakeNixlListener {
    deadPort port;
    std::string answerSend;
    std::vector<std::pair<std::string, std::string>> frames;

    /** Accepts one connection and reads NIXLCOMM frames from it until the client closes. */
    void
    serveOne() {
        const int fd = port.acceptOne();
        ASSERT_GE(fd, 0);
        std::string cmd;
        std::string arg;
        while (readCommFrame(fd, cmd, arg)) {
            frames.emplace_back(cmd, arg);
            if (cmd == "SEND") {
                ASSERT_TRUE(sendAll(fd, commFrame("LOAD", answerSend)));
            }
        }
        ::close(fd);
    }
};

TEST_F(p2pNixlcommTest, ForcedNixlClientSpeaksOnlyNixlcomm) {
    std::unique_ptr<nixlAgent> a;
    {
        scopedEnv nixl("NIXL_P2P_PROTOCOL", "nixl");
        a = agent("A");
    }
    auto b = agent("B", nixlAgentConfig());
    fakeNixlListener fake;
    ASSERT_TRUE(fake.port.listen());
    ASSERT_EQ(NIXL_SUCCESS, b->getLocalMD(fake.answerSend));
    nixl_opt_args_t there = at(fake.port.port());
    nixl_blob_t a_md;
    ASSERT_EQ(NIXL_SUCCESS, a->getLocalMD(a_md));
    stderrCapture cap;
    std::thread t([&] {
        for (int i = 0; i < 3; ++i) {
            fake.serveOne();
        }
    });
    ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("B", &there));
    ASSERT_EQ(NIXL_SUCCESS, a->sendLocalMD(&there));
    ASSERT_EQ(NIXL_SUCCESS, a->invalidateLocalMD(&there));
    ASSERT_TRUE(idle(*a));
    t.join();
    EXPECT_TRUE(errorLines(cap.stop()).empty());
    EXPECT_TRUE(knows(*a, "B"));
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).opsFailed, 0u);
    ASSERT_EQ(fake.frames.size(), 3u);
    EXPECT_EQ(fake.frames[0], std::make_pair(std::string("SEND"), std::string()));
    EXPECT_EQ(fake.frames[1], std::make_pair(std::string("LOAD"), a_md));
    EXPECT_EQ(fake.frames[2], std::make_pair(std::string("INVL"), std::string("A")));
}

TEST_F(p2pNixlcommTest, AutoClientRetriesInNixlcommAndRemembersThePeer) {
    auto a = agent("A");
    fakeNixlListener fake;
    ASSERT_TRUE(fake.port.listen());
    nixl_opt_args_t there = at(fake.port.port());
    nixl_blob_t a_md;
    ASSERT_EQ(NIXL_SUCCESS, a->getLocalMD(a_md));
    stderrCapture cap;
    std::thread t([&] {
        // First contact: our HELLO, which a NIXL listener cannot read; it drops the socket.
        const int fd = fake.port.acceptOne();
        ASSERT_GE(fd, 0);
        char buf[16];
        ASSERT_GT(::recv(fd, buf, sizeof(buf), 0), 0);
        ::close(fd);
        fake.serveOne(); // the retry
        fake.serveOne(); // the invalidation, straight in NIXLCOMM
    });
    ASSERT_EQ(NIXL_SUCCESS, a->sendLocalMD(&there));
    ASSERT_TRUE(idle(*a));
    ASSERT_EQ(NIXL_SUCCESS, a->invalidateLocalMD(&there));
    ASSERT_TRUE(idle(*a));
    t.join();
    EXPECT_TRUE(errorLines(cap.stop()).empty());
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).opsFailed, 0u);
    ASSERT_EQ(fake.frames.size(), 2u);
    EXPECT_EQ(fake.frames[0], std::make_pair(std::string("LOAD"), a_md));
    EXPECT_EQ(fake.frames[1], std::make_pair(std::string("INVL"), std::string("A")));
}

TEST_F(p2pNixlcommTest, AutoClientFetchRetriesAfterASilentPeer) {
    std::unique_ptr<nixlAgent> a;
    {
        // Also the retried connection's bound, in which the fake thread must answer: long
        // enough for a busy machine (the silent first connection costs it once).
        scopedEnv timeout("NIXL_P2P_TIMEOUT_MS", "2000");
        a = agent("A");
    }
    auto b = agent("B", nixlAgentConfig());
    fakeNixlListener fake;
    ASSERT_TRUE(fake.port.listen());
    ASSERT_EQ(NIXL_SUCCESS, b->getLocalMD(fake.answerSend));
    nixl_opt_args_t there = at(fake.port.port());
    stderrCapture cap;
    std::thread t([&] {
        // As a NIXL 1.4 listener: our header reads as a huge length, so it waits for the rest
        // and says nothing until the client gives up on the connection.
        const int fd = fake.port.acceptOne();
        ASSERT_GE(fd, 0);
        EXPECT_TRUE(readToEof(fd));
        ::close(fd);
        fake.serveOne();
    });
    ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("B", &there));
    ASSERT_TRUE(idle(*a));
    t.join();
    EXPECT_TRUE(errorLines(cap.stop()).empty());
    EXPECT_TRUE(knows(*a, "B"));
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).opsFailed, 0u);
    ASSERT_EQ(fake.frames.size(), 1u);
    EXPECT_EQ(fake.frames[0].first, "SEND");
}

// With NIXL_P2P_TOKEN set the peer must be a libnixl listener that checks it: a silent peer
// is a failure, never retried in NIXLCOMM (which carries no token) nor remembered as NIXL.
TEST_F(p2pNixlcommTest, AutoClientWithATokenDoesNotRetryInNixlcomm) {
    std::unique_ptr<nixlAgent> a;
    {
        scopedEnv timeout("NIXL_P2P_TIMEOUT_MS", "300");
        scopedEnv token("NIXL_P2P_TOKEN", "secret");
        a = agent("A");
    }
    deadPort fake;
    ASSERT_TRUE(fake.listen());
    nixl_opt_args_t there = at(fake.port());
    stderrCapture cap;
    std::thread t([&] {
        const int fd = fake.acceptOne();
        ASSERT_GE(fd, 0);
        EXPECT_TRUE(readToEof(fd));
        ::close(fd);
    });
    ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("B", &there));
    ASSERT_TRUE(idle(*a));
    t.join();
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).opsFailed, 1u);
    EXPECT_FALSE(knows(*a, "B"));
    pollfd p{fake.fd(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 0), 0) << "a second connection (a NIXLCOMM retry) was made";
    EXPECT_EQ(errorLines(cap.stop()).size(), 1u);
}

TEST_F(p2pNixlcommTest, NixlModeAgentMeetsALibnixlListener) {
    auto b = agent("B");
    std::unique_ptr<nixlAgent> a;
    {
        scopedEnv nixl("NIXL_P2P_PROTOCOL", "nixl");
        a = agent("A");
    }
    nixl_opt_args_t to_b = at(portOf(*b));
    ASSERT_EQ(NIXL_SUCCESS, a->sendLocalMD(&to_b));
    ASSERT_EQ(NIXL_SUCCESS, a->fetchRemoteMD("B", &to_b));
    ASSERT_TRUE(idle(*a));
    EXPECT_TRUE(knows(*a, "B"));
    ASSERT_TRUE(waitFor([&] { return knows(*b, "A"); }));
    ASSERT_EQ(NIXL_SUCCESS, a->invalidateLocalMD(&to_b));
    ASSERT_TRUE(idle(*a));
    ASSERT_TRUE(waitFor([&] { return !knows(*b, "A"); }));
    EXPECT_EQ(nixlAgentInternals::p2pStats(*a).opsFailed, 0u);
}

TEST_F(p2pNixlcommTest, BadProtocolValueFailsConstruction) {
    scopedEnv bad("NIXL_P2P_PROTOCOL", "nixlcomm");
    stderrCapture cap;
    EXPECT_THROW(nixlAgent("A", listenConfig()), std::invalid_argument);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"NIXL_P2P_PROTOCOL", "auto, libnixl or nixl"}));
}

} // namespace
