/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ptr_set.h
 * @brief nixlPtrSet: an open-addressing set of pointers for the agent's handle registries.
 *
 * The agent checks every request handle a caller passes against the set of live ones before
 * dereferencing it (a pointer that was never a request is not read). std::unordered_set
 * allocates a node per insert and frees it per erase, which was one allocation of every
 * createXferReq; this set keeps its slots, so a create/release loop allocates nothing here
 * once the set has grown to the number of live requests. Not installed.
 *
 * Thread-safety: none; the agent guards it with registryMutex.
 */
#ifndef NIXL_SRC_CORE_AGENT_PTR_SET_H
#define NIXL_SRC_CORE_AGENT_PTR_SET_H

#include <cstddef>
#include <cstdint>
#include <vector>

template<typename T> class nixlPtrSet {
public:
    /** Adds p (not null); false if it was there. */
    bool
    insert(T *p) {
        if ((used_ + 1) * 2 > slots_.size()) {
            // Grow when live entries fill half; otherwise only tombstones are cleared.
            rehash(size_ * 2 + 2 > slots_.size() / 2 ? slots_.size() * 2 : slots_.size());
        }
        size_t i = home(p);
        size_t tomb = SIZE_MAX;
        for (;; i = (i + 1) & mask()) {
            const uintptr_t v = slots_[i];
            if (v == empty_) {
                break;
            }
            if (v == tomb_) {
                tomb = tomb == SIZE_MAX ? i : tomb;
            } else if (v == key(p)) {
                return false;
            }
        }
        if (tomb != SIZE_MAX) {
            i = tomb; // reuses a tombstone: used_ (live + tombstones) stays
        } else {
            ++used_;
        }
        slots_[i] = key(p);
        ++size_;
        return true;
    }

    /** Removes p; false if it was not there. */
    bool
    erase(const T *p) {
        const size_t i = find(p);
        if (i == SIZE_MAX) {
            return false;
        }
        // A slot whose successor is empty ends its probe chains: it can be empty again.
        if (slots_[(i + 1) & mask()] == empty_) {
            slots_[i] = empty_;
            --used_;
        } else {
            slots_[i] = tomb_;
        }
        --size_;
        return true;
    }

    size_t
    count(const T *p) const {
        return find(p) == SIZE_MAX ? 0 : 1;
    }

    bool
    empty() const noexcept {
        return size_ == 0;
    }

    size_t
    size() const noexcept {
        return size_;
    }

    /** Slots of the table, and slots reserved in both buffers (diagnostics and tests). */
    size_t
    slotCount() const noexcept {
        return slots_.size();
    }
    size_t
    reservedSlots() const noexcept {
        return slots_.capacity() + spare_.capacity();
    }

    void
    clear() {
        slots_.clear();
        spare_.clear();
        size_ = 0;
        used_ = 0;
    }

    /** Iterates the live pointers in no particular order; the set must not change meanwhile. */
    class iterator {
    public:
        iterator(const uintptr_t *at, const uintptr_t *end) : at_(at), end_(end) {
            skip();
        }
        T *
        operator*() const noexcept {
            return reinterpret_cast<T *>(*at_);
        }
        iterator &
        operator++() noexcept {
            ++at_;
            skip();
            return *this;
        }
        bool
        operator!=(const iterator &o) const noexcept {
            return at_ != o.at_;
        }

    private:
        void
        skip() noexcept {
            while (at_ != end_ && (*at_ == empty_ || *at_ == tomb_)) {
                ++at_;
            }
        }
        const uintptr_t *at_;
        const uintptr_t *end_;
    };

    iterator
    begin() const noexcept {
        return iterator(slots_.data(), slots_.data() + slots_.size());
    }
    iterator
    end() const noexcept {
        return iterator(slots_.data() + slots_.size(), slots_.data() + slots_.size());
    }

private:
    // Slot values: 0 is empty, 1 a tombstone (no object is at address 1), else the pointer.
    static constexpr uintptr_t empty_ = 0;
    static constexpr uintptr_t tomb_ = 1;

    static uintptr_t
    key(const T *p) noexcept {
        return reinterpret_cast<uintptr_t>(p);
    }

    size_t
    mask() const noexcept {
        return slots_.size() - 1;
    }

    size_t
    home(const T *p) const noexcept {
        // Heap pointers share their low bits; a multiplicative hash spreads the high ones.
        return static_cast<size_t>((key(p) * 0x9e3779b97f4a7c15ull) >> 32) & mask();
    }

    size_t
    find(const T *p) const {
        if (slots_.empty() || p == nullptr) {
            return SIZE_MAX;
        }
        for (size_t i = home(p);; i = (i + 1) & mask()) {
            const uintptr_t v = slots_[i];
            if (v == empty_) {
                return SIZE_MAX;
            }
            if (v == key(p)) {
                return i;
            }
        }
    }

    void
    rehash(size_t n) {
        n = n < 16 ? 16 : n;
        // The old slots go to spare_, whose capacity the new ones reuse: clearing tombstones
        // at the same size allocates nothing after the first time.
        spare_.swap(slots_);
        slots_.assign(n, empty_);
        size_ = 0;
        used_ = 0;
        for (uintptr_t v : spare_) {
            if (v != empty_ && v != tomb_) {
                insert(reinterpret_cast<T *>(v));
            }
        }
        // Both buffers hold n slots from here on: a later rehash at this size (tombstones
        // cleared) allocates nothing, only growth does.
        if (spare_.capacity() < n) {
            std::vector<uintptr_t>(n).swap(spare_);
        }
    }

    std::vector<uintptr_t> slots_; ///< a power of two in size (or empty)
    std::vector<uintptr_t> spare_; ///< the slots before the last rehash (their storage)
    size_t size_ = 0; ///< live entries
    size_t used_ = 0; ///< live entries plus tombstones: what fills the probe chains
};

#endif // NIXL_SRC_CORE_AGENT_PTR_SET_H
