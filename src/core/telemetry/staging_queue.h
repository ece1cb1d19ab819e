/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file staging_queue.h
 * @brief The bounded queue between the transfer path and an agent's flush thread.
 *
 * Producers (any thread calling the agent) append fixed-size events; the flush thread takes all
 * of them at once. Each producer thread gets a lane of its own: a single-producer,
 * single-consumer ring of `capacity` events, allocated the first time that thread records
 * for this agent. So a push, after a thread's first, takes no lock, does no atomic
 * read-modify-write (one release store publishes the events), never allocates and makes no
 * syscall: the transfer path keeps the single lock the architecture allows it (the agent's).
 * A drain walks the lanes under a mutex that producers take only to register.
 *
 * A drain returns at most drainChunk() events (by default kDefaultDrainChunk, 1 MiB of events,
 * and never more than the lanes hold): the consumer's buffer is allocated once at that size,
 * not at lanes x capacity, so a huge NIXL_TELEMETRY_BUFFER_SIZE cannot make the one allocation
 * fail and stop draining. The consumer calls drainPending until it returns an empty span (or a
 * bound it sets); the next drain resumes at the lane where the previous one ran out of room, so
 * a busy lane cannot starve the others.
 *
 * A pushed slot whose reserved word is kSlotTicksToMicros carries a tick interval; the drain
 * returns it in microseconds with the reserved word zero (see recordTransferTicks).
 *
 * When a lane has no room the newest events are refused (drop-newest) and counted; a batch goes
 * in whole or not at all, so an exporter never sees half of a completed transfer. Events are
 * stored in their ABI form (reserved word zero, or a data path) so the drained buffer goes to the exporter as
 * it is. A drain returns each lane's events in the order they were pushed, lane after lane
 * (events of different threads are not ordered with each other; they never were). A lane's
 * events may be split across two drains when the chunk fills, so a batch reaches the exporter
 * whole within one flush but possibly in two exportEvents calls.
 *
 * Memory: one lane per (thread, queue) pair. When a thread ends, its lanes are handed back
 * (a thread_local destructor) and the next thread that records for that queue takes one over,
 * pending events and all, instead of allocating; lanes are freed with the queue. So a server
 * whose thread pools churn keeps as many lanes as it had threads recording at once.
 *
 * Thread-safety: tryPush/tryPushBatch/numDropped from any thread; drainPending and
 * takeNumDropped from one consumer thread at a time (the span drainPending returns stays valid
 * until that consumer's next drainPending).
 */
#ifndef NIXL_SRC_CORE_TELEMETRY_STAGING_QUEUE_H
#define NIXL_SRC_CORE_TELEMETRY_STAGING_QUEUE_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "telemetry/telemetry_event.h"

namespace nixl_telemetry_internal {

/** Per thread: the lanes it used most recently, by queue id (see myLane). */
struct laneCache {
    static constexpr size_t kEntries = 8;
    struct entry {
        uint64_t queue = 0;
        void *lane = nullptr;
    };
    entry entries[kEntries];
    size_t next = 0; ///< round-robin replacement
};

// constinit: statically initialised, so an access is a TLS address computation, no guard.
// initial-exec: a fixed offset from the thread pointer instead of a __tls_get_addr call per
// push (libnixl.so is a shared library); 136 bytes of the static TLS surplus, as the tracer's.
extern thread_local constinit laneCache tlsLanes __attribute__((tls_model("initial-exec")));

/**
 * A slot's reserved word holding this marks its value as a TSC/steady tick interval
 * (nixlFastClock::ticks_t) that the drain converts to whole microseconds and clears the mark:
 * the transfer path stores the raw interval and the flush thread does the arithmetic. The
 * high bit, so that it never meets a data path id (nixl_xfer_path.h), which the bytes and
 * request events carry in the same word.
 */
inline constexpr uint32_t kSlotTicksToMicros = 0x80000000u;

} // namespace nixl_telemetry_internal

class nixlTelemetryStagingQueue {
public:
    /** Default most events one drainPending returns: 65536 events, 1 MiB. */
    static constexpr size_t kDefaultDrainChunk = size_t{1} << 16;

    /** capacity: events each producer thread can have pending; at least 1 (else
     *  std::invalid_argument). drain_chunk: most events one drainPending returns; at least 1
     *  (else std::invalid_argument). */
    explicit nixlTelemetryStagingQueue(size_t capacity, size_t drain_chunk = kDefaultDrainChunk);
    ~nixlTelemetryStagingQueue();

    nixlTelemetryStagingQueue(const nixlTelemetryStagingQueue &) = delete;
    nixlTelemetryStagingQueue &
    operator=(const nixlTelemetryStagingQueue &) = delete;

    /** Appends one event; false (and counted as dropped) when this thread's lane is full. */
    bool
    tryPush(const nixlTelemetryEvent &event) noexcept {
        return tryPushBatch(&event, 1);
    }

    /** Appends all n events or none; on refusal all n are counted as dropped. */
    bool
    tryPushBatch(const nixlTelemetryEvent *events, size_t n) noexcept {
        return n == 0 || tryPushWith(n, [events](size_t i) { return events[i].toAbi(); });
    }

    /**
     * Appends n events (n >= 1) all or none, the i-th being fill(i) (a
     * nixl_telemetry_event_abi_t), written straight into this thread's lane. On refusal all n
     * are counted as dropped. Inline, for the transfer path.
     */
    template<typename Fill>
    [[gnu::always_inline]] bool
    tryPushWith(size_t n, Fill &&fill) noexcept {
        lane *l = n <= capacity_ ? myLane() : nullptr;
        if (l == nullptr) [[unlikely]] {
            droppedUnlaned_.fetch_add(n, std::memory_order_relaxed);
            return false;
        }
        const uint64_t t = reserve(*l, n);
        if (t == kNoRoom) {
            return false;
        }
        for (size_t i = 0; i < n; ++i) {
            l->slots[(t + i) & l->mask] = fill(i);
        }
        // Release publishes the slots before the new position.
        l->tail.store(t + n, std::memory_order_release);
        return true;
    }

    /**
     * Appends N events all or none, as tryPushWith with a count known at compile time (the
     * transfer path's four events): the writes are unrolled and fill folds to the event it
     * returns for each I. stamp() is called once, after this thread's lane was found and room
     * reserved, whether or not the events fit; fill(std::integral_constant<size_t, I>, v) gets
     * its value v, which is returned. So a clock read in stamp() comes after the lane lookup
     * (docs/telemetry.md, section 7, for why that is cheaper) and right before the writes.
     */
    template<size_t N, typename Stamp, typename Fill>
    [[gnu::always_inline]] uint64_t
    tryPushFixed(Stamp &&stamp, Fill &&fill) noexcept {
        static_assert(N >= 1);
        lane *l = N <= capacity_ ? myLane() : nullptr;
        if (l == nullptr) [[unlikely]] {
            droppedUnlaned_.fetch_add(N, std::memory_order_relaxed);
            return stamp();
        }
        const uint64_t t = reserve(*l, N);
        const uint64_t v = stamp();
        if (t == kNoRoom) {
            return v;
        }
        [&]<size_t... I>(std::index_sequence<I...>) {
            ((l->slots[(t + I) & l->mask] = fill(std::integral_constant<size_t, I>{}, v)), ...);
        }(std::make_index_sequence<N>{});
        // Release publishes the slots before the new position.
        l->tail.store(t + N, std::memory_order_release);
        return v;
    }

    /**
     * Takes up to drainChunk() pending events, each lane's oldest first, starting at the lane
     * where the previous drain stopped for lack of room. Empty when nothing is pending (or,
     * only if no memory at all can be had for the buffer, nothing could be taken this time).
     * Consumer only.
     */
    std::span<const nixl_telemetry_event_abi_t>
    drainPending() noexcept;

    /**
     * Hands over the buffer of the last drainPending (its span stays valid in the returned
     * vector): for a consumer abandoned inside an exporter call that still reads it.
     */
    std::vector<nixl_telemetry_event_abi_t>
    releaseDrained() noexcept {
        return std::move(drained_);
    }

    /** Most events one drainPending returns. */
    size_t
    drainChunk() const noexcept {
        return drainChunk_;
    }

    /** lanes x capacity: at most this many events are pending at once. Any thread. */
    size_t
    pendingBound() const;

    /** Events refused since the last call, and resets the count. Consumer only. */
    uint64_t
    takeNumDropped() noexcept;

    /** Events refused and not yet taken. Any thread. */
    uint64_t
    numDropped() const noexcept;

    /** Maximum number of pending events per producer thread. */
    size_t
    capacity() const noexcept {
        return capacity_;
    }

    /** Lanes allocated: the most producer threads that recorded at once (any thread). */
    size_t
    numLanes() const;

    /**
     * Hands every lane of the calling thread, in every queue, back for reuse. Runs by itself when
     * a thread that recorded ends; public for tests. The thread may record again afterwards
     * (it then takes a lane anew).
     */
    static void
    releaseLanesOfThisThread() noexcept;

private:
    // One producer thread's ring. Positions count events since the lane was made (never wrap
    // in practice: 2^64 events); slot index = position & mask.
    struct lane {
        // The producer's line: everything a push reads or writes, so a push touches this line
        // and the slots it fills, nothing else of the lane.
        alignas(64) std::atomic<uint64_t> tail{0};
        uint64_t cachedHead = 0; ///< stale copy of head; refreshed only when the lane looks full
        // Events this lane refused, ever. Written by the owner only (load + store, no
        // read-modify-write: a full lane is when the transfer path is busiest), read by anyone.
        std::atomic<uint64_t> dropped{0};
        uint64_t mask = 0;
        nixl_telemetry_event_abi_t *slots = nullptr; ///< owned by storage
        // The consumer's line, apart so that a drain's store does not steal the producer's.
        alignas(64) std::atomic<uint64_t> head{0};
        std::thread::id owner; ///< none when its thread ended (lanesMutex_)
        std::unique_ptr<nixl_telemetry_event_abi_t[]> storage;
    };
    // Two lines at least: head, 64-aligned after 40 bytes of producer fields, starts the second.
    static_assert(alignof(lane) == 64 && sizeof(lane) >= 128);

    static constexpr uint64_t kNoRoom = ~uint64_t{0};

    /**
     * The lane position at which n events go (its tail), or kNoRoom when the lane cannot take
     * them (then counted as dropped). Producer only.
     */
    [[gnu::always_inline]] uint64_t
    reserve(lane &l, size_t n) noexcept {
        // Relaxed: only this thread writes tail.
        const uint64_t t = l.tail.load(std::memory_order_relaxed);
        if (n > capacity_ - (t - l.cachedHead)) {
            // Looks full: refresh the consumer's position. Acquire pairs with the drain's
            // release store, so its reads of the slots we are about to reuse are done. Kept
            // inline: a lane stays full for a whole flush interval when the flush falls behind,
            // and then every push comes here.
            l.cachedHead = l.head.load(std::memory_order_acquire);
            if (n > capacity_ - (t - l.cachedHead)) {
                l.dropped.store(l.dropped.load(std::memory_order_relaxed) + n,
                                std::memory_order_relaxed);
                return kNoRoom;
            }
        }
        return t;
    }

    /** This thread's lane, made on first use; null if it cannot be allocated. A scan of a few
     *  thread-local entries is cheaper than any map; a miss takes the locked registerLane. */
    [[gnu::always_inline]] lane *
    myLane() noexcept {
        for (const auto &e : nixl_telemetry_internal::tlsLanes.entries) {
            if (e.queue == id_) {
                return static_cast<lane *>(e.lane);
            }
        }
        return registerLane();
    }

    lane *
    registerLane() noexcept;

    const size_t capacity_;
    const size_t drainChunk_;
    const uint64_t id_; ///< never reused, so a thread's cache cannot match a dead queue
    mutable std::mutex lanesMutex_; ///< lanes_ (registration, drain)
    std::vector<std::unique_ptr<lane>> lanes_;
    std::vector<nixl_telemetry_event_abi_t> drained_; ///< the consumer's; valid until next drain
    size_t nextLane_ = 0; ///< where the next drain starts (lanesMutex_)
    /** Refusals with no lane to count them (batch over capacity, no memory for a lane). */
    std::atomic<uint64_t> droppedUnlaned_{0};
    /** Sum of all drop counters at the last takeNumDropped (lanesMutex_). */
    uint64_t droppedTaken_ = 0;

    uint64_t
    droppedTotalLocked() const noexcept;
};

#endif // NIXL_SRC_CORE_TELEMETRY_STAGING_QUEUE_H
