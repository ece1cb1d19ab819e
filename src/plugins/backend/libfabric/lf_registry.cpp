/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The registration table's slots: assigned at registration, fenced and freed at deregistration.

#include "lf_registry.h"

namespace nixlLf {

namespace {

    /** Slots of an engine's registration table (8 MiB, touched as registrations use them). */
    constexpr size_t reg_table_slots = size_t(1) << 20;
    constexpr const char *reg_table_tag = "lf";

} // namespace

void
lfRegistry::open(const std::string &agent, const nixlReg::procIdentity &self, uint64_t nonce) {
    std::string why;
    table_ = nixlReg::nixlRegTable::create(reg_table_tag, self, nonce, reg_table_slots, why);
    if (table_ == nullptr || table_->name().empty()) {
        // Without a named table no peer can check our registrations: they keep the
        // delivery-complete path (our own fast RMA to them is unaffected).
        NIXL_SDK_WARN("agent " << agent << ": LIBFABRIC: no shared registration table (" << why
                               << "); same-host peers write and read this agent with "
                                  "delivery-complete RMA");
        table_.reset();
    }
}

std::string
lfRegistry::name() const {
    return table_ != nullptr ? table_->name() : std::string();
}

uint64_t
lfRegistry::slotCount() const noexcept {
    return table_ != nullptr ? table_->slotCount() : 0;
}

void
lfRegistry::assign(const std::string &agent, lfLocalMD &md) {
    if (table_ == nullptr) {
        return;
    }
    std::lock_guard<std::mutex> g(mu_);
    if (!freeSlots_.empty()) {
        md.slot = freeSlots_.back();
        freeSlots_.pop_back();
    } else if (nextSlot_ < table_->slotCount()) {
        // A new slot's page must be backed before it is written (/dev/shm may be full).
        std::string why;
        if (table_->reserve(nextSlot_, why)) {
            md.slot = nextSlot_++;
            unbacked_ = false;
        } else if (!unbacked_) {
            unbacked_ = true; // one line until a reservation succeeds again
            NIXL_SDK_WARN("agent " << agent << ": LIBFABRIC registration of [0x" << std::hex
                                   << md.base << std::dec << ", +" << md.len
                                   << ") in no table slot (" << why
                                   << "); peers reach it with delivery-complete RMA");
        }
    } // else: in no slot; peers reach it with delivery-complete RMA
    if (md.slot != 0) {
        table_->slots()[md.slot].store(md.regId, std::memory_order_release);
    }
}

nixl_status_t
lfRegistry::release(const std::string &agent, const lfLocalMD &md, uint64_t timeoutMs) {
    if (md.slot == 0) {
        return NIXL_SUCCESS;
    }
    nixl_status_t st = NIXL_SUCCESS;
    // Peers check the slot inside a mark before every fast RMA; seq_cst store, then the
    // fence (reg_table.h): fast RMA that passed its check before this store has completed
    // when the fence returns, and none can pass it after.
    table_->slots()[md.slot].store(0, std::memory_order_seq_cst);
    std::string who;
    if (!table_->fence(timeoutMs, who)) {
        NIXL_SDK_ERROR("agent " << agent << ": LIBFABRIC deregisterMem of " << md.len
                                << " bytes at 0x" << std::hex << md.base << std::dec
                                << ": a peer, " << who
                                << "; the range may still be accessed until it leaves");
        st = NIXL_ERR_BACKEND;
    }
    std::lock_guard<std::mutex> g(mu_);
    freeSlots_.push_back(md.slot); // only now may another registration take it
    return st;
}

} // namespace nixlLf
