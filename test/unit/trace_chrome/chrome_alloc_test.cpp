/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The event path allocates nothing once warm: operator new is replaced in this binary and
// counts, per thread, the allocations made while a thread traces.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include <unistd.h>

#include "chrome_test_util.h"

namespace {
thread_local size_t allocations = 0;
}

void *
operator new(size_t n) {
    ++allocations;
    if (void *p = std::malloc(n == 0 ? 1 : n)) {
        return p;
    }
    throw std::bad_alloc();
}

void
operator delete(void *p) noexcept {
    std::free(p);
}

void
operator delete(void *p, size_t) noexcept {
    std::free(p);
}

namespace {

using namespace chromeTest;

TEST(chromeAllocTest, EventPathAllocatesNothingAfterWarmUp) {
    ASSERT_NE(nullptr, chromeOps());
    char tmpl[] = "/tmp/nixl-chrome-alloc-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    const std::string root = tmpl;
    fakeCore::get().reset();
    fakeCore::get().set("NIXL_TRACE_DIR", root + "/traces");
    nixl_trace_backend_t *t = nullptr;
    ASSERT_EQ(NIXL_PLUGIN_SUCCESS, createTracer("alloc", &t));

    eventBuilder post(kPostWrite, 1, 0, 1000, 2000, 0x99);
    post.str("remote_agent", "target").i64("bytes", 4096).f64("ratio", 0.5);
    eventBuilder done(kXferComplete, 0, 0, 3000, 0, 0x99);
    const nixl_trace_event_t *p = post.get();
    const nixl_trace_event_t *d = done.get();
    allocations = 0;
    for (int i = 0; i < 10; ++i) { // warm-up: the thread's ring and line buffer
        chromeOps()->span_end(t, p);
        chromeOps()->mark(t, d);
    }
    // The counter sees the plugin's allocations: the warm-up made the ring and line buffer.
    EXPECT_GT(allocations, 0u);
    allocations = 0;
    for (int i = 0; i < 10000; ++i) {
        chromeOps()->span_begin(t, p);
        chromeOps()->span_end(t, p);
        chromeOps()->mark(t, d);
    }
    const size_t counted = allocations;
    chromeOps()->destroy(t);
    EXPECT_EQ(0u, counted);
    EXPECT_EQ(0, std::system(("rm -rf '" + root + "'").c_str()));
}

} // namespace
