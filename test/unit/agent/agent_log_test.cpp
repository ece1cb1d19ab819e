/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The log sink escapes what it writes: names and strings from peers, plugins and users reach
// the log with every byte outside printable ASCII as \xNN and '\' as "\\", so the only control
// byte in the output is each line's own '\n'.

#include "agent_test_utils.h"
#include <chrono>
#include <thread>

#include "common/nixl_log.h"

namespace nixl_agent_test {
namespace {

/** Empty when every line of log starts with "[nixl " and holds printable ASCII only;
 *  otherwise what is wrong. */
std::string
rawBytesIn(const std::string &log) {
    if (log.empty() || log.back() != '\n') {
        return "the log does not end with a newline";
    }
    size_t start = 0;
    while (start < log.size()) {
        size_t end = log.find('\n', start);
        std::string_view line(log.data() + start, end - start);
        if (line.rfind("[nixl ", 0) != 0) {
            return "a line does not start with the log prefix: " + nixl::log::escaped(line);
        }
        for (char ch : line) {
            auto c = static_cast<unsigned char>(ch);
            if (c < 0x20 || c >= 0x7f) {
                return "raw byte " + std::to_string(c) + " in: " + nixl::log::escaped(line);
            }
        }
        start = end + 1;
    }
    return "";
}

size_t
countOf(const std::string &hay, const std::string &needle) {
    size_t n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) {
        ++n;
    }
    return n;
}

class agentLogTest : public agentTest {
protected:
    void
    SetUp() override {
        saved_ = nixl::log::getLevel();
    }

    void
    TearDown() override {
        nixl::log::setLevel(saved_);
    }

    nixl::log::level saved_ = nixl::log::level::WARN;
};

TEST_F(agentLogTest, SinkEscapesEveryNonPrintableByteAndBackslash) {
    std::string all;
    for (int c = 0; c < 256; ++c) {
        all.push_back(static_cast<char>(c));
    }
    nixl::log::setLevel(nixl::log::level::WARN);
    stderrCapture cap;
    nixl::log::write(nixl::log::level::ERROR, "/x/evil\x1b[2Jname\r.cpp", 7, all);
    const std::string log = cap.stop();
    EXPECT_EQ("", rawBytesIn(log));
    EXPECT_EQ(1u, countOf(log, "\n"));
    EXPECT_NE(std::string::npos, log.find(" evil\\x1b[2Jname\\x0d.cpp:7] "));
    EXPECT_NE(std::string::npos, log.find("\\x00\\x01"));
    EXPECT_NE(std::string::npos, log.find("\\x1f !\"#"));
    EXPECT_NE(std::string::npos, log.find("[\\\\]^_`"));
    EXPECT_NE(std::string::npos, log.find("}~\\x7f\\x80"));
    EXPECT_NE(std::string::npos, log.find("\\xfe\\xff\n"));
    EXPECT_EQ("a\\\\x1b\\xc3\\xa9", nixl::log::escaped("a\\x1b\xc3\xa9"));
}

TEST_F(agentLogTest, HostilePeerNameReachesTheLogEscaped) {
    // A terminal title sequence (OSC ... BEL), CR, NUL, DEL, a backslash and a forged log line.
    static const char raw[] = "B\x1b]0;owned\x07\rC\0D\n[nixl E 00:00:00.000000 1 agent.cpp:1] "
                              "forged\x7f\\";
    const std::string evil(raw, sizeof(raw) - 1);
    ASSERT_EQ('\\', evil.back());
    const std::string shown = "B\\x1b]0;owned\\x07\\x0dC\\x00D\\x0a[nixl E 00:00:00.000000 1 "
                              "agent.cpp:1] forged\\x7f\\\\";
    nixl::log::setLevel(nixl::log::level::DEBUG);
    auto a = makeAgent("A");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));

    stderrCapture cap;
    nixl_blob_t blob;
    {
        auto b = makeAgent(evil);
        ASSERT_EQ(NIXL_SUCCESS, addTest(*b));
        ASSERT_EQ(NIXL_SUCCESS, b->getLocalMD(blob));
    }
    // The peer is gone: TEST (through the plugin logging path) warns naming it, and the agent
    // logs the load; a second invalidation is an error naming it.
    std::string name;
    ASSERT_EQ(NIXL_SUCCESS, a->loadRemoteMD(blob, name));
    ASSERT_EQ(evil, name);
    ASSERT_EQ(NIXL_SUCCESS, a->invalidateRemoteMD(evil));
    EXPECT_NE(NIXL_SUCCESS, a->invalidateRemoteMD(evil));
    const std::string log = cap.stop();

    EXPECT_EQ("", rawBytesIn(log));
    EXPECT_EQ(std::string::npos, log.find("\n[nixl E 00:00:00.000000 1 agent.cpp:1]"));
    bool plugin_line = false;
    bool error_line = false;
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find(shown) == std::string::npos) {
            continue;
        }
        plugin_line = plugin_line || line.find("loadRemoteConnInfo") != std::string::npos;
        error_line = error_line || line.rfind("[nixl E ", 0) == 0;
    }
    EXPECT_TRUE(plugin_line) << log;
    EXPECT_TRUE(error_line) << log;
}

// Issue 29: a 120 KB value and a plugin's 10 MB message were written whole.
TEST_F(agentLogTest, LongValuesAndLongLinesAreCutSayingTheirLength) {
    const std::string value(120 * 1024, 'v');
    const std::string huge(10 * 1024 * 1024, 'm');
    stderrCapture cap;
    NIXL_ERROR << "NIXL_SOMETHING=" << nixl::log::cut(value) << " is not valid";
    NIXL_ERROR << huge;
    nixl::log::write(nixl::log::level::ERROR, "plugin.cpp", 1, huge); // the plugins' path
    const std::string log = cap.stop();
    const auto lines = errorLines(log);
    ASSERT_EQ(3u, lines.size()) << log.substr(0, 1000);
    EXPECT_NE(std::string::npos, lines[0].find(std::string(256, 'v') + "... (122880 bytes) is not"))
        << lines[0].substr(0, 400);
    EXPECT_EQ(std::string::npos, lines[0].find(std::string(257, 'v')));
    for (const auto &l : lines) {
        EXPECT_LT(l.size(), nixl::log::max_line_bytes + 200);
    }
    EXPECT_NE(std::string::npos, lines[1].find("... (10485760 bytes)"));
    EXPECT_NE(std::string::npos, lines[2].find("... (10485760 bytes)"));
    EXPECT_EQ("short", nixl::log::cut("short"));
}

// Issue 29: 5,000 bad LOADs were 5,000 ERROR lines. Now at most limited_lines_per_sec a
// second from that site, and the next line let through says how many were suppressed.
TEST_F(agentLogTest, RejectedLoadsAreRateLimitedWithASuppressedCount) {
    auto a = makeAgent("A");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
    const nixl_blob_t garbage(64, '\x1b');
    std::string name;
    auto cap = std::make_unique<stderrCapture>();
    for (int i = 0; i < 5000; ++i) {
        ASSERT_NE(NIXL_SUCCESS, a->loadRemoteMD(garbage, name));
    }
    // The count is written with the first line let through in a later second: await it,
    // polling the condition (bounded); gtest's capture has no peek, so stop and restart it.
    std::string log = cap->stop();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (log.find("similar lines)") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        cap = std::make_unique<stderrCapture>();
        ASSERT_NE(NIXL_SUCCESS, a->loadRemoteMD(garbage, name));
        log += cap->stop();
    }
    const auto lines = errorLines(log);
    // 5,000 rejections (far under a second here) give a handful of lines, not thousands; the
    // bound holds unless the burst took over 9 s.
    EXPECT_LE(lines.size(), 100u) << log.substr(0, 2000);
    EXPECT_GE(lines.size(), 1u);
    EXPECT_NE(std::string::npos, lines[0].find("loadRemoteMD: rejected a 64-byte metadata blob"))
        << lines[0];
    bool counted = false;
    for (const auto &l : lines) {
        counted = counted || l.find("(suppressed ") != std::string::npos;
    }
    EXPECT_TRUE(counted) << log.substr(0, 2000);
}

} // namespace
} // namespace nixl_agent_test
