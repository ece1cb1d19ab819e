/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_store_writer.h
 * @brief The writer of this agent's prometheus_mp store: creates, locks and publishes the file,
 *        then updates its slots in place under each slot's seqlock.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_WRITER_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_WRITER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mp_schema.h"
#include "mp_store_layout.h"

namespace nixlPromMp {

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
    record(uint32_t type, uint64_t value, uint32_t reserved = 0) noexcept;

    /** Stamps lastUpdateNs with CLOCK_MONOTONIC now. */
    void
    touch() noexcept;

    const std::string &
    path() const noexcept {
        return path_;
    }

private:
    /** The path part of an event of a transfer row (mp_store_layout.h); inside the seqlock. */
    void
    recordPathLocked(nixlMpStoreSlot &s,
                     nixlProm::pathRole_t role,
                     uint32_t reserved,
                     uint64_t value) noexcept;
    std::string path_;
    int fd_ = -1;
    void *map_ = nullptr;
    size_t size_ = 0;
    std::vector<uint32_t> categories_;
    std::vector<nixlProm::pathRole_t> roles_; ///< per row, from the schema

    std::vector<double> boundsUs_;

    nixlMpStoreHeader *
    header() const noexcept {
        return static_cast<nixlMpStoreHeader *>(map_);
    }

    nixlMpStoreSlot *
    slot(uint32_t i) const noexcept;
};

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_WRITER_H
