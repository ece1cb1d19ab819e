/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "chrome_json.h"

void
nixlChromeCopyLong(void *dst, const void *src, size_t n) noexcept {
    std::memcpy(dst, src, n);
}

namespace nixlChromeJson {
namespace detail {

    namespace {
        constexpr char kHex[] = "0123456789abcdef";

        bool
        isCont(unsigned char c) noexcept {
            return (c & 0xc0) == 0x80;
        }
    } // namespace

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
                return 0; // overlong, or a UTF-16 surrogate
            }
            return 3;
        }
        if (c >= 0xf0 && c <= 0xf4) {
            if (left < 4 || !isCont(p[1]) || !isCont(p[2]) || !isCont(p[3])) {
                return 0;
            }
            if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f)) {
                return 0; // overlong, or above U+10FFFF
            }
            return 4;
        }
        return 0;
    }

    size_t
    escapeByte(unsigned char c, char esc[6]) noexcept {
        esc[0] = '\\';
        switch (c) {
        case '"':
            esc[1] = '"';
            return 2;
        case '\\':
            esc[1] = '\\';
            return 2;
        case '\n':
            esc[1] = 'n';
            return 2;
        case '\r':
            esc[1] = 'r';
            return 2;
        case '\t':
            esc[1] = 't';
            return 2;
        default: // other controls and bytes outside valid UTF-8
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = kHex[c >> 4];
            esc[5] = kHex[c & 0xf];
            return 6;
        }
    }

} // namespace detail
} // namespace nixlChromeJson
