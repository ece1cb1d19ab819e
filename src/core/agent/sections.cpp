/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include <algorithm>
#include <limits>

#include "agent/agent_data.h"

namespace {

bool
basicLess(const nixlBasicDesc &a, const nixlBasicDesc &b) noexcept {
    return a < b;
}

} // namespace

template<typename Reg>
const Reg *
nixlRegList<Reg>::findCovering(const nixlBasicDesc &q) const noexcept {
    // First registration ordered after every one that starts at or before q.addr on q.devId.
    nixlBasicDesc key(q.addr, std::numeric_limits<size_t>::max(), q.devId);
    auto it = std::upper_bound(regs_.begin(), regs_.end(), key, [](const nixlBasicDesc &k,
                                                                   const Reg &r) {
        return basicLess(k, r.desc);
    });
    while (it != regs_.begin()) {
        --it;
        const nixlBasicDesc &r = it->desc;
        if (r.devId != q.devId) {
            break;
        }
        if (r.covers(q)) {
            return &*it;
        }
        if (unboundedZero_ && r.len == 0 && q.addr >= r.addr) {
            return &*it;
        }
        // Entries further back start even earlier; none can reach q's end once the gap
        // exceeds the longest registration (unless zero-length ones are unbounded).
        if (!unboundedZero_ && q.addr - r.addr > maxLen_) {
            break;
        }
    }
    return nullptr;
}

template<typename Reg>
Reg *
nixlRegList<Reg>::findExact(const nixlBasicDesc &d) noexcept {
    auto it = std::lower_bound(regs_.begin(), regs_.end(), d, [](const Reg &r,
                                                                 const nixlBasicDesc &k) {
        return basicLess(r.desc, k);
    });
    if (it != regs_.end() && static_cast<const nixlBasicDesc &>(it->desc) == d) {
        return &*it;
    }
    return nullptr;
}

template<typename Reg>
bool
nixlRegList<Reg>::insert(Reg reg) {
    const nixlBasicDesc &d = reg.desc;
    auto it = std::lower_bound(regs_.begin(), regs_.end(), d, [](const Reg &r,
                                                                 const nixlBasicDesc &k) {
        return basicLess(r.desc, k);
    });
    if (it != regs_.end() && static_cast<const nixlBasicDesc &>(it->desc) == d) {
        return false;
    }
    maxLen_ = std::max(maxLen_, d.len);
    regs_.insert(it, std::move(reg));
    return true;
}

template<typename Reg>
bool
nixlRegList<Reg>::erase(const nixlBasicDesc &d) noexcept {
    auto it = std::lower_bound(regs_.begin(), regs_.end(), d, [](const Reg &r,
                                                                 const nixlBasicDesc &k) {
        return basicLess(r.desc, k);
    });
    if (it == regs_.end() || static_cast<const nixlBasicDesc &>(it->desc) != d) {
        return false;
    }
    regs_.erase(it);
    // maxLen_ stays an upper bound: still correct, at worst a slightly longer scan.
    return true;
}

template class nixlRegList<nixlLocalReg>;
template class nixlRegList<nixlRemoteReg>;
