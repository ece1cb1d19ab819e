/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// main() of p2p_test: the gtest suites, or, as "p2p_test --p2p-peer <fd>", the second process
// of the two-process test (p2p_ucx_test.cpp).

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

int
p2pPeerMain(int fd);

int
main(int argc, char **argv) {
    if (argc == 3 && std::strcmp(argv[1], "--p2p-peer") == 0) {
        return p2pPeerMain(std::atoi(argv[2]));
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
