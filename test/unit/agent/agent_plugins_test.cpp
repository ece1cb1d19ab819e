/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: createBackend with plugins the loader refuses or whose factory misbehaves, and
// agents with more than one backend.

#include <algorithm>

#include "agent/agent_data.h" // nixlBackendH (NIXL installs it as agent_data.h)
#include "agent_test_utils.h"
#include "nixl_backend_plugin.h"

namespace nixl_agent_test {
namespace {

struct refusal_t {
    const char *name;
    nixl_status_t status;
    /** Strings the one ERROR line must contain besides the file name. */
    std::vector<std::string> needles;
};

std::ostream &
operator<<(std::ostream &os, const refusal_t &r) {
    return os << r.name;
}

const std::string abi_now = std::to_string(NIXL_BACKEND_ABI_VERSION);

class agentPluginRefusalTest : public agentTest,
                               public ::testing::WithParamInterface<refusal_t> {
protected:
    void
    SetUp() override {
        dir_ = badPluginDir();
        ASSERT_FALSE(dir_.empty()) << "NIXL_TEST_BAD_PLUGIN_DIR is not set";
    }

    /** A loopback transfer through the backend h of agent; the data must move if moves. */
    void
    loopback(nixlAgent &agent, nixlBackendH *h, bool moves) {
        testBuffer src(128, 1);
        testBuffer dst(128, 2);
        nixl_opt_args_t hint;
        hint.backends = {h};
        ASSERT_EQ(NIXL_SUCCESS, agent.registerMem(regList({src.desc(), dst.desc()}), &hint));
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(NIXL_SUCCESS,
                  agent.createXferReq(NIXL_WRITE, xferList({src.desc()}), xferList({dst.desc()}),
                                      agent_name_, req, &hint));
        nixlBackendH *used = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, agent.queryXferBackend(req, used));
        EXPECT_EQ(h, used);
        EXPECT_EQ(NIXL_SUCCESS, runXfer(agent, req));
        EXPECT_EQ(NIXL_SUCCESS, agent.releaseXferReq(req));
        EXPECT_TRUE(holdsPattern(dst, moves ? 1 : 2));
        EXPECT_EQ(NIXL_SUCCESS, agent.deregisterMem(regList({src.desc(), dst.desc()}), &hint));
    }

    std::string dir_;
    const std::string agent_name_ = "P";
};

TEST_P(agentPluginRefusalTest, RefusedAndAgentStillWorks) {
    const refusal_t &r = GetParam();
    auto agent = makeAgent(agent_name_);
    nixlBackendH *cmin = nullptr;
    {
        scopedEnv env("NIXL_PLUGIN_DIR", dir_.c_str());
        nixlBackendH *h = nullptr;
        stderrCapture cap;
        EXPECT_EQ(r.status, agent->createBackend(r.name, {}, h));
        std::string log = cap.stop();
        EXPECT_EQ(nullptr, h);
        std::vector<std::string> lines = errorLines(log);
        ASSERT_EQ(1u, lines.size()) << log;
        const std::string file = std::string("libplugin_") + r.name + ".so";
        const std::string backend = std::string("backend ") + r.name;
        EXPECT_TRUE(lines[0].find(file) != std::string::npos ||
                    lines[0].find(backend) != std::string::npos)
            << lines[0];
        for (const auto &n : r.needles) {
            EXPECT_NE(std::string::npos, lines[0].find(n)) << "missing \"" << n << "\" in "
                                                           << lines[0];
        }
        // A second attempt is refused the same way: nothing half-made was kept.
        EXPECT_EQ(r.status, agent->createBackend(r.name, {}, h));

        ASSERT_EQ(NIXL_SUCCESS, agent->createBackend("CMIN", {}, cmin));
        ASSERT_NE(nullptr, cmin);
        EXPECT_EQ("CMIN", cmin->getType());
        loopback(*agent, cmin, false); // CMIN completes transfers without moving data
    }
    // With the plugin directory restored, the same agent creates TEST and moves data.
    nixlBackendH *test = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, addTest(*agent, {}, &test));
    loopback(*agent, test, true);
}

INSTANTIATE_TEST_SUITE_P(
    badPlugins,
    agentPluginRefusalTest,
    ::testing::Values(
        refusal_t{"STALE", NIXL_ERR_MISMATCH, {"version 0", abi_now}},
        refusal_t{"FUTURE", NIXL_ERR_MISMATCH, {"version 99", abi_now}},
        refusal_t{"NOENTRY", NIXL_ERR_BACKEND, {NIXL_BACKEND_PLUGIN_ENTRY}},
        refusal_t{"NULLENTRY", NIXL_ERR_BACKEND, {}},
        refusal_t{"THROWS", NIXL_ERR_BACKEND, {}},
        refusal_t{"NOTELF", NIXL_ERR_BACKEND, {}},
        refusal_t{"WRONGKIND", NIXL_ERR_MISMATCH, {}},
        refusal_t{"WRONGNAME", NIXL_ERR_MISMATCH, {"OTHER"}},
        refusal_t{"NOOPS", NIXL_ERR_MISMATCH, {"post_xfer", "check_xfer"}},
        refusal_t{"FACTORYTHROWS", NIXL_ERR_BACKEND, {"agent P", "on purpose"}},
        refusal_t{"FACTORYNULL", NIXL_ERR_BACKEND, {"agent P"}}),
    [](const ::testing::TestParamInfo<refusal_t> &info) { return std::string(info.param.name); });

class agentPluginTest : public agentTest {};

TEST_F(agentPluginTest, AvailPluginsFollowThePluginDirectory) {
    const std::string dir = badPluginDir();
    ASSERT_FALSE(dir.empty()) << "NIXL_TEST_BAD_PLUGIN_DIR is not set";
    auto agent = makeAgent("A");
    std::vector<nixl_backend_t> plugins;
    {
        scopedEnv env("NIXL_PLUGIN_DIR", dir.c_str());
        ASSERT_EQ(NIXL_SUCCESS, agent->getAvailPlugins(plugins));
        for (const char *name : {"CMIN", "STALE", "NOTELF"}) {
            EXPECT_NE(plugins.end(), std::find(plugins.begin(), plugins.end(), name)) << name;
        }
        nixl_mem_list_t mems;
        nixl_b_params_t params;
        EXPECT_EQ(NIXL_SUCCESS, agent->getPluginParams("CMIN", mems, params));
        EXPECT_EQ(nixl_mem_list_t{DRAM_SEG}, mems);
        EXPECT_EQ(NIXL_ERR_MISMATCH, agent->getPluginParams("STALE", mems, params));
    }
    ASSERT_EQ(NIXL_SUCCESS, agent->getAvailPlugins(plugins));
    EXPECT_NE(plugins.end(), std::find(plugins.begin(), plugins.end(), "TEST"));
    EXPECT_EQ(plugins.end(), std::find(plugins.begin(), plugins.end(), "STALE"));
}

TEST_F(agentPluginTest, TwoBackendsWithHints) {
    const std::string dir = badPluginDir();
    ASSERT_FALSE(dir.empty()) << "NIXL_TEST_BAD_PLUGIN_DIR is not set";
    auto agent = makeAgent("A");
    nixlBackendH *test = nullptr;
    nixlBackendH *cmin = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, addTest(*agent, {}, &test));
    {
        scopedEnv env("NIXL_PLUGIN_DIR", dir.c_str());
        ASSERT_EQ(NIXL_SUCCESS, agent->createBackend("CMIN", {}, cmin));
    }
    testBuffer src(256, 1);
    testBuffer dst(256, 2);
    // Without hints both backends register the memory.
    ASSERT_EQ(NIXL_SUCCESS, agent->registerMem(regList({src.desc(), dst.desc()})));
    auto run = [&](const nixl_opt_args_t *extra, nixlBackendH *expect) {
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, agent->createXferReq(NIXL_WRITE, xferList({src.desc()}),
                                                     xferList({dst.desc()}), "A", req, extra));
        nixlBackendH *used = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, agent->queryXferBackend(req, used));
        EXPECT_EQ(expect, used);
        EXPECT_EQ(NIXL_SUCCESS, runXfer(*agent, req));
        EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(req));
    };
    nixl_opt_args_t only_cmin;
    only_cmin.backends = {cmin};
    run(&only_cmin, cmin);
    EXPECT_TRUE(holdsPattern(dst, 2)); // CMIN moves nothing
    nixl_opt_args_t cmin_first;
    cmin_first.backends = {cmin, test};
    run(&cmin_first, cmin);
    EXPECT_TRUE(holdsPattern(dst, 2));
    run(nullptr, test); // creation order
    EXPECT_TRUE(holdsPattern(dst, 1));

    // Metadata only carries the remote-capable backend; a peer loads it and transfers.
    auto peer = makeAgent("B");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*peer));
    testBuffer pbuf(256, 3);
    ASSERT_EQ(NIXL_SUCCESS, peer->registerMem(regList({pbuf.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*agent, *peer));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, peer->createXferReq(NIXL_READ, xferList({pbuf.desc()}),
                                                xferList({src.desc()}), "A", req));
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*peer, req));
    EXPECT_TRUE(holdsPattern(pbuf, 1));
    EXPECT_EQ(NIXL_SUCCESS, peer->releaseXferReq(req));

    // Deregistration with a hint removes only that backend's registration.
    ASSERT_EQ(NIXL_SUCCESS, agent->deregisterMem(regList({src.desc(), dst.desc()}), &only_cmin));
    EXPECT_EQ(NIXL_ERR_NOT_FOUND,
              agent->deregisterMem(regList({src.desc(), dst.desc()}), &only_cmin));
    nixlXferReqH *none = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, agent->createXferReq(NIXL_WRITE, xferList({src.desc()}),
                                                       xferList({dst.desc()}), "A", none,
                                                       &only_cmin));
    run(nullptr, test);
    EXPECT_EQ(NIXL_SUCCESS, agent->deregisterMem(regList({src.desc(), dst.desc()})));

    // Notifications come from the notification-capable backend only.
    EXPECT_EQ(NIXL_ERR_BACKEND, agent->genNotif("A", "x", &only_cmin));
    EXPECT_EQ(NIXL_SUCCESS, agent->genNotif("A", "y"));
    EXPECT_EQ((nixl_notifs_t{{"A", {"y"}}}), drain(*agent));
}

} // namespace
} // namespace nixl_agent_test
