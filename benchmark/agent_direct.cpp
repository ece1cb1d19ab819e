/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// agent_overhead's peer: the transfers of agent_overhead.cpp on the TEST plugin's C ABI.
#include "agent_direct.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "agent_overhead.h"
#include "nixl.h"

namespace {

const std::string direct_initiator_name = "direct_initiator";
const std::string direct_target_name = "direct_target";

void
coreLog(void *ctx, int32_t level, const char *msg, size_t len) {
    (void)ctx;
    std::fprintf(stderr, "[TEST plugin, level %d] %.*s\n", level, static_cast<int>(len), msg);
}

int32_t
coreLogEnabled(void *ctx, int32_t level) {
    (void)ctx;
    return level >= NIXL_PLUGIN_LOG_WARN ? 1 : 0;
}

const nixl_plugin_core_services_t core_services = {
    sizeof(nixl_plugin_core_services_t),
    nullptr,
    coreLog,
    coreLogEnabled,
    nullptr, // get_config: the SDK then reads options from the environment
    nullptr, // record_phases: the SDK then records a batch's phases one by one
};

nixl_plugin_status_t
appendBytes(void *ctx, const void *data, size_t len) {
    static_cast<std::string *>(ctx)->append(static_cast<const char *>(data), len);
    return NIXL_PLUGIN_SUCCESS;
}

nixl_plugin_str_t
str(const std::string &s) {
    return nixl_plugin_str_t{s.data(), s.size()};
}

/** Where libplugin_TEST.so is: $NIXL_PLUGIN_DIR, else <dir of libnixl>/plugins. */
std::string
pluginDir() {
    const char *env = std::getenv("NIXL_PLUGIN_DIR");
    if (env != nullptr && *env != '\0') {
        return env;
    }
    Dl_info info;
    std::string (*fn)(const nixl_status_t &) = nixlEnumStrings::statusStr;
    if (dladdr(reinterpret_cast<void *>(fn), &info) != 0 && info.dli_fname != nullptr) {
        std::string lib = info.dli_fname;
        size_t slash = lib.rfind('/');
        if (slash != std::string::npos) {
            return lib.substr(0, slash) + "/plugins";
        }
    }
    return "plugins";
}

/** Two engines of the TEST plugin set up as the agents set theirs up, without libnixl. */
class directPair {
public:
    ~directPair() {
        if (ops_ == nullptr) {
            return;
        }
        if (remoteMd_ != nullptr) {
            ops_->unload_md(init_, remoteMd_);
        }
        if (init_ != nullptr) {
            ops_->disconnect(init_, str(direct_target_name));
        }
        if (srcMd_ != nullptr) {
            ops_->deregister_mem(init_, srcMd_);
        }
        if (dstMd_ != nullptr) {
            ops_->deregister_mem(target_, dstMd_);
        }
        if (init_ != nullptr) {
            ops_->destroy_engine(init_);
        }
        if (target_ != nullptr) {
            ops_->destroy_engine(target_);
        }
        if (dl_ != nullptr) {
            dlclose(dl_);
        }
    }

    bool
    setup() {
        src.assign(buffer_size, 0);
        dst.assign(buffer_size, 0);
        for (size_t i = 0; i < buffer_size; ++i) {
            src[i] = patternByte(i);
        }
        const std::string path = pluginDir() + "/libplugin_TEST.so";
        dl_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (dl_ == nullptr) {
            return fail("dlopen " + path + ": " + dlerror());
        }
        auto entry = reinterpret_cast<nixl_backend_plugin_entry_fn>(
            dlsym(dl_, NIXL_BACKEND_PLUGIN_ENTRY));
        if (entry == nullptr) {
            return fail(path + " has no " NIXL_BACKEND_PLUGIN_ENTRY);
        }
        const nixl_backend_plugin_t *plugin = entry();
        if (plugin == nullptr || plugin->hdr.abi_version != NIXL_BACKEND_ABI_VERSION ||
            plugin->hdr.kind != NIXL_PLUGIN_KIND_BACKEND || plugin->ops == nullptr ||
            plugin->ops->size < sizeof(nixl_be_ops_t)) {
            return fail(path + ": not a backend plugin of ABI version " +
                        std::to_string(NIXL_BACKEND_ABI_VERSION));
        }
        plugin_ = plugin;
        ops_ = plugin->ops;
        if (!create(direct_initiator_name, init_) || !create(direct_target_name, target_)) {
            return false;
        }

        nixl_be_desc_t src_desc{reinterpret_cast<uintptr_t>(src.data()), src.size(), 0, {"", 0}};
        nixl_be_desc_t dst_desc{reinterpret_cast<uintptr_t>(dst.data()), dst.size(), 0, {"", 0}};
        if (!ok(ops_->register_mem(init_, &src_desc, DRAM_SEG, &srcMd_), "register_mem src") ||
            !ok(ops_->register_mem(target_, &dst_desc, DRAM_SEG, &dstMd_), "register_mem dst")) {
            return false;
        }
        std::string conn;
        std::string pub;
        nixl_plugin_bytes_sink_t conn_sink{&conn, appendBytes};
        nixl_plugin_bytes_sink_t pub_sink{&pub, appendBytes};
        if (!ok(ops_->get_conn_info(target_, &conn_sink), "get_conn_info") ||
            !ok(ops_->get_public_data(target_, dstMd_, &pub_sink), "get_public_data") ||
            !ok(ops_->load_remote_conn_info(init_, str(direct_target_name), str(conn)),
                "load_remote_conn_info")) {
            return false;
        }
        nixl_be_desc_t remote_desc = dst_desc;
        remote_desc.meta_info = str(pub);
        return ok(ops_->load_remote_md(
                      init_, &remote_desc, DRAM_SEG, str(direct_target_name), &remoteMd_),
                  "load_remote_md") &&
            ok(ops_->connect(init_, str(direct_target_name)), "connect");
    }

    /** The C transfer lists of the first n descriptors; the arrays live in the caller. */
    void
    lists(size_t n,
          std::vector<nixl_be_xfer_desc_t> &local,
          std::vector<nixl_be_xfer_desc_t> &remote) {
        local.clear();
        remote.clear();
        for (size_t i = 0; i < n; ++i) {
            local.push_back({reinterpret_cast<uintptr_t>(src.data() + i * desc_stride),
                             desc_len,
                             0,
                             srcMd_});
            remote.push_back({reinterpret_cast<uintptr_t>(dst.data() + i * desc_stride),
                              desc_len,
                              0,
                              remoteMd_});
        }
    }

    const nixl_be_ops_t *
    ops() const {
        return ops_;
    }

    nixl_be_engine_t *
    engine() const {
        return init_;
    }

    std::vector<uint8_t> src;
    std::vector<uint8_t> dst;

private:
    bool
    fail(const std::string &msg) {
        std::cerr << "agent_overhead: direct: " << msg << std::endl;
        return false;
    }

    bool
    ok(nixl_plugin_status_t st, const char *what) {
        if (st != NIXL_PLUGIN_SUCCESS) {
            return fail(std::string(what) + " returned " + std::to_string(st));
        }
        return true;
    }

    bool
    create(const std::string &name, nixl_be_engine_t *&engine) {
        const std::string type = "TEST";
        nixl_be_init_params_t params{};
        params.size = sizeof(params);
        params.agent_name = str(name);
        params.backend_type = str(type);
        params.params = nullptr;
        params.num_params = 0;
        params.sync_mode = 0;
        params.core = &core_services;
        nixl_be_engine_info_t info{};
        info.size = sizeof(info);
        return ok(plugin_->create_engine(&params, &engine, &info), "create_engine");
    }

    void *dl_ = nullptr;
    const nixl_backend_plugin_t *plugin_ = nullptr;
    const nixl_be_ops_t *ops_ = nullptr;
    nixl_be_engine_t *init_ = nullptr;
    nixl_be_engine_t *target_ = nullptr;
    nixl_be_md_t *srcMd_ = nullptr;
    nixl_be_md_t *dstMd_ = nullptr;
    nixl_be_md_t *remoteMd_ = nullptr;
};

std::unique_ptr<directPair> direct;

} // namespace

void
directCreate(benchmark::State &state) {
    const size_t n = static_cast<size_t>(state.range(0));
    std::vector<nixl_be_xfer_desc_t> local_descs;
    std::vector<nixl_be_xfer_desc_t> remote_descs;
    direct->lists(n, local_descs, remote_descs);
    const nixl_be_xfer_list_t local{DRAM_SEG, 0, local_descs.data(), n};
    const nixl_be_xfer_list_t remote{DRAM_SEG, 0, remote_descs.data(), n};
    const nixl_plugin_str_t peer = str(direct_target_name);
    const nixl_be_ops_t *ops = direct->ops();
    nixl_be_engine_t *engine = direct->engine();
    std::memset(direct->dst.data(), 0, buffer_size);

    const uint64_t before = allocCount();
    for (auto _ : state) {
        nixl_be_req_t *req = nullptr;
        nixl_plugin_status_t st =
            ops->prep_xfer(engine, NIXL_WRITE, &local, &remote, peer, nullptr, &req);
        if (st != NIXL_PLUGIN_SUCCESS) {
            state.SkipWithError("prep_xfer failed");
            break;
        }
        st = ops->post_xfer(engine, NIXL_WRITE, &local, &remote, peer, req, nullptr);
        if (st >= 0) {
            do {
                st = ops->check_xfer(engine, req);
            } while (st == NIXL_PLUGIN_IN_PROG);
        }
        nixl_plugin_status_t rst = ops->release_req(engine, req);
        if (st != NIXL_PLUGIN_SUCCESS || rst != NIXL_PLUGIN_SUCCESS) {
            state.SkipWithError("transfer or release_req failed");
            break;
        }
    }
    setAllocCounter(state, allocCount() - before);
    if (!verify(direct->src, direct->dst, n)) {
        state.SkipWithError("destination does not hold the written data");
    }
}

void
directPrepped(benchmark::State &state) {
    const size_t n = static_cast<size_t>(state.range(0));
    std::vector<nixl_be_xfer_desc_t> local_descs;
    std::vector<nixl_be_xfer_desc_t> remote_descs;
    direct->lists(n, local_descs, remote_descs);
    const nixl_be_xfer_list_t local{DRAM_SEG, 0, local_descs.data(), n};
    const nixl_be_xfer_list_t remote{DRAM_SEG, 0, remote_descs.data(), n};
    const nixl_plugin_str_t peer = str(direct_target_name);
    const nixl_be_ops_t *ops = direct->ops();
    nixl_be_engine_t *engine = direct->engine();
    std::memset(direct->dst.data(), 0, buffer_size);

    nixl_be_req_t *req = nullptr;
    if (ops->prep_xfer(engine, NIXL_WRITE, &local, &remote, peer, nullptr, &req) !=
        NIXL_PLUGIN_SUCCESS) {
        state.SkipWithError("prep_xfer failed");
        return;
    }
    const uint64_t before = allocCount();
    for (auto _ : state) {
        nixl_plugin_status_t st =
            ops->post_xfer(engine, NIXL_WRITE, &local, &remote, peer, req, nullptr);
        if (st >= 0) {
            do {
                st = ops->check_xfer(engine, req);
            } while (st == NIXL_PLUGIN_IN_PROG);
        }
        if (st != NIXL_PLUGIN_SUCCESS) {
            state.SkipWithError("transfer failed");
            break;
        }
    }
    setAllocCounter(state, allocCount() - before);
    if (!verify(direct->src, direct->dst, n)) {
        state.SkipWithError("destination does not hold the written data");
    }
    ops->release_req(engine, req);
}

bool
setupDirectPair() {
    auto pair = std::make_unique<directPair>();
    if (!pair->setup()) {
        return false;
    }
    direct = std::move(pair);
    return true;
}

void
releaseDirectPair() {
    direct.reset();
}

const nixl_be_ops_t *
directOps() {
    return direct->ops();
}

nixl_be_engine_t *
directEngine() {
    return direct->engine();
}
