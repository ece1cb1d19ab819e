/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file bindings_handle_table.h
 * @brief The tables of live handles behind nixl._bindings.nixlAgent: the ints Python sees for
 *        transfer requests and prepared lists, checked before use and locked per handle.
 *        Internal to src/bindings/python.
 *
 * Thread safety: every member and function may be called from any number of threads at once
 * (see nixlPyHandleTable).
 */
#ifndef NIXL_BINDINGS_PYTHON_BINDINGS_HANDLE_TABLE_H
#define NIXL_BINDINGS_PYTHON_BINDINGS_HANDLE_TABLE_H

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <type_traits>

#include "nixl_types.h"

namespace nixl_py {

/**
 * The live handles of one kind (transfer requests, prepared lists) as the ints Python sees.
 *
 * A handle is tag << 47 | generation << 22 | slot. The slot indexes a table of slots, each
 * with its own lock, the C++ pointer and the generation of its current occupant. The tag is
 * unique among live tables of the process (two per agent), so a handle of one agent, or of the
 * other kind, is unknown to this table. Releasing a handle bumps its slot's generation, so the
 * int of a released handle does not match again when the slot, or the allocator's address, is
 * reused (a pointer int could not tell the two apart), and a freed slot is reused only once 64
 * others are free: the int of a released handle comes back only after 2^25 reuses of its slot,
 * i.e. after at least 2^31 handles were made. Lookups index an array: no hashing and no
 * allocation per handle.
 *
 * A caller holds the slot's lock for the whole C++ call that uses the handle: shared where calls
 * on one handle may overlap (a prepared list used by many makeXferReq), exclusive where they may
 * not (post/status/release of one request). Slots live in chunks that are never freed before the
 * table, so find() needs no lock; a slot's fields are read and written under its lock only.
 *
 * Thread safety: every member may be called from any number of threads at once.
 */
class nixlPyHandleTable {
public:
    static constexpr unsigned kSlotBits = 22; // 4M live handles of one kind per agent
    static constexpr unsigned kGenBits = 25;
    static constexpr unsigned kTagBits = 16; // tag << 47 keeps handles below 2^63
    static constexpr unsigned kChunkBits = 10;
    static constexpr uint32_t kChunkSlots = 1u << kChunkBits;
    static constexpr uint32_t kMaxChunks = 1u << (kSlotBits - kChunkBits);
    static constexpr uint32_t kGenLimit = 1u << kGenBits;
    static constexpr size_t kMinFree = 64;

    struct Slot {
        std::shared_mutex mutex;
        // Guarded by mutex.
        uintptr_t ptr = 0;
        uint32_t gen = 1;
        bool live = false;
    };

    /** Takes a process-unique tag; std::bad_alloc when 65535 tables are alive. */
    nixlPyHandleTable();
    nixlPyHandleTable(const nixlPyHandleTable &) = delete;
    nixlPyHandleTable &
    operator=(const nixlPyHandleTable &) = delete;
    ~nixlPyHandleTable();

    /** A free slot for a handle about to be made (not live yet); std::bad_alloc when the table
     *  is full. Reserving before the C++ call means a made object never lacks a handle. */
    uint32_t
    reserve();
    /** Makes the reserved slot live for ptr and returns its handle. */
    uint64_t
    publish(uint32_t slot, uintptr_t ptr);
    /** Returns a reserved slot that was never published, or one retire() ended. */
    void
    recycle(uint32_t slot);

    /** The slot a handle of this table names, or nullptr for any other value. Does not say the
     *  handle is live: lock the slot, then ask matches(). */
    Slot *
    find(uint64_t h) const noexcept {
        const uint64_t gen = (h >> kSlotBits) & (kGenLimit - 1);
        const auto idx = static_cast<uint32_t>(h & ((1u << kSlotBits) - 1));
        if ((h >> (kSlotBits + kGenBits)) != tag_ || gen == 0) {
            return nullptr;
        }
        Slot *chunk = chunks_[idx >> kChunkBits].load(std::memory_order_acquire);
        return chunk == nullptr ? nullptr : &chunk[idx & (kChunkSlots - 1)];
    }

    /** True when h is the live handle of s (s's lock held). */
    static bool
    matches(const Slot &s, uint64_t h) noexcept {
        return s.live && s.gen == ((h >> kSlotBits) & (kGenLimit - 1));
    }

    /** Ends the live handle of s (s's lock held exclusively); recycle(slotOf(h)) after
     *  unlocking. */
    static void
    retire(Slot &s) noexcept {
        s.live = false;
        s.ptr = 0;
        s.gen = s.gen + 1 == kGenLimit ? 1 : s.gen + 1;
    }

    static uint32_t
    slotOf(uint64_t h) noexcept {
        return static_cast<uint32_t>(h & ((1u << kSlotBits) - 1));
    }

private:
    uint64_t tag_;
    std::array<std::atomic<Slot *>, kMaxChunks> chunks_{};
    std::mutex freeMutex_;
    std::deque<uint32_t> free_; // oldest first; guarded by freeMutex_
    uint32_t made_ = 0; // slots handed out at least once; guarded by freeMutex_
};

/** A reserved slot that goes back to the free list unless published (an exception between
 *  reserve and publish loses no slot). */
class nixlPySlotReservation {
public:
    explicit nixlPySlotReservation(nixlPyHandleTable &t) : table_(t), slot_(t.reserve()) {}
    ~nixlPySlotReservation() {
        if (!published_) {
            table_.recycle(slot_);
        }
    }
    nixlPySlotReservation(const nixlPySlotReservation &) = delete;
    nixlPySlotReservation &
    operator=(const nixlPySlotReservation &) = delete;

    uint64_t
    publish(uintptr_t ptr) {
        published_ = true;
        return table_.publish(slot_, ptr);
    }

private:
    nixlPyHandleTable &table_;
    uint32_t slot_;
    bool published_ = false;
};

/** Throws nixlInvalidParamError("not a live <kind> handle of this agent: <h>"). */
[[noreturn]] void
unknownHandle(const char *kind, uint64_t h);

/** Runs f(pointer) holding h's slot (exclusive or shared) after checking h is live. Called with
 *  the GIL released: a slot lock is never waited for while holding the GIL. */
template<bool Exclusive, class F>
auto
withHandle(nixlPyHandleTable &table, uint64_t h, const char *kind, F &&f) {
    nixlPyHandleTable::Slot *s = table.find(h);
    if (s == nullptr) {
        unknownHandle(kind, h);
    }
    using lockType = std::conditional_t<Exclusive,
                                        std::unique_lock<std::shared_mutex>,
                                        std::shared_lock<std::shared_mutex>>;
    lockType lock(s->mutex);
    if (!nixlPyHandleTable::matches(*s, h)) {
        unknownHandle(kind, h);
    }
    return f(s->ptr);
}

/** Releases h through f(pointer) under its slot's exclusive lock; retires the handle when f
 *  returns NIXL_SUCCESS (otherwise it stays live). Returns f's status or throws its error. */
template<class F>
nixl_status_t
releaseHandle(nixlPyHandleTable &table, uint64_t h, const char *kind, F &&f) {
    nixlPyHandleTable::Slot *s = table.find(h);
    if (s == nullptr) {
        unknownHandle(kind, h);
    }
    nixl_status_t st;
    {
        std::unique_lock lock(s->mutex);
        if (!nixlPyHandleTable::matches(*s, h)) {
            unknownHandle(kind, h);
        }
        st = f(s->ptr);
        if (st == NIXL_SUCCESS) {
            nixlPyHandleTable::retire(*s);
        }
    }
    if (st == NIXL_SUCCESS) {
        table.recycle(nixlPyHandleTable::slotOf(h));
    }
    return st;
}

} // namespace nixl_py

#endif // NIXL_BINDINGS_PYTHON_BINDINGS_HANDLE_TABLE_H
