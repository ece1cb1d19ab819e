/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_registry.h
 * @brief The UCX engine's own registrations as its peers see them: the registration table in
 *        shared memory (src/utils/regtable/reg_table.h), its free slots and registration ids,
 *        and the deregistration fence.
 *
 * Thread safety: add() and release() may be called from any thread; the slot allocator and
 * the id counter are guarded by the registry's own leaf lock, the slots themselves are the
 * table's atomics (peers read them lock-free), and the fence runs without the lock.
 * open() and close() are called by the engine's constructor and destructor only.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REGISTRY_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REGISTRY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "proc_identity.h"
#include "reg_table.h"

/** @brief Slots and ids of the engine's registrations in its shared registration table. */
class nixlUcxRegistry {
public:
    /**
     * Creates the table of slots slots for the engine identified by self and nonce. False
     * when it cannot (why says so); true with a non-empty why when it fell back to private
     * memory (peers then check with process_vm_readv, without a fence).
     */
    bool
    open(const nixlReg::procIdentity &self, uint64_t nonce, size_t slots, std::string &why);

    /**
     * A new registration: its slot (0 when the table is full: checked by no peer) and id,
     * published in the slot. False, why naming the cause, when a new slot's page cannot be
     * backed (a registration in no slot would be copied into unchecked).
     */
    bool
    add(uint32_t &slot, uint64_t &reg_id, std::string &why);

    /**
     * A registration goes: its slot reads as stale to peers from now on, and the fence waits
     * out the copies that checked it before (false, who naming the peer, after timeout_ms).
     * The slot serves another registration only afterwards.
     */
    bool
    release(uint32_t slot, uint64_t timeout_ms, std::string &who);

    /** The engine closes: peers see the table closed; the fence as release(). */
    bool
    close(uint64_t timeout_ms, std::string &who);

    /** The slot array's address and size (connection info), the shared memory's name. */
    uintptr_t
    address() const noexcept {
        return reinterpret_cast<uintptr_t>(table_->slots());
    }

    size_t
    slotCount() const noexcept {
        return table_->slotCount();
    }

    const std::string &
    name() const noexcept {
        return table_->name();
    }

private:
    std::unique_ptr<nixlReg::nixlRegTable> table_;
    std::mutex lock_;
    std::vector<uint32_t> freeSlots_;
    uint32_t nextSlot_ = 1; ///< slot 0 holds the nonce
    uint64_t nextRegId_ = 1;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REGISTRY_H
