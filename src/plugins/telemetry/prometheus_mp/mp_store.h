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
 *
 * Each concern has its own header, all included here: mp_store_layout.h (the format),
 * mp_schema.h (event table to slots, labels), mp_store_writer.h and mp_store_reader.h.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_H

#include "mp_schema.h"
#include "mp_store_layout.h"
#include "mp_store_reader.h"
#include "mp_store_writer.h"

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_STORE_H
