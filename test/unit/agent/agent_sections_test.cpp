/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlRegList (the agent's registration sections) against a brute-force reference: random
// inserts, exact lookups, seeks, removals and covering queries over a small key space, so that
// repeats, overlaps, nesting and the finger's edge cases (removing the entry it points at,
// keys between two neighbours, both ends) all occur.

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>

#include "agent/agent_data.h"

namespace {

using key_t = std::tuple<uint64_t, uintptr_t, size_t>;

key_t
keyOf(const nixlBasicDesc &d) {
    return {d.devId, d.addr, d.len};
}

nixlBasicDesc
descOf(const key_t &k) {
    return nixlBasicDesc(std::get<1>(k), std::get<2>(k), std::get<0>(k));
}

bool
refCovers(const std::set<key_t> &ref, const nixlBasicDesc &q, bool unbounded) {
    for (const key_t &k : ref) {
        nixlBasicDesc r = descOf(k);
        if (r.covers(q) || (unbounded && r.devId == q.devId && r.len == 0 && q.addr >= r.addr)) {
            return true;
        }
    }
    return false;
}

void
runAgainstReference(bool unbounded, uint32_t seed) {
    nixlRegList<nixlRemoteReg> list;
    list.setUnboundedZeroLength(unbounded);
    std::set<key_t> ref;
    std::mt19937 rng(seed);
    const size_t lens[] = {0, 8, 16, 64, 200};
    auto randomDesc = [&] {
        return nixlBasicDesc(8 * (rng() % 40), lens[rng() % 5], rng() % 2);
    };
    for (int step = 0; step < 40000; ++step) {
        const nixlBasicDesc d = randomDesc();
        const bool present = ref.count(keyOf(d)) != 0;
        switch (rng() % 6) {
        case 0:
        case 1: {
            nixlRemoteReg reg;
            reg.desc = d;
            ASSERT_EQ(!present, list.insert(reg)) << "step " << step;
            ref.insert(keyOf(d));
            break;
        }
        case 2:
            ASSERT_EQ(present, list.seek(d) != nullptr) << "step " << step;
            break;
        case 3:
            ASSERT_EQ(present, list.findExact(d) != nullptr) << "step " << step;
            break;
        case 4: {
            std::optional<nixlRemoteReg> got = list.take(d);
            ASSERT_EQ(present, got.has_value()) << "step " << step;
            if (got) {
                ASSERT_TRUE(got->desc == d);
            }
            ref.erase(keyOf(d));
            break;
        }
        default:
            ASSERT_EQ(present, list.erase(d)) << "step " << step;
            ref.erase(keyOf(d));
            break;
        }
        // A walk over every key in order, either way, through seek: the finger's path.
        if (step % 997 == 0) {
            for (const key_t &k : ref) {
                ASSERT_NE(nullptr, list.seek(descOf(k)));
            }
            for (auto it = ref.rbegin(); it != ref.rend(); ++it) {
                ASSERT_NE(nullptr, list.seek(descOf(*it)));
            }
        }
        const nixlBasicDesc q(8 * (rng() % 44), rng() % 80, rng() % 2);
        const nixlRemoteReg *cov = list.findCovering(q);
        ASSERT_EQ(refCovers(ref, q, unbounded), cov != nullptr)
            << "step " << step << " query " << q.addr << "+" << q.len << " dev " << q.devId;
        if (cov != nullptr) {
            ASSERT_TRUE(cov->desc.covers(q) || (unbounded && cov->desc.len == 0));
        }
        ASSERT_EQ(ref.size(), list.size());
    }
    size_t n = 0;
    for (const nixlRemoteReg &r : list.all()) {
        ASSERT_EQ(1u, ref.count(keyOf(r.desc)));
        ++n;
    }
    EXPECT_EQ(ref.size(), n);
}

TEST(agentSectionsTest, MatchesReference) {
    runAgainstReference(false, 1);
}

TEST(agentSectionsTest, MatchesReferenceWithUnboundedZeroLength) {
    runAgainstReference(true, 2);
}

TEST(agentSectionsTest, CopiesAndMovesKeepContentsAndForgetTheFinger) {
    nixlRegList<nixlRemoteReg> a;
    for (uintptr_t addr = 0; addr < 64; addr += 8) {
        nixlRemoteReg reg;
        reg.desc = nixlBasicDesc(addr, 8, 0);
        ASSERT_TRUE(a.insert(reg));
    }
    ASSERT_NE(nullptr, a.seek(nixlBasicDesc(24, 8, 0)));
    nixlRegList<nixlRemoteReg> b(a);
    ASSERT_TRUE(b.erase(nixlBasicDesc(24, 8, 0)));
    EXPECT_NE(nullptr, a.findExact(nixlBasicDesc(24, 8, 0)));
    EXPECT_EQ(nullptr, b.findExact(nixlBasicDesc(24, 8, 0)));
    EXPECT_NE(nullptr, b.seek(nixlBasicDesc(32, 8, 0)));
    nixlRegList<nixlRemoteReg> c(std::move(b));
    EXPECT_NE(nullptr, c.seek(nixlBasicDesc(16, 8, 0)));
    EXPECT_EQ(7u, c.size());
    a = c;
    EXPECT_EQ(7u, a.size());
    EXPECT_NE(nullptr, a.findCovering(nixlBasicDesc(36, 4, 0)));
    EXPECT_EQ(nullptr, a.findCovering(nixlBasicDesc(28, 4, 0)));
}

} // namespace
