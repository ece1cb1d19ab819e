/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlPtrSet, the agent's registry of live request handles: the same answers as
// std::unordered_set under churn (tombstones, reuse, growth), and no allocation once it has
// grown to the number of live entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_set>
#include <vector>

#include "agent/ptr_set.h"

namespace {

TEST(ptrSet, AnswersAsAnUnorderedSetUnderChurn) {
    std::vector<int> objects(5000);
    nixlPtrSet<int> set;
    std::unordered_set<int *> ref;
    std::mt19937 rng(7);
    for (int step = 0; step < 200000; ++step) {
        int *p = &objects[rng() % objects.size()];
        switch (rng() % 3) {
        case 0:
            ASSERT_EQ(set.insert(p), ref.insert(p).second) << step;
            break;
        case 1:
            ASSERT_EQ(set.erase(p), ref.erase(p) == 1) << step;
            break;
        default:
            ASSERT_EQ(set.count(p), ref.count(p)) << step;
            break;
        }
        ASSERT_EQ(set.size(), ref.size());
    }
    std::vector<int *> listed;
    for (int *p : set) {
        listed.push_back(p);
    }
    std::vector<int *> want(ref.begin(), ref.end());
    std::sort(listed.begin(), listed.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(listed, want);
    EXPECT_EQ(set.count(nullptr), 0u);
    set.clear();
    EXPECT_TRUE(set.empty());
    EXPECT_EQ(set.count(&objects[0]), 0u);
    size_t after_clear = 0;
    for (int *p : set) {
        (void)p;
        ++after_clear;
    }
    EXPECT_EQ(after_clear, 0u);
}

TEST(ptrSet, ManyLiveEntriesGrowAndStayFindable) {
    std::vector<long> objects(100000);
    nixlPtrSet<long> set;
    for (auto &o : objects) {
        ASSERT_TRUE(set.insert(&o));
    }
    EXPECT_EQ(set.size(), objects.size());
    for (auto &o : objects) {
        ASSERT_EQ(set.count(&o), 1u);
        ASSERT_FALSE(set.insert(&o));
    }
    for (size_t i = 0; i < objects.size(); i += 2) {
        ASSERT_TRUE(set.erase(&objects[i]));
    }
    for (size_t i = 0; i < objects.size(); ++i) {
        ASSERT_EQ(set.count(&objects[i]), i % 2) << i;
    }
}

} // namespace

namespace {

// What the agent's create/release loop does with its registry: long-lived entries, and one
// short-lived entry inserted and erased again and again (tombstones pile up and are cleared by
// rehashes at the same size). Once grown, the set holds both of its buffers at full size, so
// that none of this allocates: a rehash at the same size only swaps them.
TEST(ptrSet, ChurnAtASteadySizeKeepsItsStorage) {
    std::vector<int> objects(4096);
    nixlPtrSet<int> set;
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(set.insert(&objects[i]));
    }
    size_t grown = 0;
    auto churn = [&](int from, int to) {
        for (int r = from; r < to; ++r) {
            int *p = &objects[5 + static_cast<size_t>(r) % (objects.size() - 5)];
            const size_t slots = set.slotCount();
            ASSERT_TRUE(set.insert(p));
            if (set.slotCount() != slots) {
                // The growth itself reserves both buffers: no later rehash allocates.
                ASSERT_EQ(set.reservedSlots(), 2 * set.slotCount()) << r;
                ++grown;
            }
            ASSERT_TRUE(set.erase(p));
        }
    };
    churn(0, 2000); // grows to its steady size (tombstones count until a rehash clears them)
    ASSERT_GT(grown, 0u);
    const size_t reserved = set.reservedSlots();
    for (int r = 2000; r < 22000; r += 100) {
        churn(r, r + 100);
        ASSERT_EQ(set.reservedSlots(), reserved) << r;
    }
    EXPECT_EQ(set.size(), 5u);
}

} // namespace
