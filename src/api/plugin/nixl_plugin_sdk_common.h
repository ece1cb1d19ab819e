/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_plugin_sdk_common.h
 * @brief Pieces of the header-only plugin SDKs shared by every plugin kind: logging and
 *        NIXL_* options through core services, and conversions between C strings of the ABI
 *        and std::string_view.
 *
 * Logging goes to the core services of the most recently created plugin object (engine or
 * exporter) of this plugin; core keeps one services struct per loaded plugin for the life of
 * the process, so the pointer never dangles.
 *
 * Options: read every NIXL_* option with nixlSdk::config*(), never getenv, so that it comes from
 * the environment or the configuration file like core's own options, with the same value rules
 * (nixl_plugin_config_parse.h). The typed helpers throw std::invalid_argument naming the
 * option, its value, where it came from and what is accepted; they do not log (the SDK's
 * constructor adapters log what() once). With a libnixl whose core services predate
 * get_config, options come from the environment only.
 */
#ifndef NIXL_PLUGIN_SDK_COMMON_H
#define NIXL_PLUGIN_SDK_COMMON_H

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "nixl_plugin_common.h"
#include "nixl_plugin_config_parse.h"
#include "internal/nixl_log_limiter.h"

namespace nixlSdk {

/** Longest part of a value (an option, an environment variable, a peer's name) a log line or
 *  an exception carries; the logger cuts whole lines at 4096 bytes. Same as core's. */
inline constexpr size_t max_logged_value = 256;

/**
 * A value as it may be logged: the first max_logged_value bytes and "... (N bytes)" when it is
 * longer, so that a hostile 120 KB value costs one short line. Use for every value a user or a
 * peer chose; the logger escapes control bytes itself.
 */
inline std::string
cutValue(std::string_view v, size_t max = max_logged_value) {
    if (v.size() <= max) {
        return std::string(v);
    }
    std::string out(v.substr(0, max));
    out.append("... (").append(std::to_string(v.size())).append(" bytes)");
    return out;
}

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

/** One option's raw value and where it came from ("environment" or "<file>:<line>"). */
struct configValue {
    std::string text;
    std::string origin;
};

namespace detail {
    inline nixl_plugin_status_t
    appendToString(void *ctx, const void *data, size_t len) noexcept {
        try {
            static_cast<std::string *>(ctx)->append(static_cast<const char *>(data), len);
            return NIXL_PLUGIN_SUCCESS;
        }
        catch (...) {
            return NIXL_PLUGIN_ERR_UNKNOWN;
        }
    }
} // namespace detail

/**
 * The raw value of an option: environment, else configuration file (through core). nullopt when
 * set nowhere. Throws std::invalid_argument when core cannot read the configuration file (core
 * logged the file, line and reason).
 */
inline std::optional<configValue>
configLookup(std::string_view name) {
    const nixl_plugin_core_services_t *core = coreServices().load(std::memory_order_acquire);
    if (core == nullptr ||
        core->size < offsetof(nixl_plugin_core_services_t, get_config) + sizeof(core->get_config) ||
        core->get_config == nullptr) {
        // A core that predates get_config: the environment is all there is.
        const std::string n(name);
        const char *v = std::getenv(n.c_str());
        if (v == nullptr || *v == '\0') {
            return std::nullopt;
        }
        return configValue{v, "environment"};
    }
    configValue out;
    const nixl_plugin_bytes_sink_t value{&out.text, detail::appendToString};
    const nixl_plugin_bytes_sink_t origin{&out.origin, detail::appendToString};
    const nixl_plugin_status_t st =
        core->get_config(core->ctx, name.data(), name.size(), &value, &origin);
    if (st == NIXL_PLUGIN_ERR_NOT_FOUND) {
        return std::nullopt;
    }
    if (st != NIXL_PLUGIN_SUCCESS) {
        throw std::invalid_argument(std::string(name) +
                                    ": the NIXL configuration could not be read (see the "
                                    "configuration file error above)");
    }
    return out;
}

/** The message of a refused value: "<name>=<text> (from <origin>) is not <accepted>". */
inline std::string
configRejection(std::string_view name, const configValue &v, std::string_view accepted) {
    std::string msg(name);
    msg.append("=").append(cutValue(v.text)).append(" (from ").append(v.origin).append(") is not ");
    msg.append(accepted);
    return msg;
}

/** A boolean option (NIXL's words); nullopt when unset. */
inline std::optional<bool>
configBool(std::string_view name) {
    auto v = configLookup(name);
    if (!v) {
        return std::nullopt;
    }
    bool out = false;
    if (!nixlConfigParse::parseBool(v->text, out)) {
        throw std::invalid_argument(configRejection(name, *v, nixlConfigParse::boolAccepted));
    }
    return out;
}

/** An unsigned option (decimal or 0x hex) within [min, max]; nullopt when unset. */
inline std::optional<uint64_t>
configUnsigned(std::string_view name, uint64_t min = 0, uint64_t max = UINT64_MAX) {
    auto v = configLookup(name);
    if (!v) {
        return std::nullopt;
    }
    uint64_t out = 0;
    if (!nixlConfigParse::parseUnsigned(v->text, out) || out < min || out > max) {
        throw std::invalid_argument(configRejection(
            name, *v,
            std::string(nixlConfigParse::unsignedAccepted) + " between " + std::to_string(min) +
                " and " + std::to_string(max)));
    }
    return out;
}

/** A signed decimal option within [min, max]; nullopt when unset. */
inline std::optional<int64_t>
configSigned(std::string_view name, int64_t min = INT64_MIN, int64_t max = INT64_MAX) {
    auto v = configLookup(name);
    if (!v) {
        return std::nullopt;
    }
    int64_t out = 0;
    if (!nixlConfigParse::parseSigned(v->text, out) || out < min || out > max) {
        throw std::invalid_argument(configRejection(
            name, *v,
            std::string(nixlConfigParse::signedAccepted) + " between " + std::to_string(min) +
                " and " + std::to_string(max)));
    }
    return out;
}

/** A TCP port option (1..65535); nullopt when unset. */
inline std::optional<uint16_t>
configPort(std::string_view name) {
    auto v = configLookup(name);
    if (!v) {
        return std::nullopt;
    }
    uint16_t out = 0;
    if (!nixlConfigParse::parsePort(v->text, out)) {
        throw std::invalid_argument(configRejection(name, *v, nixlConfigParse::portAccepted));
    }
    return out;
}

/** A string option as written; nullopt when unset. */
inline std::optional<std::string>
configString(std::string_view name) {
    auto v = configLookup(name);
    if (!v) {
        return std::nullopt;
    }
    return std::move(v->text);
}

/** A duration in milliseconds within [min_ms, max_ms]; nullopt when unset. */
inline std::optional<std::chrono::milliseconds>
configMilliseconds(std::string_view name, uint64_t min_ms = 0, uint64_t max_ms = INT64_MAX) {
    auto v = configLookup(name);
    if (!v) {
        return std::nullopt;
    }
    uint64_t out = 0;
    if (!nixlConfigParse::parseMilliseconds(v->text, out) || out < min_ms || out > max_ms) {
        throw std::invalid_argument(configRejection(
            name, *v,
            std::string(nixlConfigParse::millisecondsAccepted) + " between " +
                std::to_string(min_ms) + " and " + std::to_string(max_ms)));
    }
    return std::chrono::milliseconds(static_cast<int64_t>(out));
}

/**
 * Per-call-site state of NIXL_SDK_LOG_LIMITED: at most limit lines a second from one site, the
 * next one written saying how many were suppressed. Lock-free and approximate under races
 * (a line more or less in a second); reached only when the level is enabled, so never on a
 * success path. Use it for lines a peer or a loop can trigger (per-request errors).
 */
class logLimiter {
public:
    static constexpr uint32_t limit = 10;

    /** -1: suppress this line; otherwise write it, noting the returned count suppressed. */
    int64_t
    admit() noexcept {
        return window_.admit(std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count(),
                             limit);
    }

private:
    nixlLogWindowLimiter window_;
};

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
/**
 * NIXL_SDK_LOG for a line a peer or a loop can trigger: one logLimiter per call site (a static
 * of the expansion), at most logLimiter::limit lines a second, then one line that carries
 * "(suppressed N similar lines)".
 */
#define NIXL_SDK_LOG_LIMITED(level, ...)                                                 \
    do {                                                                                 \
        if (::nixlSdk::logEnabled(level)) {                                              \
            static ::nixlSdk::logLimiter nixl_sdk_rl_;                                   \
            if (const int64_t nixl_sdk_sup_ = nixl_sdk_rl_.admit(); nixl_sdk_sup_ >= 0) { \
                try {                                                                    \
                    std::ostringstream nixl_sdk_os_;                                     \
                    nixl_sdk_os_ << __VA_ARGS__;                                         \
                    if (nixl_sdk_sup_ > 0) {                                             \
                        nixl_sdk_os_ << " (suppressed " << nixl_sdk_sup_                 \
                                     << " similar lines)";                               \
                    }                                                                    \
                    ::nixlSdk::log(level, nixl_sdk_os_.str());                           \
                }                                                                        \
                catch (...) {                                                            \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    } while (0)
#define NIXL_SDK_ERROR_LIMITED(...) NIXL_SDK_LOG_LIMITED(NIXL_PLUGIN_LOG_ERROR, __VA_ARGS__)
#define NIXL_SDK_WARN_LIMITED(...) NIXL_SDK_LOG_LIMITED(NIXL_PLUGIN_LOG_WARN, __VA_ARGS__)
#define NIXL_SDK_ERROR(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_ERROR, __VA_ARGS__)
#define NIXL_SDK_WARN(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_WARN, __VA_ARGS__)
#define NIXL_SDK_INFO(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_INFO, __VA_ARGS__)
#define NIXL_SDK_DEBUG(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_DEBUG, __VA_ARGS__)
#define NIXL_SDK_TRACE(...) NIXL_SDK_LOG(NIXL_PLUGIN_LOG_TRACE, __VA_ARGS__)

#endif // NIXL_PLUGIN_SDK_COMMON_H
