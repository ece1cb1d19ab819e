/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_json.h"

#include <charconv>

const nixlJsonValue *
nixlJsonValue::find(std::string_view key) const noexcept {
    if (kind != kind_t::OBJECT) {
        return nullptr;
    }
    for (const auto &m : members) {
        if (m.name == key) {
            return &m.value;
        }
    }
    return nullptr;
}

namespace {

class jsonReader {
public:
    explicit jsonReader(std::string_view text) : s_(text) {}

    bool
    parseDocument(nixlJsonValue &out, std::string &err) {
        skipSpace();
        if (!parseValue(out, 0)) {
            err = why_ + " at byte " + std::to_string(pos_);
            return false;
        }
        skipSpace();
        if (pos_ != s_.size()) {
            err = "trailing bytes after the value at byte " + std::to_string(pos_);
            return false;
        }
        return true;
    }

private:
    bool
    fail(const char *why) {
        why_ = why;
        return false;
    }

    bool
    atEnd() const noexcept {
        return pos_ >= s_.size();
    }

    unsigned char
    peek() const noexcept {
        return static_cast<unsigned char>(s_[pos_]);
    }

    void
    skipSpace() noexcept {
        while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
            ++pos_;
        }
    }

    bool
    literal(std::string_view word) {
        if (s_.substr(pos_, word.size()) != word) {
            return fail("invalid literal");
        }
        pos_ += word.size();
        return true;
    }

    bool
    parseValue(nixlJsonValue &out, size_t depth) {
        if (atEnd()) {
            return fail("unexpected end of input");
        }
        switch (peek()) {
        case '{':
            return parseObject(out, depth + 1);
        case '[':
            return parseArray(out, depth + 1);
        case '"':
            out.kind = nixlJsonValue::kind_t::STRING;
            return parseString(out.text);
        case 't':
            out.kind = nixlJsonValue::kind_t::BOOL;
            out.boolean = true;
            return literal("true");
        case 'f':
            out.kind = nixlJsonValue::kind_t::BOOL;
            out.boolean = false;
            return literal("false");
        case 'n':
            out.kind = nixlJsonValue::kind_t::NUL;
            return literal("null");
        default:
            out.kind = nixlJsonValue::kind_t::NUMBER;
            return parseNumber(out.text);
        }
    }

    bool
    parseObject(nixlJsonValue &out, size_t depth) {
        if (depth > nixl_json_max_depth) {
            return fail("nesting too deep");
        }
        out.kind = nixlJsonValue::kind_t::OBJECT;
        return parseElements('}', "unterminated object", "expected ',' or '}'", [&] {
            if (atEnd() || peek() != '"') {
                return fail("expected a member name");
            }
            std::string name;
            if (!parseString(name)) {
                return false;
            }
            if (out.find(name) != nullptr) {
                return fail("duplicate member name");
            }
            skipSpace();
            if (atEnd() || peek() != ':') {
                return fail("expected ':'");
            }
            ++pos_;
            skipSpace();
            out.members.push_back(nixlJsonMember{std::move(name), nixlJsonValue{}});
            return parseValue(out.members.back().value, depth);
        });
    }

    bool
    parseArray(nixlJsonValue &out, size_t depth) {
        if (depth > nixl_json_max_depth) {
            return fail("nesting too deep");
        }
        out.kind = nixlJsonValue::kind_t::ARRAY;
        return parseElements(']', "unterminated array", "expected ',' or ']'", [&] {
            out.items.emplace_back();
            return parseValue(out.items.back(), depth);
        });
    }

    /**
     * The elements of the object or array whose opening bracket is at pos_, up to its closing
     * bracket close: element() reads one, blanks before it skipped. The error texts name the
     * container.
     */
    template <typename element_fn_t>
    bool
    parseElements(char close,
                  const char *unterminated,
                  const char *expected,
                  const element_fn_t &element) {
        ++pos_; // the opening bracket
        skipSpace();
        if (!atEnd() && peek() == close) {
            ++pos_;
            return true;
        }
        for (;;) {
            skipSpace();
            if (!element()) {
                return false;
            }
            skipSpace();
            if (atEnd()) {
                return fail(unterminated);
            }
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            if (peek() == close) {
                ++pos_;
                return true;
            }
            return fail(expected);
        }
    }

    static void
    appendUtf8(std::string &out, uint32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xc0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xe0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        }
    }

    bool
    hex4(uint32_t &cp) {
        if (s_.size() - pos_ < 4) {
            return fail("truncated \\u escape");
        }
        cp = 0;
        for (int i = 0; i < 4; ++i) {
            const unsigned char c = peek();
            uint32_t d;
            if (c >= '0' && c <= '9') {
                d = c - '0';
            } else if (c >= 'a' && c <= 'f') {
                d = c - 'a' + 10;
            } else if (c >= 'A' && c <= 'F') {
                d = c - 'A' + 10;
            } else {
                return fail("bad hex digit in \\u escape");
            }
            cp = (cp << 4) | d;
            ++pos_;
        }
        return true;
    }

    // One raw UTF-8 sequence starting at pos_ (lead byte >= 0x80): shortest form, no surrogates,
    // at most U+10FFFF.
    bool
    copyUtf8(std::string &out) {
        const unsigned char lead = peek();
        size_t len;
        uint32_t cp;
        if (lead >= 0xc2 && lead <= 0xdf) {
            len = 2;
            cp = lead & 0x1f;
        } else if (lead >= 0xe0 && lead <= 0xef) {
            len = 3;
            cp = lead & 0x0f;
        } else if (lead >= 0xf0 && lead <= 0xf4) {
            len = 4;
            cp = lead & 0x07;
        } else {
            return fail("invalid UTF-8");
        }
        if (s_.size() - pos_ < len) {
            return fail("truncated UTF-8");
        }
        for (size_t i = 1; i < len; ++i) {
            const unsigned char c = static_cast<unsigned char>(s_[pos_ + i]);
            if ((c & 0xc0) != 0x80) {
                return fail("invalid UTF-8");
            }
            cp = (cp << 6) | (c & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff)) {
            return fail("invalid UTF-8");
        }
        out.append(s_.substr(pos_, len));
        pos_ += len;
        return true;
    }

    bool
    parseString(std::string &out) {
        ++pos_; // opening quote
        for (;;) {
            if (atEnd()) {
                return fail("unterminated string");
            }
            const unsigned char c = peek();
            if (c == '"') {
                ++pos_;
                return true;
            }
            if (c < 0x20) {
                return fail("control character in string");
            }
            if (c >= 0x80) {
                if (!copyUtf8(out)) {
                    return false;
                }
                continue;
            }
            ++pos_;
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (atEnd()) {
                return fail("unterminated escape");
            }
            const unsigned char e = peek();
            ++pos_;
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out += static_cast<char>(e);
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                uint32_t cp;
                if (!hex4(cp)) {
                    return false;
                }
                if (cp >= 0xdc00 && cp <= 0xdfff) {
                    return fail("lone low surrogate");
                }
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    if (s_.substr(pos_, 2) != "\\u") {
                        return fail("lone high surrogate");
                    }
                    pos_ += 2;
                    uint32_t lo;
                    if (!hex4(lo)) {
                        return false;
                    }
                    if (lo < 0xdc00 || lo > 0xdfff) {
                        return fail("bad surrogate pair");
                    }
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                appendUtf8(out, cp);
                break;
            }
            default:
                return fail("invalid escape");
            }
        }
    }

    bool
    digits() {
        const size_t start = pos_;
        while (!atEnd() && peek() >= '0' && peek() <= '9') {
            ++pos_;
        }
        return pos_ > start;
    }

    bool
    parseNumber(std::string &out) {
        const size_t start = pos_;
        if (!atEnd() && peek() == '-') {
            ++pos_;
        }
        if (atEnd()) {
            return fail("invalid number");
        }
        if (peek() == '0') {
            ++pos_;
        } else if (!digits()) {
            return fail("invalid value");
        }
        if (!atEnd() && peek() == '.') {
            ++pos_;
            if (!digits()) {
                return fail("invalid number");
            }
        }
        if (!atEnd() && (peek() == 'e' || peek() == 'E')) {
            ++pos_;
            if (!atEnd() && (peek() == '+' || peek() == '-')) {
                ++pos_;
            }
            if (!digits()) {
                return fail("invalid number");
            }
        }
        out.assign(s_.substr(start, pos_ - start));
        return true;
    }

    std::string_view s_;
    size_t pos_ = 0;
    std::string why_;
};

// Decimal integer text as the gateway writes it: optional '-', no leading zeros, fits int64.
bool
parseIntText(std::string_view t, int64_t &out) noexcept {
    if (t.empty()) {
        return false;
    }
    const size_t digits_at = t[0] == '-' ? 1 : 0;
    if (t.size() == digits_at || (t[digits_at] == '0' && t.size() > digits_at + 1)) {
        return false;
    }
    int64_t v = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) {
        return false;
    }
    out = v;
    return true;
}

constexpr char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
b64Value(unsigned char c) noexcept {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

} // namespace

bool
nixlJsonParse(std::string_view text, nixlJsonValue &out, std::string &err) {
    out = nixlJsonValue{};
    jsonReader r(text);
    return r.parseDocument(out, err);
}

bool
nixlJsonInt(const nixlJsonValue *v, int64_t &out, int64_t def) noexcept {
    if (v == nullptr) {
        out = def;
        return true;
    }
    if (v->kind != nixlJsonValue::kind_t::NUMBER && v->kind != nixlJsonValue::kind_t::STRING) {
        return false;
    }
    return parseIntText(v->text, out);
}

bool
nixlJsonString(const nixlJsonValue *v, std::string &out) {
    if (v == nullptr) {
        out.clear();
        return true;
    }
    if (v->kind != nixlJsonValue::kind_t::STRING) {
        return false;
    }
    out = v->text;
    return true;
}

bool
nixlJsonBool(const nixlJsonValue *v, bool &out) noexcept {
    if (v == nullptr) {
        out = false;
        return true;
    }
    if (v->kind != nixlJsonValue::kind_t::BOOL) {
        return false;
    }
    out = v->boolean;
    return true;
}

std::string
nixlJsonQuote(std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20) {
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else {
            out += ch;
        }
    }
    out += '"';
    return out;
}

std::string
nixlBase64Encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const uint32_t n = (uint32_t(uint8_t(bytes[i])) << 16) |
            (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
        out += b64_alphabet[(n >> 18) & 63];
        out += b64_alphabet[(n >> 12) & 63];
        out += b64_alphabet[(n >> 6) & 63];
        out += b64_alphabet[n & 63];
    }
    const size_t rest = bytes.size() - i;
    if (rest == 1) {
        const uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
        out += b64_alphabet[(n >> 18) & 63];
        out += b64_alphabet[(n >> 12) & 63];
        out += "==";
    } else if (rest == 2) {
        const uint32_t n =
            (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8);
        out += b64_alphabet[(n >> 18) & 63];
        out += b64_alphabet[(n >> 12) & 63];
        out += b64_alphabet[(n >> 6) & 63];
        out += '=';
    }
    return out;
}

bool
nixlBase64Decode(std::string_view text, std::string &out) {
    out.clear();
    if (text.size() % 4 != 0) {
        return false;
    }
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        int v[4];
        int pad = 0;
        for (int j = 0; j < 4; ++j) {
            const auto c = static_cast<unsigned char>(text[i + j]);
            if (c == '=' && last && j >= 2) {
                v[j] = 0;
                ++pad;
                continue;
            }
            if (pad > 0) {
                return false; // data after padding
            }
            v[j] = b64Value(c);
            if (v[j] < 0) {
                return false;
            }
        }
        const uint32_t n = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) |
            (uint32_t(v[2]) << 6) | uint32_t(v[3]);
        // Unused bits must be zero: one accepted encoding per byte string.
        if ((pad == 1 && (n & 0xff) != 0) || (pad == 2 && (n & 0xffff) != 0)) {
            return false;
        }
        out += static_cast<char>((n >> 16) & 0xff);
        if (pad < 2) {
            out += static_cast<char>((n >> 8) & 0xff);
        }
        if (pad < 1) {
            out += static_cast<char>(n & 0xff);
        }
    }
    return true;
}
