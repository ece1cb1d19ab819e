/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Registration of many descriptors in one call, as a KV cache of many blocks does it: one
 * iteration is one registerMem of n DRAM descriptors (8 bytes each, 16 bytes apart, in address
 * order) followed by one deregisterMem of the same descriptors in reverse order. Counters:
 * register_s and deregister_s split the iteration. The peer is the same work done directly on
 * the TEST plugin's C ABI, so agent/direct is what the agent's bookkeeping costs.
 */
#include "agent_register.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "nixl.h"

namespace {

constexpr size_t reg_len = 8;
constexpr size_t reg_stride = 16;

const nixl_be_ops_t *direct_ops = nullptr;
nixl_be_engine_t *direct_engine = nullptr;
std::unique_ptr<nixlAgent> reg_agent;

double
secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void
setSplit(benchmark::State &state, double reg_s, double dereg_s) {
    const double it = state.iterations() == 0 ? 1.0 : static_cast<double>(state.iterations());
    state.counters["register_s"] = benchmark::Counter(reg_s / it);
    state.counters["deregister_s"] = benchmark::Counter(dereg_s / it);
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

} // namespace

void
setRegisterDirectEngine(const nixl_be_ops_t *ops, nixl_be_engine_t *engine) {
    direct_ops = ops;
    direct_engine = engine;
}

void
releaseRegisterAgent() {
    reg_agent.reset();
}

void
agentRegisterMany(benchmark::State &state) {
    const size_t n = static_cast<size_t>(state.range(0));
    if (reg_agent == nullptr) {
        reg_agent = std::make_unique<nixlAgent>("bench_register", nixlAgentConfig(false));
        nixlBackendH *h = nullptr;
        nixl_status_t st = reg_agent->createBackend("TEST", {}, h);
        if (st != NIXL_SUCCESS) {
            state.SkipWithError("createBackend TEST failed");
            reg_agent.reset();
            return;
        }
    }
    std::vector<uint8_t> buf(n * reg_stride);
    const auto base = reinterpret_cast<uintptr_t>(buf.data());
    nixl_reg_dlist_t fwd(DRAM_SEG);
    nixl_reg_dlist_t rev(DRAM_SEG);
    for (size_t i = 0; i < n; ++i) {
        fwd.addDesc(nixlBlobDesc(base + i * reg_stride, reg_len, 0, ""));
        rev.addDesc(nixlBlobDesc(base + (n - 1 - i) * reg_stride, reg_len, 0, ""));
    }
    double reg_s = 0;
    double dereg_s = 0;
    for (auto _ : state) {
        auto t0 = std::chrono::steady_clock::now();
        nixl_status_t st = reg_agent->registerMem(fwd);
        reg_s += secondsSince(t0);
        if (st != NIXL_SUCCESS) {
            state.SkipWithError("registerMem failed");
            break;
        }
        t0 = std::chrono::steady_clock::now();
        st = reg_agent->deregisterMem(rev);
        dereg_s += secondsSince(t0);
        if (st != NIXL_SUCCESS) {
            state.SkipWithError("deregisterMem failed");
            break;
        }
    }
    setSplit(state, reg_s, dereg_s);
}

void
directRegisterMany(benchmark::State &state) {
    if (direct_ops == nullptr || direct_engine == nullptr) {
        state.SkipWithError("no direct engine");
        return;
    }
    const size_t n = static_cast<size_t>(state.range(0));
    std::vector<uint8_t> buf(n * reg_stride);
    const auto base = reinterpret_cast<uintptr_t>(buf.data());
    struct reg_t {
        nixl_be_md_t *md;
        nixl_be_md_t *loop;
        std::string pub;
    };
    std::vector<reg_t> regs(n);
    auto append = [](void *ctx, const void *data, size_t len) noexcept {
        static_cast<std::string *>(ctx)->append(static_cast<const char *>(data), len);
        return static_cast<nixl_plugin_status_t>(NIXL_PLUGIN_SUCCESS);
    };
    double reg_s = 0;
    double dereg_s = 0;
    for (auto _ : state) {
        bool ok = true;
        auto t0 = std::chrono::steady_clock::now();
        for (size_t i = 0; i < n && ok; ++i) {
            nixl_be_desc_t d{base + i * reg_stride, reg_len, 0, {"", 0}};
            reg_t &r = regs[i];
            r.pub.clear();
            nixl_plugin_bytes_sink_t sink{&r.pub, append};
            ok = direct_ops->register_mem(direct_engine, &d, DRAM_SEG, &r.md) ==
                    NIXL_PLUGIN_SUCCESS &&
                direct_ops->load_local_md(direct_engine, r.md, &r.loop) == NIXL_PLUGIN_SUCCESS &&
                direct_ops->get_public_data(direct_engine, r.md, &sink) == NIXL_PLUGIN_SUCCESS;
        }
        reg_s += secondsSince(t0);
        if (!ok) {
            state.SkipWithError("register_mem failed");
            break;
        }
        t0 = std::chrono::steady_clock::now();
        for (size_t i = n; i-- > 0 && ok;) {
            ok = direct_ops->unload_md(direct_engine, regs[i].loop) == NIXL_PLUGIN_SUCCESS &&
                direct_ops->deregister_mem(direct_engine, regs[i].md) == NIXL_PLUGIN_SUCCESS;
        }
        dereg_s += secondsSince(t0);
        if (!ok) {
            state.SkipWithError("deregister_mem failed");
            break;
        }
    }
    setSplit(state, reg_s, dereg_s);
}

void
printRegisterTable(const std::function<bool(const std::string &, double &)> &ms_of) {
    std::printf("\nregisterMem + deregisterMem of n descriptors in one call each "
                "(seconds per pair, mean of runs)\n");
    std::printf("%-9s %14s %14s %8s\n", "descs", "agent_register", "direct_register", "ratio");
    for (int n : register_counts) {
        // Appended, not "/" + to_string(n): g++ 12 -O3 reports a false -Wrestrict there.
        std::string arg = "/";
        arg += std::to_string(n);
        double agent_ms = 0;
        double direct_ms = 0;
        const bool a = ms_of("agent_register" + arg, agent_ms);
        const bool d = ms_of("direct_register" + arg, direct_ms);
        std::printf("%-9d", n);
        if (a) {
            std::printf(" %14.3f", agent_ms / 1e3);
        } else {
            std::printf(" %14s", "-");
        }
        if (d) {
            std::printf(" %14.3f", direct_ms / 1e3);
        } else {
            std::printf(" %14s", "-");
        }
        if (a && d && direct_ms > 0) {
            std::printf(" %8.2f\n", agent_ms / direct_ms);
        } else {
            std::printf(" %8s\n", "-");
        }
    }
}
