/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file chrome_ring.h
 * @brief The per-thread byte ring between a thread's event path and the session's writer
 *        thread, and the enqueue of one record into it.
 */
#ifndef NIXL_TRACE_CHROME_RING_H
#define NIXL_TRACE_CHROME_RING_H

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "chrome_json.h"
#include "chrome_record.h"

/**
 * Single-producer single-consumer ring of bytes holding whole records. The producer is one
 * thread's event path, the consumer the session's writer thread. Never blocks: a record that
 * does not fit is refused whole.
 */
class nixlChromeRing {
public:
    explicit nixlChromeRing(size_t capacity) // a power of two
        : data_(new char[capacity]),
          capacity_(capacity) {}
    nixlChromeRing(const nixlChromeRing &) = delete;
    nixlChromeRing &
    operator=(const nixlChromeRing &) = delete;

    /** Producer: whether n more bytes fit now (then put() them and publish(n)). */
    bool
    fits(size_t n) noexcept {
        const uint64_t head = head_.load(std::memory_order_relaxed);
        if (n <= capacity_ - (head - cachedTail_)) {
            return true;
        }
        cachedTail_ = tail_.load(std::memory_order_acquire);
        return n <= capacity_ - (head - cachedTail_);
    }

    /** Producer: where n bytes past the head go when they do not wrap (within fits()),
     *  else nullptr (then put() them). */
    char *
    contiguous(size_t n) noexcept {
        const size_t off = static_cast<size_t>(head_.load(std::memory_order_relaxed)) &
            (capacity_ - 1);
        return n <= capacity_ - off ? data_.get() + off : nullptr;
    }

    /** Producer: copies len bytes to offset `at` past the unpublished head (within fits()). */
    void
    put(size_t at, const void *p, size_t len) noexcept {
        const size_t off = (static_cast<size_t>(head_.load(std::memory_order_relaxed)) + at) &
            (capacity_ - 1);
        if (len <= capacity_ - off) {
            std::memcpy(data_.get() + off, p, len);
        } else {
            const size_t first = capacity_ - off;
            std::memcpy(data_.get() + off, p, first);
            std::memcpy(data_.get(), static_cast<const char *>(p) + first, len - first);
        }
    }

    /** Producer: makes the n bytes put() so far readable. */
    void
    publish(size_t n) noexcept {
        head_.store(head_.load(std::memory_order_relaxed) + n, std::memory_order_release);
    }

    /**
     * Producer: asks for write ownership of the lines the next records will take (kAheadBytes
     * past the head). The writer thread on another core read those lines when it drained the
     * ring last time round, so each is shared with (or only in) that core's cache; a store to
     * it waits for the line to come back. Requested now, the transfer between two events
     * hides that wait instead of the next event paying it. A hint only: never faults, and a
     * line still being read by the writer is merely fetched early.
     */
    void
    prefetchAhead() noexcept {
        // Each line once: from where the last call stopped (or the head's next line) to
        // kAheadBytes past the head. A prefetch waits for a free fill buffer, so asking again
        // for lines already on their way costs the event path time for nothing.
        const uint64_t head = head_.load(std::memory_order_relaxed);
        const uint64_t last = (head + kAheadBytes) & ~static_cast<uint64_t>(kLine - 1);
        uint64_t at = prefetchedTo_ > head ? prefetchedTo_ :
                                              (head + kLine) & ~static_cast<uint64_t>(kLine - 1);
        for (; at <= last; at += kLine) {
            prefetchForWrite(data_.get() + (static_cast<size_t>(at) & (capacity_ - 1)));
        }
        prefetchedTo_ = at;
    }

    /**
     * Producer, after an event (queued or dropped): true once per drain when the ring is at
     * least half full, i.e. the writer is late and should be woken. Reads the consumer's tail
     * only when the producer's cached view already says half full (once per half ring of
     * records while the writer keeps up), and asks again only after the writer consumed
     * something, so a writer that is slow to come costs one wake, not one per event.
     */
    bool
    needsWriter() noexcept {
        const uint64_t head = head_.load(std::memory_order_relaxed);
        if (head - cachedTail_ < capacity_ / 2) {
            return false;
        }
        cachedTail_ = tail_.load(std::memory_order_acquire);
        if (head - cachedTail_ < capacity_ / 2 || cachedTail_ == wokeAtTail_) {
            return false;
        }
        wokeAtTail_ = cachedTail_;
        return true;
    }

    /** Consumer: bytes published and not consumed. */
    size_t
    used() const noexcept {
        return static_cast<size_t>(head_.load(std::memory_order_acquire) -
                                   tail_.load(std::memory_order_relaxed));
    }

    /** Consumer: copies n bytes starting `at` bytes past the tail (within used()) to dst. */
    void
    peek(size_t at, void *dst, size_t n) const noexcept;

    /** Consumer: releases n bytes. */
    void
    consume(size_t n) noexcept {
        tail_.store(tail_.load(std::memory_order_relaxed) + n, std::memory_order_release);
    }

    /**
     * Producer: counts a record that did not fit. The producer's own counter, next to its head:
     * a plain increment, not a locked add on a line every thread shares (when the writer falls
     * behind, most events take this path). The writer adds it to the session's count.
     */
    void
    countDrop() noexcept {
        dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

    /** Consumer: drops counted since the last call. */
    uint64_t
    takeDrops() noexcept {
        const uint64_t d = dropped_.load(std::memory_order_relaxed);
        const uint64_t n = d - droppedTaken_;
        droppedTaken_ = d;
        return n;
    }

    /** Set (under the session registry lock) when the producing thread has exited. */
    std::atomic<bool> orphaned{false};

    // Set once before the ring is registered (the writer reads them after its registry lock).
    std::string pidTid; // "\"pid\":P,\"tid\":T"
    std::string threadLine; // the thread_name metadata line
    bool threadLineWritten = false; // writer thread only

private:
    static constexpr size_t kLine = 64;
    /** About one transfer's records (a post span with three attributes is ~180 bytes). */
    static constexpr size_t kAheadBytes = 256;

    static void
    prefetchForWrite(const char *p) noexcept {
#if defined(__x86_64__)
        // PREFETCHW (a NOP on CPUs without it); __builtin_prefetch(p, 1) emits PREFETCHT0
        // unless the whole plugin is built for a CPU with PRFCHW.
        asm volatile("prefetchw %0" : : "m"(*p));
#else
        __builtin_prefetch(p, 1, 3);
#endif
    }

    std::unique_ptr<char[]> data_;
    const size_t capacity_;
    alignas(64) std::atomic<uint64_t> head_{0}; // written by the producer
    uint64_t cachedTail_ = 0; // producer's last view of tail_
    uint64_t prefetchedTo_ = 0; // producer: ring position up to which prefetchAhead() asked
    uint64_t wokeAtTail_ = ~uint64_t{0}; // producer: the tail when it last woke the writer
    std::atomic<uint64_t> dropped_{0}; // written by the producer only
    uint64_t droppedTaken_ = 0; // consumer's part of dropped_ already counted
    alignas(64) std::atomic<uint64_t> tail_{0}; // written by the consumer
};

inline void
nixlChromeRing::peek(size_t at, void *dst, size_t n) const noexcept {
    const size_t off = (static_cast<size_t>(tail_.load(std::memory_order_relaxed)) + at) &
        (capacity_ - 1);
    const size_t first = std::min(n, capacity_ - off);
    std::memcpy(dst, data_.get() + off, first);
    std::memcpy(static_cast<char *>(dst) + first, data_.get(), n - first);
}

/** Producer: queues the record of ev on r whole, or returns false (it does not fit). */
inline bool
nixlChromeEnqueue(nixlChromeRing &r, const nixl_trace_event_t &ev, bool span, uint32_t agent,
                  const nixlChromeRecord::tables &t) noexcept {
    size_t keyLens[nixlChromeRecord::kKeyLenCache];
    const size_t n = nixlChromeRecord::size(ev, span, t, keyLens);
    if (!r.fits(n)) {
        return false;
    }
    if (char *w = r.contiguous(n)) {
        // The usual case: copies of constant size (header, lengths, values) inline.
        nixlChromeRecord::encode(
            [w](size_t at, const void *p, size_t len) {
                nixlChromeCopyBytes(w + at, static_cast<const char *>(p), len);
            },
            ev, span, agent, t, n, keyLens);
    } else {
        nixlChromeRecord::encode([&r](size_t at, const void *p, size_t len) { r.put(at, p, len); },
                                 ev, span, agent, t, n, keyLens);
    }
    r.publish(n);
    r.prefetchAhead();
    return true;
}

#endif // NIXL_TRACE_CHROME_RING_H
