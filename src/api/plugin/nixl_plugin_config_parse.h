/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_plugin_config_parse.h
 * @brief The value rules of every NIXL_* option, shared by core (nixlConfig) and the plugin
 *        SDK (nixlSdk::config*), so that a boolean or a port means the same everywhere.
 *
 * Header-only, C++20, no allocation, no exceptions. Only strings cross the plugin boundary;
 * each side runs these same functions over the raw text it got.
 *
 * Rules (NIXL 1.4's):
 *  - booleans: y/yes/on/1/true/enable and n/no/off/0/false/disable, in any case;
 *  - unsigned integers: decimal digits, or 0x/0X followed by hex digits; no sign;
 *  - signed integers: decimal digits with an optional leading '-';
 *  - ports: decimal 1..65535;
 *  - durations in milliseconds: an unsigned integer.
 * Nothing else is accepted: no blanks around a value (as in NIXL), no '+', no overflow.
 *
 * Thread safety: pure functions.
 */
#ifndef NIXL_PLUGIN_CONFIG_PARSE_H
#define NIXL_PLUGIN_CONFIG_PARSE_H

#include <cstdint>
#include <string_view>

namespace nixlConfigParse {

inline constexpr std::string_view trueWords[] = {"y", "yes", "on", "1", "true", "enable"};
inline constexpr std::string_view falseWords[] = {"n", "no", "off", "0", "false", "disable"};

/** What each kind accepts, for error messages. */
inline constexpr std::string_view boolAccepted =
    "y/yes/on/1/true/enable or n/no/off/0/false/disable (any case)";
inline constexpr std::string_view unsignedAccepted = "a decimal or 0x-hex unsigned integer";
inline constexpr std::string_view signedAccepted = "a decimal integer";
inline constexpr std::string_view portAccepted = "a TCP port number, decimal 1..65535";
inline constexpr std::string_view millisecondsAccepted =
    "a number of milliseconds (decimal unsigned integer)";

constexpr bool
equalsNoCase(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        char y = b[i];
        x = (x >= 'A' && x <= 'Z') ? static_cast<char>(x - 'A' + 'a') : x;
        y = (y >= 'A' && y <= 'Z') ? static_cast<char>(y - 'A' + 'a') : y;
        if (x != y) {
            return false;
        }
    }
    return true;
}

/**
 * text without ASCII blanks (space, tab, CR, LF) at either end. Not applied to option values
 * (those take no blanks, above): for the items of a comma list such as UCX_TLS and for lines
 * read from files such as /proc/sys/kernel/random/boot_id.
 */
constexpr std::string_view
trimBlanks(std::string_view text) noexcept {
    constexpr std::string_view blanks = " \t\r\n";
    const size_t first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

/** True when text is one of NIXL's boolean words; out is then its value. */
constexpr bool
parseBool(std::string_view text, bool &out) noexcept {
    for (std::string_view w : trueWords) {
        if (equalsNoCase(text, w)) {
            out = true;
            return true;
        }
    }
    for (std::string_view w : falseWords) {
        if (equalsNoCase(text, w)) {
            out = false;
            return true;
        }
    }
    return false;
}

/** Decimal, or hexadecimal after 0x/0X; false on anything else or on overflow. */
constexpr bool
parseUnsigned(std::string_view text, uint64_t &out) noexcept {
    unsigned base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        base = 16;
        text.remove_prefix(2);
    }
    if (text.empty()) {
        return false;
    }
    uint64_t v = 0;
    for (char c : text) {
        unsigned d = 0;
        if (c >= '0' && c <= '9') {
            d = static_cast<unsigned>(c - '0');
        } else if (base == 16 && c >= 'a' && c <= 'f') {
            d = static_cast<unsigned>(c - 'a' + 10);
        } else if (base == 16 && c >= 'A' && c <= 'F') {
            d = static_cast<unsigned>(c - 'A' + 10);
        } else {
            return false;
        }
        if (v > (UINT64_MAX - d) / base) {
            return false;
        }
        v = v * base + d;
    }
    out = v;
    return true;
}

/** Decimal with an optional leading '-'; false on anything else or on overflow. */
constexpr bool
parseSigned(std::string_view text, int64_t &out) noexcept {
    const bool negative = !text.empty() && text.front() == '-';
    if (negative) {
        text.remove_prefix(1);
    }
    if (text.empty()) {
        return false;
    }
    uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
        const auto d = static_cast<uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (v > limit) {
        return false;
    }
    out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return true;
}

/** Decimal 1..65535: the one port rule of every NIXL_*_PORT option. */
constexpr bool
parsePort(std::string_view text, uint16_t &out) noexcept {
    if (text.empty() || text.size() > 5) {
        return false;
    }
    uint32_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
        v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    if (v < 1 || v > 65535) {
        return false;
    }
    out = static_cast<uint16_t>(v);
    return true;
}

/** A duration in milliseconds: a plain unsigned integer (decimal or 0x hex). */
constexpr bool
parseMilliseconds(std::string_view text, uint64_t &out) noexcept {
    return parseUnsigned(text, out);
}

} // namespace nixlConfigParse

#endif // NIXL_PLUGIN_CONFIG_PARSE_H
