/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include <algorithm>
#include <limits>
#include <utility>

#include "agent/reg_list.h"

namespace {

/** Registrations that carry a load order: the newest covering one wins (nixlRemoteReg). */
template<typename Reg>
constexpr bool has_load_order = requires(const Reg &r) { r.seq; };

} // namespace

template<typename Reg>
const Reg *
nixlRegList<Reg>::findCovering(const nixlBasicDesc &q) const noexcept {
    if (regs_.empty()) {
        return nullptr;
    }
    const size_t max_len = lenCount_.rbegin()->first;
    // Without overlaps at most one registration covers q: the first found is the answer. With
    // them, a remote list may hold a registration the peer has since replaced (it deregistered
    // a range and registered an overlapping one): every covering entry is seen, the newest wins.
    bool newest = false;
    if constexpr (has_load_order<Reg>) {
        newest = overlapping_;
    }
    const Reg *best = nullptr;
    // First registration ordered after every one that starts at or before q.addr on q.devId.
    auto it = regs_.upper_bound(nixlBasicDesc(q.addr, std::numeric_limits<size_t>::max(), q.devId));
    while (it != regs_.begin()) {
        --it;
        const nixlBasicDesc &r = it->first;
        if (r.devId != q.devId) {
            break;
        }
        if (r.covers(q) || (unboundedZero_ && r.len == 0 && q.addr >= r.addr)) {
            if (!newest) {
                return &it->second;
            }
            if constexpr (has_load_order<Reg>) {
                if (best == nullptr || it->second.seq > best->seq) {
                    best = &it->second;
                }
            }
            continue;
        }
        // Entries further back start even earlier; none can reach q's end once the gap
        // exceeds the longest registration (unless zero-length ones are unbounded).
        if (!unboundedZero_ && q.addr - r.addr > max_len) {
            break;
        }
    }
    return best;
}

template<typename Reg>
bool
nixlRegList<Reg>::overlapsNeighbour(typename map_t::const_iterator it) const noexcept {
    const nixlBasicDesc &k = it->first;
    const auto unbounded = [this](const nixlBasicDesc &d) { return unboundedZero_ && d.len == 0; };
    auto next = std::next(it);
    if (next != regs_.end() && next->first.devId == k.devId &&
        (unbounded(k) || next->first.addr - k.addr < k.len)) {
        return true; // next starts at or after k.addr (map order)
    }
    const size_t max_len = lenCount_.empty() ? 0 : lenCount_.rbegin()->first;
    while (it != regs_.begin()) {
        --it;
        const nixlBasicDesc &r = it->first;
        if (r.devId != k.devId) {
            break;
        }
        if (unbounded(r) || k.addr - r.addr < r.len) {
            return true;
        }
        if (!unboundedZero_ && k.addr - r.addr > max_len) {
            break;
        }
    }
    return false;
}

template<typename Reg>
nixlRegList<Reg>::nixlRegList(const nixlRegList &other)
    : regs_(other.regs_),
      lenCount_(other.lenCount_),
      unboundedZero_(other.unboundedZero_),
      overlapping_(other.overlapping_) {}

template<typename Reg>
nixlRegList<Reg>::nixlRegList(nixlRegList &&other) noexcept
    : regs_(std::move(other.regs_)),
      lenCount_(std::move(other.lenCount_)),
      unboundedZero_(other.unboundedZero_),
      overlapping_(other.overlapping_) {
    other.hasFinger_ = false;
}

template<typename Reg>
nixlRegList<Reg> &
nixlRegList<Reg>::operator=(const nixlRegList &other) {
    if (this != &other) {
        regs_ = other.regs_;
        lenCount_ = other.lenCount_;
        unboundedZero_ = other.unboundedZero_;
        overlapping_ = other.overlapping_;
        hasFinger_ = false;
    }
    return *this;
}

template<typename Reg>
nixlRegList<Reg> &
nixlRegList<Reg>::operator=(nixlRegList &&other) noexcept {
    if (this != &other) {
        regs_ = std::move(other.regs_);
        lenCount_ = std::move(other.lenCount_);
        unboundedZero_ = other.unboundedZero_;
        overlapping_ = other.overlapping_;
        hasFinger_ = false;
        other.hasFinger_ = false;
    }
    return *this;
}

template<typename Reg>
typename nixlRegList<Reg>::map_t::iterator
nixlRegList<Reg>::locate(const nixlBasicDesc &d) noexcept {
    if (regs_.empty()) {
        return regs_.end();
    }
    // The ends first (both O(1) in std::map): a list registered in order meets the last entry
    // or nothing past it. Past this point first < d < last, so the finger's neighbour below
    // is never past the end, and no step climbs the tree from its rightmost node.
    auto last = std::prev(regs_.end());
    if (last->first < d) {
        return regs_.end();
    }
    if (last->first == d) {
        return last;
    }
    auto first = regs_.begin();
    if (d < first->first) {
        return regs_.end();
    }
    if (first->first == d) {
        return first;
    }
    // Then the finger: a list walked in order, either way, meets the finger's neighbour, and a
    // key between two neighbours is absent, both without a descent.
    if (hasFinger_) {
        auto f = finger_;
        if (f->first == d) {
            return f;
        }
        auto n = f->first < d ? std::next(f) : std::prev(f);
        if (n->first == d) {
            return n;
        }
        if (f->first < d ? d < n->first : n->first < d) {
            return regs_.end();
        }
    }
    return regs_.find(d);
}

template<typename Reg>
Reg *
nixlRegList<Reg>::findExact(const nixlBasicDesc &d) noexcept {
    auto it = locate(d);
    return it == regs_.end() ? nullptr : &it->second;
}

template<typename Reg>
Reg *
nixlRegList<Reg>::seek(const nixlBasicDesc &d) noexcept {
    auto it = locate(d);
    if (it == regs_.end()) {
        return nullptr;
    }
    finger_ = it;
    hasFinger_ = true;
    return &it->second;
}

template<typename Reg>
void
nixlRegList<Reg>::forget(typename map_t::iterator it) noexcept {
    if (!hasFinger_ || finger_ != it) {
        return;
    }
    // Keep the finger next to the hole, where an in-order walk goes next; from the last entry
    // step down rather than climb the tree to find that nothing follows it.
    if (it != std::prev(regs_.end())) {
        finger_ = std::next(it);
    } else if (it != regs_.begin()) {
        finger_ = std::prev(it);
    } else {
        hasFinger_ = false;
    }
}

template<typename Reg>
bool
nixlRegList<Reg>::insert(Reg reg) {
    const nixlBasicDesc key = reg.desc;
    // Count the length first: if the map insertion then throws, an over-counted length only
    // lengthens a scan, whereas an uncounted one would hide a covering registration.
    ++lenCount_[key.len];
    const size_t before = regs_.size();
    try {
        // A list registered in address order appends: end() is then an exact hint, O(1)
        // instead of a descent; anything else is an ordinary O(log N) insertion.
        const size_t size = regs_.size();
        auto it = regs_.empty() || regs_.rbegin()->first < key ?
            regs_.emplace_hint(regs_.end(), key, std::move(reg)) :
            regs_.emplace(key, std::move(reg)).first;
        if (regs_.size() != size) {
            finger_ = it;
            hasFinger_ = true;
            if constexpr (has_load_order<Reg>) {
                // Only remote lists read the flag; local registration keeps its O(1) append.
                overlapping_ = overlapping_ || overlapsNeighbour(it);
            }
        }
    }
    catch (...) {
        uncount(key.len);
        throw;
    }
    if (regs_.size() == before) {
        uncount(key.len); // an equal registration exists
        return false;
    }
    return true;
}

template<typename Reg>
void
nixlRegList<Reg>::uncount(size_t len) noexcept {
    auto c = lenCount_.find(len);
    if (c != lenCount_.end() && --c->second == 0) {
        lenCount_.erase(c);
    }
}

template<typename Reg>
bool
nixlRegList<Reg>::erase(const nixlBasicDesc &d) noexcept {
    auto it = locate(d);
    if (it == regs_.end()) {
        return false;
    }
    forget(it);
    uncount(it->first.len);
    regs_.erase(it);
    return true;
}

template<typename Reg>
std::optional<Reg>
nixlRegList<Reg>::take(const nixlBasicDesc &d) {
    auto it = locate(d);
    if (it == regs_.end()) {
        return std::nullopt;
    }
    forget(it);
    uncount(it->first.len);
    std::optional<Reg> out(std::move(it->second));
    regs_.erase(it);
    return out;
}

template class nixlRegList<nixlLocalReg>;
template class nixlRegList<nixlRemoteReg>;

