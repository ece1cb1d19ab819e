/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "alloc_counter.h"

#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NIXL_TEST_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define NIXL_TEST_COUNT_ALLOCS 0
#endif
#endif
#ifndef NIXL_TEST_COUNT_ALLOCS
#define NIXL_TEST_COUNT_ALLOCS 1
#endif

namespace {
thread_local bool counting = false;
thread_local size_t count = 0;
} // namespace

namespace allocCounter {

bool
available() noexcept {
    return NIXL_TEST_COUNT_ALLOCS != 0;
}

void
start() noexcept {
    count = 0;
    counting = true;
}

size_t
stop() noexcept {
    counting = false;
    return count;
}

} // namespace allocCounter

#if NIXL_TEST_COUNT_ALLOCS
// The array, nothrow and sized forms of libstdc++ forward to these two, so replacing them
// catches every plain allocation. Aligned forms are not used by the code under test.

void *
operator new(size_t size) {
    if (counting) {
        ++count;
    }
    void *p = std::malloc(size == 0 ? 1 : size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

void
operator delete(void *p) noexcept {
    std::free(p);
}

void
operator delete(void *p, size_t) noexcept {
    std::free(p);
}
#endif
