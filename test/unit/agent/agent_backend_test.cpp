/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: construction, plugin queries, backend creation and parameters, unsupported calls.

#include <algorithm>
#include <stdexcept>

#include "agent_test_utils.h"

namespace nixl_agent_test {
namespace {

class agentBackendTest : public agentTest {};

bool
contains(const nixl_mem_list_t &mems, nixl_mem_t m) {
    return std::find(mems.begin(), mems.end(), m) != mems.end();
}

TEST_F(agentBackendTest, EmptyNameThrowsInvalidArgument) {
    EXPECT_THROW(nixlAgent("", nixlAgentConfig()), std::invalid_argument);
    EXPECT_THROW(nixlAgent(NIXL_INIT_AGENT, nixlAgentConfig(true)), std::invalid_argument);
}

TEST_F(agentBackendTest, ConstructsInEverySyncMode) {
    for (auto mode : {nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE,
                      nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT,
                      nixl_thread_sync_t::NIXL_THREAD_SYNC_RW}) {
        auto agent = makeAgent("A", agentConfig(mode));
        nixlBackendH *h = nullptr;
        EXPECT_EQ(NIXL_SUCCESS, addTest(*agent, {}, &h));
        EXPECT_NE(nullptr, h);
    }
}

TEST_F(agentBackendTest, InvalidTelemetryEnableValueThrows) {
    scopedEnv env("NIXL_TELEMETRY_ENABLE", "sometimes");
    EXPECT_THROW(nixlAgent("A", nixlAgentConfig()), std::invalid_argument);
}

TEST_F(agentBackendTest, GetAvailPluginsListsTest) {
    auto agent = makeAgent("A");
    std::vector<nixl_backend_t> plugins{"stale entry"};
    ASSERT_EQ(NIXL_SUCCESS, agent->getAvailPlugins(plugins));
    EXPECT_NE(plugins.end(), std::find(plugins.begin(), plugins.end(), "TEST"));
    // The output is replaced, not appended to.
    EXPECT_EQ(plugins.end(), std::find(plugins.begin(), plugins.end(), "stale entry"));
}

TEST_F(agentBackendTest, GetPluginParamsOfTest) {
    auto agent = makeAgent("A");
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(NIXL_SUCCESS, agent->getPluginParams("TEST", mems, params));
    EXPECT_TRUE(contains(mems, DRAM_SEG));
    EXPECT_FALSE(contains(mems, VRAM_SEG));
    for (const char *key : {"async",
                            "async_polls",
                            "fail_post_at",
                            "fail_register_at",
                            "disconnect_after",
                            "fail_release",
                            "fail_create"}) {
        EXPECT_EQ(1u, params.count(key)) << key;
    }
    EXPECT_EQ("false", params["async"]);
}

TEST_F(agentBackendTest, GetPluginParamsOfUnknownPluginIsNotFound) {
    auto agent = makeAgent("A");
    nixl_mem_list_t mems{VRAM_SEG};
    nixl_b_params_t params{{"k", "v"}};
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, agent->getPluginParams("NO_SUCH_PLUGIN", mems, params));
}

TEST_F(agentBackendTest, CreateBackendSuccess) {
    auto agent = makeAgent("A");
    nixlBackendH *h = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, agent->createBackend("TEST", {}, h));
    ASSERT_NE(nullptr, h);
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(NIXL_SUCCESS, agent->getBackendParams(h, mems, params));
    EXPECT_TRUE(contains(mems, DRAM_SEG));
}

TEST_F(agentBackendTest, CreateBackendDuplicateTypeIsInvalidParam) {
    auto agent = makeAgent("A");
    nixlBackendH *first = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, agent->createBackend("TEST", {}, first));
    nixlBackendH *second = nullptr;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->createBackend("TEST", {}, second));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A", "TEST"}));
    EXPECT_EQ(nullptr, second);
    // The first backend is untouched.
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    EXPECT_EQ(NIXL_SUCCESS, agent->getBackendParams(first, mems, params));
}

TEST_F(agentBackendTest, CreateBackendUnknownPluginIsNotFound) {
    auto agent = makeAgent("A");
    nixlBackendH *h = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, agent->createBackend("NO_SUCH_PLUGIN", {}, h));
    EXPECT_EQ(nullptr, h);
    EXPECT_EQ(NIXL_SUCCESS, addTest(*agent));
}

TEST_F(agentBackendTest, CreateBackendFailCreateIsBackendAndAgentStaysUsable) {
    auto agent = makeAgent("A");
    nixlBackendH *h = nullptr;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_BACKEND, agent->createBackend("TEST", {{"fail_create", "true"}}, h));
    // One line naming the agent (TEST writes it as 'A', core as A); which layer writes it is
    // not prescribed.
    const std::string log = cap.stop();
    const std::vector<std::string> lines = errorLines(log);
    EXPECT_EQ(1u, lines.size()) << log;
    for (const auto &line : lines) {
        EXPECT_TRUE(line.find("agent 'A'") != std::string::npos ||
                    line.find("agent A") != std::string::npos)
            << line;
    }
    EXPECT_EQ(nullptr, h);
    // The failed creation left no half-made backend of that type behind.
    ASSERT_EQ(NIXL_SUCCESS, agent->createBackend("TEST", {}, h));
    testBuffer src(256, 1);
    testBuffer dst(256, 2);
    ASSERT_EQ(NIXL_SUCCESS, agent->registerMem(regList({src.desc(), dst.desc()})));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              agent->createXferReq(
                  NIXL_WRITE, xferList({src.desc()}), xferList({dst.desc()}), "A", req));
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*agent, req));
    EXPECT_TRUE(holdsPattern(dst, 1));
    EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(req));
}

TEST_F(agentBackendTest, CreateBackendInvalidParameterValueIsBackend) {
    auto agent = makeAgent("A");
    nixlBackendH *h = nullptr;
    EXPECT_EQ(NIXL_ERR_BACKEND, agent->createBackend("TEST", {{"async", "maybe"}}, h));
    EXPECT_EQ(NIXL_ERR_BACKEND, agent->createBackend("TEST", {{"async_polls", "-1"}}, h));
    EXPECT_EQ(NIXL_SUCCESS, agent->createBackend("TEST", {{"async", "true"}}, h));
}

TEST_F(agentBackendTest, GetBackendParamsReportsEffectiveParameters) {
    auto agent = makeAgent("A");
    nixlBackendH *h = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              addTest(*agent, {{"async", "true"}, {"async_polls", "3"}, {"custom", "x"}}, &h));
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(NIXL_SUCCESS, agent->getBackendParams(h, mems, params));
    EXPECT_EQ(nixl_mem_list_t{DRAM_SEG}, mems);
    EXPECT_EQ("true", params["async"]);
    EXPECT_EQ("3", params["async_polls"]);
    EXPECT_EQ("x", params["custom"]);
    // Defaulted parameters are reported with their effective value.
    EXPECT_EQ("false", params["fail_release"]);
}

TEST_F(agentBackendTest, GetBackendParamsNullIsInvalidParam) {
    auto agent = makeAgent("A");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*agent));
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    stderrCapture cap;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->getBackendParams(nullptr, mems, params));
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"agent A"}));
}

TEST_F(agentBackendTest, GetBackendParamsForeignHandleIsInvalidParam) {
    auto a = makeAgent("A");
    auto b = makeAgent("B");
    nixlBackendH *hb = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b, {}, &hb));
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->getBackendParams(hb, mems, params));
}

TEST_F(agentBackendTest, BackendHandleReportsTypeAndCapabilities) {
    auto agent = makeAgent("A");
    nixlBackendH *h = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, addTest(*agent, {}, &h));
    nixlBackendH *queried = nullptr;
    testBuffer src(64, 3);
    testBuffer dst(64, 4);
    ASSERT_EQ(NIXL_SUCCESS, agent->registerMem(regList({src.desc(), dst.desc()})));
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              agent->createXferReq(
                  NIXL_WRITE, xferList({src.desc()}), xferList({dst.desc()}), "A", req));
    ASSERT_EQ(NIXL_SUCCESS, agent->queryXferBackend(req, queried));
    EXPECT_EQ(h, queried);
    EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(req));
}

TEST_F(agentBackendTest, QueryMemNeedsExactlyOneHint) {
    auto agent = makeAgent("A");
    nixlBackendH *h = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, addTest(*agent, {}, &h));
    testBuffer buf(128);
    ASSERT_EQ(NIXL_SUCCESS, agent->registerMem(regList({buf.desc()})));
    nixl_reg_dlist_t query = regList({buf.desc(16, 32), buf.desc(100, 100)});
    std::vector<nixl_query_resp_t> resp;

    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->queryMem(query, resp, nullptr));
    nixl_opt_args_t none;
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->queryMem(query, resp, &none));
    nixl_opt_args_t two;
    two.backends = {h, h};
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->queryMem(query, resp, &two));

    nixl_opt_args_t one;
    one.backends = {h};
    ASSERT_EQ(NIXL_SUCCESS, agent->queryMem(query, resp, &one));
    ASSERT_EQ(2u, resp.size());
    ASSERT_TRUE(resp[0].has_value());
    EXPECT_EQ("true", (*resp[0])["registered"]);
    EXPECT_FALSE(resp[1].has_value()); // runs past the end of the registration
}

TEST_F(agentBackendTest, QueryMemForeignHintIsInvalidParam) {
    auto a = makeAgent("A");
    auto b = makeAgent("B");
    nixlBackendH *hb = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b, {}, &hb));
    testBuffer buf(64);
    std::vector<nixl_query_resp_t> resp;
    nixl_opt_args_t foreign;
    foreign.backends = {hb};
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->queryMem(regList({buf.desc()}), resp, &foreign));
}

TEST_F(agentBackendTest, ForeignBackendHintIsRefusedByRegisterMem) {
    auto a = makeAgent("A");
    auto b = makeAgent("B");
    nixlBackendH *hb = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b, {}, &hb));
    testBuffer buf(64);
    nixl_opt_args_t foreign;
    foreign.backends = {hb};
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, a->registerMem(regList({buf.desc()}), &foreign));
    // Nothing was registered with A's own backend either.
    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a->deregisterMem(regList({buf.desc()})));
}

TEST_F(agentBackendTest, PrepMemViewIsNotSupported) {
    auto agent = makeAgent("A");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*agent));
    testBuffer buf(64);
    ASSERT_EQ(NIXL_SUCCESS, agent->registerMem(regList({buf.desc()})));
    nixlMemViewH mvh = nullptr;
    nixl_remote_dlist_t remote(DRAM_SEG);
    remote.addDesc(nixlRemoteDesc(buf.desc(), "A"));
    EXPECT_EQ(NIXL_ERR_NOT_SUPPORTED, agent->prepMemView(remote, mvh));
    nixl_local_dlist_t local = xferList({buf.desc()});
    EXPECT_EQ(NIXL_ERR_NOT_SUPPORTED, agent->prepMemView(local, mvh));
    EXPECT_EQ(nullptr, mvh);
    // Releasing an unknown view only warns.
    stderrCapture cap;
    agent->releaseMemView(nullptr);
    EXPECT_TRUE(errorLines(cap.stop()).empty());
}

TEST_F(agentBackendTest, MetadataExchangeCallsNeedADestination) {
    // Without ipAddr and without a central store there is nowhere to send to; the P2P paths
    // are tested in test/unit/p2p.
    scopedEnv etcd("NIXL_ETCD_ENDPOINTS", nullptr);
    auto agent = makeAgent("A");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*agent));
    testBuffer buf(64);
    ASSERT_EQ(NIXL_SUCCESS, agent->registerMem(regList({buf.desc()})));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->sendLocalMD());
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->sendLocalPartialMD(regList({buf.desc()})));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->fetchRemoteMD("B"));
    EXPECT_EQ(NIXL_ERR_INVALID_PARAM, agent->invalidateLocalMD());
}

TEST_F(agentBackendTest, DestructionReleasesEverythingOutstanding) {
    // Requests, prepared lists, registrations, remote metadata and an async request still
    // running: the destructor frees them all (the sanitizer builds check for leaks).
    testBuffer a_buf(512, 1);
    testBuffer b_buf(512, 2);
    auto b = makeAgent("B");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*b));
    ASSERT_EQ(NIXL_SUCCESS, b->registerMem(regList({b_buf.desc()})));
    {
        auto a = makeAgent("A");
        ASSERT_EQ(NIXL_SUCCESS, addTest(*a, {{"async", "true"}, {"async_polls", "5"}}));
        ASSERT_EQ(NIXL_SUCCESS, a->registerMem(regList({a_buf.desc()})));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*b, *a));
        ASSERT_EQ(NIXL_SUCCESS, sendMD(*a, *b));
        nixlXferReqH *running = nullptr;
        nixlXferReqH *idle = nullptr;
        ASSERT_EQ(NIXL_SUCCESS,
                  a->createXferReq(
                      NIXL_WRITE, xferList({a_buf.desc()}), xferList({b_buf.desc()}), "B",
                      running));
        ASSERT_EQ(NIXL_SUCCESS,
                  a->createXferReq(
                      NIXL_READ, xferList({a_buf.desc()}), xferList({b_buf.desc()}), "B", idle));
        ASSERT_EQ(NIXL_IN_PROG, a->postXferReq(running));
        nixlDlistH *dl = nullptr;
        ASSERT_EQ(NIXL_SUCCESS, a->prepXferDlist(xferList({a_buf.desc()}), dl));
    }
    // The aborted request never copied anything into B.
    EXPECT_TRUE(holdsPattern(b_buf, 2));
    // B is unaffected by A going away.
    nixl_notifs_t notifs;
    EXPECT_EQ(NIXL_SUCCESS, b->getNotifs(notifs));
    EXPECT_TRUE(notifs.empty());
}

} // namespace
} // namespace nixl_agent_test
