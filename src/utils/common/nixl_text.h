/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_text.h
 * @brief The small text helpers core and plugins share, so each rule is written once: blank
 *        trimming (nixlConfigParse::trimBlanks, the rule of every NIXL_* option), splitting a
 *        separated list into trimmed items, a plain decimal reader, and the cut of a long value
 *        for a log line.
 *
 * Header-only (plugins link no core code), C++20, no exceptions.
 *
 * Thread safety: pure functions.
 */
#ifndef NIXL_SRC_UTILS_COMMON_NIXL_TEXT_H
#define NIXL_SRC_UTILS_COMMON_NIXL_TEXT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nixl_plugin_config_parse.h"

namespace nixlText {

/** text without ASCII blanks (space, tab, CR, LF) at either end. */
constexpr std::string_view
trim(std::string_view text) noexcept {
    return nixlConfigParse::trimBlanks(text);
}

/**
 * The items of list between any of the characters of seps, each trimmed, empty ones kept (the
 * caller decides whether "a,,b" is an error): "" is one empty item, "a," is "a" and "".
 */
inline std::vector<std::string_view>
splitList(std::string_view list, std::string_view seps = ",") {
    std::vector<std::string_view> items;
    size_t pos = 0;
    while (true) {
        const size_t end = list.find_first_of(seps, pos);
        items.push_back(trim(list.substr(pos, end == std::string_view::npos ? end : end - pos)));
        if (end == std::string_view::npos) {
            return items;
        }
        pos = end + 1;
    }
}

/** Decimal digits only (no sign, no 0x, no blanks) that fit in 64 bits; false otherwise. */
constexpr bool
parseDecimal(std::string_view text, uint64_t &out) noexcept {
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false; // also keeps nixlConfigParse's 0x form out
        }
    }
    return nixlConfigParse::parseUnsigned(text, out);
}

/**
 * value as a log line shows it: whole when at most max bytes, else its first max bytes and
 * "... (N bytes)". Cut only: the logger escapes every line once.
 */
inline std::string
cut(std::string_view value, size_t max) {
    if (value.size() <= max) {
        return std::string(value);
    }
    std::string out(value.substr(0, max));
    out.append("... (").append(std::to_string(value.size())).append(" bytes)");
    return out;
}

} // namespace nixlText

#endif // NIXL_SRC_UTILS_COMMON_NIXL_TEXT_H
