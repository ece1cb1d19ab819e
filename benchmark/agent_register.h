/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_register.h
 * @brief agent_overhead's registration figures (agent_register.cpp): one registerMem plus one
 *        deregisterMem of many DRAM descriptors over TEST, and the same work on the plugin's C
 *        ABI for the ratio. Single-threaded, like the rest of the benchmark.
 */
#ifndef NIXL_BENCHMARK_AGENT_REGISTER_H
#define NIXL_BENCHMARK_AGENT_REGISTER_H

#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "nixl_backend_plugin.h"

/** Descriptor counts measured: up to the million a large KV cache registers. */
inline constexpr int register_counts[] = {10000, 100000, 1000000};

/** The engine direct_register uses (an engine of the TEST plugin); must outlive the runs. */
void
setRegisterDirectEngine(const nixl_be_ops_t *ops, nixl_be_engine_t *engine);

/** agent_register/n: registerMem + deregisterMem (reverse order) of n descriptors. */
void
agentRegisterMany(benchmark::State &state);

/** direct_register/n: register_mem + load_local_md + get_public_data per descriptor, then
 *  unload_md + deregister_mem: what the agent asks of a TEST engine, without the agent. */
void
directRegisterMany(benchmark::State &state);

/**
 * Prints the registration table. ns_of(name, ns) gives a benchmark's mean real time (ms) per
 * iteration; false when it did not run or failed (the caller reports failures).
 */
void
printRegisterTable(const std::function<bool(const std::string &, double &)> &ms_of);

/** Destroys the agent agentRegisterMany made. */
void
releaseRegisterAgent();

#endif // NIXL_BENCHMARK_AGENT_REGISTER_H
