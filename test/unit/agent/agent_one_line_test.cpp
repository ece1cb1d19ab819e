/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// One error, one log line: when the backend detects a failure it logs the cause through core
// services and core propagates the status without an ERROR line of its own (docs/BackendGuide.md
// section 7). Each case drives a TEST-backend refusal through the agent and captures the log.

#include "agent_test_utils.h"
#include "metadata/md_blob.h"

namespace nixl_agent_test {
namespace {

/** Exactly one ERROR line, written by the plugin (core prefixes plugin lines "plugin <name>:"),
 *  containing every needle. */
::testing::AssertionResult
onePluginErrorLine(const std::string &log, std::initializer_list<std::string> needles) {
    const std::vector<std::string> lines = errorLines(log);
    if (lines.size() != 1) {
        return ::testing::AssertionFailure()
               << lines.size() << " ERROR lines, expected exactly one:\n"
               << log;
    }
    if (lines[0].find("plugin TEST: ") == std::string::npos) {
        return ::testing::AssertionFailure() << "the ERROR line is not TEST's: " << lines[0];
    }
    for (const auto &n : needles) {
        if (lines[0].find(n) == std::string::npos) {
            return ::testing::AssertionFailure()
                   << "the ERROR line does not contain \"" << n << "\": " << lines[0];
        }
    }
    return ::testing::AssertionSuccess();
}

class agentOneLineTest : public agentTest {
protected:
    void
    SetUp() override {
        a_ = makeAgent("A");
        b_ = makeAgent("B");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a_));
        ASSERT_EQ(NIXL_SUCCESS, addTest(*b_));
        ASSERT_EQ(NIXL_SUCCESS, a_->registerMem(regList({aBuf_.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, b_->registerMem(regList({bBuf_.desc()})));
    }

    /** B's metadata, decoded, for a test to damage one field of. */
    nixlMdBlob
    bMetadata() {
        nixl_blob_t blob;
        EXPECT_EQ(NIXL_SUCCESS, b_->getLocalMD(blob));
        nixlMdBlob decoded;
        std::string error;
        EXPECT_EQ(NIXL_SUCCESS, nixlMdDecode(blob, decoded, error)) << error;
        return decoded;
    }

    testBuffer aBuf_{512, 1};
    testBuffer bBuf_{512, 2};
    std::unique_ptr<nixlAgent> a_;
    std::unique_ptr<nixlAgent> b_;
};

// The case of the report: TEST refuses B's connection info; before, core added "backend TEST
// rejected the connection info of B" as a second ERROR line.
TEST_F(agentOneLineTest, RefusedConnectionInfoIsOneLine) {
    nixlMdBlob md = bMetadata();
    ASSERT_EQ(1u, md.conns.size());
    md.conns[0].connInfo = "not a TEST engine's connection info";
    const std::string blob = nixlMdEncode(md);
    std::string name;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_MISMATCH, a_->loadRemoteMD(blob, name));
    EXPECT_TRUE(onePluginErrorLine(cap.stop(), {"agent 'A'", "remote 'B'", "loadRemoteConnInfo"}));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a_->checkRemoteMD("B", xferList({bBuf_.desc()})));
}

TEST_F(agentOneLineTest, RefusedPublicDataIsOneLine) {
    nixlMdBlob md = bMetadata();
    ASSERT_EQ(1u, md.sections.size());
    ASSERT_EQ(1u, md.sections[0].descs.size());
    md.sections[0].descs[0].publicData.resize(3);
    const std::string blob = nixlMdEncode(md);
    std::string name;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_MISMATCH, a_->loadRemoteMD(blob, name));
    EXPECT_TRUE(onePluginErrorLine(cap.stop(), {"agent 'A'", "remote 'B'", "public data"}));
    // Rolled back whole: the connection loaded before the refusal is gone too, so the intact
    // metadata loads afterwards.
    EXPECT_EQ(NIXL_SUCCESS, sendMD(*b_, *a_));
}

TEST_F(agentOneLineTest, RefusedRegistrationIsOneLine) {
    auto c = makeAgent("C");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*c, {{"fail_register_at", "2"}}));
    testBuffer one(64);
    testBuffer two(64);
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_BACKEND, c->registerMem(regList({one.desc(), two.desc()})));
    EXPECT_TRUE(onePluginErrorLine(cap.stop(), {"agent 'C'", "fail_register_at=2"}));
}

TEST_F(agentOneLineTest, RefusedPostIsOneLine) {
    auto c = makeAgent("C");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*c, {{"fail_post_at", "1"}}));
    testBuffer buf(64, 3);
    ASSERT_EQ(NIXL_SUCCESS, c->registerMem(regList({buf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *c));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, c->createXferReq(NIXL_WRITE, xferList({buf.desc()}),
                                             xferList({bBuf_.desc(0, 64)}), "B", req));
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_BACKEND, c->postXferReq(req));
    EXPECT_TRUE(onePluginErrorLine(cap.stop(), {"agent 'C'", "remote 'B'", "fail_post_at=1"}));
    EXPECT_EQ(NIXL_SUCCESS, c->releaseXferReq(req));
}

// A peer whose connection drops: the backend says so once; core's note that it drops the
// peer's metadata is detail (DEBUG).
TEST_F(agentOneLineTest, LostPeerIsOneLine) {
    auto c = makeAgent("C");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*c, {{"disconnect_after", "1"}}));
    testBuffer buf(64, 3);
    ASSERT_EQ(NIXL_SUCCESS, c->registerMem(regList({buf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*b_, *c));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, c->createXferReq(NIXL_WRITE, xferList({buf.desc()}),
                                             xferList({bBuf_.desc(0, 64)}), "B", req));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*c, req));
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_REMOTE_DISCONNECT, c->postXferReq(req));
    EXPECT_TRUE(onePluginErrorLine(cap.stop(), {"agent 'C'", "remote 'B'", "disconnect_after"}));
    EXPECT_EQ(NIXL_SUCCESS, c->releaseXferReq(req));
}

// Where core itself finds the fault (a plugin's answer that is no nixl_status_t), core writes
// the one line and the agent reports NIXL_ERR_BACKEND.
TEST_F(agentOneLineTest, StatusOutsideNixlStatusIsOneCoreLine) {
    const std::string dir = badPluginDir();
    ASSERT_FALSE(dir.empty()) << "NIXL_TEST_BAD_PLUGIN_DIR is not set";
    scopedEnv env("NIXL_PLUGIN_DIR", dir.c_str());
    auto c = makeAgent("C");
    nixlBackendH *h = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, c->createBackend("BADSTATUS", {}, h));
    testBuffer buf(64);
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_BACKEND, c->registerMem(regList({buf.desc()})));
    const std::string log = cap.stop();
    EXPECT_TRUE(oneErrorLine(log, {"backend BADSTATUS", "register_mem returned 42",
                                   "not a nixl_status_t"}));
    EXPECT_EQ(std::string::npos, log.find("] plugin ")) << log;
}

} // namespace
} // namespace nixl_agent_test
