/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "bindings_handle_table.h"

#include <new>
#include <string>
#include <vector>

#include "bindings_common.h"

namespace nixl_py {

namespace {

// Tags of the live handle tables of the process (1..65535; 0 is never a tag, so small ints
// are never handles). Never destroyed: an agent may be destroyed after static destructors ran.
std::mutex &
tagMutex() {
    static auto *m = new std::mutex;
    return *m;
}

std::vector<bool> &
tagUsed() {
    static auto *used = new std::vector<bool>(size_t(1) << nixlPyHandleTable::kTagBits);
    return *used;
}

uint64_t gTagNext = 1; // guarded by tagMutex()

} // namespace

nixlPyHandleTable::nixlPyHandleTable() {
    std::lock_guard lock(tagMutex());
    std::vector<bool> &used = tagUsed();
    const uint64_t n = used.size();
    for (uint64_t i = 0; i + 1 < n; ++i) {
        const uint64_t t = (gTagNext + i - 1) % (n - 1) + 1;
        if (!used[t]) {
            used[t] = true;
            gTagNext = t % (n - 1) + 1; // next time start after it: tags come back late
            tag_ = t;
            return;
        }
    }
    throw std::bad_alloc(); // 65535 handle tables alive
}

nixlPyHandleTable::~nixlPyHandleTable() {
    for (auto &c : chunks_) {
        delete[] c.load(std::memory_order_relaxed);
    }
    std::lock_guard lock(tagMutex());
    tagUsed()[tag_] = false;
}

uint32_t
nixlPyHandleTable::reserve() {
    std::lock_guard lock(freeMutex_);
    if (free_.size() > kMinFree || (!free_.empty() && made_ == kMaxChunks * kChunkSlots)) {
        const uint32_t idx = free_.front();
        free_.pop_front();
        return idx;
    }
    if (made_ == kMaxChunks * kChunkSlots) {
        throw std::bad_alloc(); // MemoryError: 4M live handles of one kind
    }
    const uint32_t idx = made_;
    if ((idx & (kChunkSlots - 1)) == 0) {
        chunks_[idx >> kChunkBits].store(new Slot[kChunkSlots], std::memory_order_release);
    }
    ++made_;
    return idx;
}

uint64_t
nixlPyHandleTable::publish(uint32_t slot, uintptr_t ptr) {
    Slot &s = chunks_[slot >> kChunkBits].load(std::memory_order_acquire)[slot & (kChunkSlots - 1)];
    std::unique_lock lock(s.mutex);
    s.ptr = ptr;
    s.live = true;
    return tag_ << (kSlotBits + kGenBits) | static_cast<uint64_t>(s.gen) << kSlotBits | slot;
}

void
nixlPyHandleTable::recycle(uint32_t slot) {
    std::lock_guard lock(freeMutex_);
    free_.push_back(slot);
}

void
unknownHandle(const char *kind, uint64_t h) {
    throw nixlInvalidParamError(std::string("not a live ") + kind + " handle of this agent: " +
                                std::to_string(h));
}

} // namespace nixl_py
