/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "chrome_json.h"

#include <charconv>
#include <cmath>

namespace nixlChromeJson {

namespace {

    constexpr char kHex[] = "0123456789abcdef";

    void
    appendByteEscape(std::string &out, unsigned char c) {
        const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out.append(esc, sizeof(esc));
    }

    bool
    isCont(unsigned char c) noexcept {
        return (c & 0xc0) == 0x80;
    }

    // Length of the valid UTF-8 sequence starting at p (at most `left` bytes), 0 if invalid:
    // rejects overlong forms, surrogates and code points above U+10FFFF.
    size_t
    utf8Length(const unsigned char *p, size_t left) noexcept {
        const unsigned char c = p[0];
        if (c >= 0xc2 && c <= 0xdf) {
            return left >= 2 && isCont(p[1]) ? 2 : 0;
        }
        if (c >= 0xe0 && c <= 0xef) {
            if (left < 3 || !isCont(p[1]) || !isCont(p[2])) {
                return 0;
            }
            if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f)) {
                return 0;
            }
            return 3;
        }
        if (c >= 0xf0 && c <= 0xf4) {
            if (left < 4 || !isCont(p[1]) || !isCont(p[2]) || !isCont(p[3])) {
                return 0;
            }
            if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f)) {
                return 0;
            }
            return 4;
        }
        return 0;
    }

} // namespace

void
appendEscaped(std::string &out, std::string_view s) {
    const size_t full = s.size();
    if (s.size() > kMaxStringBytes) {
        s = s.substr(0, kMaxStringBytes);
    }
    const auto *p = reinterpret_cast<const unsigned char *>(s.data());
    const size_t n = s.size();
    size_t run = 0; // start of the pending run of bytes copied as is
    size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            ++i;
            continue;
        }
        size_t len = 0;
        if (c >= 0x80) {
            len = utf8Length(p + i, n - i);
            if (len != 0) {
                i += len;
                continue;
            }
        }
        out.append(s.data() + run, i - run);
        switch (c) {
        case '"':
            out.append("\\\"");
            break;
        case '\\':
            out.append("\\\\");
            break;
        case '\n':
            out.append("\\n");
            break;
        case '\r':
            out.append("\\r");
            break;
        case '\t':
            out.append("\\t");
            break;
        default:
            appendByteEscape(out, c); // other controls and bytes outside valid UTF-8
            break;
        }
        ++i;
        run = i;
    }
    out.append(s.data() + run, n - run);
    if (full > n) {
        out.append("...[truncated ");
        appendU64(out, full - n);
        out.append(" bytes]");
    }
}

void
appendU64(std::string &out, uint64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, r.ptr);
}

void
appendI64(std::string &out, int64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, r.ptr);
}

void
appendDouble(std::string &out, double v) {
    if (std::isnan(v)) {
        out.append("\"NaN\"");
        return;
    }
    if (std::isinf(v)) {
        out.append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        return;
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, r.ptr);
}

void
appendMicros(std::string &out, uint64_t ns) {
    appendU64(out, ns / 1000);
    const unsigned frac = static_cast<unsigned>(ns % 1000);
    const char f[4] = {'.', static_cast<char>('0' + frac / 100),
                       static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10)};
    out.append(f, sizeof(f));
}

void
appendHex(std::string &out, uint64_t v) {
    char buf[18];
    buf[0] = '0';
    buf[1] = 'x';
    const auto r = std::to_chars(buf + 2, buf + sizeof(buf), v, 16);
    out.append(buf, r.ptr);
}

} // namespace nixlChromeJson
