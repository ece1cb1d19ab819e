/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine's registration registry (ucx_registry.h).
#include "ucx_registry.h"

bool
nixlUcxRegistry::open(const nixlReg::procIdentity &self,
                      uint64_t nonce,
                      size_t slots,
                      std::string &why) {
    table_ = nixlReg::nixlRegTable::create("ucx", self, nonce, slots, why);
    return table_ != nullptr;
}

bool
nixlUcxRegistry::add(uint32_t &slot, uint64_t &reg_id, std::string &why) {
    std::lock_guard<std::mutex> g(lock_);
    slot = 0;
    if (!freeSlots_.empty()) {
        slot = freeSlots_.back();
        freeSlots_.pop_back();
    } else if (nextSlot_ < table_->slotCount()) {
        // A new slot's page must be backed before it is written: a store to a page of a full
        // /dev/shm is a SIGBUS.
        if (!table_->reserve(nextSlot_, why)) {
            return false;
        }
        slot = nextSlot_++;
    }
    reg_id = nextRegId_++;
    if (slot != 0) {
        table_->slots()[slot].store(reg_id, std::memory_order_release);
    }
    return true;
}

bool
nixlUcxRegistry::release(uint32_t slot, uint64_t timeout_ms, std::string &who) {
    // Peers check the slot before every direct copy: a released registration reads as stale.
    // seq_cst, then the fence (src/utils/regtable/reg_table.h): copies that passed their check
    // before this store end before the fence returns.
    table_->slots()[slot].store(0, std::memory_order_seq_cst);
    const bool fenced = table_->fence(timeout_ms, who);
    // Only now may the slot serve another registration.
    std::lock_guard<std::mutex> g(lock_);
    freeSlots_.push_back(slot);
    return fenced;
}

bool
nixlUcxRegistry::close(uint64_t timeout_ms, std::string &who) {
    if (!table_) {
        return true;
    }
    // Peers that still map the table see it closed (slot 0 no longer the nonce) and copy
    // nothing more; the fence waits out the copies that checked it before.
    table_->slots()[0].store(0, std::memory_order_seq_cst);
    const bool fenced = table_->fence(timeout_ms, who);
    table_.reset();
    return fenced;
}
