/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "tracing/trace_context.h"

#include <sys/random.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace nixl::trace {
namespace {

/**
 * splitmix64: one add and three mixing steps per 64 bits. Ids need to be unique and
 * unpredictable enough for tracing, not secret, so a seeded fast generator is enough; the
 * seed comes from the kernel once per thread.
 */
class idGenerator {
public:
    idGenerator() noexcept {
        std::uint64_t seed = 0;
        if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(seed))) {
            // No entropy yet (early boot) or no syscall: clock and thread make threads differ.
            seed = static_cast<std::uint64_t>(
                       std::chrono::steady_clock::now().time_since_epoch().count()) ^
                (std::hash<std::thread::id>{}(std::this_thread::get_id()) << 1);
        }
        state_ = seed;
    }

    std::uint64_t
    next() noexcept {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }

    /** A value that is not zero, so an id made of it is never all zero. */
    std::uint64_t
    nextNonZero() noexcept {
        std::uint64_t v = next();
        while (v == 0) {
            v = next();
        }
        return v;
    }

private:
    std::uint64_t state_ = 0;
};

thread_local idGenerator tl_ids;

} // namespace

void
makeRequestContext(nixl_be_trace_ctx_t &ctx,
                   std::uint64_t correlation_id,
                   const nixl_be_trace_ctx_t *parent) noexcept {
    std::memset(&ctx, 0, sizeof(ctx));
    if (parent != nullptr) {
        std::memcpy(ctx.trace_id, parent->trace_id, sizeof(ctx.trace_id));
    } else {
        const std::uint64_t hi = tl_ids.nextNonZero();
        const std::uint64_t lo = tl_ids.next();
        std::memcpy(ctx.trace_id, &hi, 8);
        std::memcpy(ctx.trace_id + 8, &lo, 8);
    }
    const std::uint64_t span = tl_ids.nextNonZero();
    std::memcpy(ctx.span_id, &span, 8);
    ctx.flags = kTraceFlagSampled;
    ctx.correlation_id = correlation_id;
}

} // namespace nixl::trace
