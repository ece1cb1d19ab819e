/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file chrome_json.h
 * @brief Appending JSON pieces of Trace Event Format lines to a std::string, without
 *        formatting through streams or printf (the event path is hot).
 *
 * Every function appends to `out`; once `out` has grown to the size of the largest line seen
 * it never allocates again. Stateless and thread-safe (each caller owns its string).
 */
#ifndef NIXL_TRACE_CHROME_JSON_H
#define NIXL_TRACE_CHROME_JSON_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nixlChromeJson {

/** Longest string value (input bytes) written; longer ones are cut and marked (see docs). */
inline constexpr size_t kMaxStringBytes = 4096;

/**
 * Appends the body of a JSON string (no quotes) holding `s`: '"', '\\' and control characters
 * escaped, valid UTF-8 copied as is, and each byte that is not part of a valid UTF-8 sequence
 * written as \u00XX, so that any bytes give valid JSON. At most kMaxStringBytes of `s` are
 * written; a longer value ends with "...[truncated N bytes]".
 */
void
appendEscaped(std::string &out, std::string_view s);

/** Decimal, as JSON numbers. */
void
appendU64(std::string &out, uint64_t v);
void
appendI64(std::string &out, int64_t v);

/** Shortest round-trip form; NaN and infinities (not JSON numbers) as the strings "NaN", ... */
void
appendDouble(std::string &out, double v);

/** Nanoseconds as microseconds with three decimals ("1234.567"): the format's ts and dur. */
void
appendMicros(std::string &out, uint64_t ns);

/** "0x" and lowercase hex digits, e.g. flow ids and correlation ids as JSON strings. */
void
appendHex(std::string &out, uint64_t v);

} // namespace nixlChromeJson

#endif // NIXL_TRACE_CHROME_JSON_H
