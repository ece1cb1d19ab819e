/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Trace phases of the LIBFABRIC plugin, driven through its C ABI with a recording trace sink on
// each engine: the initiator's five phases in order under the request's context, and the
// target's NOTIF_RECEIVED / REMOTE_OBSERVED under the trace id carried in the notification.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <vector>

#include "nixl_backend_plugin.h"
#include "nixl_trace_context.h"

namespace {

struct phaseLog {
    std::mutex mu;
    std::vector<std::string> phases;
    std::vector<std::vector<uint8_t>> traceIds;
    nixl_be_trace_sink_t sink{sizeof(nixl_be_trace_sink_t), this, &phaseLog::record};

    static void
    record(void *ctx, const nixl_be_trace_ctx_t *t, uint32_t phase, nixl_plugin_str_t label,
           uint64_t, const nixl_trace_attr_t *, size_t) {
        auto *self = static_cast<phaseLog *>(ctx);
        std::lock_guard<std::mutex> g(self->mu);
        self->phases.push_back(std::string(nixl_be_trace_phase_name(phase)) + " " +
                               std::string(label.data, label.len));
        self->traceIds.emplace_back(t != nullptr ? t->trace_id : nullptr,
                                    t != nullptr ? t->trace_id + 16 : nullptr);
    }

    std::vector<std::string>
    snapshot() {
        std::lock_guard<std::mutex> g(mu);
        return phases;
    }
};

nixl_plugin_str_t
str(const std::string &s) {
    return {s.data(), s.size()};
}

nixl_plugin_status_t
appendBytes(void *ctx, const void *data, size_t len) {
    static_cast<std::string *>(ctx)->append(static_cast<const char *>(data), len);
    return NIXL_PLUGIN_SUCCESS;
}

void
pushNotif(void *ctx, nixl_plugin_str_t, nixl_plugin_str_t msg) {
    static_cast<std::vector<std::string> *>(ctx)->emplace_back(msg.data, msg.len);
}

class lfPhaseTest : public ::testing::TestWithParam<const char *> {
protected:
    void
    SetUp() override {
        const char *dir = std::getenv("NIXL_PLUGIN_DIR");
        ASSERT_NE(dir, nullptr);
        handle_ = dlopen((std::string(dir) + "/libplugin_LIBFABRIC.so").c_str(),
                         RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(handle_, nullptr) << dlerror();
        auto entry = reinterpret_cast<nixl_backend_plugin_entry_fn>(
            dlsym(handle_, NIXL_BACKEND_PLUGIN_ENTRY));
        ASSERT_NE(entry, nullptr);
        plugin_ = entry();
        ops_ = plugin_->ops;
        a_ = create("A", &logA_.sink);
        b_ = create("B", &logB_.sink);
        ASSERT_TRUE(a_ && b_);
    }

    void
    TearDown() override {
        if (a_ != nullptr) {
            ops_->destroy_engine(a_);
        }
        if (b_ != nullptr) {
            ops_->destroy_engine(b_);
        }
        // The plugin stays loaded: libfabric providers are not made to be unloaded.
    }

    nixl_be_engine_t *
    create(const std::string &name, const nixl_be_trace_sink_t *sink) {
        const std::string type = "LIBFABRIC", k = "provider", v = GetParam();
        nixl_plugin_kv_t kv{str(k), str(v)};
        nixl_be_init_params_t p{};
        p.size = sizeof(p);
        p.agent_name = str(name);
        p.backend_type = str(type);
        p.params = &kv;
        p.num_params = 1;
        p.trace_sink = sink;
        nixl_be_engine_info_t info{};
        info.size = sizeof(info);
        nixl_be_engine_t *e = nullptr;
        EXPECT_EQ(plugin_->create_engine(&p, &e, &info), NIXL_PLUGIN_SUCCESS);
        return e;
    }

    void *handle_ = nullptr;
    const nixl_backend_plugin_t *plugin_ = nullptr;
    const nixl_be_ops_t *ops_ = nullptr;
    nixl_be_engine_t *a_ = nullptr, *b_ = nullptr;
    phaseLog logA_, logB_;
};

TEST_P(lfPhaseTest, WriteWithNotifRecordsPhasesOnBothSides) {
    std::vector<uint8_t> src(1 << 20, 0x5a), dst(1 << 20, 0);
    nixl_be_desc_t ds{reinterpret_cast<uintptr_t>(src.data()), src.size(), 0, {nullptr, 0}};
    nixl_be_desc_t dd{reinterpret_cast<uintptr_t>(dst.data()), dst.size(), 0, {nullptr, 0}};
    nixl_be_md_t *mdA = nullptr, *mdB = nullptr, *rmd = nullptr;
    ASSERT_EQ(ops_->register_mem(a_, &ds, NIXL_BE_MEM_DRAM, &mdA), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops_->register_mem(b_, &dd, NIXL_BE_MEM_DRAM, &mdB), NIXL_PLUGIN_SUCCESS);
    std::string connB, pubB;
    nixl_plugin_bytes_sink_t s1{&connB, appendBytes}, s2{&pubB, appendBytes};
    ASSERT_EQ(ops_->get_conn_info(b_, &s1), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops_->get_public_data(b_, mdB, &s2), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops_->load_remote_conn_info(a_, str("B"), str(connB)), NIXL_PLUGIN_SUCCESS);
    nixl_be_desc_t rd = dd;
    rd.meta_info = str(pubB);
    ASSERT_EQ(ops_->load_remote_md(a_, &rd, NIXL_BE_MEM_DRAM, str("B"), &rmd),
              NIXL_PLUGIN_SUCCESS);

    nixl_be_xfer_desc_t l{ds.addr, ds.len, 0, mdA}, r{dd.addr, dd.len, 0, rmd};
    nixl_be_xfer_list_t ll{NIXL_BE_MEM_DRAM, 0, &l, 1}, rl{NIXL_BE_MEM_DRAM, 0, &r, 1};
    nixl_be_trace_ctx_t tc{};
    for (int i = 0; i < 16; ++i) {
        tc.trace_id[i] = static_cast<uint8_t>(0xa0 + i);
    }
    tc.span_id[0] = 7;
    tc.flags = 1;
    tc.correlation_id = 99;
    const std::string msg = "done";
    nixl_be_opt_args_t opt{};
    opt.size = sizeof(opt);
    opt.has_notif = 1;
    opt.notif = str(msg);
    opt.trace_ctx = &tc;
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(ops_->prep_xfer(a_, NIXL_BE_OP_WRITE, &ll, &rl, str("B"), &opt, &req),
              NIXL_PLUGIN_SUCCESS);
    nixl_plugin_status_t st = ops_->post_xfer(a_, NIXL_BE_OP_WRITE, &ll, &rl, str("B"), req, &opt);
    std::vector<std::string> got;
    nixl_be_notif_sink_t ns{&got, pushNotif};
    for (int i = 0; i < 1000000 && (st == NIXL_PLUGIN_IN_PROG || got.empty()); ++i) {
        ASSERT_EQ(ops_->get_notifs(b_, &ns), NIXL_PLUGIN_SUCCESS); // the target progresses
        if (st == NIXL_PLUGIN_IN_PROG) {
            st = ops_->check_xfer(a_, req);
        }
    }
    ASSERT_EQ(st, NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(got, std::vector<std::string>{"done"});
    EXPECT_EQ(dst, src);
    EXPECT_EQ(logA_.snapshot(),
              (std::vector<std::string>{"submit libfabric.post", "wire_submitted libfabric.rma",
                                        "wire_completed libfabric.rma",
                                        "notif_sent libfabric.notif"}));
    EXPECT_EQ(logB_.snapshot(),
              (std::vector<std::string>{"notif_received libfabric.notif",
                                        "remote_observed libfabric.notif"}));
    const std::vector<uint8_t> want(tc.trace_id, tc.trace_id + 16);
    for (const auto &id : logA_.traceIds) {
        EXPECT_EQ(id, want);
    }
    for (const auto &id : logB_.traceIds) {
        EXPECT_EQ(id, want); // decoded from the 26 bytes in the notification
    }
    EXPECT_EQ(ops_->release_req(a_, req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops_->unload_md(a_, rmd), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops_->deregister_mem(a_, mdA), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops_->deregister_mem(b_, mdB), NIXL_PLUGIN_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(providers,
                         lfPhaseTest,
                         ::testing::Values("shm", "tcp;ofi_rxm"),
                         [](const auto &info) {
                             return std::string(info.param[0] == 's' ? "shm" : "tcp");
                         });

} // namespace
