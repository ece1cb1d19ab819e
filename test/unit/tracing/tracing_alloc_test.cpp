/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// With tracing on, posting and polling a prepared request allocates nothing after warm-up:
// core's spans, marks and correlation scopes live on the stack. Counted by replacing the global
// operator new of this test binary (libnixl and the plugins use it too); the no-op test trace
// plugin keeps the plugin's own allocations out of the count.

#include <atomic>
#include <cstdlib>
#include <new>

#include "tracing_test_utils.h"

namespace {

std::atomic<uint64_t> allocations{0};

} // namespace

void *
operator new(std::size_t size) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void *p = std::malloc(size == 0 ? 1 : size)) {
        return p;
    }
    throw std::bad_alloc();
}

void
operator delete(void *p) noexcept {
    std::free(p);
}

void
operator delete(void *p, std::size_t) noexcept {
    std::free(p);
}

namespace nixl_tracing_test {

TEST_F(tracingTest, PostAndStatusAllocateNothingWithTracingOn) {
    using nixl_agent_test::regList;
    using nixl_agent_test::testBuffer;
    using nixl_agent_test::xferList;
    testBuffer src(4096, 9), dst(4096, 10);
    auto init = makeTraced("init", "nop");
    auto target = plainAgent("target");
    for (nixlAgent *a : {init.get(), target.get()}) {
        ASSERT_EQ(NIXL_SUCCESS, addTestBackend(*a, {{"async", "true"}, {"async_polls", "1"}}));
    }
    ASSERT_EQ(NIXL_SUCCESS, init->registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, target->registerMem(regList({dst.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, loadMD(*target, *init));
    nixlXferReqH *req = nullptr;
    const uint64_t at_create = allocations.load();
    ASSERT_EQ(NIXL_SUCCESS,
              init->createXferReq(
                  NIXL_WRITE, xferList({src.desc()}), xferList({dst.desc()}), "target", req));
    // The count sees libnixl's allocations: making a request allocates.
    EXPECT_GT(allocations.load(), at_create);
    auto transfer = [&] {
        nixl_status_t st = init->postXferReq(req);
        for (int i = 0; i < nixl_agent_test::max_polls && st == NIXL_IN_PROG; ++i) {
            st = init->getXferStatus(req);
        }
        return st;
    };
    // Warm-up: the thread's first span takes its block of span ids, etc.
    for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(NIXL_SUCCESS, transfer());
    }
    const uint64_t before = allocations.load();
    int failed = 0;
    for (int i = 0; i < 1000; ++i) {
        failed += transfer() != NIXL_SUCCESS ? 1 : 0;
    }
    const uint64_t after = allocations.load();
    EXPECT_EQ(failed, 0);
    EXPECT_EQ(after - before, 0u);
    EXPECT_TRUE(nixl_agent_test::holdsPattern(dst, 9));
    ASSERT_EQ(NIXL_SUCCESS, init->releaseXferReq(req));
}

} // namespace nixl_tracing_test
