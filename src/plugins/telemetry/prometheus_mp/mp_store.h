/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_store.h
 * @brief The per-agent memory-mapped store of the prometheus_mp exporter: its on-disk layout,
 *        the schema derived from core's event table, the writer that updates it in place and
 *        the reader that takes a consistent snapshot of someone else's store.
 *
 * One store per agent, one file per store, named nixl.<pid>.<run marker>.<instance>.mmap in
 * NIXL_TELEMETRY_MULTIPROC_DIR. The layout is a fixed header (nixlMpStoreHeader) followed by
 * slotCount slots (nixlMpStoreSlot), one per row of core's event table. Every field a reader may
 * look at while the writer runs is read and written with __atomic builtins, so a store is never
 * torn at word level; each slot carries a seqlock generation so that a histogram's buckets,
 * sum and last value are read as one snapshot.
 *
 * Liveness is a lock, not a pid: the writer flock()s its file before the file has a name and
 * holds the lock until it is destroyed (or the kernel drops it when the process dies). A reader
 * that can take the lock knows nobody will ever write the store again.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_H

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nixl_telemetry_exporter_plugin.h"
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

/**
 * What core's event table means for the store: one slot per row, the series names of each row,
 * and a hash that changes whenever the table (types, categories, names, status labels) or the
 * layout changes. Immutable after construction, so shareable between threads.
 */
struct nixlMpSchema {
    struct row {
        uint32_t category = 0;
        nixlProm::metricNames names;
        std::string statusLabel;
    };
    std::vector<row> rows;
    uint64_t hash = 0;

    /** Throws std::runtime_error when a row's type is not its index. */
    explicit nixlMpSchema(std::span<const nixl_telemetry_event_info_t> table);

    uint32_t
    slotCount() const noexcept {
        return static_cast<uint32_t>(rows.size());
    }
};

/** Who a store belongs to: the labels of its series. */
struct nixlMpIdentity {
    std::string agentName;
    std::string hostname;
    std::string localRank;
    bool hasLocalRank = false;
    int64_t pid = 0;
    uint64_t instance = 0;
};

/**
 * Creates, locks, initialises and publishes this agent's store, then updates it in place.
 * Thread-safety: one writer thread at a time (the agent's flush thread); readers in any process
 * may run concurrently. The store file stays after destruction (a reader publishes the final
 * values and reaps it); only the lock is released.
 */
class nixlMpStoreWriter {
public:
    /** Throws std::runtime_error naming the directory and errno on failure. */
    nixlMpStoreWriter(const std::string &dir,
                  const nixlMpSchema &schema,
                  const std::vector<double> &boundsUs,
                  const nixlMpIdentity &id);
    ~nixlMpStoreWriter();
    nixlMpStoreWriter(const nixlMpStoreWriter &) = delete;
    nixlMpStoreWriter &
    operator=(const nixlMpStoreWriter &) = delete;

    /** Adds one event; types outside the table return false and change nothing. */
    bool
    record(uint32_t type, uint64_t value) noexcept;

    /** Stamps lastUpdateNs with CLOCK_MONOTONIC now. */
    void
    touch() noexcept;

    const std::string &
    path() const noexcept {
        return path_;
    }

private:
    std::string path_;
    int fd_ = -1;
    void *map_ = nullptr;
    size_t size_ = 0;
    std::vector<uint32_t> categories_;
    std::vector<double> boundsUs_;

    nixlMpStoreHeader *
    header() const noexcept {
        return static_cast<nixlMpStoreHeader *>(map_);
    }

    nixlMpStoreSlot *
    slot(uint32_t i) const noexcept;
};

/** A consistent copy of one slot. */
struct nixlMpSlotSnapshot {
    uint64_t counter = 0;
    uint64_t gauge = 0;
    std::vector<uint64_t> buckets; ///< bucketCount + 1 non-cumulative counts
    /**
     * Its writer departed in the middle of updating it (seq odd for good): no consistent value
     * exists, so the slot's series are not published for this store.
     */
    bool torn = false;
    /**
     * A live writer kept updating it through every re-read the budget allowed: published as
     * read (each word is a value the writer stored, but sum and buckets may be one burst
     * apart). Informational; tests of the seqlock skip such slots.
     */
    bool unsettled = false;
};

/** Re-reads of one slot while its seq says the writer is updating it (live writers only). */
inline constexpr uint64_t kSlotRetries = 128;
/** Re-reads of all slots of all stores in one scrape; after that every slot is read once. */
inline constexpr uint64_t kScrapeRetries = 4096;

/**
 * The work of one scrape's store reads, bounded whatever the directory holds: a slot is copied
 * once, plus at most kSlotRetries re-reads while a live writer updates it, and all re-reads of
 * a scrape share kScrapeRetries. A departed writer cannot finish an update, so its slot is
 * never re-read. No sleeps. Counted, so tests check the bound without timing.
 */
struct nixlMpReadBudget {
    uint64_t retriesLeft = kScrapeRetries;
    uint64_t copies = 0; ///< slot copies made (first reads and re-reads)
    uint64_t torn = 0; ///< slots of departed writers with no consistent value
    uint64_t unsettled = 0; ///< slots of live writers published as read after the retries
};

/** A consistent copy of one store plus what the reader learnt about its writer. */
struct nixlMpStoreSnapshot {
    std::string path;
    nixlMpIdentity id;
    uint64_t lastUpdateNs = 0;
    std::vector<double> boundsUs;
    std::vector<nixlMpSlotSnapshot> slots;
    bool departed = false; ///< the reader could lock the store: no writer will touch it again
};

enum class nixlMpReadStatus {
    OK,
    VANISHED, ///< the file went away (reaped by someone else); skip quietly
    FOREIGN, ///< not a regular file owned by this user; ignored
    REFUSED, ///< wrong magic, layout, schema, slot count or size
    UNREADABLE, ///< open/mmap failed for another reason
};

/**
 * Opens (openStoreFile) and validates a store, probes its lock and copies it within budget
 * (a private one when null). out->departed says whether the
 * lock could be taken (also on REFUSED, so a refused leftover can be reaped); on any status but
 * OK, *why says what was wrong. Never throws.
 */
nixlMpReadStatus
readStore(const std::string &path,
          const nixlMpSchema &schema,
          nixlMpStoreSnapshot *out,
          std::string *why,
          nixlMpReadBudget *budget = nullptr) noexcept;

/**
 * Opens path for reading without ever blocking or following a link: non-regular files (a FIFO
 * named like a store would block open() forever) and files of another user are refused from
 * lstat, before any open, and again from fstat on the descriptor. Returns the descriptor, or -1
 * with *status (VANISHED, FOREIGN or UNREADABLE) and *why set.
 */
int
openStoreFile(const std::string &path, nixlMpReadStatus *status, std::string *why) noexcept;

/** CLOCK_MONOTONIC in nanoseconds (host-wide, comparable between processes). */
uint64_t
monotonicNs() noexcept;

/** Replaces invalid UTF-8 and control bytes with '?', so a label value always parses. */
std::string
sanitizeLabel(std::string_view s);

/** True for names a store file has: nixl.<...>.mmap. */
bool
isStoreName(std::string_view name) noexcept;

/** True for a store being staged (filesystems without O_TMPFILE): .nixl.<...>.staging. */
bool
isStagingName(std::string_view name) noexcept;

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_H
