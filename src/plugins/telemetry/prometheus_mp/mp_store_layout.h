/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_store_layout.h
 * @brief The on-disk format of a prometheus_mp store: the fixed header, the slots, their
 *        offsets (part of the format) and the names store files have. Constants and plain
 *        structs only: nothing here holds state.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_LAYOUT_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_LAYOUT_H

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <time.h>

#include "nixl_xfer_path.h"
#include "prom_schema.h"

namespace nixlPromMp {

/** "NIXLMPS1" little-endian; written last, so a store with it is fully initialised. */
inline constexpr uint64_t kStoreMagic = 0x3153504d4c58494eull;
/**
 * The store schema version: bumped by every change to nixlMpStoreHeader or nixlMpStoreSlot, and
 * by every renumbering of core's event types (a slot's index is its type). 2: issue 12 inserted
 * agent_trace_phases_dropped at 20 and moved events-dropped to 21. The schema hash would refuse
 * such a store too, but only the version says why in terms an operator can act on.
 */
inline constexpr uint32_t kLayoutVersion = 2;
/** Most histogram bounds a store can hold; one more bucket counts the overflow (+Inf). */
inline constexpr size_t kMaxBuckets = 32;
inline constexpr size_t kAgentNameLen = 256;
inline constexpr size_t kHostnameLen = 128;
inline constexpr size_t kLocalRankLen = 64;
inline constexpr uint32_t kFlagHasLocalRank = 1u;

/**
 * Per-path sums (issue 34) in the otherwise unused buckets of the four transfer rows (bytes and
 * requests, by direction; found by name, nixlProm::pathRoleOf): buckets[path] is the sum of the
 * row's values on that path (nixl_xfer_path_t 1..8), and in the request rows
 * buckets[kFallbackWord(backend, reason)] counts fallbacks. Writers before issue 34 leave
 * those words zero and collectors before it never read them, so the layout version stays.
 */
constexpr size_t
kFallbackWord(size_t backend, uint32_t reason) noexcept {
    return NIXL_XFER_PATH_COUNT + backend * (NIXL_PATH_FALLBACK_COUNT - 1) + (reason - 1);
}
static_assert(NIXL_XFER_PATH_COUNT <= kMaxBuckets + 1);
static_assert(kFallbackWord(nixlProm::kPathBackendCount - 1, NIXL_PATH_FALLBACK_COUNT - 1) <=
              kMaxBuckets);

/** Fixed header at offset 0 of every store. Offsets are part of the format (see README). */
struct nixlMpStoreHeader {
    uint64_t magic; ///< kStoreMagic once initialised
    uint32_t layoutVersion; ///< kLayoutVersion (the store schema version)
    uint32_t slotCount; ///< rows of the writer's event table
    uint64_t schemaHash; ///< nixlMpSchema::hash of the writer's event table
    uint64_t totalSize; ///< bytes: header + slotCount slots
    int64_t pid; ///< writer's pid, a label only (liveness is the lock)
    uint64_t instance; ///< per-process agent counter, label agent_instance
    uint64_t lastUpdateNs; ///< CLOCK_MONOTONIC of the writer's last export (atomic)
    uint32_t bucketCount; ///< number of bounds in bucketBoundsUs (<= kMaxBuckets)
    uint32_t flags; ///< kFlagHasLocalRank
    char agentName[kAgentNameLen]; ///< NUL-terminated, truncated
    char hostname[kHostnameLen]; ///< NUL-terminated
    char localRank[kLocalRankLen]; ///< NUL-terminated; meaningful with kFlagHasLocalRank
    double bucketBoundsUs[kMaxBuckets]; ///< strictly increasing histogram bounds, microseconds
};

/**
 * One event type. seq is a seqlock generation: odd while the (single) writer updates the slot.
 * counter: running sum of values (bytes, counts, errors, drops, or microseconds for durations).
 * gauge: last value. buckets: non-cumulative histogram counts, index = first bound >= value,
 * buckets[bucketCount] = overflow; used for duration types only.
 */
struct nixlMpStoreSlot {
    uint64_t seq;
    uint64_t counter;
    uint64_t gauge;
    uint64_t buckets[kMaxBuckets + 1];
};

static_assert(offsetof(nixlMpStoreHeader, magic) == 0);
static_assert(offsetof(nixlMpStoreHeader, layoutVersion) == 8);
static_assert(offsetof(nixlMpStoreHeader, slotCount) == 12);
static_assert(offsetof(nixlMpStoreHeader, schemaHash) == 16);
static_assert(offsetof(nixlMpStoreHeader, totalSize) == 24);
static_assert(offsetof(nixlMpStoreHeader, pid) == 32);
static_assert(offsetof(nixlMpStoreHeader, instance) == 40);
static_assert(offsetof(nixlMpStoreHeader, lastUpdateNs) == 48);
static_assert(offsetof(nixlMpStoreHeader, bucketCount) == 56);
static_assert(offsetof(nixlMpStoreHeader, flags) == 60);
static_assert(offsetof(nixlMpStoreHeader, agentName) == 64);
static_assert(offsetof(nixlMpStoreHeader, hostname) == 320);
static_assert(offsetof(nixlMpStoreHeader, localRank) == 448);
static_assert(offsetof(nixlMpStoreHeader, bucketBoundsUs) == 512);
static_assert(sizeof(nixlMpStoreHeader) == 768);
static_assert(offsetof(nixlMpStoreSlot, seq) == 0);
static_assert(offsetof(nixlMpStoreSlot, counter) == 8);
static_assert(offsetof(nixlMpStoreSlot, gauge) == 16);
static_assert(offsetof(nixlMpStoreSlot, buckets) == 24);
static_assert(sizeof(nixlMpStoreSlot) == 288);
static_assert(__atomic_always_lock_free(sizeof(uint64_t), nullptr));

/** Bytes of a store with n slots. */
constexpr size_t
storeSize(uint32_t slots) noexcept {
    return sizeof(nixlMpStoreHeader) + static_cast<size_t>(slots) * sizeof(nixlMpStoreSlot);
}

/** True for names a store file has: nixl.<...>.mmap. */
inline bool
isStoreName(std::string_view name) noexcept {
    return name.size() > 10 && name.starts_with("nixl.") && name.ends_with(".mmap");
}

/** True for a store being staged (filesystems without O_TMPFILE): .nixl.<...>.staging. */
inline bool
isStagingName(std::string_view name) noexcept {
    return name.size() > 14 && name.starts_with(".nixl.") && name.ends_with(".staging");
}

/** CLOCK_MONOTONIC in nanoseconds (host-wide, comparable between processes): lastUpdateNs. */
inline uint64_t
monotonicNs() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_LAYOUT_H
