/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_families.h
 * @brief Test support: a scrape as prometheus-cpp metric families, so that the text the
 *        collector writes directly (mp_text.h) can be held against prometheus-cpp's own
 *        TextSerializer. Production code never builds families.
 *
 * Thread-safety: pure functions of their arguments; collectFamilies() is as safe as
 * nixlMpCollector::gather().
 */
#ifndef NIXL_TEST_UNIT_PROMETHEUS_MP_MP_FAMILIES_H
#define NIXL_TEST_UNIT_PROMETHEUS_MP_MP_FAMILIES_H

#include <vector>

#include <prometheus/metric_family.h>

#include "mp_collector.h"
#include "mp_store.h"

namespace mpTest {

/** NIXL's series for a set of snapshots, one series per store and metric, never summed. */
std::vector<prometheus::MetricFamily>
buildFamilies(const nixlPromMp::nixlMpSchema &schema,
              const std::vector<nixlPromMp::nixlMpStoreSnapshot> &stores);

/** All families of one scrape of c, own metrics last (the collector's gather()). */
std::vector<prometheus::MetricFamily>
collectFamilies(nixlPromMp::nixlMpCollector &c, const nixlPromMp::nixlMpSchema &schema);

} // namespace mpTest

#endif // NIXL_TEST_UNIT_PROMETHEUS_MP_MP_FAMILIES_H
