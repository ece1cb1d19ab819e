/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_direct.h
 * @brief agent_overhead's peer (agent_direct.cpp): the same transfers driven directly through the
 *        TEST plugin's C ABI (dlopen of $NIXL_PLUGIN_DIR/libplugin_TEST.so), with two engines of
 *        its own. Single-threaded, like the rest of the benchmark.
 */
#ifndef NIXL_BENCHMARK_AGENT_DIRECT_H
#define NIXL_BENCHMARK_AGENT_DIRECT_H

#include <benchmark/benchmark.h>

#include "nixl_backend_plugin.h"

/** Loads the plugin and sets up the two engines; false (after printing why) on failure. */
bool
setupDirectPair();

/** Tears down what setupDirectPair made; the benchmarks below must not run after it. */
void
releaseDirectPair();

/** The plugin's ops and the initiating engine, for other benchmarks on the same engine. */
const nixl_be_ops_t *
directOps();

nixl_be_engine_t *
directEngine();

/** direct_create/n: prep_xfer + post_xfer + check_xfer + release_req. */
void
directCreate(benchmark::State &state);

/** direct_prepped/n: post_xfer + check_xfer of a request prepared once. */
void
directPrepped(benchmark::State &state);

#endif // NIXL_BENCHMARK_AGENT_DIRECT_H
