/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file reg_layout.h
 * @brief The bytes of a registration table (reg_table.h has the whole story): the header, the
 *        reader records, the slots after them, and where each starts. Owner and peers of any
 *        build read the same object, so any change here bumps reg_table_version.
 *
 * Thread safety: types and pure functions; the records' atomics are the fence's (reg_table.h).
 */
#ifndef NIXL_SRC_UTILS_REGTABLE_REG_LAYOUT_H
#define NIXL_SRC_UTILS_REGTABLE_REG_LAYOUT_H

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nixlReg {

inline constexpr uint64_t reg_table_magic = 0x3142544355584e4eull; // "NNXUCTB1" (born in UCX)
inline constexpr uint32_t reg_table_version = 2;
/** Peer engines that can map one table at once (records of dead peers are reclaimed). */
inline constexpr size_t reg_table_readers = 256;
/** Copies one peer engine may run into one table at the same time (threads beyond wait). */
inline constexpr size_t reg_table_marks = 16;
inline constexpr size_t reg_table_header_bytes = 4096;

static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared-memory atomics need 64-bit CAS");
static_assert(std::atomic<int32_t>::is_always_lock_free, "shared-memory atomics need 32-bit CAS");

struct regTableHeader {
    uint64_t magic;
    uint32_t version;
    uint32_t readers;
    uint64_t nonce;
    uint64_t startTime;
    int32_t pid;
    uint32_t marks;
    uint64_t slots;
    uint64_t pidNs; ///< the pid namespace pid means something in (stale-table sweep)
    /** Fences that found a copy in flight and waited for it (diagnostics and tests). */
    uint64_t fenceWaits;
    /**
     * Slots [0, backedSlots) have storage (the owner reserved it, growing; release stores): a
     * reader touches no slot at or past it, since a page of the object tmpfs cannot back is a
     * SIGBUS in the reader. An honest owner reserves a slot before it publishes a registration
     * in it, so only a forged or damaged slot index is refused (version 2).
     */
    uint64_t backedSlots;
};

/** One peer engine's record in a table it mapped. */
struct alignas(64) regTableReader {
    std::atomic<uint64_t> owner; ///< 0 = free, else the reading engine's nonce
    std::atomic<uint64_t> startTime;
    std::atomic<int32_t> pid;
    std::atomic<uint64_t> marks[reg_table_marks]; ///< odd while a copy runs
};

/** Bytes of the reader records, between the header and the slots. */
inline constexpr size_t reg_table_reader_bytes = sizeof(regTableReader) * reg_table_readers;

/** Slots are reserved in steps of this many bytes (one fallocate per 8 Ki slots). */
inline constexpr size_t reg_table_reserve_step = 64 * 1024;

/** Size of a table of slots slots. */
constexpr size_t
tableBytes(size_t slots) noexcept {
    return reg_table_header_bytes + reg_table_reader_bytes + slots * sizeof(uint64_t);
}

/** Bytes to reserve so that slots [0, upto) are backed: whole steps, at most the table. */
constexpr size_t
reserveBytes(size_t slots, size_t upto) noexcept {
    const size_t need = tableBytes(upto);
    const size_t stepped =
        (need + reg_table_reserve_step - 1) / reg_table_reserve_step * reg_table_reserve_step;
    return std::min(stepped, tableBytes(slots));
}

/** Slots that reserved bytes cover (the inverse of tableBytes, at most slots). */
constexpr size_t
slotsIn(size_t bytes, size_t slots) noexcept {
    const size_t fixed = reg_table_header_bytes + reg_table_reader_bytes;
    return bytes <= fixed ? 0 : std::min(slots, (bytes - fixed) / sizeof(uint64_t));
}

} // namespace nixlReg

#endif // NIXL_SRC_UTILS_REGTABLE_REG_LAYOUT_H
