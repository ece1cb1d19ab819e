/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "posix_config.h"

#include <charconv>
#include <system_error>

#include "nixl_plugin_config_parse.h"

namespace {

constexpr const char *engine_keys[] = {"use_uring", "use_aio", "use_posix_aio"};
constexpr nixl_posix_engine_t engine_of_key[] = {
    nixl_posix_engine_t::URING, nixl_posix_engine_t::LINUX_AIO, nixl_posix_engine_t::POSIX_AIO};

/** Plain decimal digits in [lo, hi]: no sign, no spaces, no overflow. */
bool
parseRange(std::string_view text, uint64_t lo, uint64_t hi, uint64_t &out) {
    if (text.empty()) {
        return false;
    }
    const char *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out, 10);
    return ec == std::errc() && ptr == end && out >= lo && out <= hi;
}

} // namespace

std::string_view
nixlPosixEngineName(nixl_posix_engine_t kind) noexcept {
    switch (kind) {
    case nixl_posix_engine_t::URING:
        return "io_uring";
    case nixl_posix_engine_t::LINUX_AIO:
        return "linux_aio";
    case nixl_posix_engine_t::POSIX_AIO:
        return "posix_aio";
    }
    return "unknown";
}

nixl_b_params_t
nixlPosixConfig::defaults() {
    nixl_b_params_t p;
    for (const char *key : engine_keys) {
        p.emplace(key, "false");
    }
    p.emplace("kernel_queue_size", std::to_string(default_queue_size));
    p.emplace("ios_pool_size", std::to_string(default_pool_size));
    return p;
}

bool
nixlPosixConfig::parse(const nixl_b_params_t &params, std::string &why) {
    const char *chosen = nullptr;
    for (size_t i = 0; i < std::size(engine_keys); ++i) {
        auto it = params.find(engine_keys[i]);
        if (it == params.end()) {
            continue;
        }
        bool on = false;
        if (!nixlConfigParse::parseBool(it->second, on)) {
            why = std::string(engine_keys[i]) + "='" + it->second +
                "' is not a boolean (true/false, yes/no, on/off, 1/0)";
            return false;
        }
        if (!on) {
            continue;
        }
        if (chosen != nullptr) {
            why = std::string(chosen) + " and " + engine_keys[i] +
                " are both true; choose at most one I/O engine";
            return false;
        }
        chosen = engine_keys[i];
        engine = engine_of_key[i];
    }
    uint64_t v = 0;
    if (auto it = params.find("kernel_queue_size"); it != params.end()) {
        if (!parseRange(it->second, 1, max_queue_size, v)) {
            why = "kernel_queue_size='" + it->second + "' is not an integer in 1.." +
                std::to_string(max_queue_size);
            return false;
        }
        kernelQueueSize = static_cast<uint32_t>(v);
    }
    if (auto it = params.find("ios_pool_size"); it != params.end()) {
        if (!parseRange(it->second, 1, max_pool_size, v)) {
            why = "ios_pool_size='" + it->second + "' is not an integer in 1.." +
                std::to_string(max_pool_size);
            return false;
        }
        iosPoolSize = v;
    }
    return true;
}
