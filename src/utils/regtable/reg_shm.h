/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file reg_shm.h
 * @brief The shared-memory objects behind registration tables: their names
 *        ("/nixl-<tag>-" and 32 random hex digits), the sweep of tables whose owner was killed,
 *        and this process's mappings by name, so that every engine of the process that maps a
 *        table shares one mapping (the fence's acquire and the copier's release then meet at
 *        one address, which ThreadSanitizer needs to see them pair).
 *
 * Thread safety: every function may be called from any thread; the registry of mappings is
 * guarded by a process-wide mutex.
 */
#ifndef NIXL_SRC_UTILS_REGTABLE_REG_SHM_H
#define NIXL_SRC_UTILS_REGTABLE_REG_SHM_H

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "proc_identity.h"

namespace nixlReg {

/** One mmap of a table; unmapped when the last nixlRegTable using it goes. */
struct regMapping {
    void *base = nullptr;
    size_t bytes = 0;
    ~regMapping();
};

/** 1 to 8 lowercase letters or digits (names the backend: "ucx", "lf"). */
bool
wellFormedTag(std::string_view tag);

/** "/nixl-<tag>-" and 32 hex digits from the system's random source: not guessable. */
std::string
randomName(const std::string &tag);

/** A name as randomName makes them; anything else is refused before shm_open sees it. */
bool
wellFormedName(const std::string &name);

/**
 * Unlinks the tables of this uid and pid namespace whose engine's process exited without
 * removing its own (killed): they would otherwise hold their touched pages in /dev/shm until
 * reboot.
 */
void
sweepStale(const procIdentity &self);

/** The process's mapping of table name; nullptr when none. */
std::shared_ptr<regMapping>
findMapping(const std::string &name);

/** Records m as the process's mapping of table name. */
void
rememberMapping(const std::string &name, const std::shared_ptr<regMapping> &m);

/** Drops m, a mapping of table name; the registry forgets it when m held the last reference. */
void
releaseMapping(const std::string &name, std::shared_ptr<regMapping> &m);

} // namespace nixlReg

#endif // NIXL_SRC_UTILS_REGTABLE_REG_SHM_H
