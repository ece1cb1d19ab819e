/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_plugin_sdk_common.h
 * @brief Pieces of the header-only plugin SDKs shared by every plugin kind: logging through
 *        core services and conversions between C strings of the ABI and std::string_view.
 *
 * Logging goes to the core services of the most recently created plugin object (engine or
 * exporter) of this plugin; core keeps one services struct per loaded plugin for the life of
 * the process, so the pointer never dangles.
 */
#ifndef NIXL_PLUGIN_SDK_COMMON_H
#define NIXL_PLUGIN_SDK_COMMON_H

#include <atomic>
#include <sstream>
#include <string_view>

#include "nixl_plugin_common.h"

namespace nixlSdk {

/** Core services of the loading libnixl; set before the first engine is constructed. */
inline std::atomic<const nixl_plugin_core_services_t *> &
coreServices() noexcept {
    static std::atomic<const nixl_plugin_core_services_t *> services{nullptr};
    return services;
}

inline bool
logEnabled(nixl_plugin_log_level_t level) noexcept {
    const nixl_plugin_core_services_t *core = coreServices().load(std::memory_order_acquire);
    return core != nullptr && core->log_enabled != nullptr &&
        core->log_enabled(core->ctx, level) != 0;
}

/** Writes one log line through core; never throws. */
inline void
log(nixl_plugin_log_level_t level, std::string_view msg) noexcept {
    const nixl_plugin_core_services_t *core = coreServices().load(std::memory_order_acquire);
    if (core != nullptr && core->log != nullptr) {
        core->log(core->ctx, level, msg.data(), msg.size());
    }
}

inline nixl_plugin_str_t
toStr(std::string_view s) noexcept {
    return nixl_plugin_str_t{s.data(), s.size()};
}

inline std::string_view
toView(nixl_plugin_str_t s) noexcept {
    return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
}

} // namespace nixlSdk

/**
 * Logs one line through core when the level is enabled, e.g.
 * NIXL_SDK_LOG(NIXL_PLUGIN_LOG_ERROR, "cannot map " << len << " bytes: " << strerror(errno)).
 * The stream expression is evaluated only when the line is written. Variadic, so braces and
 * template arguments with commas need no extra parentheses.
 */
#define NIXL_SDK_LOG(level, ...)                                         \
    do {                                                                 \
        if (::nixlSdk::logEnabled(level)) {                              \
            try {                                                        \
                std::ostringstream nixl_sdk_os_;                         \
                nixl_sdk_os_ << __VA_ARGS__;                             \
                ::nixlSdk::log(level, nixl_sdk_os_.str());               \
            }                                                            \
            catch (...) {                                                \
            }                                                            \
        }                                                                \
    } while (0)
#define NIXL_SDK_ERROR(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_ERROR, __VA_ARGS__)
#define NIXL_SDK_WARN(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_WARN, __VA_ARGS__)
#define NIXL_SDK_INFO(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_INFO, __VA_ARGS__)
#define NIXL_SDK_DEBUG(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_DEBUG, __VA_ARGS__)
#define NIXL_SDK_TRACE(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_TRACE, __VA_ARGS__)

#endif // NIXL_PLUGIN_SDK_COMMON_H
