/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "telemetry/staging_queue.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "common/fast_clock.h"

thread_local constinit nixl_telemetry_internal::laneCache nixl_telemetry_internal::tlsLanes
    __attribute__((tls_model("initial-exec"))){};

namespace {

std::atomic<uint64_t> nextQueueId{1};

using nixl_telemetry_internal::laneCache;
using nixl_telemetry_internal::tlsLanes;

// Live queues, so that a thread's exit can hand its lanes back. Never destroyed: threads may end
// after static destructors ran.
struct queueRegistry {
    std::mutex mutex;
    std::vector<nixlTelemetryStagingQueue *> queues;
};

queueRegistry &
registry() {
    static auto *r = new queueRegistry;
    return *r;
}

// Armed in a thread when it registers its first lane; its destructor runs when the thread ends.
struct threadExitHook {
    bool armed = false;

    ~threadExitHook() {
        if (armed) {
            nixlTelemetryStagingQueue::releaseLanesOfThisThread();
        }
    }
};

thread_local threadExitHook tlsExitHook;

} // namespace

void
nixlTelemetryStagingQueue::releaseLanesOfThisThread() noexcept {
    const std::thread::id self = std::this_thread::get_id();
    queueRegistry &r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    for (nixlTelemetryStagingQueue *q : r.queues) {
        std::lock_guard<std::mutex> l(q->lanesMutex_);
        for (const auto &ln : q->lanes_) {
            if (ln->owner == self) {
                // The mutex orders our last publication before the next owner's first push.
                ln->owner = std::thread::id();
            }
        }
    }
    tlsLanes = laneCache{};
}

nixlTelemetryStagingQueue::nixlTelemetryStagingQueue(size_t capacity, size_t drain_chunk)
    : capacity_(capacity),
      drainChunk_(drain_chunk),
      id_(nextQueueId.fetch_add(1, std::memory_order_relaxed)) {
    if (capacity == 0) {
        throw std::invalid_argument("telemetry staging queue: capacity must be at least 1");
    }
    if (drain_chunk == 0) {
        throw std::invalid_argument("telemetry staging queue: drain chunk must be at least 1");
    }
    if (capacity > (size_t{1} << 40)) {
        throw std::invalid_argument("telemetry staging queue: capacity too large");
    }
    queueRegistry &r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    r.queues.push_back(this);
}

nixlTelemetryStagingQueue::~nixlTelemetryStagingQueue() {
    queueRegistry &r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    std::erase(r.queues, this);
}

size_t
nixlTelemetryStagingQueue::numLanes() const {
    std::lock_guard<std::mutex> lock(lanesMutex_);
    return lanes_.size();
}

size_t
nixlTelemetryStagingQueue::pendingBound() const {
    std::lock_guard<std::mutex> lock(lanesMutex_);
    return lanes_.size() * capacity_; // capacity_ <= 2^40: no overflow for any lane count
}

nixlTelemetryStagingQueue::lane *
nixlTelemetryStagingQueue::registerLane() noexcept {
    const std::thread::id self = std::this_thread::get_id();
    lane *found = nullptr;
    try {
        std::lock_guard<std::mutex> lock(lanesMutex_);
        lane *orphan = nullptr;
        for (const auto &l : lanes_) {
            if (l->owner == self) {
                found = l.get(); // ours, evicted from this thread's cache
                break;
            }
            if (orphan == nullptr && l->owner == std::thread::id()) {
                orphan = l.get(); // its thread ended
            }
        }
        if (found == nullptr && orphan != nullptr) {
            found = orphan;
            found->owner = self;
        }
        if (found == nullptr) {
            auto l = std::make_unique<lane>();
            l->owner = self;
            l->mask = std::bit_ceil(capacity_) - 1;
            // Not value-initialised: every push writes whole slots (reserved word included)
            // before publishing them, and zeroing here would touch all 16 * capacity bytes up
            // front (512 MiB at NIXL_TELEMETRY_BUFFER_SIZE=2^25); pages are used as events come.
            l->storage.reset(new nixl_telemetry_event_abi_t[l->mask + 1]);
            l->slots = l->storage.get();
            found = l.get();
            lanes_.push_back(std::move(l));
        }
        // A lane taken over from an ended thread: lanesMutex_ (which that thread held to give
        // it up) already orders its last publication before us; only the cache needs seeding.
        found->cachedHead = found->head.load(std::memory_order_acquire);
    }
    catch (...) {
        return nullptr; // no memory for a lane: the caller counts the events as dropped
    }
    tlsExitHook.armed = true;
    laneCache::entry &slot = tlsLanes.entries[tlsLanes.next];
    tlsLanes.next = (tlsLanes.next + 1) % laneCache::kEntries;
    slot.queue = id_;
    slot.lane = found;
    return found;
}

uint64_t
nixlTelemetryStagingQueue::droppedTotalLocked() const noexcept {
    // Relaxed: counters; nothing is published through them.
    uint64_t sum = droppedUnlaned_.load(std::memory_order_relaxed);
    for (const auto &l : lanes_) {
        sum += l->dropped.load(std::memory_order_relaxed);
    }
    return sum;
}

uint64_t
nixlTelemetryStagingQueue::takeNumDropped() noexcept {
    std::lock_guard<std::mutex> lock(lanesMutex_);
    const uint64_t total = droppedTotalLocked();
    const uint64_t n = total - droppedTaken_;
    droppedTaken_ = total;
    return n;
}

uint64_t
nixlTelemetryStagingQueue::numDropped() const noexcept {
    std::lock_guard<std::mutex> lock(lanesMutex_);
    return droppedTotalLocked() - droppedTaken_;
}

std::span<const nixl_telemetry_event_abi_t>
nixlTelemetryStagingQueue::drainPending() noexcept {
    drained_.clear();
    std::lock_guard<std::mutex> lock(lanesMutex_);
    const size_t n_lanes = lanes_.size();
    if (n_lanes == 0) {
        return {};
    }
    const size_t target = std::min(drainChunk_, n_lanes * capacity_);
    if (drained_.capacity() < target) {
        // At most one chunk (never lanes x capacity, which at a huge buffer size may not be had
        // in one piece); grows with the lanes up to the chunk, then never again. Halve on
        // failure: a smaller buffer still drains, in more calls; only when not even one event
        // fits does this drain take nothing (and the next one tries again).
        for (size_t want = target; want > drained_.capacity(); want /= 2) {
            try {
                drained_.reserve(want);
                break;
            }
            catch (...) {
            }
        }
    }
    // Bounded by the buffer: push_back below never reallocates.
    const size_t room = std::min(drainChunk_, drained_.capacity());
    const size_t first = nextLane_ < n_lanes ? nextLane_ : 0;
    nextLane_ = 0;
    for (size_t k = 0; k < n_lanes; ++k) {
        const size_t idx = (first + k) % n_lanes;
        lane &l = *lanes_[idx];
        const uint64_t h = l.head.load(std::memory_order_relaxed); // ours
        // Acquire pairs with the producer's release: the slots up to t are written.
        const uint64_t t = l.tail.load(std::memory_order_acquire);
        uint64_t taken = h;
        while (taken != t && drained_.size() < room) {
            nixl_telemetry_event_abi_t ev = l.slots[taken & l.mask];
            if (ev.reserved == nixl_telemetry_internal::kSlotTicksToMicros) {
                ev.value = static_cast<uint64_t>(nixlFastClock::toMicros(ev.value).count());
                ev.reserved = 0;
            }
            drained_.push_back(ev);
            ++taken;
        }
        if (taken != h) {
            // Release: our reads of the slots happen before the producer may reuse them.
            l.head.store(taken, std::memory_order_release);
        }
        if (taken != t) {
            nextLane_ = idx; // out of room: the next drain starts with the rest of this lane
            break;
        }
    }
    return {drained_.data(), drained_.size()};
}
