/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_common.h
 * @brief Small helpers shared by the libFuzzer targets.
 */
#ifndef NIXL_TEST_FUZZ_FUZZ_COMMON_H
#define NIXL_TEST_FUZZ_FUZZ_COMMON_H

#include <cstdio>
#include <cstdlib>

#include "common/nixl_log.h"

/**
 * Aborts (a libFuzzer crash, with the input saved) when an invariant the library promises does
 * not hold. Unlike assert it stays on in every build type.
 */
#define NIXL_FUZZ_CHECK(cond)                                                             \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, \
                         #cond);                                                          \
            std::abort();                                                                 \
        }                                                                                 \
    } while (0)

/**
 * Rejected inputs are the normal case under fuzzing and each one logs an error; at millions of
 * inputs that output costs more than the parsing. Quiet unless the user asked for a level.
 */
inline void
nixlFuzzQuietLogs() {
    if (std::getenv("NIXL_LOG_LEVEL") == nullptr) {
        nixl::log::setLevel(nixl::log::level::FATAL);
    }
}

#endif // NIXL_TEST_FUZZ_FUZZ_COMMON_H
