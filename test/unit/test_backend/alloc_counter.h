/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file alloc_counter.h
 * @brief Counts the calls of the global operator new made by the current thread, including
 *        those made by a dlopen'ed plugin, so a test can assert that a call allocates nothing.
 *
 * The replacement operator new lives in its own translation unit so that the compiler cannot
 * inline it into callers. Sanitizers interpose the allocator themselves, so under them the
 * counter is not installed and available() is false.
 */
#ifndef NIXL_TEST_UNIT_TEST_BACKEND_ALLOC_COUNTER_H
#define NIXL_TEST_UNIT_TEST_BACKEND_ALLOC_COUNTER_H

#include <cstddef>

namespace allocCounter {

/** True when operator new is replaced and counts are meaningful. */
bool
available() noexcept;

/** Starts counting on this thread from zero. */
void
start() noexcept;

/** Stops counting on this thread; returns the allocations since start(). */
size_t
stop() noexcept;

} // namespace allocCounter

#endif // NIXL_TEST_UNIT_TEST_BACKEND_ALLOC_COUNTER_H
