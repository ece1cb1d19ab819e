/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// A transfer request's trace context as a backend sees it (through libplugin_TRACECTX.so,
// test/plugins/tracectx_plugin.c, which records opt_args.trace_ctx at prep and every post):
// one context per request, stable across reposts, fresh ids when tracing, zero when not, an
// application's traceparent adopted, an invalid one ignored with one warning; and the trace
// id on the post span.

#include <cstring>
#include <set>
#include <thread>

#include "nixl_trace_context.h"
#include "tracing/trace_context.h"
#include "tracing_test_utils.h"

namespace {

using namespace nixl_tracing_test;
using nixl_agent_test::regList;
using nixl_agent_test::stderrCapture;
using nixl_agent_test::testBuffer;
using nixl_agent_test::xferList;

constexpr size_t kLen = 256;
const char *const kParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/** Mirrors tracectx_probe_entry_t of the plugin. */
struct probeEntry {
    uint32_t kind; // 0 prep_xfer, 1 post_xfer
    const void *ptr;
    nixl_be_trace_ctx_t value;
    const void *req;
};

/** The record of libplugin_TRACECTX.so, through its exported functions. */
class probe {
public:
    probe() {
        const char *dir = std::getenv("NIXL_TEST_BAD_PLUGIN_DIR");
        const std::string path = std::string(dir != nullptr ? dir : ".") +
            "/libplugin_TRACECTX.so";
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            ADD_FAILURE() << "cannot open " << path << ": " << dlerror();
            return;
        }
        count_ = reinterpret_cast<size_t (*)()>(dlsym(handle_, "tracectx_probe_count"));
        get_ = reinterpret_cast<int (*)(size_t, probeEntry *)>(
            dlsym(handle_, "tracectx_probe_get"));
        clear_ = reinterpret_cast<void (*)()>(dlsym(handle_, "tracectx_probe_clear"));
        if (count_ == nullptr || get_ == nullptr || clear_ == nullptr) {
            ADD_FAILURE() << path << " lacks the tracectx_probe_* functions";
        }
        clear();
    }

    ~probe() {
        if (handle_ != nullptr) {
            dlclose(handle_);
        }
    }

    void
    clear() const {
        if (clear_ != nullptr) {
            clear_();
        }
    }

    std::vector<probeEntry>
    entries() const {
        std::vector<probeEntry> out;
        if (count_ == nullptr || get_ == nullptr) {
            return out;
        }
        for (size_t i = 0; i < count_(); ++i) {
            probeEntry e{};
            EXPECT_EQ(0, get_(i, &e));
            out.push_back(e);
        }
        return out;
    }

    /** The entries of backend request be_req, in call order. */
    std::vector<probeEntry>
    ofRequest(const void *be_req) const {
        std::vector<probeEntry> out;
        for (const probeEntry &e : entries()) {
            if (e.req == be_req) {
                out.push_back(e);
            }
        }
        return out;
    }

private:
    void *handle_ = nullptr;
    size_t (*count_)() = nullptr;
    int (*get_)(size_t, probeEntry *) = nullptr;
    void (*clear_)() = nullptr;
};

std::string
hex(const uint8_t *p, size_t n) {
    std::string s(2 * n, '?');
    nixl_trace_ctx_to_hex(p, n, s.data());
    return s;
}

class traceContextAgentTest : public tracingTest {
protected:
    /** Creates the TRACECTX backend of agent and registers src and dst with it. */
    void
    setUpAgent(nixlAgent &agent) {
        const std::string dir = badPluginDir();
        ASSERT_FALSE(dir.empty()) << "NIXL_TEST_BAD_PLUGIN_DIR is not set";
        {
            scopedEnv plugin_dir("NIXL_PLUGIN_DIR", dir.c_str());
            ASSERT_EQ(NIXL_SUCCESS, agent.createBackend("TRACECTX", {}, backend_));
        }
        hint_.backends = {backend_};
        ASSERT_EQ(NIXL_SUCCESS, agent.registerMem(regList({src_.desc(), dst_.desc()}), &hint_));
    }

    /** A loopback WRITE by createXferReq, with extra's options on top of the backend hint. */
    nixlXferReqH *
    create(nixlAgent &agent, const std::string &trace_parent = "") {
        nixl_opt_args_t extra = hint_;
        extra.traceParent = trace_parent;
        nixlXferReqH *req = nullptr;
        EXPECT_EQ(NIXL_SUCCESS,
                  agent.createXferReq(NIXL_WRITE, xferList({src_.desc()}),
                                      xferList({dst_.desc()}), agent_name_, req, &extra));
        return req;
    }

    /** A loopback WRITE by prepXferDlist + makeXferReq. */
    nixlXferReqH *
    make(nixlAgent &agent, const std::string &trace_parent = "") {
        nixlDlistH *local = nullptr;
        nixlDlistH *remote = nullptr;
        EXPECT_EQ(NIXL_SUCCESS, agent.prepXferDlist(NIXL_INIT_AGENT, xferList({src_.desc()}),
                                                    local, &hint_));
        EXPECT_EQ(NIXL_SUCCESS,
                  agent.prepXferDlist(agent_name_, xferList({dst_.desc()}), remote, &hint_));
        nixl_opt_args_t extra = hint_;
        extra.traceParent = trace_parent;
        nixlXferReqH *req = nullptr;
        EXPECT_EQ(NIXL_SUCCESS,
                  agent.makeXferReq(NIXL_WRITE, local, {0}, remote, {0}, req, &extra));
        EXPECT_EQ(NIXL_SUCCESS, agent.releasedDlistH(local));
        EXPECT_EQ(NIXL_SUCCESS, agent.releasedDlistH(remote));
        return req;
    }

    /** The backend request of the prep that made the latest request. */
    const void *
    lastPrepReq(const probe &p) const {
        const void *be = nullptr;
        for (const probeEntry &e : p.entries()) {
            if (e.kind == 0) {
                be = e.req;
            }
        }
        return be;
    }

    void
    tearDownAgent(nixlAgent &agent) {
        EXPECT_EQ(NIXL_SUCCESS, agent.deregisterMem(regList({src_.desc(), dst_.desc()}), &hint_));
    }

    const std::string agent_name_ = "ctx";
    testBuffer src_{kLen, 1};
    testBuffer dst_{kLen, 2};
    nixlBackendH *backend_ = nullptr;
    nixl_opt_args_t hint_;
};

TEST_F(traceContextAgentTest, RequestContextsAreDistinctAndStable) {
    probe p;
    recorder rec("recA");
    rec.clear();
    auto agent = makeTraced(agent_name_, "recA");
    ASSERT_NO_FATAL_FAILURE(setUpAgent(*agent));

    nixlXferReqH *a = create(*agent);
    ASSERT_NE(nullptr, a);
    const void *be_a = lastPrepReq(p);
    nixlXferReqH *b = make(*agent);
    ASSERT_NE(nullptr, b);
    const void *be_b = lastPrepReq(p);
    ASSERT_NE(be_a, be_b);

    // Posts and reposts; a traceparent given to a post does not change the request's context.
    nixl_opt_args_t post_extra;
    post_extra.traceParent = kParent;
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(NIXL_SUCCESS, runXfer(*agent, a));
        EXPECT_EQ(NIXL_SUCCESS, runXfer(*agent, b, &post_extra));
    }

    std::set<std::string> trace_ids;
    for (const auto &[req, be] : {std::pair{a, be_a}, std::pair{b, be_b}}) {
        const std::vector<probeEntry> seen = p.ofRequest(be);
        ASSERT_EQ(4u, seen.size()); // prep + 3 posts
        EXPECT_EQ(0u, seen[0].kind);
        const nixl_be_trace_ctx_t &ctx = seen[0].value;
        ASSERT_NE(nullptr, seen[0].ptr);
        EXPECT_TRUE(nixl_trace_ctx_is_valid(&ctx));
        EXPECT_EQ(0x01, ctx.flags);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(req), ctx.correlation_id);
        for (uint8_t r : ctx.reserved) {
            EXPECT_EQ(0, r);
        }
        for (size_t i = 1; i < seen.size(); ++i) {
            EXPECT_EQ(1u, seen[i].kind);
            EXPECT_EQ(seen[0].ptr, seen[i].ptr) << "post " << i;
            EXPECT_EQ(0, memcmp(&ctx, &seen[i].value, sizeof(ctx))) << "post " << i;
        }
        trace_ids.insert(hex(ctx.trace_id, 16));
    }
    EXPECT_EQ(2u, trace_ids.size());
    EXPECT_NE(p.ofRequest(be_a)[0].ptr, p.ofRequest(be_b)[0].ptr);

    // Each post span carries its request's trace id.
    size_t posts = 0;
    for (const traceEvent &e : rec.events()) {
        if (e.what != 'B' || e.name != "nixl::postXferReq.write") {
            continue;
        }
        ++posts;
        const void *be = e.corr == reinterpret_cast<uintptr_t>(a) ? be_a : be_b;
        const std::string want = "trace_id=s:" + hex(p.ofRequest(be)[0].value.trace_id, 16);
        EXPECT_NE(std::string::npos, e.attrs.find(want)) << e.attrs;
        EXPECT_EQ(std::string::npos, e.attrs.find("parent_id")) << e.attrs;
    }
    EXPECT_EQ(6u, posts);

    EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(a));
    EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(b));
    tearDownAgent(*agent);
}

TEST_F(traceContextAgentTest, ManyRequestsHaveDistinctTraceIds) {
    probe p;
    auto agent = makeTraced(agent_name_, "recA");
    ASSERT_NO_FATAL_FAILURE(setUpAgent(*agent));
    std::vector<nixlXferReqH *> reqs;
    for (int i = 0; i < 100; ++i) {
        reqs.push_back(create(*agent));
    }
    std::set<std::string> trace_ids;
    std::set<std::string> span_ids;
    for (const probeEntry &e : p.entries()) {
        EXPECT_TRUE(nixl_trace_ctx_is_valid(&e.value));
        trace_ids.insert(hex(e.value.trace_id, 16));
        span_ids.insert(hex(e.value.span_id, 8));
    }
    EXPECT_EQ(100u, trace_ids.size());
    EXPECT_EQ(100u, span_ids.size());
    for (nixlXferReqH *r : reqs) {
        EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(r));
    }
    tearDownAgent(*agent);
}

TEST_F(traceContextAgentTest, UntracedAgentHandsAZeroContext) {
    probe p;
    auto agent = plainAgent(agent_name_);
    ASSERT_NO_FATAL_FAILURE(setUpAgent(*agent));
    // A traceparent is not even read when the agent does not trace.
    nixlXferReqH *a = create(*agent, kParent);
    nixlXferReqH *b = make(*agent, "not a traceparent");
    ASSERT_NE(nullptr, a);
    ASSERT_NE(nullptr, b);
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*agent, a));
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*agent, b));
    const std::vector<probeEntry> seen = p.entries();
    ASSERT_EQ(4u, seen.size());
    const nixl_be_trace_ctx_t zero{};
    for (const probeEntry &e : seen) {
        ASSERT_NE(nullptr, e.ptr);
        EXPECT_EQ(0, memcmp(&zero, &e.value, sizeof(zero)));
        EXPECT_FALSE(nixl_trace_ctx_is_valid(&e.value));
    }
    EXPECT_NE(seen[0].ptr, seen[1].ptr); // still one context per request
    EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(a));
    EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(b));
    tearDownAgent(*agent);
}

TEST_F(traceContextAgentTest, AttachedTraceparentGivesItsTraceIdAndParent) {
    probe p;
    recorder rec("recA");
    rec.clear();
    auto agent = makeTraced(agent_name_, "recA");
    ASSERT_NO_FATAL_FAILURE(setUpAgent(*agent));
    nixl_be_trace_ctx_t parent;
    ASSERT_EQ(NIXL_TRACE_CTX_OK, nixl_trace_ctx_parse_traceparent(kParent, 55, &parent));

    for (bool by_make : {false, true}) {
        SCOPED_TRACE(by_make ? "makeXferReq" : "createXferReq");
        p.clear();
        rec.clear();
        nixlXferReqH *req = by_make ? make(*agent, kParent) : create(*agent, kParent);
        ASSERT_NE(nullptr, req);
        EXPECT_EQ(NIXL_SUCCESS, runXfer(*agent, req));
        const std::vector<probeEntry> seen = p.entries();
        ASSERT_EQ(2u, seen.size());
        const nixl_be_trace_ctx_t &ctx = seen[0].value;
        EXPECT_EQ(0, memcmp(ctx.trace_id, parent.trace_id, 16));
        // The request's span is a child of the given one: an id of its own.
        EXPECT_NE(0, memcmp(ctx.span_id, parent.span_id, 8));
        EXPECT_TRUE(nixl_trace_ctx_is_valid(&ctx));
        EXPECT_EQ(0, memcmp(&ctx, &seen[1].value, sizeof(ctx)));

        bool found = false;
        for (const traceEvent &e : rec.events()) {
            if (e.what == 'E' && e.name == "nixl::postXferReq.write") {
                found = true;
                EXPECT_NE(std::string::npos,
                          e.attrs.find("trace_id=s:0af7651916cd43dd8448eb211c80319c"))
                    << e.attrs;
                EXPECT_NE(std::string::npos, e.attrs.find("parent_id=s:b7ad6b7169203331"))
                    << e.attrs;
            }
        }
        EXPECT_TRUE(found);
        EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(req));
    }
    tearDownAgent(*agent);
}

TEST_F(traceContextAgentTest, InvalidTraceparentIsOneWarningAndAFreshTrace) {
    probe p;
    auto agent = makeTraced(agent_name_, "recA");
    ASSERT_NO_FATAL_FAILURE(setUpAgent(*agent));
    // Upper-case hex (refused by W3C) with an escape byte that must not reach the terminal.
    const std::string bad = "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01\x1b[2J";
    nixlXferReqH *req = nullptr;
    std::string log;
    {
        stderrCapture cap;
        req = create(*agent, bad);
        log = cap.stop();
    }
    ASSERT_NE(nullptr, req);
    const std::vector<std::string> warns = logLines(log, 'W');
    ASSERT_EQ(1u, warns.size()) << log;
    EXPECT_EQ(0u, logLines(log, 'E').size()) << log;
    EXPECT_NE(std::string::npos, warns[0].find("agent " + agent_name_)) << warns[0];
    EXPECT_NE(std::string::npos, warns[0].find("createXferReq")) << warns[0];
    EXPECT_NE(std::string::npos, warns[0].find("0AF7651916CD43DD")) << warns[0];
    EXPECT_NE(std::string::npos, warns[0].find("\\x1b[2J")) << warns[0];
    EXPECT_EQ(std::string::npos, warns[0].find('\x1b')) << warns[0];

    const std::vector<probeEntry> seen = p.entries();
    ASSERT_EQ(1u, seen.size());
    EXPECT_TRUE(nixl_trace_ctx_is_valid(&seen[0].value));
    EXPECT_NE("0af7651916cd43dd8448eb211c80319c", hex(seen[0].value.trace_id, 16));
    EXPECT_EQ(NIXL_SUCCESS, runXfer(*agent, req));
    EXPECT_EQ(NIXL_SUCCESS, agent->releaseXferReq(req));
    tearDownAgent(*agent);
}

TEST(traceContextIds, ThreadsDrawDistinctNonZeroIds) {
    constexpr int kThreads = 4;
    constexpr int kPerThread = 2000;
    std::vector<std::vector<nixl_be_trace_ctx_t>> made(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&made, t] {
            made[t].resize(kPerThread);
            for (int i = 0; i < kPerThread; ++i) {
                nixl::trace::makeRequestContext(made[t][i], static_cast<uint64_t>(i) + 1, nullptr);
            }
        });
    }
    for (std::thread &th : threads) {
        th.join();
    }
    std::set<std::string> trace_ids;
    std::set<std::string> span_ids;
    for (int t = 0; t < kThreads; ++t) {
        for (int i = 0; i < kPerThread; ++i) {
            const nixl_be_trace_ctx_t &c = made[t][i];
            ASSERT_TRUE(nixl_trace_ctx_is_valid(&c));
            EXPECT_EQ(0x01, c.flags);
            EXPECT_EQ(static_cast<uint64_t>(i) + 1, c.correlation_id);
            trace_ids.insert(hex(c.trace_id, 16));
            span_ids.insert(hex(c.span_id, 8));
        }
    }
    EXPECT_EQ(size_t{kThreads} * kPerThread, trace_ids.size());
    EXPECT_EQ(size_t{kThreads} * kPerThread, span_ids.size());

    // With a parent: its trace id, a span id of its own.
    nixl_be_trace_ctx_t parent;
    ASSERT_EQ(NIXL_TRACE_CTX_OK, nixl_trace_ctx_parse_traceparent(kParent, 55, &parent));
    nixl_be_trace_ctx_t child;
    nixl::trace::makeRequestContext(child, 7, &parent);
    EXPECT_EQ(0, memcmp(child.trace_id, parent.trace_id, 16));
    EXPECT_NE(0, memcmp(child.span_id, parent.span_id, 8));
    EXPECT_TRUE(nixl_trace_ctx_is_valid(&child));
}

} // namespace
