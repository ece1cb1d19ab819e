/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Trace phases of the POSIX plugin, driven through its C ABI with a recording trace sink:
// SUBMIT and WIRE_SUBMITTED at post, WIRE_COMPLETED once when the request ends, each labelled
// with the engine and recorded under the request's trace context.

#include <dlfcn.h>

#include <mutex>

#include "nixl_backend_plugin.h"
#include "posix_fixture.h"

namespace nixl_posix_test {
namespace {

struct phaseLog {
    std::mutex mu;
    std::vector<std::string> phases;
    std::vector<uint8_t> firstTraceByte;
    nixl_be_trace_sink_t sink{sizeof(nixl_be_trace_sink_t), this, &phaseLog::record};

    static void
    record(void *ctx, const nixl_be_trace_ctx_t *t, uint32_t phase, nixl_plugin_str_t label,
           uint64_t, const nixl_trace_attr_t *, size_t) {
        auto *self = static_cast<phaseLog *>(ctx);
        std::lock_guard<std::mutex> g(self->mu);
        self->phases.push_back(std::string(nixl_be_trace_phase_name(phase)) + " " +
                               std::string(label.data, label.len));
        self->firstTraceByte.push_back(t != nullptr ? t->trace_id[0] : 0);
    }
};

nixl_plugin_str_t
str(const std::string &s) {
    return {s.data(), s.size()};
}

class posixPhaseTest : public posixTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(posixPhaseTest, PhasesCarryEngineAndContext) {
    const char *dir = std::getenv("NIXL_PLUGIN_DIR");
    ASSERT_NE(dir, nullptr);
    void *handle = dlopen((std::string(dir) + "/libplugin_POSIX.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    auto entry =
        reinterpret_cast<nixl_backend_plugin_entry_fn>(dlsym(handle, NIXL_BACKEND_PLUGIN_ENTRY));
    ASSERT_NE(entry, nullptr);
    const nixl_backend_plugin_t *plugin = entry();
    const nixl_be_ops_t *ops = plugin->ops;

    phaseLog log;
    const std::string name = "A", type = "POSIX";
    const auto param = *engineParams(GetParam()).begin();
    nixl_plugin_kv_t kv{str(param.first), str(param.second)};
    nixl_be_init_params_t p{};
    p.size = sizeof(p);
    p.agent_name = str(name);
    p.backend_type = str(type);
    p.params = &kv;
    p.num_params = 1;
    p.trace_sink = &log.sink;
    nixl_be_engine_info_t info{};
    info.size = sizeof(info);
    nixl_be_engine_t *e = nullptr;
    ASSERT_EQ(plugin->create_engine(&p, &e, &info), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(info.caps, static_cast<uint32_t>(NIXL_BE_CAP_LOCAL));

    scratchDir sd;
    const std::string meta = "rw,create:" + sd.file("phases.bin");
    alignedBuffer buf(4 * 4096);
    nixl_be_desc_t fd_desc{0, 0, 1, str(meta)};
    nixl_be_desc_t md_desc{buf.addr(), buf.size(), 0, {nullptr, 0}};
    nixl_be_md_t *fmd = nullptr, *mmd = nullptr, *floc = nullptr;
    ASSERT_EQ(ops->register_mem(e, &fd_desc, NIXL_BE_MEM_FILE, &fmd), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops->register_mem(e, &md_desc, NIXL_BE_MEM_DRAM, &mmd), NIXL_PLUGIN_SUCCESS);
    ASSERT_EQ(ops->load_local_md(e, fmd, &floc), NIXL_PLUGIN_SUCCESS);

    std::vector<nixl_be_xfer_desc_t> l, r;
    for (size_t i = 0; i < 4; ++i) {
        l.push_back({buf.addr(i * 4096), 4096, 0, mmd});
        r.push_back({i * 4096, 4096, 1, floc});
    }
    nixl_be_xfer_list_t ll{NIXL_BE_MEM_DRAM, 0, l.data(), l.size()};
    nixl_be_xfer_list_t rl{NIXL_BE_MEM_FILE, 0, r.data(), r.size()};
    nixl_be_trace_ctx_t tc{};
    tc.trace_id[0] = 0xab;
    nixl_be_opt_args_t opt{};
    opt.size = sizeof(opt);
    opt.trace_ctx = &tc;
    nixl_be_req_t *req = nullptr;
    ASSERT_EQ(ops->prep_xfer(e, NIXL_WRITE, &ll, &rl, str(name), &opt, &req), NIXL_PLUGIN_SUCCESS);
    nixl_plugin_status_t st = ops->post_xfer(e, NIXL_WRITE, &ll, &rl, str(name), req, &opt);
    ASSERT_TRUE(waitFor([&] {
        if (st == NIXL_PLUGIN_IN_PROG) {
            st = ops->check_xfer(e, req);
        }
        return st != NIXL_PLUGIN_IN_PROG;
    }));
    EXPECT_EQ(st, NIXL_PLUGIN_SUCCESS);
    // A poll after the end records nothing more.
    EXPECT_EQ(ops->check_xfer(e, req), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops->release_req(e, req), NIXL_PLUGIN_SUCCESS);

    const std::string &eng = GetParam();
    EXPECT_EQ(log.phases, (std::vector<std::string>{"submit " + eng, "wire_submitted " + eng,
                                                    "wire_completed " + eng}));
    EXPECT_EQ(log.firstTraceByte, (std::vector<uint8_t>{0xab, 0xab, 0xab}));

    EXPECT_EQ(ops->unload_md(e, floc), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops->deregister_mem(e, mmd), NIXL_PLUGIN_SUCCESS);
    EXPECT_EQ(ops->deregister_mem(e, fmd), NIXL_PLUGIN_SUCCESS);
    ops->destroy_engine(e);
    dlclose(handle);
}

INSTANTIATE_TEST_SUITE_P(engines,
                         posixPhaseTest,
                         ::testing::Values("linux_aio", "io_uring", "posix_aio"),
                         [](const auto &info) { return info.param; });

} // namespace
} // namespace nixl_posix_test
