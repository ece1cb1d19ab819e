/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file reg_readers.h
 * @brief The reader records of a registration table: the one a peer engine claims before its
 *        first copy (taking over the record of a peer that exited when none is free), shared by
 *        every mapping that engine has of the table, and freed with the last of them.
 *
 * Records are keyed by the connection's identity (table, owner engine, reading engine), not by
 * the agent name a peer was loaded under: a peer loaded again, or one blob loaded under 300
 * names, reuses its record, so names alone cannot use up a table's records.
 *
 * Thread safety: claimReader may be called from any thread (a process-wide mutex guards the
 * claims held); a record's fields are atomics shared with other processes (reg_table.h).
 */
#ifndef NIXL_SRC_UTILS_REGTABLE_REG_READERS_H
#define NIXL_SRC_UTILS_REGTABLE_REG_READERS_H

#include <cstdint>
#include <memory>
#include <string>

#include "proc_identity.h"
#include "reg_layout.h"

namespace nixlReg {

/** A reader record this process holds in one table for one engine; the last owner frees it. */
struct regReaderClaim {
    regTableReader *r = nullptr;
    uint64_t tag = 0;
    int index = -1;

    ~regReaderClaim();
};

/** Ends the copies a record shows as running (odd marks): their process is gone. */
void
resetMarks(regTableReader &r);

/**
 * The record of engine self (self_nonce) in table name (owner_nonce), whose reader records
 * start at readers: the one this process already holds for it, else a free one, else one of a
 * peer that exited. nullptr when every record belongs to a live peer.
 */
std::shared_ptr<regReaderClaim>
claimReader(regTableReader *readers,
            const std::string &name,
            const procIdentity &self,
            uint64_t self_nonce,
            uint64_t owner_nonce);

} // namespace nixlReg

#endif // NIXL_SRC_UTILS_REGTABLE_REG_READERS_H
