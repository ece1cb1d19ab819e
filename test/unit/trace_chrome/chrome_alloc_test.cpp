/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The event path allocates nothing once warm, counted with the test suite's replacement
// operator new (test/unit/test_backend/alloc_counter.h; not available under sanitizers).
#include <gtest/gtest.h>

#include <cstdlib>

#include <unistd.h>

#include "../test_backend/alloc_counter.h"
#include "chrome_test_util.h"

namespace {

using namespace chromeTest;

TEST(chromeAllocTest, EventPathAllocatesNothingAfterWarmUp) {
    if (!allocCounter::available()) {
        GTEST_SKIP() << "operator new is not replaced under sanitizers";
    }
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
    allocCounter::start();
    for (int i = 0; i < 10; ++i) { // warm-up: the thread's ring and line buffer
        chromeOps()->span_end(t, p);
        chromeOps()->mark(t, d);
    }
    // The counter sees the plugin's allocations: the warm-up made the ring and line buffer.
    EXPECT_GT(allocCounter::stop(), 0u);
    allocCounter::start();
    for (int i = 0; i < 10000; ++i) {
        chromeOps()->span_end(t, p);
        chromeOps()->mark(t, d);
    }
    const size_t counted = allocCounter::stop();
    chromeOps()->destroy(t);
    EXPECT_EQ(0u, counted);
    EXPECT_EQ(0, std::system(("rm -rf '" + root + "'").c_str()));
}

} // namespace
