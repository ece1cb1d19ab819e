/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// main() of ucx_test: runs the gtest suites, or, when re-executed as
// "ucx_test --ucx-peer <fd> <config>", the peer process of the two-process tests.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "ucx_test_utils.h"

int
main(int argc, char **argv) {
    if (argc == 4 && std::strcmp(argv[1], "--ucx-peer") == 0) {
        return nixl_ucx_test::peerMain(std::atoi(argv[2]), argv[3]);
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
