/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtrace_backend_nvtx.so driven through its C ops table with synthetic events, under the
 * recording NVTX tool (nvtx_recorder.cpp). meson runs this binary once per kind of tool: with
 * the payload extension (NIXL_TEST_NVTX_PAYLOAD_EXT=1) and without it (=0), and once with no
 * tool at all (NvtxNoTool.*). Every NvtxPlugin test asserts the exact sequence of NVTX calls.
 */
#include <dlfcn.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nixl_trace_backend_plugin.h"
#include "nvtx_test_util.h"

namespace {

using lines = std::vector<std::string>;

// Log lines the plugin writes through core services.
std::mutex logMu;
std::vector<std::string> logLines;

void
logFn(void *, int32_t level, const char *msg, size_t len) {
    std::lock_guard<std::mutex> g(logMu);
    logLines.push_back(std::to_string(level) + " " + std::string(msg, len));
}

int32_t
logEnabledFn(void *, int32_t) {
    return 1;
}

const nixl_plugin_core_services_t coreServices = {
    sizeof(nixl_plugin_core_services_t), nullptr, &logFn, &logEnabledFn, nullptr, nullptr,
};

// The name table core would pass: ids 0..2.
const nixl_trace_name_t nameTable[] = {
    {0, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write"},
    {1, NIXL_TRACE_KIND_METADATA, "nixl::xfer.complete"},
    {2, NIXL_TRACE_KIND_METADATA, "nixl::loadRemoteMD"},
};

nixl_trace_attr_t
i64(const char *key, int64_t v) {
    nixl_trace_attr_t a{};
    a.key = key;
    a.type = NIXL_TRACE_ATTR_INT64;
    a.value.i64 = v;
    return a;
}

nixl_trace_attr_t
f64(const char *key, double v) {
    nixl_trace_attr_t a{};
    a.key = key;
    a.type = NIXL_TRACE_ATTR_DOUBLE;
    a.value.f64 = v;
    return a;
}

nixl_trace_attr_t
str(const char *key, const char *data, size_t len) {
    nixl_trace_attr_t a{};
    a.key = key;
    a.type = NIXL_TRACE_ATTR_STRING;
    a.value.str = {data, len};
    return a;
}

nixl_trace_event_t
event(uint32_t nameId,
      uint32_t kind,
      const char *name,
      uint64_t spanId,
      uint64_t correlation,
      const std::vector<nixl_trace_attr_t> &attrs) {
    nixl_trace_event_t e{};
    e.size = sizeof(e);
    e.name_id = nameId;
    e.kind = kind;
    e.name = name;
    e.span_id = spanId;
    e.correlation_id = correlation;
    e.begin_ns = 1000 + spanId;
    e.attrs = attrs.empty() ? nullptr : attrs.data();
    e.attr_count = attrs.size();
    return e;
}

class pluginLib {
public:
    pluginLib() {
        const char *dir = std::getenv("NIXL_PLUGIN_DIR");
        const std::string path = std::string(dir ? dir : ".") + "/libtrace_backend_nvtx.so";
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            error_ = dlerror();
            return;
        }
        auto get = reinterpret_cast<nixl_trace_backend_plugin_entry_fn>(
            dlsym(handle_, NIXL_TRACE_BACKEND_PLUGIN_ENTRY));
        if (get == nullptr || get() == nullptr) {
            error_ = "no " NIXL_TRACE_BACKEND_PLUGIN_ENTRY " in " + path;
            return;
        }
        plugin_ = get();
        ops_ = plugin_->ops;
    }

    const nixl_trace_backend_plugin_t *plugin_ = nullptr;
    const nixl_trace_backend_ops_t *ops_ = nullptr;
    std::string error_;

private:
    void *handle_ = nullptr; // never closed: NVTX keeps pointers into the library
};

pluginLib &
lib() {
    static pluginLib l;
    return l;
}

nixl_plugin_status_t
tryCreate(const char *agent,
          const nixl_trace_name_t *names,
          uint32_t count,
          nixl_trace_backend_t **out) {
    nixl_trace_backend_init_params_t p{};
    p.size = sizeof(p);
    p.core = &coreServices;
    p.agent_name = {agent, std::strlen(agent)};
    p.names = names;
    p.name_count = count;
    *out = nullptr;
    return lib().ops_->create(&p, out);
}

nixl_trace_backend_t *
create(const char *agent, const nixl_trace_name_t *names, uint32_t count) {
    nixl_trace_backend_t *b = nullptr;
    EXPECT_EQ(tryCreate(agent, names, count, &b), NIXL_PLUGIN_SUCCESS);
    return b;
}

// The plugin declined: NOT_ALLOWED, no instance, and one DEBUG line (level 1) saying why.
void
expectDeclined(const char *agent) {
    {
        std::lock_guard<std::mutex> g(logMu);
        logLines.clear();
    }
    nixl_trace_backend_t *b = nullptr;
    EXPECT_EQ(tryCreate(agent, nameTable, 3, &b), NIXL_PLUGIN_ERR_NOT_ALLOWED);
    EXPECT_EQ(b, nullptr);
    std::lock_guard<std::mutex> g(logMu);
    ASSERT_EQ(logLines.size(), 1u);
    EXPECT_EQ(logLines[0].rfind("1 nvtx: agent '" + std::string(agent) +
                                    "': no NVTX tool attached",
                                0),
              0u)
        << logLines[0];
}

class NvtxPlugin : public ::testing::Test {
protected:
    void
    SetUp() override {
        if (!rec_.ok()) {
            GTEST_SKIP() << "needs the NVTX test recorder: " << rec_.error();
        }
        ASSERT_TRUE(lib().error_.empty()) << lib().error_;
        rec_.reset();
        std::lock_guard<std::mutex> g(logMu);
        logLines.clear();
    }

    // What create() of agent "agentA" with nameTable records (domain D1, strings S1..S3).
    lines
    setupLines(const std::string &agent = "agentA", const std::string &d = "D1", int s0 = 1) {
        lines l = {"domain " + d + " \"" + agent + "\""};
        nvtxTest::append(l, rec_.categoryLines(d));
        nvtxTest::append(l, rec_.schemaLines(d));
        for (int i = 0; i < 3; ++i) {
            l.push_back("string " + d + " S" + std::to_string(s0 + i) + " \"" +
                        nameTable[i].name + "\"");
        }
        return l;
    }

    nvtxTest::recorder rec_;
};

TEST_F(NvtxPlugin, PluginHeaderNamesNvtx) {
    EXPECT_EQ(lib().plugin_->hdr.abi_version, NIXL_TRACE_BACKEND_ABI_VERSION);
    EXPECT_STREQ(lib().plugin_->hdr.name, "nvtx");
    EXPECT_STREQ(lib().plugin_->hdr.version, "0.1.0");
}

TEST_F(NvtxPlugin, CreateRegistersDomainCategoriesSchemasAndNamesOnceDestroyDestroysDomain) {
    nixl_trace_backend_t *b = create("agentA", nameTable, 3);
    ASSERT_NE(b, nullptr);
    lines want = setupLines();
    EXPECT_EQ(rec_.take(), want);
    EXPECT_EQ(rec_.extInitialized(), rec_.withExt()) << "the tool is not the one the test expects";
    lib().ops_->destroy(b);
    EXPECT_EQ(rec_.take(), lines{"destroy D1"});
}

TEST_F(NvtxPlugin, NestedSpansTypedAttributesMarkAndCorrelationExactSequence) {
    nixl_trace_backend_t *b = create("agentA", nameTable, 3);
    ASSERT_NE(b, nullptr);
    rec_.take();
    // The string attribute is not NUL-terminated where it ends: only len bytes are its value.
    const char target[] = "targetXYZ";
    const std::vector<nixl_trace_attr_t> outer = {str("remote_agent", target, 6),
                                                  i64("bytes", 4096)};
    const std::vector<nixl_trace_attr_t> inner = {f64("ratio", 0.25), i64("neg", -7)};
    const auto &ops = *lib().ops_;

    auto post = event(0, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write", 11, 0x1234, outer);
    ops.span_begin(b, &post);
    auto dyn = event(NIXL_TRACE_NAME_DYNAMIC, NIXL_TRACE_KIND_COMPUTE, "custom.inner", 12, 0, inner);
    dyn.parent_span_id = 11;
    ops.span_begin(b, &dyn);
    auto done = event(1, NIXL_TRACE_KIND_METADATA, "nixl::xfer.complete", 0, 0x1234, {});
    ops.mark(b, &done);
    dyn.end_ns = dyn.begin_ns + 5;
    ops.span_end(b, &dyn);
    post.end_ns = post.begin_ns + 9;
    ops.span_end(b, &post);

    const lines want = {
        "push D1 L0 reg:nixl::postXferReq.write argb=ffff9800 cat=5 " +
            rec_.payload("{correlation_id=4660}{key=\"remote_agent\" value=\"target\"}"
                         "{key=\"bytes\" value=4096}",
                         3),
        "push D1 L1 ascii:custom.inner argb=ff4caf50 cat=2 " +
            rec_.payload("{key=\"ratio\" value=0.25}{key=\"neg\" value=-7}", 2),
        "mark D1 reg:nixl::xfer.complete argb=ff009688 cat=8 " +
            rec_.payload("{correlation_id=4660}", 1),
        "pop D1 L1",
        "pop D1 L0",
    };
    EXPECT_EQ(rec_.take(), want);
    lib().ops_->destroy(b);
}

TEST_F(NvtxPlugin, AttributesKnownOnlyAtEndAreAMarkBeforeThePop) {
    nixl_trace_backend_t *b = create("agentA", nameTable, 3);
    ASSERT_NE(b, nullptr);
    rec_.take();
    const auto &ops = *lib().ops_;
    // loadRemoteMD learns remote_agent only when it succeeds.
    auto load = event(2, NIXL_TRACE_KIND_METADATA, "nixl::loadRemoteMD", 21, 0, {});
    ops.span_begin(b, &load);
    const std::vector<nixl_trace_attr_t> atEnd = {str("remote_agent", "peer", 4)};
    auto loadEnd = event(2, NIXL_TRACE_KIND_METADATA, "nixl::loadRemoteMD", 21, 0, atEnd);
    ops.span_end(b, &loadEnd);
    // One attribute at begin, a second added while it ran: the mark carries only the second.
    const std::vector<nixl_trace_attr_t> first = {i64("desc_count", 2)};
    auto post = event(0, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write", 22, 5, first);
    ops.span_begin(b, &post);
    const std::vector<nixl_trace_attr_t> both = {i64("desc_count", 2), f64("ms", 1.5)};
    auto postEnd = event(0, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write", 22, 5, both);
    ops.span_end(b, &postEnd);

    const lines want = {
        "push D1 L0 reg:nixl::loadRemoteMD argb=ff009688 cat=8 -",
        "mark D1 reg:nixl::loadRemoteMD argb=ff009688 cat=8 " +
            rec_.payload("{key=\"remote_agent\" value=\"peer\"}", 1),
        "pop D1 L0",
        "push D1 L0 reg:nixl::postXferReq.write argb=ffff9800 cat=5 " +
            rec_.payload("{correlation_id=5}{key=\"desc_count\" value=2}", 2),
        "mark D1 reg:nixl::postXferReq.write argb=ffff9800 cat=5 " +
            rec_.payload("{correlation_id=5}{key=\"ms\" value=1.5}", 2),
        "pop D1 L0",
    };
    EXPECT_EQ(rec_.take(), want);
    lib().ops_->destroy(b);
}

TEST_F(NvtxPlugin, UnknownKindAttrTypeAndNameIdFallBack) {
    nixl_trace_backend_t *b = create("agentA", nameTable, 3);
    ASSERT_NE(b, nullptr);
    rec_.take();
    nixl_trace_attr_t odd = i64("future", 1);
    odd.type = 77; // a type from a newer core: skipped
    const std::vector<nixl_trace_attr_t> attrs = {odd, i64("kept", 3)};
    // Kind beyond the enum -> Generic; name id beyond the table -> the ASCII name.
    auto ev = event(50, 99, "nixl::fromTheFuture", 0, 0, attrs);
    lib().ops_->mark(b, &ev);
    // A span gaining only an attribute of an unknown type gets no end mark.
    auto span = event(0, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write", 41, 0, {});
    lib().ops_->span_begin(b, &span);
    const std::vector<nixl_trace_attr_t> unknownOnly = {odd};
    auto spanEnd = event(0, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write", 41, 0,
                         unknownOnly);
    lib().ops_->span_end(b, &spanEnd);
    const lines want = {
        "mark D1 ascii:nixl::fromTheFuture argb=ff9e9e9e cat=1 " +
            rec_.payload("{key=\"kept\" value=3}", 1),
        "push D1 L0 reg:nixl::postXferReq.write argb=ffff9800 cat=5 -",
        "pop D1 L0",
    };
    EXPECT_EQ(rec_.take(), want);
    lib().ops_->destroy(b);
}

TEST_F(NvtxPlugin, BadNameTableEntryIsNotRegisteredAndEventsUseTheAsciiName) {
    const nixl_trace_name_t bad[] = {
        {0, NIXL_TRACE_KIND_GENERIC, "nixl::first"},
        {7, NIXL_TRACE_KIND_GENERIC, "nixl::wrongId"}, // id must equal its index
    };
    nixl_trace_backend_t *b = create("agentA", bad, 2);
    ASSERT_NE(b, nullptr);
    lines want = {"domain D1 \"agentA\""};
    nvtxTest::append(want, rec_.categoryLines("D1"));
    nvtxTest::append(want, rec_.schemaLines("D1"));
    want.push_back("string D1 S1 \"nixl::first\"");
    EXPECT_EQ(rec_.take(), want);
    auto ev = event(1, NIXL_TRACE_KIND_GENERIC, "nixl::wrongId", 0, 0, {});
    lib().ops_->mark(b, &ev);
    EXPECT_EQ(rec_.take(), lines{"mark D1 ascii:nixl::wrongId argb=ff9e9e9e cat=1 -"});
    lib().ops_->destroy(b);
}

TEST_F(NvtxPlugin, AttributesBeyondThePayloadLimitAreDroppedCountedAndLoggedOnce) {
    nixl_trace_backend_t *b = create("agentA", nameTable, 3);
    ASSERT_NE(b, nullptr);
    rec_.take();
    std::vector<nixl_trace_attr_t> attrs;
    for (int i = 0; i < 20; ++i) {
        attrs.push_back(i64("n", i));
    }
    auto ev = event(1, NIXL_TRACE_KIND_METADATA, "nixl::xfer.complete", 0, 9, attrs);
    lib().ops_->mark(b, &ev);
    std::string decoded = "{correlation_id=9}";
    for (int i = 0; i < 15; ++i) {
        decoded += "{key=\"n\" value=" + std::to_string(i) + "}";
    }
    EXPECT_EQ(rec_.take(),
              lines{"mark D1 reg:nixl::xfer.complete argb=ff009688 cat=8 " +
                    rec_.payload(decoded, 16)});
    lib().ops_->destroy(b);
    std::lock_guard<std::mutex> g(logMu);
    ASSERT_EQ(logLines.size(), 1u);
    EXPECT_NE(logLines[0].find("agent 'agentA': 5 attributes not traced"), std::string::npos)
        << logLines[0];
}

TEST_F(NvtxPlugin, TwoAgentsGetTwoDomainsAndTheirOwnRegisteredNames) {
    nixl_trace_backend_t *a = create("agentA", nameTable, 3);
    nixl_trace_backend_t *b = create("agentB", nameTable, 3);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    lines want = setupLines("agentA", "D1", 1);
    nvtxTest::append(want, setupLines("agentB", "D2", 4));
    EXPECT_EQ(rec_.take(), want);
    auto ev = event(1, NIXL_TRACE_KIND_METADATA, "nixl::xfer.complete", 0, 0, {});
    lib().ops_->mark(b, &ev);
    lib().ops_->mark(a, &ev);
    EXPECT_EQ(rec_.take(), (lines{"mark D2 reg:nixl::xfer.complete argb=ff009688 cat=8 -",
                                  "mark D1 reg:nixl::xfer.complete argb=ff009688 cat=8 -"}));
    lib().ops_->destroy(a);
    lib().ops_->destroy(b);
    EXPECT_EQ(rec_.take(), (lines{"destroy D1", "destroy D2"}));
}

TEST_F(NvtxPlugin, NoDomainHandleDeclinesTheAgent) {
    // NVTX without a tool returns a null domain, and so does this tool for the domain named by
    // NIXL_TEST_NVTX_NULL_DOMAIN: the plugin declines, having registered nothing.
    setenv("NIXL_TEST_NVTX_NULL_DOMAIN", "off", 1);
    expectDeclined("off");
    unsetenv("NIXL_TEST_NVTX_NULL_DOMAIN");
    EXPECT_EQ(rec_.take(), lines{"domain D1 \"off\" -> null"});
}

TEST_F(NvtxPlugin, BeyondTheTrackedDepthRangesStayBalancedAndEndMarksRepeatAttributes) {
    nixl_trace_backend_t *b = create("agentA", nameTable, 3);
    ASSERT_NE(b, nullptr);
    rec_.take();
    const auto &ops = *lib().ops_;
    // 70 nested spans with one attribute each, the same at begin and end: the plugin tracks
    // 64 levels per thread, so only the 6 deepest cannot tell their attribute was known at
    // the push and repeat it on a mark before their pop rather than risk losing it.
    constexpr int depth = 70;
    const std::vector<nixl_trace_attr_t> attrs = {i64("level", 1)};
    std::vector<nixl_trace_event_t> evs;
    for (int i = 0; i < depth; ++i) {
        evs.push_back(event(2, NIXL_TRACE_KIND_METADATA, "nixl::loadRemoteMD", 100 + i, 0, attrs));
    }
    for (int i = 0; i < depth; ++i) {
        ops.span_begin(b, &evs[i]);
    }
    for (int i = depth - 1; i >= 0; --i) {
        ops.span_end(b, &evs[i]);
    }
    lines want;
    const std::string name = "reg:nixl::loadRemoteMD argb=ff009688 cat=8 ";
    const std::string pl = rec_.payload("{key=\"level\" value=1}", 1);
    for (int i = 0; i < depth; ++i) {
        want.push_back("push D1 L" + std::to_string(i) + " " + name + pl);
    }
    for (int i = depth - 1; i >= 0; --i) {
        if (i >= 64) {
            want.push_back("mark D1 " + name + pl);
        }
        want.push_back("pop D1 L" + std::to_string(i));
    }
    EXPECT_EQ(rec_.take(), want);
    ops.destroy(b);
}

TEST_F(NvtxPlugin, ConcurrentThreadsKeepTheirRangesBalanced) {
    nixl_trace_backend_t *b = create("agentA", nameTable, 3);
    ASSERT_NE(b, nullptr);
    rec_.take();
    constexpr int threads = 4;
    constexpr int rounds = 200;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
        ts.emplace_back([b, t] {
            const auto &ops = *lib().ops_;
            for (int r = 0; r < rounds; ++r) {
                const uint64_t id = 1000000ull * (t + 1) + 2ull * r;
                const std::vector<nixl_trace_attr_t> early = {i64("r", r)};
                const std::vector<nixl_trace_attr_t> late = {i64("r", r), i64("t", t)};
                auto outer = event(0, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write", id,
                                   id, early);
                auto inner = event(2, NIXL_TRACE_KIND_METADATA, "nixl::loadRemoteMD", id + 1, 0,
                                   {});
                auto innerEnd = event(2, NIXL_TRACE_KIND_METADATA, "nixl::loadRemoteMD", id + 1,
                                      0, late);
                ops.span_begin(b, &outer);
                ops.span_begin(b, &inner);
                ops.span_end(b, &innerEnd);
                ops.span_end(b, &outer);
            }
        });
    }
    for (auto &t : ts) {
        t.join();
    }
    size_t push0 = 0, push1 = 0, pop0 = 0, pop1 = 0, marks = 0, other = 0;
    for (const std::string &l : rec_.take()) {
        if (l.rfind("push D1 L0 ", 0) == 0) {
            ++push0;
        } else if (l.rfind("push D1 L1 ", 0) == 0) {
            ++push1;
        } else if (l == "pop D1 L0") {
            ++pop0;
        } else if (l == "pop D1 L1") {
            ++pop1;
        } else if (l.rfind("mark D1 reg:nixl::loadRemoteMD ", 0) == 0) {
            ++marks;
        } else {
            ++other;
            ADD_FAILURE() << "unexpected: " << l;
        }
    }
    const size_t n = threads * rounds;
    EXPECT_EQ(push0, n);
    EXPECT_EQ(push1, n);
    EXPECT_EQ(pop0, n);
    EXPECT_EQ(pop1, n);
    EXPECT_EQ(marks, n); // each inner span's late attributes, once
    EXPECT_EQ(other, 0u);
    lib().ops_->destroy(b);
}

// No tool attached (NVTX_INJECTION64_PATH unset): NVTX's stubs create no domain and the
// plugin declines every agent, quietly, so core keeps no instance of it.
TEST(NvtxNoTool, DeclinesWithoutATool) {
    if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) {
        GTEST_SKIP() << "NVTX_INJECTION64_PATH is set (a tool is attached)";
    }
    ASSERT_TRUE(lib().error_.empty()) << lib().error_;
    expectDeclined("agentA");
    expectDeclined("agentB");
}

} // namespace
