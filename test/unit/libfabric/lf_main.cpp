/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// main() of lf_test: the gtest suites, or, re-executed as
// "lf_test --lf-peer <fd> <provider> <buffer size>", the peer process of the two-process tests.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "lf_test_utils.h"

int
main(int argc, char **argv) {
    // The IP providers use the first non-loopback interface otherwise; tests stay on loopback.
    ::setenv("FI_TCP_IFACE", "lo", 0);
    if (argc == 5 && std::strcmp(argv[1], "--lf-peer") == 0) {
        return nixl_lf_test::peerMain(std::atoi(argv[2]), argv[3],
                                      std::strtoull(argv[4], nullptr, 10));
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
