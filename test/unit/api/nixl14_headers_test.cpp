/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Compile test: the standard-library names a NIXL 1.4 program gets through NIXL's public headers
 * without including them itself, and the std::chrono names nixlTime exposes. Deliberately
 * includes nothing but the three NIXL headers (no gtest, no <iostream>): a name that only
 * compiles because some other header brought it in would hide the regression this guards.
 * Built as C++17 (what NIXL users build with) and C++20; it runs too, and exits non-zero when
 * a value is wrong.
 *
 * What NIXL 1.4 provides: nixl.h -> <chrono>, <memory>; nixl_types.h -> <vector>, <string>,
 * <unordered_map>, <optional>, <chrono>; nixl_params.h -> <string>, <cstdint>;
 * nixl_descriptors.h -> <cstddef>, <cstdint>, <vector>, <string>, <limits>, <algorithm>;
 * utils/serdes/serdes.h -> <cstdint>, <string>, <string_view>; utils/common/nixl_time.h ->
 * <chrono> and `using namespace std::chrono;` inside namespace nixlTime.
 */
#include "nixl.h"
#include "utils/common/nixl_time.h"
#include "utils/serdes/serdes.h"

namespace {

// <algorithm> and <limits> through nixl_descriptors.h, as NIXL programs sort and search
// descriptor lists.
int
algorithmAndLimits() {
    nixl_xfer_dlist_t list(DRAM_SEG);
    list.addDesc(nixlBasicDesc(300, 10, 0));
    list.addDesc(nixlBasicDesc(100, 10, 0));
    list.addDesc(nixlBasicDesc(200, 10, 0));
    std::vector<nixlBasicDesc> v(list.begin(), list.end());
    std::sort(v.begin(), v.end());
    auto it =
        std::find_if(v.begin(), v.end(), [](const nixlBasicDesc &d) { return d.addr == 200; });
    const size_t biggest = std::max<size_t>(std::min<size_t>(v[0].len, 64), 1);
    const uintptr_t top = std::numeric_limits<uintptr_t>::max();
    if (v.front().addr != 100 || it == v.end() || biggest != 10 || top == 0 ||
        !std::is_sorted(v.begin(), v.end())) {
        return 1;
    }
    return 0;
}

// <memory>, <optional>, <unordered_map>, <vector>, <string>, <cstdint>, <cstddef>.
int
containersAndPointers() {
    std::unique_ptr<nixlAgentConfig> cfg = std::make_unique<nixlAgentConfig>(true);
    std::shared_ptr<std::string> name = std::make_shared<std::string>("agent");
    std::optional<nixl_blob_t> notif;
    notif = std::string("done");
    std::unordered_map<std::string, std::vector<nixl_blob_t>> notifs;
    notifs[*name].push_back(*notif);
    const uint64_t dev = 3;
    const std::size_t n = notifs.at("agent").size();
    return (cfg->useProgThread && n == 1 && dev == 3 && notif.has_value()) ? 0 : 1;
}

// <string_view> through serdes.h.
int
serdesAndStringView() {
    nixlSerDes sd;
    const std::string_view tag = "tag";
    sd.addStr(std::string(tag), "value");
    nixlSerDes rd;
    if (rd.importStr(sd.exportStr()) != NIXL_SUCCESS) {
        return 1;
    }
    return rd.getStr(std::string(tag)) == "value" ? 0 : 1;
}

// std::chrono names through nixlTime, the way NIXL's examples and nixlbench write them.
int
chronoThroughNixlTime() {
    using namespace nixlTime;
    const steady_clock::time_point t0 = steady_clock::now();
    const us_t start = getUs();
    const microseconds waited = duration_cast<microseconds>(steady_clock::now() - t0);
    const milliseconds ms(1500);
    const seconds s = duration_cast<seconds>(ms);
    const nanoseconds ns = nixlTime::duration_cast<nixlTime::nanoseconds>(ms);
    const nixlTime::duration<double> d = ms;
    const system_clock::time_point wall = system_clock::now();
    if (waited.count() < 0 || getUs() < start || s.count() != 1 || ns.count() != 1500000000 ||
        d.count() != 1.5 || wall.time_since_epoch().count() == 0) {
        return 1;
    }
    // Also std::chrono through nixl.h alone (nixl_types.h's chrono_point_t).
    const chrono_point_t p = std::chrono::steady_clock::now();
    const chrono_period_us_t us = std::chrono::duration_cast<chrono_period_us_t>(p - p);
    return us.count() == 0 && getNs() >= getUs() && getMs() >= getSec() ? 0 : 1;
}

} // namespace

int
main() {
    return algorithmAndLimits() | containersAndPointers() << 1 | serdesAndStringView() << 2 |
        chronoThroughNixlTime() << 3;
}
