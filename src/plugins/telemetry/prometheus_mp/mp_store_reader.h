/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_store_reader.h
 * @brief The reader of prometheus_mp stores: opens another process's store without blocking,
 *        validates it against this process's schema and copies it consistently within a
 *        bounded budget. Free functions: safe from any thread; a budget belongs to one scrape.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_READER_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_READER_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mp_schema.h"
#include "mp_store_layout.h"

namespace nixlPromMp {

/** A consistent copy of one slot. */
struct nixlMpSlotSnapshot {
    uint64_t counter = 0;
    uint64_t gauge = 0;
    std::vector<uint64_t> buckets; ///< bucketCount + 1 non-cumulative counts
    /** All kMaxBuckets + 1 words of the buckets: the per-path sums of the transfer rows. */
    std::array<uint64_t, kMaxBuckets + 1> words{};
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

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_READER_H
