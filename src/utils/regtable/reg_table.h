/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file reg_table.h
 * @brief An engine's registration table in shared memory, and the deregistration fence built on
 *        it: what lets a same-host peer copy into (or out of) this engine's registrations without
 *        asking it, yet never touch one after deregisterMem returned. Internal; linked into the
 *        UCX backend (direct CMA copies) and the LIBFABRIC backend (shm's initiator-only RMA).
 *        docs/backends/ucx.md ("The registration table and the fence") has the design in prose.
 *
 * Naming: "/nixl-<tag>-" and 32 random hex digits, tag naming the backend ("ucx", "lf"), so a
 * listing of /dev/shm says whose table it is; any engine may open any well-formed name (every
 * check below holds whatever the tag).
 *
 * Parts: reg_layout.h (the bytes), reg_shm.h (names, the stale sweep, the process's mappings),
 * reg_readers.h (reader records); this class creates, opens and reserves tables and runs the
 * fence.
 *
 * Layout of the POSIX shared-memory object (native byte order, one engine owns it):
 *   header (4 KiB): magic, version, owner nonce, pid, start time, slot and reader counts;
 *   readers (reg_table_readers records of 192 bytes): one per peer engine that mapped it
 *     (however many connections, under however many agent names, that engine has to it);
 *   slots (slots x 8 bytes): slot 0 = owner nonce, slot i = registration id or 0.
 *
 * Fence (why a deregistration cannot race a copy). Every atomic below is seq_cst unless named:
 *   copier  (peer engine, per batch of one request, or per RMA operation held to completion):  CAS mark m: even v -> v+1 (enter);
 *                                                     load every slot it copies under;
 *                                                     copy if each equals its registration id;
 *                                                     store m = v+2, release (leave).
 *   owner   (deregisterMem):                          store slot = 0; then for every claimed
 *                                                     reader and mark: load m; while m is odd
 *                                                     and unchanged, wait (acquire loads).
 * In the single total order of seq_cst operations either the copier's enter precedes the owner's
 * store, and then the owner's later load of m sees the odd value (or a later one) and waits for
 * the leave, whose release orders the copy before it; or the store precedes the enter, and then
 * the copier's later slot load sees 0 (registration ids are never reused, so a slot given to a
 * new registration cannot match either) and it copies nothing. So once deregisterMem returns, no
 * copier is inside a copy that passed its check on the released slot, and none will start one.
 * The wait is bounded: each critical section is one copy of at most a step's budget; a copier
 * whose process died is skipped once its whole thread group has exited (pidfd readable, or
 * /proc shows the pid gone or reused), and a live one that stays inside longer than the timeout
 * (stopped by a debugger) is reported and left.
 *
 * Thread safety: all methods may be called from any thread; reader records and marks are
 * lock-free; the owner's fence and the peers' copies run concurrently by design.
 */
#ifndef NIXL_SRC_UTILS_REGTABLE_REG_TABLE_H
#define NIXL_SRC_UTILS_REGTABLE_REG_TABLE_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "proc_identity.h"
#include "reg_layout.h"

namespace nixlReg {

struct regMapping;
struct regReaderClaim;

/** @brief One mapping of an engine's registration table (its owner's or a peer's). */
class nixlRegTable {
public:
    ~nixlRegTable();
    nixlRegTable(const nixlRegTable &) = delete;
    nixlRegTable &
    operator=(const nixlRegTable &) = delete;

    /**
     * Creates the owner's table: a shared-memory object of a random name ("/nixl-<tag>-...",
     * tag of 1 to 8 lowercase letters or digits), mode 0600, unlinked when this object goes. When shared memory cannot be had (no /dev/shm,
     * or too full to reserve the first pages: posix_fallocate, never a SIGBUS later) the table
     * is private anonymous memory, name() is empty and why says so (peers then read slots
     * with process_vm_readv).
     */
    static std::unique_ptr<nixlRegTable>
    create(const std::string &tag,
           const procIdentity &self,
           uint64_t nonce,
           size_t slots,
           std::string &why);

    /**
     * Maps a peer's table by name and checks it before trusting a byte of it: owned by this
     * uid, a regular file of mode 0600 and the expected size (fstat), header naming the same
     * nonce, pid, start time and slot count as the peer's connection info (a restarted peer
     * that reuses a pid has another nonce). Then claims a reader record for this engine. On
     * failure returns nullptr and why says what was wrong.
     */
    static std::unique_ptr<nixlRegTable>
    open(const std::string &name,
         uint64_t nonce,
         const procIdentity &peer,
         uint64_t slots,
         const procIdentity &self,
         uint64_t self_nonce,
         std::string &why);

    const std::string &
    name() const noexcept {
        return name_;
    }

    std::atomic<uint64_t> *
    slots() const noexcept {
        return slots_;
    }

    size_t
    slotCount() const noexcept {
        return nslots_;
    }

    /**
     * Whether slot is in the table and has storage (regTableHeader::backedSlots): check it
     * before reading a slot whose index came from a peer (its metadata), once per loaded
     * registration; slot 0 (the nonce) always is.
     */
    bool
    backed(uint64_t slot) const noexcept;

    /**
     * Owner side, before a slot is first written: makes sure the shared-memory pages up to it
     * are backed (posix_fallocate), since a store to a page that tmpfs cannot back is a SIGBUS.
     * create() reserved the header, the reader records and the first slots. False, why naming
     * the cause (ENOSPC: /dev/shm full), when they cannot be had: the caller must not write the
     * slot. Slots already reserved (and all of a private table) cost no system call.
     */
    bool
    reserve(size_t slot, std::string &why);

    /** A copy's mark: enter() returns it, leave() ends the critical section. */
    struct mark_t {
        std::atomic<uint64_t> *m = nullptr;
        uint64_t v = 0;
    };

    /** Peer side: marks this engine's copy as running (see the fence above). */
    mark_t
    enter() const noexcept;

    static void
    leave(const mark_t &mk) noexcept {
        mk.m->store(mk.v + 2, std::memory_order_release);
    }

    /**
     * Owner side, after a slot was cleared: waits until no copy that might have passed its
     * check on that slot is still running. False (who names the peer) when a live peer stayed
     * inside a copy longer than timeout_ms.
     */
    bool
    fence(uint64_t timeout_ms, std::string &who) const;

    /** How many times a fence of this table waited for a copy in flight. */
    uint64_t
    fenceWaits() const noexcept;

private:
    nixlRegTable() = default;

    /** Points readers_ and slots_ into the mapping at base_, of slots slots. */
    void
    attach(size_t slots) noexcept;

    std::string name_;
    bool owner_ = false;
    /** Engines of one process share their mapping of a table (reg_shm.h says why). */
    std::shared_ptr<regMapping> map_;
    void *base_ = nullptr;
    size_t bytes_ = 0;
    regTableReader *readers_ = nullptr;
    std::atomic<uint64_t> *slots_ = nullptr;
    size_t nslots_ = 0;
    std::shared_ptr<regReaderClaim> claim_; ///< the record this (peer) mapping uses
    int reader_ = -1; ///< its index
    int fd_ = -1;     ///< owner of a named table: its object, for reserve()
    std::mutex reserveLock_;
    size_t reservedBytes_ = 0; ///< prefix of the object that posix_fallocate backed
};

} // namespace nixlReg

#endif // NIXL_SRC_UTILS_REGTABLE_REG_TABLE_H
