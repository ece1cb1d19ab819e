/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Drives libplugin_TEST.so through its C ABI only, the way libnixl does: dlopen it from
 * NIXL_PLUGIN_DIR, fetch the descriptor, create engines "A" and "B", exchange connection info
 * and public data, and move bytes. Every assertion is about behaviour (bytes, statuses,
 * notifications, log lines); nothing waits on time.
 */
#include <dlfcn.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "alloc_counter.h"
#include "nixl_backend_plugin.h"
#include "nixl_types.h"

namespace {

using notif_vec_t = std::vector<std::pair<std::string, std::string>>;
using kv_map_t = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------------------------
// Core services: a log sink that records every line so tests can assert on them.

struct logLine {
    int32_t level;
    std::string text;
};

class logRecorder {
public:
    static logRecorder &
    instance() {
        static logRecorder recorder;
        return recorder;
    }

    void
    add(int32_t level, std::string text) {
        std::lock_guard<std::mutex> guard(lock_);
        lines_.push_back({level, std::move(text)});
    }

    size_t
    mark() {
        std::lock_guard<std::mutex> guard(lock_);
        return lines_.size();
    }

    /** Lines at `level` written since `mark`. */
    std::vector<std::string>
    since(size_t mark, int32_t level) {
        std::lock_guard<std::mutex> guard(lock_);
        std::vector<std::string> out;
        for (size_t i = mark; i < lines_.size(); ++i) {
            if (lines_[i].level == level) {
                out.push_back(lines_[i].text);
            }
        }
        return out;
    }

private:
    std::mutex lock_;
    std::vector<logLine> lines_;
};

void
recordLog(void *ctx, int32_t level, const char *msg, size_t len) {
    static_cast<logRecorder *>(ctx)->add(level, std::string(msg, len));
}

int32_t
logAlwaysEnabled(void *ctx, int32_t level) {
    (void)ctx;
    (void)level;
    return 1;
}

// One services struct for every engine: the SDK keeps a single process-wide pointer to the
// services of the most recent create_engine, so per-engine structs would not stay separate.
const nixl_plugin_core_services_t core_services = {
    sizeof(nixl_plugin_core_services_t),
    &logRecorder::instance(),
    recordLog,
    logAlwaysEnabled,
    nullptr, // get_config: the SDK then reads options from the environment
};

/** Error lines since mark. */
std::vector<std::string>
errorsSince(size_t mark) {
    return logRecorder::instance().since(mark, NIXL_PLUGIN_LOG_ERROR);
}

/** Exactly one error line since mark, containing every one of parts. */
void
expectOneError(size_t mark, const std::vector<std::string> &parts) {
    std::vector<std::string> errors = errorsSince(mark);
    ASSERT_EQ(errors.size(), 1u) << "error lines: " << errors.size();
    for (const std::string &part : parts) {
        EXPECT_NE(errors[0].find(part), std::string::npos)
            << "'" << part << "' missing from: " << errors[0];
    }
}

// ---------------------------------------------------------------------------------------------
// Sinks the plugin writes its output into.

nixl_plugin_str_t
str(const std::string &s) {
    return nixl_plugin_str_t{s.data(), s.size()};
}

nixl_plugin_status_t
appendBytes(void *ctx, const void *data, size_t len) {
    static_cast<std::string *>(ctx)->append(static_cast<const char *>(data), len);
    return NIXL_PLUGIN_SUCCESS;
}

nixl_plugin_status_t
putKv(void *ctx, nixl_plugin_str_t key, nixl_plugin_str_t value) {
    (*static_cast<kv_map_t *>(ctx))[std::string(key.data, key.len)] =
        std::string(value.data, value.len);
    return NIXL_PLUGIN_SUCCESS;
}

void
pushNotif(void *ctx, nixl_plugin_str_t sender, nixl_plugin_str_t msg) {
    static_cast<notif_vec_t *>(ctx)->emplace_back(std::string(sender.data, sender.len),
                                                  std::string(msg.data, msg.len));
}

using query_answer_t = std::map<size_t, kv_map_t>;

nixl_plugin_status_t
putQuery(void *ctx, size_t index, nixl_plugin_str_t key, nixl_plugin_str_t value) {
    kv_map_t &answer = (*static_cast<query_answer_t *>(ctx))[index];
    if (key.data != nullptr) {
        answer[std::string(key.data, key.len)] = std::string(value.data, value.len);
    }
    return NIXL_PLUGIN_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// The plugin, loaded once per process as libnixl would.

const nixl_backend_plugin_t *
plugin() {
    static const nixl_backend_plugin_t *loaded = [] {
        const char *dir = std::getenv("NIXL_PLUGIN_DIR");
        std::string path = std::string(dir != nullptr ? dir : ".") + "/" +
            NIXL_BACKEND_PLUGIN_PREFIX + "TEST.so";
        // Never closed: engines' statics must outlive every test.
        void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            ADD_FAILURE() << "dlopen " << path << ": " << dlerror();
            return static_cast<const nixl_backend_plugin_t *>(nullptr);
        }
        auto entry = reinterpret_cast<nixl_backend_plugin_entry_fn>(
            dlsym(handle, NIXL_BACKEND_PLUGIN_ENTRY));
        if (entry == nullptr) {
            ADD_FAILURE() << "no " << NIXL_BACKEND_PLUGIN_ENTRY << " in " << path;
            return static_cast<const nixl_backend_plugin_t *>(nullptr);
        }
        return entry();
    }();
    return loaded;
}

const nixl_be_ops_t &
ops() {
    return *plugin()->ops;
}

/** Descriptor lists of one transfer; the arrays stay put for the request's lifetime. */
class xferLists {
public:
    void
    add(const void *local,
        nixl_be_md_t *local_md,
        const void *remote,
        nixl_be_md_t *remote_md,
        size_t len) {
        local_.push_back({reinterpret_cast<uintptr_t>(local), len, 0, local_md});
        remote_.push_back({reinterpret_cast<uintptr_t>(remote), len, 0, remote_md});
    }

    /** Adds a local-only or remote-only descriptor, to build mismatched lists. */
    void
    addLocal(const void *local, nixl_be_md_t *md, size_t len) {
        local_.push_back({reinterpret_cast<uintptr_t>(local), len, 0, md});
    }

    const nixl_be_xfer_list_t *
    local() {
        localList_ = {DRAM_SEG, 0, local_.data(), local_.size()};
        return &localList_;
    }

    const nixl_be_xfer_list_t *
    remote() {
        remoteList_ = {DRAM_SEG, 0, remote_.data(), remote_.size()};
        return &remoteList_;
    }

    std::vector<nixl_be_xfer_desc_t> &
    remoteDescs() {
        return remote_;
    }

private:
    std::vector<nixl_be_xfer_desc_t> local_;
    std::vector<nixl_be_xfer_desc_t> remote_;
    nixl_be_xfer_list_t localList_{};
    nixl_be_xfer_list_t remoteList_{};
};

/** Borrows msg: pass a literal or a string that outlives the post. */
nixl_be_opt_args_t
notifArgs(std::string_view msg) {
    nixl_be_opt_args_t opt{};
    opt.size = sizeof(opt);
    opt.has_notif = 1;
    opt.notif = nixl_plugin_str_t{msg.data(), msg.size()};
    return opt;
}

nixl_be_opt_args_t
noNotifArgs() {
    nixl_be_opt_args_t opt{};
    opt.size = sizeof(opt);
    return opt;
}

/** One engine of the plugin, created as an agent backend would be. */
class testEngine {
public:
    explicit testEngine(std::string name, const kv_map_t &params = {}) : name_(std::move(name)) {
        std::vector<nixl_plugin_kv_t> kvs;
        for (const auto &[k, v] : params) {
            kvs.push_back({str(k), str(v)});
        }
        static const std::string type = "TEST";
        nixl_be_init_params_t p{};
        p.size = sizeof(p);
        p.agent_name = str(name_);
        p.backend_type = str(type);
        p.params = kvs.data();
        p.num_params = kvs.size();
        p.sync_mode = 2; // RW: transfer calls may come from several threads
        p.core = &core_services;
        info_.size = sizeof(info_);
        status_ = plugin()->create_engine(&p, &engine_, &info_);
        if (status_ != NIXL_PLUGIN_SUCCESS) {
            engine_ = nullptr;
        }
    }

    ~testEngine() {
        destroy();
    }

    testEngine(const testEngine &) = delete;
    testEngine &
    operator=(const testEngine &) = delete;

    void
    destroy() {
        if (engine_ != nullptr) {
            ops().destroy_engine(engine_);
            engine_ = nullptr;
        }
    }

    nixl_plugin_status_t
    status() const {
        return status_;
    }

    const nixl_be_engine_info_t &
    info() const {
        return info_;
    }

    const std::string &
    name() const {
        return name_;
    }

    nixl_be_engine_t *
    get() const {
        return engine_;
    }

    std::string
    connInfo() const {
        std::string out;
        nixl_plugin_bytes_sink_t sink{&out, appendBytes};
        EXPECT_EQ(ops().get_conn_info(engine_, &sink), NIXL_PLUGIN_SUCCESS);
        return out;
    }

    nixl_plugin_status_t
    loadConn(const std::string &remote, const std::string &conn) const {
        return ops().load_remote_conn_info(engine_, str(remote), str(conn));
    }

    nixl_plugin_status_t
    registerMem(const void *addr, size_t len, nixl_be_md_t **md) const {
        nixl_be_desc_t d{reinterpret_cast<uintptr_t>(addr), len, 0, {nullptr, 0}};
        return ops().register_mem(engine_, &d, DRAM_SEG, md);
    }

    nixl_be_md_t *
    reg(const void *addr, size_t len) const {
        nixl_be_md_t *md = nullptr;
        EXPECT_EQ(registerMem(addr, len, &md), NIXL_PLUGIN_SUCCESS);
        return md;
    }

    std::string
    publicData(nixl_be_md_t *md) const {
        std::string out;
        nixl_plugin_bytes_sink_t sink{&out, appendBytes};
        EXPECT_EQ(ops().get_public_data(engine_, md, &sink), NIXL_PLUGIN_SUCCESS);
        return out;
    }

    nixl_plugin_status_t
    loadRemoteMD(const void *addr,
                 size_t len,
                 const std::string &pub,
                 const std::string &remote,
                 nixl_be_md_t **out) const {
        nixl_be_desc_t d{reinterpret_cast<uintptr_t>(addr), len, 0, str(pub)};
        return ops().load_remote_md(engine_, &d, DRAM_SEG, str(remote), out);
    }

    nixl_plugin_status_t
    prep(uint32_t op,
         xferLists &lists,
         const std::string &remote,
         nixl_be_req_t **req,
         const nixl_be_opt_args_t *opt = nullptr) const {
        return ops().prep_xfer(engine_, op, lists.local(), lists.remote(), str(remote), opt, req);
    }

    nixl_plugin_status_t
    post(uint32_t op,
         xferLists &lists,
         const std::string &remote,
         nixl_be_req_t *req,
         const nixl_be_opt_args_t *opt = nullptr) const {
        return ops().post_xfer(engine_, op, lists.local(), lists.remote(), str(remote), req, opt);
    }

    nixl_plugin_status_t
    check(nixl_be_req_t *req) const {
        return ops().check_xfer(engine_, req);
    }

    nixl_plugin_status_t
    release(nixl_be_req_t *req) const {
        return ops().release_req(engine_, req);
    }

    notif_vec_t
    notifs() const {
        notif_vec_t out;
        EXPECT_EQ(drainInto(out), NIXL_PLUGIN_SUCCESS);
        return out;
    }

    nixl_plugin_status_t
    drainInto(notif_vec_t &out) const {
        nixl_be_notif_sink_t sink{&out, pushNotif};
        return ops().get_notifs(engine_, &sink);
    }

    nixl_plugin_status_t
    genNotif(const std::string &remote, const std::string &msg) const {
        return ops().gen_notif(engine_, str(remote), str(msg));
    }

    kv_map_t
    params() const {
        kv_map_t out;
        nixl_plugin_kv_sink_t sink{&out, putKv};
        EXPECT_EQ(ops().get_params(engine_, &sink), NIXL_PLUGIN_SUCCESS);
        return out;
    }

private:
    std::string name_;
    nixl_be_engine_t *engine_ = nullptr;
    nixl_be_engine_info_t info_{};
    nixl_plugin_status_t status_ = NIXL_PLUGIN_ERR_UNKNOWN;
};

void
fill(std::vector<unsigned char> &buf, unsigned seed) {
    for (size_t i = 0; i < buf.size(); ++i) {
        buf[i] = static_cast<unsigned char>((i * 131u + seed * 17u + 7u) & 0xffu);
    }
}

/**
 * Agents A and B with one registered buffer each, connection info exchanged both ways and each
 * side's public data loaded by the other: the state libnixl builds before a transfer.
 */
class pairSetup {
public:
    // A list of C-string pairs, not a map: a map's iterator-pair constructor would make
    // pairSetup({{"k", "v"}}) ambiguous with the (deleted) copy constructor.
    explicit pairSetup(std::initializer_list<std::pair<const char *, const char *>> params_a = {},
                       size_t size = 4096)
        : a("A", kv_map_t(params_a.begin(), params_a.end())),
          b("B"),
          bufA(size),
          bufB(size) {
        EXPECT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(b.status(), NIXL_PLUGIN_SUCCESS);
        if (a.get() == nullptr || b.get() == nullptr) {
            return;
        }
        fill(bufA, 1);
        fill(bufB, 2);
        mdA = a.reg(bufA.data(), bufA.size());
        mdB = b.reg(bufB.data(), bufB.size());
        EXPECT_EQ(a.loadConn("B", b.connInfo()), NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(b.loadConn("A", a.connInfo()), NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(a.loadRemoteMD(bufB.data(), bufB.size(), b.publicData(mdB), "B", &remoteB),
                  NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(b.loadRemoteMD(bufA.data(), bufA.size(), a.publicData(mdA), "A", &remoteA),
                  NIXL_PLUGIN_SUCCESS);
    }

    bool
    ok() const {
        return mdA != nullptr && mdB != nullptr && remoteA != nullptr && remoteB != nullptr;
    }

    testEngine a;
    testEngine b;
    std::vector<unsigned char> bufA;
    std::vector<unsigned char> bufB;
    nixl_be_md_t *mdA = nullptr;
    nixl_be_md_t *mdB = nullptr;
    nixl_be_md_t *remoteA = nullptr; ///< A's buffer as B loaded it
    nixl_be_md_t *remoteB = nullptr; ///< B's buffer as A loaded it
};

/** A -> B transfer of bufA[off, off+len) <-> bufB[off, off+len). */
xferLists
slice(pairSetup &s, size_t off, size_t len) {
    xferLists lists;
    lists.add(s.bufA.data() + off, s.mdA, s.bufB.data() + off, s.remoteB, len);
    return lists;
}

bool
sameRange(const std::vector<unsigned char> &x,
          const std::vector<unsigned char> &y,
          size_t off,
          size_t len) {
    return std::memcmp(x.data() + off, y.data() + off, len) == 0;
}

class testBackend : public ::testing::Test {
protected:
    void
    SetUp() override {
        ASSERT_NE(plugin(), nullptr);
    }
};

// ---------------------------------------------------------------------------------------------
// Descriptor, creation and parameters

TEST_F(testBackend, DescriptorNamesTestPluginWithDramOnly) {
    const nixl_backend_plugin_t *p = plugin();
    EXPECT_EQ(p->hdr.abi_version, NIXL_BACKEND_ABI_VERSION);
    EXPECT_EQ(p->hdr.kind, static_cast<uint32_t>(NIXL_PLUGIN_KIND_BACKEND));
    EXPECT_EQ(p->hdr.size, sizeof(nixl_backend_plugin_t));
    EXPECT_STREQ(p->hdr.name, "TEST");
    EXPECT_STREQ(p->hdr.version, "1.0.0");
    EXPECT_EQ(p->mem_mask, NIXL_BE_MEM_BIT(DRAM_SEG));
    ASSERT_NE(p->ops, nullptr);
    EXPECT_EQ(p->ops->size, sizeof(nixl_be_ops_t));

    kv_map_t defaults;
    nixl_plugin_kv_sink_t sink{&defaults, putKv};
    ASSERT_EQ(p->get_options(&sink), NIXL_PLUGIN_SUCCESS);
    const kv_map_t expected = {
        {"async", "false"},
        {"async_polls", "1"},
        {"fail_post_at", "0"},
        {"fail_register_at", "0"},
        {"disconnect_after", "0"},
        {"fail_release", "false"},
        {"fail_create", "false"},
    };
    EXPECT_EQ(defaults, expected);
}

TEST_F(testBackend, CreateReportsCapabilitiesAndEffectiveParams) {
    testEngine a("A", {{"async_polls", "4"}, {"color", "blue"}});
    ASSERT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(a.info().caps, NIXL_BE_CAP_REMOTE | NIXL_BE_CAP_LOCAL | NIXL_BE_CAP_NOTIF);
    EXPECT_EQ(a.info().mem_mask, NIXL_BE_MEM_BIT(DRAM_SEG));

    kv_map_t params = a.params();
    EXPECT_EQ(params["color"], "blue"); // unknown keys are kept
    EXPECT_EQ(params["async_polls"], "4"); // given values win
    EXPECT_EQ(params["async"], "false"); // defaults are filled in
    EXPECT_EQ(params["disconnect_after"], "0");
    EXPECT_EQ(params.size(), 8u);
}

TEST_F(testBackend, FailCreateFailsCreationWithLogLine) {
    size_t mark = logRecorder::instance().mark();
    testEngine a("A", {{"fail_create", "true"}});
    EXPECT_EQ(a.status(), NIXL_PLUGIN_ERR_BACKEND);
    EXPECT_EQ(a.get(), nullptr);
    expectOneError(mark, {"agent 'A'", "fail_create"});

    // The failed engine left nothing behind: an agent of the same name works.
    testEngine again("A");
    EXPECT_EQ(again.status(), NIXL_PLUGIN_SUCCESS);
}

using param_case_t = std::pair<const char *, const char *>;

class invalidParamTest : public testBackend,
                         public ::testing::WithParamInterface<param_case_t> {};

TEST_P(invalidParamTest, InvalidValueFailsCreationNamingKeyAndValue) {
    const auto &[key, value] = GetParam();
    size_t mark = logRecorder::instance().mark();
    testEngine a("A", {{key, value}});
    EXPECT_EQ(a.status(), NIXL_PLUGIN_ERR_BACKEND);
    const std::string quoted_key = std::string("'") + key + "'";
    const std::string quoted_value = std::string("'") + value + "'";
    expectOneError(mark, {"agent 'A'", quoted_key, quoted_value});
}

INSTANTIATE_TEST_SUITE_P(allKeys,
                         invalidParamTest,
                         ::testing::Values(std::make_pair("async", "maybe"),
                                           std::make_pair("async_polls", "abc"),
                                           std::make_pair("async_polls", "-1"),
                                           std::make_pair("fail_post_at", "1x"),
                                           std::make_pair("fail_register_at", ""),
                                           std::make_pair("disconnect_after", " 2"),
                                           std::make_pair("disconnect_after",
                                                          "99999999999999999999999"),
                                           std::make_pair("fail_release", "tru"),
                                           std::make_pair("fail_create", "2")));

// Flags take NIXL's boolean words in any case, like every NIXL_* option.
TEST_F(testBackend, FlagsAcceptNixlBooleanWords) {
    for (const char *word : {"Yes", "1", "ON", "enable", "y"}) {
        SCOPED_TRACE(word);
        size_t mark = logRecorder::instance().mark();
        testEngine a("A", {{"fail_create", word}});
        EXPECT_EQ(a.status(), NIXL_PLUGIN_ERR_BACKEND);
        expectOneError(mark, {"agent 'A'", "fail_create"});
    }
    for (const char *word : {"No", "0", "off", "DISABLE", "n"}) {
        SCOPED_TRACE(word);
        testEngine a("A", {{"fail_create", word}});
        EXPECT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    }
}

// ---------------------------------------------------------------------------------------------
// Data movement

TEST_F(testBackend, WriteThenReadMoveBytesExactly) {
    pairSetup s;
    ASSERT_TRUE(s.ok());

    // WRITE two descriptors A -> B at different offsets.
    xferLists w;
    w.add(s.bufA.data() + 100, s.mdA, s.bufB.data() + 1000, s.remoteB, 300);
    w.add(s.bufA.data() + 2000, s.mdA, s.bufB.data() + 3000, s.remoteB, 1096);
    std::vector<unsigned char> expectB = s.bufB;
    std::memcpy(expectB.data() + 1000, s.bufA.data() + 100, 300);
    std::memcpy(expectB.data() + 3000, s.bufA.data() + 2000, 1096);

    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_NE(req, nullptr);
    EXPECT_NE(s.bufB, expectB); // nothing moves before the post
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, expectB);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);

    // READ B -> A into a range that differs.
    fill(s.bufB, 9);
    std::vector<unsigned char> expectA = s.bufA;
    std::memcpy(expectA.data() + 512, s.bufB.data() + 7, 1024);
    xferLists r;
    r.add(s.bufA.data() + 512, s.mdA, s.bufB.data() + 7, s.remoteB, 1024);
    ASSERT_EQ(s.a.prep(NIXL_READ, r, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_READ, r, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufA, expectA);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, RepostMovesCurrentContents) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    for (unsigned round = 0; round < 3; ++round) {
        fill(s.bufA, 100 + round);
        ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(s.bufB, s.bufA) << "round " << round;
    }
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, LoopbackUsesLocalMetadata) {
    testEngine a("A");
    ASSERT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops().connect(a.get(), str(std::string("A"))), NIXL_PLUGIN_SUCCESS);
    std::vector<unsigned char> src(1000), dst(1000);
    fill(src, 5);
    fill(dst, 6);
    nixl_be_md_t *mdSrc = a.reg(src.data(), src.size());
    nixl_be_md_t *mdDst = a.reg(dst.data(), dst.size());
    nixl_be_md_t *selfDst = nullptr;
    ASSERT_EQ(ops().load_local_md(a.get(), mdDst, &selfDst), NIXL_PLUGIN_SUCCESS);

    xferLists w;
    w.add(src.data(), mdSrc, dst.data() + 10, selfDst, 990);
    nixl_be_req_t *req = nullptr;
    nixl_be_opt_args_t opt = notifArgs("self");
    ASSERT_EQ(a.prep(NIXL_WRITE, w, "A", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(a.post(NIXL_WRITE, w, "A", req, &opt), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(std::memcmp(dst.data() + 10, src.data(), 990), 0);
    EXPECT_EQ(a.notifs(), (notif_vec_t{{"A", "self"}}));
    EXPECT_EQ(a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().unload_md(a.get(), selfDst), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().deregister_mem(a.get(), mdSrc), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().deregister_mem(a.get(), mdDst), NIXL_PLUGIN_SUCCESS);
}

// ---------------------------------------------------------------------------------------------
// Notifications

TEST_F(testBackend, NotificationFollowsDataAndNamesSender) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_TRUE(s.b.notifs().empty());
    nixl_be_opt_args_t opt = notifArgs("written");
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.b.notifs(), (notif_vec_t{{"A", "written"}}));
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_TRUE(s.a.notifs().empty()); // the initiator gets nothing

    // READ also notifies the target (B), after the data reached A.
    fill(s.bufB, 77);
    xferLists r = slice(s, 0, 4096);
    nixl_be_req_t *rreq = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_READ, r, "B", &rreq), NIXL_PLUGIN_SUCCESS);
    nixl_be_opt_args_t ropt = notifArgs("read done");
    ASSERT_EQ(s.a.post(NIXL_READ, r, "B", rreq, &ropt), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.b.notifs(), (notif_vec_t{{"A", "read done"}}));
    EXPECT_EQ(s.bufA, s.bufB);

    // A post without the flag sends nothing, even with a message present.
    nixl_be_opt_args_t off = notifArgs("ignored");
    off.has_notif = 0;
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &off), NIXL_PLUGIN_SUCCESS);
    EXPECT_TRUE(s.b.notifs().empty());
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(rreq), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, NotificationsOfAnySizeAppendAndDrain) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 16);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    std::string big(1 << 20, '\0');
    for (size_t i = 0; i < big.size(); ++i) {
        big[i] = static_cast<char>(i % 251); // includes NUL bytes
    }
    const std::string empty;
    const std::string *msgs[] = {&big, &empty};
    for (const std::string *msg : msgs) {
        nixl_be_opt_args_t opt = notifArgs(*msg);
        ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_SUCCESS);
    }
    ASSERT_EQ(s.a.genNotif("B", "standalone"), NIXL_PLUGIN_SUCCESS);

    notif_vec_t got = {{"earlier", "entry"}};
    ASSERT_EQ(s.b.drainInto(got), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0], (std::pair<std::string, std::string>{"earlier", "entry"})); // appended
    EXPECT_EQ(got[1].first, "A");
    EXPECT_EQ(got[1].second, big);
    EXPECT_EQ(got[2], (std::pair<std::string, std::string>{"A", ""}));
    EXPECT_EQ(got[3], (std::pair<std::string, std::string>{"A", "standalone"}));
    EXPECT_TRUE(s.b.notifs().empty()); // drained
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, GenNotifNeedsAKnownPeer) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(s.b.genNotif("A", "hello"), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.notifs(), (notif_vec_t{{"B", "hello"}}));

    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.genNotif("Z", "x"), NIXL_PLUGIN_ERR_NOT_FOUND);
    expectOneError(mark, {"agent 'A'", "remote 'Z'", "genNotif"});
}

// ---------------------------------------------------------------------------------------------
// Asynchronous mode

TEST_F(testBackend, AsyncCompletesAfterConfiguredPolls) {
    pairSetup s({{"async", "true"}, {"async_polls", "3"}});
    ASSERT_TRUE(s.ok());
    const std::vector<unsigned char> before = s.bufB;
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    for (unsigned round = 0; round < 2; ++round) {
        fill(s.bufA, 40 + round);
        std::vector<unsigned char> previous = s.bufB;
        const std::string msg = "round " + std::to_string(round);
        nixl_be_opt_args_t opt = notifArgs(msg);
        ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_IN_PROG);
        for (int poll = 0; poll < 3; ++poll) {
            EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_IN_PROG) << "poll " << poll;
            EXPECT_EQ(s.bufB, previous); // nothing moved yet
            EXPECT_TRUE(s.b.notifs().empty()); // and nothing announced
        }
        EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(s.bufB, s.bufA);
        EXPECT_EQ(s.b.notifs(), (notif_vec_t{{"A", msg}}));
        EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS); // stays complete
    }
    EXPECT_NE(s.bufB, before);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, AsyncWithZeroPollsCompletesOnFirstCheck) {
    pairSetup s({{"async", "true"}, {"async_polls", "0"}});
    ASSERT_TRUE(s.ok());
    xferLists r = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_READ, r, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_READ, r, "B", req), NIXL_PLUGIN_IN_PROG);
    EXPECT_NE(s.bufA, s.bufB);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufA, s.bufB);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, CheckBeforePostAndRepostWhileRunningAreErrors) {
    pairSetup s({{"async", "true"}});
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 64);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_NOT_POSTED);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "never posted"});

    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_IN_PROG);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_REPOST_ACTIVE);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "still running"});
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, ReleaseAbortsRunningRequest) {
    pairSetup s({{"async", "true"}});
    ASSERT_TRUE(s.ok());
    const std::vector<unsigned char> before = s.bufB;
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    nixl_be_opt_args_t opt = notifArgs("never");
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, before);
    EXPECT_TRUE(s.b.notifs().empty());
}

// ---------------------------------------------------------------------------------------------
// Fault injection

TEST_F(testBackend, FailPostAtFailsExactlyThatPost) {
    pairSetup s({{"fail_post_at", "2"}});
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    fill(s.bufA, 11);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, s.bufA);

    const std::vector<unsigned char> kept = s.bufB;
    fill(s.bufA, 12);
    size_t mark = logRecorder::instance().mark();
    nixl_be_opt_args_t opt = notifArgs("lost");
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_ERR_BACKEND);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "fail_post_at=2"});
    EXPECT_EQ(s.bufB, kept); // nothing moved
    EXPECT_TRUE(s.b.notifs().empty()); // nothing announced
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_BACKEND);

    fill(s.bufA, 13);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS); // only the 2nd fails
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, FailRegisterAtFailsExactlyThatRegistration) {
    testEngine a("A", {{"fail_register_at", "2"}});
    ASSERT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    std::vector<unsigned char> buf(300);
    nixl_be_md_t *md1 = nullptr;
    nixl_be_md_t *md2 = nullptr;
    nixl_be_md_t *md3 = nullptr;
    EXPECT_EQ(a.registerMem(buf.data(), 100, &md1), NIXL_PLUGIN_SUCCESS);
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(a.registerMem(buf.data() + 100, 100, &md2), NIXL_PLUGIN_ERR_BACKEND);
    expectOneError(mark, {"agent 'A'", "fail_register_at=2"});
    EXPECT_EQ(md2, nullptr);
    EXPECT_EQ(a.registerMem(buf.data() + 200, 100, &md3), NIXL_PLUGIN_SUCCESS);

    // The failed registration left no trace: its range is not registered.
    nixl_be_desc_t q[3] = {{reinterpret_cast<uintptr_t>(buf.data()), 100, 0, {nullptr, 0}},
                           {reinterpret_cast<uintptr_t>(buf.data()) + 100, 100, 0, {nullptr, 0}},
                           {reinterpret_cast<uintptr_t>(buf.data()) + 200, 100, 0, {nullptr, 0}}};
    query_answer_t answer;
    nixl_be_query_sink_t sink{&answer, putQuery};
    ASSERT_EQ(ops().query_mem(a.get(), q, 3, DRAM_SEG, &sink), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(answer.count(0), 1u);
    EXPECT_EQ(answer.count(1), 0u);
    EXPECT_EQ(answer.count(2), 1u);
    EXPECT_EQ(ops().deregister_mem(a.get(), md1), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().deregister_mem(a.get(), md3), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, DisconnectAfterDropsThePeerUntilReconnected) {
    pairSetup s({{"disconnect_after", "2"}});
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);

    fill(s.bufA, 21);
    const std::vector<unsigned char> kept = s.bufB;
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "disconnect_after"});
    EXPECT_EQ(s.bufB, kept);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.genNotif("B", "x"), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);

    // What libnixl does on REMOTE_DISCONNECT: drop the remote, later load it again.
    EXPECT_EQ(ops().disconnect(s.a.get(), str(std::string("B"))), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().unload_md(s.a.get(), s.remoteB), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.loadConn("B", s.b.connInfo()), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.loadRemoteMD(s.bufB.data(), s.bufB.size(), s.b.publicData(s.mdB), "B",
                               &s.remoteB),
              NIXL_PLUGIN_SUCCESS);
    xferLists again = slice(s, 0, 4096);
    ASSERT_EQ(s.a.prep(NIXL_WRITE, again, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_WRITE, again, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, DisconnectAfterFailsChecksOfRunningRequests) {
    pairSetup s({{"async", "true"}, {"disconnect_after", "1"}});
    ASSERT_TRUE(s.ok());
    const std::vector<unsigned char> before = s.bufB;
    xferLists w1 = slice(s, 0, 100);
    xferLists w2 = slice(s, 100, 100);
    nixl_be_req_t *r1 = nullptr;
    nixl_be_req_t *r2 = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w1, "B", &r1), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w2, "B", &r2), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w1, "B", r1), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.post(NIXL_WRITE, w2, "B", r2), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.check(r1), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "dropped"});
    EXPECT_EQ(s.bufB, before);
    EXPECT_EQ(s.a.release(r1), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(r2), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, FailReleaseKeepsRunningRequest) {
    pairSetup s({{"async", "true"}, {"fail_release", "true"}});
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);

    // Not running: released normally.
    nixl_be_req_t *idle = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &idle), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(idle), NIXL_PLUGIN_SUCCESS);

    nixl_be_opt_args_t opt = notifArgs("kept");
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_IN_PROG);
    size_t mark = logRecorder::instance().mark();
    nixl_plugin_status_t st = s.a.release(req);
    EXPECT_LT(st, 0);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "fail_release"});

    // The request survived and still completes.
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_IN_PROG);
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_EQ(s.b.notifs(), (notif_vec_t{{"A", "kept"}}));
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

// ---------------------------------------------------------------------------------------------
// Validation of what peers hand over

TEST_F(testBackend, BadConnInfoIsMismatch) {
    testEngine a("A");
    testEngine b("B");
    ASSERT_EQ(a.status(), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(b.status(), NIXL_PLUGIN_SUCCESS);
    const std::string good = b.connInfo();
    const std::vector<std::string> bad = {
        "",
        "garbage",
        good.substr(0, good.size() / 2),
        std::string("\0\1\2\3", 4),
        "x" + good,
    };
    for (const std::string &conn : bad) {
        size_t mark = logRecorder::instance().mark();
        EXPECT_EQ(a.loadConn("B", conn), NIXL_PLUGIN_ERR_MISMATCH) << conn;
        expectOneError(mark, {"agent 'A'", "remote 'B'", "loadRemoteConnInfo"});
    }
    // Well-formed, but another agent's.
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(a.loadConn("C", good), NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'C'", "agent 'B'"});

    EXPECT_EQ(a.loadConn("B", good), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(a.loadConn("B", good), NIXL_PLUGIN_SUCCESS); // idempotent
}

TEST_F(testBackend, BadPublicDataIsMismatch) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    const std::string pub = s.b.publicData(s.mdB);
    nixl_be_md_t *md = nullptr;

    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(s.bufB.data(), s.bufB.size(), pub.substr(1), "B", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "bytes"});

    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(s.bufB.data(), s.bufB.size(), pub + "x", "B", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});

    // Right size, wrong range.
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(s.bufB.data() + 1, s.bufB.size() - 1, pub, "B", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});

    // Right size, corrupted bytes.
    std::string flipped = pub;
    flipped[0] = static_cast<char>(flipped[0] ^ 0x5a);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(s.bufB.data(), s.bufB.size(), flipped, "B", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});

    // B's public data presented as A's.
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.b.loadRemoteMD(s.bufB.data(), s.bufB.size(), pub, "A", &md),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'B'", "remote 'A'"});

    // Public data of an agent whose connection info was never loaded.
    testEngine c("C");
    mark = logRecorder::instance().mark();
    EXPECT_EQ(c.loadRemoteMD(s.bufB.data(), s.bufB.size(), pub, "B", &md),
              NIXL_PLUGIN_ERR_NOT_FOUND);
    expectOneError(mark, {"agent 'C'", "remote 'B'"});
    EXPECT_EQ(md, nullptr);
}

TEST_F(testBackend, PrepRejectsInconsistentListsNamingTheDescriptor) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    nixl_be_req_t *req = nullptr;

    xferLists counts;
    counts.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 8);
    counts.addLocal(s.bufA.data() + 8, s.mdA, 8);
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, counts, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "2 local", "1 remote"});

    xferLists lengths;
    lengths.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 8);
    lengths.add(s.bufA.data() + 8, s.mdA, s.bufB.data() + 8, s.remoteB, 8);
    lengths.remoteDescs()[1].len = 9;
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, lengths, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 1", "length"});

    xferLists outside;
    outside.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 8);
    outside.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 8);
    outside.add(s.bufA.data(), s.mdA, s.bufB.data() + s.bufB.size() - 4, s.remoteB, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, outside, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 2", "outside"});

    xferLists localOutside;
    localOutside.add(s.bufA.data() + s.bufA.size() - 1, s.mdA, s.bufB.data(), s.remoteB, 2);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_READ, localOutside, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 0", "outside"});

    // Local metadata in the remote list, and B's own local metadata handed to A.
    xferLists wrongMd;
    wrongMd.add(s.bufA.data(), s.mdA, s.bufB.data(), s.mdA, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, wrongMd, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 0"});
    xferLists foreignMd;
    foreignMd.add(s.bufA.data(), s.mdB, s.bufB.data(), s.remoteB, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, foreignMd, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 0"});

    // B's metadata used for a transfer to another agent.
    testEngine c("C");
    ASSERT_EQ(s.a.loadConn("C", c.connInfo()), NIXL_PLUGIN_SUCCESS);
    xferLists wrongAgent = slice(s, 0, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, wrongAgent, "C", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'C'", "desc 0", "agent 'B'"});

    xferLists unknown = slice(s, 0, 8);
    mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(NIXL_WRITE, unknown, "Nobody", &req), NIXL_PLUGIN_ERR_NOT_FOUND);
    expectOneError(mark, {"agent 'A'", "remote 'Nobody'"});
    EXPECT_EQ(req, nullptr);

    // Zero-length descriptors are valid and move nothing.
    xferLists empty;
    empty.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 0);
    ASSERT_EQ(s.a.prep(NIXL_WRITE, empty, "B", &req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.post(NIXL_WRITE, empty, "B", req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, UnknownOperationsAndMemoryKindsAreRefused) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    nixl_be_req_t *req = nullptr;

    // Values outside the enums, as a buggy or newer caller could pass them through the ABI.
    xferLists w = slice(s, 0, 64);
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.prep(7, w, "B", &req), NIXL_PLUGIN_ERR_INVALID_PARAM);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "operation 7"});
    EXPECT_EQ(req, nullptr);

    std::vector<unsigned char> buf(64);
    nixl_be_desc_t d{reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, {nullptr, 0}};
    for (uint32_t mem : {static_cast<uint32_t>(VRAM_SEG), static_cast<uint32_t>(FILE_SEG), 9u}) {
        nixl_be_md_t *md = nullptr;
        mark = logRecorder::instance().mark();
        EXPECT_EQ(ops().register_mem(s.a.get(), &d, mem, &md), NIXL_PLUGIN_ERR_NOT_SUPPORTED);
        expectOneError(mark, {"agent 'A'", "memory type " + std::to_string(mem)});
        EXPECT_EQ(md, nullptr);
    }

    const std::string pub = s.b.publicData(s.mdB);
    nixl_be_desc_t rd{reinterpret_cast<uintptr_t>(s.bufB.data()), s.bufB.size(), 0, str(pub)};
    nixl_be_md_t *rmd = nullptr;
    mark = logRecorder::instance().mark();
    EXPECT_EQ(ops().load_remote_md(s.a.get(), &rd, VRAM_SEG, str(std::string("B")), &rmd),
              NIXL_PLUGIN_ERR_NOT_SUPPORTED);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "memory type 1"});

    // Lists of another kind.
    std::vector<nixl_be_xfer_desc_t> local = {
        {reinterpret_cast<uintptr_t>(s.bufA.data()), 64, 0, s.mdA}};
    std::vector<nixl_be_xfer_desc_t> remote = {
        {reinterpret_cast<uintptr_t>(s.bufB.data()), 64, 0, s.remoteB}};
    const nixl_be_xfer_list_t vram_local = {VRAM_SEG, 0, local.data(), local.size()};
    const nixl_be_xfer_list_t dram_remote = {DRAM_SEG, 0, remote.data(), remote.size()};
    mark = logRecorder::instance().mark();
    EXPECT_EQ(ops().prep_xfer(s.a.get(), NIXL_WRITE, &vram_local, &dram_remote,
                              str(std::string("B")), nullptr, &req),
              NIXL_PLUGIN_ERR_NOT_SUPPORTED);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "DRAM_SEG"});
}

// ---------------------------------------------------------------------------------------------
// Peers that go away

TEST_F(testBackend, DestroyedPeerReportsRemoteDisconnect) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_SUCCESS);

    s.b.destroy();
    fill(s.bufA, 31);
    const std::vector<unsigned char> kept = s.bufB;
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});
    EXPECT_EQ(s.bufB, kept); // the destroyed engine's memory is not touched
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.genNotif("B", "anyone?"), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, DestroyedPeerFailsRunningAsyncRequest) {
    pairSetup s({{"async", "true"}, {"async_polls", "0"}});
    ASSERT_TRUE(s.ok());
    const std::vector<unsigned char> before = s.bufB;
    xferLists w = slice(s, 0, 4096);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_IN_PROG);
    s.b.destroy();
    EXPECT_EQ(s.a.check(req), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);
    EXPECT_EQ(s.bufB, before);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, RecreatedAgentIsDistinguishedFromTheDestroyedOne) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    const std::string oldConn = s.b.connInfo();
    s.b.destroy();

    testEngine b2("B");
    ASSERT_EQ(b2.status(), NIXL_PLUGIN_SUCCESS);
    const std::string newConn = b2.connInfo();
    EXPECT_NE(newConn, oldConn);
    std::vector<unsigned char> buf2(256);
    fill(buf2, 3);
    nixl_be_md_t *md2 = b2.reg(buf2.data(), buf2.size());
    const std::string pub2 = b2.publicData(md2);

    // A still holds the old connection: the new agent's metadata does not belong to it.
    nixl_be_md_t *remote2 = nullptr;
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.loadRemoteMD(buf2.data(), buf2.size(), pub2, "B", &remote2),
              NIXL_PLUGIN_ERR_MISMATCH);
    expectOneError(mark, {"agent 'A'", "remote 'B'"});

    // Stale connection info loads (with a warning) and transfers then report the disconnect.
    testEngine c("C");
    std::vector<unsigned char> bufC(256);
    nixl_be_md_t *mdC = c.reg(bufC.data(), bufC.size());
    mark = logRecorder::instance().mark();
    EXPECT_EQ(c.loadConn("B", oldConn), NIXL_PLUGIN_SUCCESS);
    EXPECT_TRUE(errorsSince(mark).empty());
    EXPECT_EQ(logRecorder::instance().since(mark, NIXL_PLUGIN_LOG_WARN).size(), 1u);
    EXPECT_EQ(c.genNotif("B", "old"), NIXL_PLUGIN_ERR_REMOTE_DISCONNECT);

    // After a reconnect with the new connection info, A reaches the new engine.
    EXPECT_EQ(ops().disconnect(s.a.get(), str(std::string("B"))), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().unload_md(s.a.get(), s.remoteB), NIXL_PLUGIN_SUCCESS);
    s.remoteB = nullptr;
    ASSERT_EQ(s.a.loadConn("B", newConn), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.loadRemoteMD(buf2.data(), buf2.size(), pub2, "B", &remote2),
              NIXL_PLUGIN_SUCCESS);
    xferLists w;
    w.add(s.bufA.data(), s.mdA, buf2.data(), remote2, buf2.size());
    nixl_be_req_t *req = nullptr;
    nixl_be_opt_args_t opt = notifArgs("new");
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(s.a.post(NIXL_WRITE, w, "B", req, &opt), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(std::memcmp(buf2.data(), s.bufA.data(), buf2.size()), 0);
    EXPECT_EQ(b2.notifs(), (notif_vec_t{{"A", "new"}}));
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().deregister_mem(c.get(), mdC), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, DeregisteredRemoteMemoryIsNeverTouched) {
    pairSetup s;
    ASSERT_TRUE(s.ok());
    std::vector<unsigned char> extra(128);
    fill(extra, 4);
    nixl_be_md_t *mdExtra = s.b.reg(extra.data(), extra.size());
    nixl_be_md_t *remoteExtra = nullptr;
    ASSERT_EQ(s.a.loadRemoteMD(extra.data(), extra.size(), s.b.publicData(mdExtra), "B",
                               &remoteExtra),
              NIXL_PLUGIN_SUCCESS);

    xferLists w;
    w.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 64);
    w.add(s.bufA.data() + 64, s.mdA, extra.data(), remoteExtra, 64);
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops().deregister_mem(s.b.get(), mdExtra), NIXL_PLUGIN_SUCCESS);

    const std::vector<unsigned char> keptB = s.bufB;
    const std::vector<unsigned char> keptExtra = extra;
    size_t mark = logRecorder::instance().mark();
    EXPECT_EQ(s.a.post(NIXL_WRITE, w, "B", req), NIXL_PLUGIN_ERR_BACKEND);
    expectOneError(mark, {"agent 'A'", "remote 'B'", "desc 1", "deregistered"});
    EXPECT_EQ(s.bufB, keptB); // all or nothing
    EXPECT_EQ(extra, keptExtra);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops().unload_md(s.a.get(), remoteExtra), NIXL_PLUGIN_SUCCESS);
}

// ---------------------------------------------------------------------------------------------
// Queries

TEST_F(testBackend, QueryMemAnswersCoveredDescriptors) {
    testEngine a("A");
    std::vector<unsigned char> buf(1000);
    nixl_be_md_t *md = a.reg(buf.data() + 100, 500);
    const uintptr_t base = reinterpret_cast<uintptr_t>(buf.data());
    nixl_be_desc_t q[4] = {{base + 100, 500, 0, {nullptr, 0}},
                           {base + 200, 10, 0, {nullptr, 0}},
                           {base + 590, 20, 0, {nullptr, 0}},
                           {base, 50, 0, {nullptr, 0}}};
    query_answer_t answer;
    nixl_be_query_sink_t sink{&answer, putQuery};
    ASSERT_EQ(ops().query_mem(a.get(), q, 4, DRAM_SEG, &sink), NIXL_PLUGIN_SUCCESS);
    const kv_map_t yes = {{"registered", "true"}};
    EXPECT_EQ(answer.size(), 2u);
    EXPECT_EQ(answer[0], yes);
    EXPECT_EQ(answer[1], yes);
    EXPECT_EQ(answer.count(2), 0u); // straddles the end
    EXPECT_EQ(answer.count(3), 0u);
    EXPECT_EQ(ops().deregister_mem(a.get(), md), NIXL_PLUGIN_SUCCESS);
}

TEST_F(testBackend, EstimateXferCostModelsTenGigabytesPerSecond) {
    pairSetup s({}, 1 << 20);
    ASSERT_TRUE(s.ok());
    xferLists w;
    w.add(s.bufA.data(), s.mdA, s.bufB.data(), s.remoteB, 500000);
    w.add(s.bufA.data() + 500000, s.mdA, s.bufB.data() + 500000, s.remoteB, 500000);
    int64_t duration = -1;
    int64_t margin = -1;
    uint32_t method = 99;
    ASSERT_EQ(ops().estimate_xfer_cost(s.a.get(), NIXL_WRITE, w.local(), w.remote(),
                                       str(std::string("B")), nullptr, &duration, &margin,
                                       &method),
              NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(duration, 100); // 1e6 bytes at 1e10 B/s = 100 us
    EXPECT_EQ(margin, 0);
    EXPECT_EQ(method, static_cast<uint32_t>(nixl_cost_t::ANALYTICAL_BACKEND));

    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(s.a.prep(NIXL_READ, w, "B", &req), NIXL_PLUGIN_SUCCESS);
    duration = -1;
    ASSERT_EQ(ops().estimate_xfer_cost(s.a.get(), NIXL_READ, w.local(), w.remote(),
                                       str(std::string("B")), req, &duration, &margin, &method),
              NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(duration, 100);
    EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
}

// ---------------------------------------------------------------------------------------------
// Threads and the hot path

class concurrencyTest : public testBackend, public ::testing::WithParamInterface<bool> {};

/*
 * Several threads post their own requests (each into a chunk of B written exactly once) while
 * another drains B's notifications and, on each one, reads the chunk it announces. If a
 * notification were queued before its data, that read would race with the copy (TSan reports
 * it) or see stale bytes (the byte check fails).
 */
TEST_P(concurrencyTest, PostsFromThreadsOnSeparateRequests) {
    constexpr size_t threads = 6;
    constexpr size_t rounds = 60;
    constexpr size_t chunk = 256;
    constexpr size_t gen_every = 10;
    const bool async = GetParam();
    pairSetup s({{"async", async ? "true" : "false"}}, threads * rounds * chunk);
    ASSERT_TRUE(s.ok());

    std::vector<xferLists> lists(threads * rounds);
    std::vector<nixl_be_req_t *> reqs(threads * rounds, nullptr);
    for (size_t i = 0; i < lists.size(); ++i) {
        lists[i] = slice(s, i * chunk, chunk);
        ASSERT_EQ(s.a.prep(NIXL_WRITE, lists[i], "B", &reqs[i]), NIXL_PLUGIN_SUCCESS);
    }

    const size_t expected = threads * rounds + threads * (rounds / gen_every);
    std::atomic<size_t> badChunks{0};
    std::atomic<size_t> badOrder{0};
    std::vector<std::thread> workers;
    for (size_t t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (size_t r = 0; r < rounds; ++r) {
                const size_t i = t * rounds + r;
                const std::string msg = std::to_string(i);
                nixl_be_opt_args_t opt = notifArgs(msg);
                nixl_plugin_status_t st = s.a.post(NIXL_WRITE, lists[i], "B", reqs[i], &opt);
                while (st == NIXL_PLUGIN_IN_PROG) {
                    st = s.a.check(reqs[i]);
                }
                EXPECT_EQ(st, NIXL_PLUGIN_SUCCESS);
                if ((r + 1) % gen_every == 0) {
                    EXPECT_EQ(s.a.genNotif("B", "gen"), NIXL_PLUGIN_SUCCESS);
                }
            }
        });
    }
    std::thread drainer([&] {
        notif_vec_t got;
        std::vector<long long> last(threads, -1);
        size_t seen = 0;
        while (seen < expected) {
            got.clear();
            ASSERT_EQ(s.b.drainInto(got), NIXL_PLUGIN_SUCCESS);
            for (const auto &[sender, msg] : got) {
                EXPECT_EQ(sender, "A");
                ++seen;
                if (msg == "gen") {
                    continue;
                }
                const size_t i = std::stoul(msg);
                if (!sameRange(s.bufA, s.bufB, i * chunk, chunk)) {
                    ++badChunks;
                }
                // One thread's posts complete in order, so their notifications arrive in order.
                const size_t t = i / rounds;
                if (static_cast<long long>(i) <= last[t]) {
                    ++badOrder;
                }
                last[t] = static_cast<long long>(i);
            }
            std::this_thread::yield();
        }
    });
    for (auto &w : workers) {
        w.join();
    }
    drainer.join();

    EXPECT_EQ(badChunks.load(), 0u);
    EXPECT_EQ(badOrder.load(), 0u);
    EXPECT_EQ(s.bufB, s.bufA);
    EXPECT_TRUE(s.b.notifs().empty());
    for (nixl_be_req_t *req : reqs) {
        EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    }
}

INSTANTIATE_TEST_SUITE_P(inlineAndAsync,
                         concurrencyTest,
                         ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                             return info.param ? std::string("async") : std::string("inline");
                         });

TEST_F(testBackend, PostOfPreparedRequestAllocatesNothingWithoutNotif) {
    if (!allocCounter::available()) {
        GTEST_SKIP() << "allocation counting is off under sanitizers";
    }
    for (const char *async : {"false", "true"}) {
        pairSetup s({{"async", async}, {"async_polls", "2"}});
        ASSERT_TRUE(s.ok());
        xferLists w = slice(s, 0, 4096);
        nixl_be_req_t *req = nullptr;
        ASSERT_EQ(s.a.prep(NIXL_WRITE, w, "B", &req), NIXL_PLUGIN_SUCCESS);
        const nixl_be_xfer_list_t *local = w.local();
        const nixl_be_xfer_list_t *remote = w.remote();
        const std::string b = "B";
        const nixl_be_opt_args_t opt = noNotifArgs();
        for (const nixl_be_opt_args_t *o : {static_cast<const nixl_be_opt_args_t *>(nullptr),
                                            &opt}) {
            fill(s.bufA, o == nullptr ? 50 : 51);
            allocCounter::start();
            nixl_plugin_status_t st =
                ops().post_xfer(s.a.get(), NIXL_WRITE, local, remote, str(b), req, o);
            while (st == NIXL_PLUGIN_IN_PROG) {
                st = ops().check_xfer(s.a.get(), req);
            }
            const size_t allocs = allocCounter::stop();
            EXPECT_EQ(st, NIXL_PLUGIN_SUCCESS);
            EXPECT_EQ(allocs, 0u) << "async=" << async;
            EXPECT_EQ(s.bufB, s.bufA);
        }

        // Control: the counter does see the plugin's allocations (a notification is queued).
        const nixl_be_opt_args_t with = notifArgs("a notification longer than any small buffer");
        allocCounter::start();
        nixl_plugin_status_t st =
            ops().post_xfer(s.a.get(), NIXL_WRITE, local, remote, str(b), req, &with);
        while (st == NIXL_PLUGIN_IN_PROG) {
            st = ops().check_xfer(s.a.get(), req);
        }
        EXPECT_GT(allocCounter::stop(), 0u);
        EXPECT_EQ(st, NIXL_PLUGIN_SUCCESS);
        EXPECT_EQ(s.b.notifs().size(), 1u);
        EXPECT_EQ(s.a.release(req), NIXL_PLUGIN_SUCCESS);
    }
}

} // namespace
