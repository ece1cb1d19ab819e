/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_overhead.h
 * @brief What agent_overhead's source files share: the transfer shape (n descriptors of 8 bytes,
 *        16 bytes apart), the data check, and the allocation count kept by agent_overhead.cpp's
 *        replacement operator new. Single-threaded, like the rest of the benchmark.
 */
#ifndef NIXL_BENCHMARK_AGENT_OVERHEAD_H
#define NIXL_BENCHMARK_AGENT_OVERHEAD_H

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <vector>

inline constexpr size_t desc_len = 8;
inline constexpr size_t desc_stride = 16;
inline constexpr size_t max_descs = 256;
inline constexpr size_t buffer_size = max_descs * desc_stride;

/** Global operator new calls so far, in this process (libnixl and the plugin included). */
uint64_t
allocCount() noexcept;

/** The byte the source buffers hold at offset i. */
uint8_t
patternByte(size_t i);

/** Checks that the first n descriptors of dst hold src's bytes; the gaps are not written. */
bool
verify(const std::vector<uint8_t> &src, const std::vector<uint8_t> &dst, size_t n);

/** Sets the allocs_per_iter counter from the allocations of the whole run. */
void
setAllocCounter(benchmark::State &state, uint64_t allocs);

#endif // NIXL_BENCHMARK_AGENT_OVERHEAD_H
