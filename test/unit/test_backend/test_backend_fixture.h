/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file test_backend_fixture.h
 * @brief What the TEST plugin's C-ABI tests share: the recording log sink, the output sinks, the
 *        plugin loaded once per process as libnixl loads it, an engine wrapper, the A/B pair
 *        setup and the testBackend fixture. The log recorder is thread-safe; the rest is used
 *        from one test thread unless a test says otherwise.
 */
#ifndef NIXL_TEST_UNIT_TEST_BACKEND_TEST_BACKEND_FIXTURE_H
#define NIXL_TEST_UNIT_TEST_BACKEND_TEST_BACKEND_FIXTURE_H

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

// A named namespace, not an anonymous one: gtest requires every TEST_F of testBackend, in any
// of the test files, to use the one fixture class.
namespace nixlTestBackendUt {

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

inline void
recordLog(void *ctx, int32_t level, const char *msg, size_t len) {
    static_cast<logRecorder *>(ctx)->add(level, std::string(msg, len));
}

inline int32_t
logAlwaysEnabled(void *ctx, int32_t level) {
    (void)ctx;
    (void)level;
    return 1;
}

// One services struct for every engine: the SDK keeps a single process-wide pointer to the
// services of the most recent create_engine, so per-engine structs would not stay separate.
inline const nixl_plugin_core_services_t core_services = {
    sizeof(nixl_plugin_core_services_t),
    &logRecorder::instance(),
    recordLog,
    logAlwaysEnabled,
    nullptr, // get_config: the SDK then reads options from the environment
    nullptr, // record_phases: the SDK then records a batch's phases one by one
};

/** Error lines since mark. */
inline std::vector<std::string>
errorsSince(size_t mark) {
    return logRecorder::instance().since(mark, NIXL_PLUGIN_LOG_ERROR);
}

/** Exactly one error line since mark, containing every one of parts. */
inline void
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

inline nixl_plugin_str_t
str(const std::string &s) {
    return nixl_plugin_str_t{s.data(), s.size()};
}

inline nixl_plugin_status_t
appendBytes(void *ctx, const void *data, size_t len) {
    static_cast<std::string *>(ctx)->append(static_cast<const char *>(data), len);
    return NIXL_PLUGIN_SUCCESS;
}

inline nixl_plugin_status_t
putKv(void *ctx, nixl_plugin_str_t key, nixl_plugin_str_t value) {
    (*static_cast<kv_map_t *>(ctx))[std::string(key.data, key.len)] =
        std::string(value.data, value.len);
    return NIXL_PLUGIN_SUCCESS;
}

inline void
pushNotif(void *ctx, nixl_plugin_str_t sender, nixl_plugin_str_t msg) {
    static_cast<notif_vec_t *>(ctx)->emplace_back(std::string(sender.data, sender.len),
                                                  std::string(msg.data, msg.len));
}

using query_answer_t = std::map<size_t, kv_map_t>;

inline nixl_plugin_status_t
putQuery(void *ctx, size_t index, nixl_plugin_str_t key, nixl_plugin_str_t value) {
    kv_map_t &answer = (*static_cast<query_answer_t *>(ctx))[index];
    if (key.data != nullptr) {
        answer[std::string(key.data, key.len)] = std::string(value.data, value.len);
    }
    return NIXL_PLUGIN_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// The plugin, loaded once per process as libnixl would.

inline const nixl_backend_plugin_t *
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

inline const nixl_be_ops_t &
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
inline nixl_be_opt_args_t
notifArgs(std::string_view msg) {
    nixl_be_opt_args_t opt{};
    opt.size = sizeof(opt);
    opt.has_notif = 1;
    opt.notif = nixl_plugin_str_t{msg.data(), msg.size()};
    return opt;
}

inline nixl_be_opt_args_t
noNotifArgs() {
    nixl_be_opt_args_t opt{};
    opt.size = sizeof(opt);
    return opt;
}

/** One engine of the plugin, created as an agent backend would be. */
class testEngine {
public:
    /** sink: the trace sink core would pass (init_params.trace_sink); null: tracing off. */
    explicit testEngine(std::string name,
                        const kv_map_t &params = {},
                        const nixl_be_trace_sink_t *sink = nullptr)
        : name_(std::move(name)) {
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
        p.trace_sink = sink;
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

inline void
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
                       size_t size = 4096,
                       const nixl_be_trace_sink_t *sink_a = nullptr,
                       const nixl_be_trace_sink_t *sink_b = nullptr)
        : a("A", kv_map_t(params_a.begin(), params_a.end()), sink_a),
          b("B", {}, sink_b),
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
inline xferLists
slice(pairSetup &s, size_t off, size_t len) {
    xferLists lists;
    lists.add(s.bufA.data() + off, s.mdA, s.bufB.data() + off, s.remoteB, len);
    return lists;
}

inline bool
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

} // namespace nixlTestBackendUt

#endif // NIXL_TEST_UNIT_TEST_BACKEND_TEST_BACKEND_FIXTURE_H
