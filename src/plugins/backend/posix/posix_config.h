/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file posix_config.h
 * @brief The POSIX backend's parameters (createBackend), parsed once at creation.
 *
 * Parameters, as NIXL 1.4's POSIX backend names them (docs/backends/posix.md):
 *  - use_aio ("false"), use_uring ("false"), use_posix_aio ("false"): the I/O engine. At most
 *    one may be true; none true means Linux AIO, NIXL's default.
 *  - kernel_queue_size ("256"): depth of each request's kernel queue, i.e. how many of its
 *    descriptors are in flight at once (1..32768).
 *  - ios_pool_size ("65536"): the most descriptors one request may carry (1..2^24).
 *
 * Thread safety: a nixlPosixConfig is written by parse() before the engine publishes it and
 * never changed after; any thread may read it.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_CONFIG_H
#define NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_CONFIG_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nixl_types.h"

/** The I/O engines, in the order the fallback tries them after the chosen one fails. */
enum class nixl_posix_engine_t : uint8_t { URING, LINUX_AIO, POSIX_AIO };

/** The engine's name in log lines, trace phase labels and getBackendParams. */
std::string_view
nixlPosixEngineName(nixl_posix_engine_t kind) noexcept;

struct nixlPosixConfig {
    static constexpr uint32_t default_queue_size = 256;
    static constexpr uint32_t max_queue_size = 32768;
    static constexpr uint64_t default_pool_size = 65536;
    static constexpr uint64_t max_pool_size = uint64_t{1} << 24;

    nixl_posix_engine_t engine = nixl_posix_engine_t::LINUX_AIO;
    uint32_t kernelQueueSize = default_queue_size;
    uint64_t iosPoolSize = default_pool_size;

    /** The defaults, as getPluginParams shows them. */
    static nixl_b_params_t
    defaults();

    /**
     * Reads params (unknown keys are ignored, as every backend keeps them for
     * getBackendParams). False with why set to one sentence naming the key, its value and what
     * is accepted.
     */
    bool
    parse(const nixl_b_params_t &params, std::string &why);
};

#endif // NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_CONFIG_H
