/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file chrome_json.h
 * @brief Appending JSON pieces of Trace Event Format lines, without streams or printf (the
 *        event path is hot): a line buffer with inline appends and the value formatters.
 *
 * Every function appends to its `out`; once `out` has grown to the size of the largest line
 * seen it never allocates again. Stateless and thread-safe (each caller owns its buffer).
 */
#ifndef NIXL_TRACE_CHROME_JSON_H
#define NIXL_TRACE_CHROME_JSON_H

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

/**
 * memcpy for the event path and the line buffer: g++ expands std::memcpy of a length it can
 * bound (e.g. by kMaxStringBytes) inline as "rep movsq", whose start-up cost (~30 cycles) was
 * most of the event path's time, and calls the library for the others (the line buffer's many
 * short appends).
 * Short strings (keys, agent names) take two overlapping loads and stores; longer ones the
 * library's memcpy, called out of line.
 */
[[gnu::noinline]] void
nixlChromeCopyLong(void *dst, const void *src, size_t n) noexcept;

// g++ 12 warns about the 8..16 branch where it inlines this for a source it knows is smaller
// (an escape of at most 6 bytes); n excludes that branch there.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
inline void
nixlChromeCopyBytes(char *dst, const char *src, size_t n) noexcept {
    if (__builtin_constant_p(n)) {
        std::memcpy(dst, src, n); // header, lengths, values: plain moves
    } else if (n >= 8 && n <= 16) {
        uint64_t a, b;
        std::memcpy(&a, src, 8);
        std::memcpy(&b, src + n - 8, 8);
        std::memcpy(dst, &a, 8);
        std::memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        std::memcpy(&a, src, 4);
        std::memcpy(&b, src + n - 4, 4);
        std::memcpy(dst, &a, 4);
        std::memcpy(dst + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; ++i) {
            dst[i] = src[i];
        }
    } else {
        nixlChromeCopyLong(dst, src, n);
    }
}
#pragma GCC diagnostic pop

/**
 * A growable byte buffer for one event's lines, with inline appends (the event path makes a
 * few dozen per event, so calls into libstdc++ per append would dominate its cost). Grows to
 * the longest line seen, then never allocates again. Not thread-safe: one per thread.
 */
class nixlChromeLine {
public:
    void
    clear() noexcept {
        len_ = 0;
    }

    const char *
    data() const noexcept {
        return buf_.get();
    }

    size_t
    size() const noexcept {
        return len_;
    }

    /** Makes room for n more bytes; throws std::bad_alloc. */
    void
    reserve(size_t n) {
        if (cap_ - len_ < n) {
            grow(n);
        }
    }

    void
    append(const char *p, size_t n) {
        reserve(n);
        nixlChromeCopyBytes(buf_.get() + len_, p, n);
        len_ += n;
    }

    void
    append(std::string_view v) {
        append(v.data(), v.size());
    }

    /** Drops the bytes from n on (n <= size()). */
    void
    truncate(size_t n) noexcept {
        len_ = n < len_ ? n : len_;
    }

    /** A string literal, its length known at compile time. */
    template<size_t N>
    void
    lit(const char (&s)[N]) {
        append(s, N - 1);
    }

    void
    ch(char c) {
        reserve(1);
        buf_[len_++] = c;
    }

    /** Exchanges the bytes (and buffers) of two lines: a batch changes hands without a copy. */
    void
    swap(nixlChromeLine &o) noexcept {
        buf_.swap(o.buf_);
        std::swap(len_, o.len_);
        std::swap(cap_, o.cap_);
    }

private:
    void
    grow(size_t n) {
        size_t cap = cap_ == 0 ? 1024 : cap_;
        while (cap - len_ < n) {
            cap *= 2;
        }
        std::unique_ptr<char[]> b(new char[cap]);
        if (len_ > 0) {
            std::memcpy(b.get(), buf_.get(), len_);
        }
        buf_ = std::move(b);
        cap_ = cap;
    }

    std::unique_ptr<char[]> buf_;
    size_t len_ = 0;
    size_t cap_ = 0;
};

namespace nixlChromeJson {

/** Longest string value (input bytes) written; longer ones are cut and marked (see docs). */
inline constexpr size_t kMaxStringBytes = 4096;

// Every function below appends to `out`: a std::string or a nixlChromeLine (anything with
// append(const char *, size_t)).

/** Decimal, as JSON numbers: any integer type (24 bytes hold every 64-bit value). */
template<typename Out, typename Int>
void
appendInt(Out &out, Int v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, static_cast<size_t>(r.ptr - buf));
}

template<typename Out>
void
appendU64(Out &out, uint64_t v) {
    appendInt(out, v);
}

template<typename Out>
void
appendI64(Out &out, int64_t v) {
    appendInt(out, v);
}

/** Shortest round-trip form; NaN and infinities (not JSON numbers) as the strings "NaN", ... */
template<typename Out>
void
appendDouble(Out &out, double v) {
    if (std::isnan(v)) {
        out.append("\"NaN\"", 5);
        return;
    }
    if (std::isinf(v)) {
        out.append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", v > 0 ? 10 : 11);
        return;
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, static_cast<size_t>(r.ptr - buf));
}

/** Nanoseconds as microseconds with three decimals ("1234.567"): the format's ts and dur. */
template<typename Out>
void
appendMicros(Out &out, uint64_t ns) {
    char buf[32];
    auto r = std::to_chars(buf, buf + 24, ns / 1000);
    const unsigned frac = static_cast<unsigned>(ns % 1000);
    r.ptr[0] = '.';
    r.ptr[1] = static_cast<char>('0' + frac / 100);
    r.ptr[2] = static_cast<char>('0' + frac / 10 % 10);
    r.ptr[3] = static_cast<char>('0' + frac % 10);
    out.append(buf, static_cast<size_t>(r.ptr + 4 - buf));
}

/** "0x" and lowercase hex digits, e.g. flow ids and correlation ids as JSON strings. */
template<typename Out>
void
appendHex(Out &out, uint64_t v) {
    char buf[18];
    buf[0] = '0';
    buf[1] = 'x';
    const auto r = std::to_chars(buf + 2, buf + sizeof(buf), v, 16);
    out.append(buf, static_cast<size_t>(r.ptr - buf));
}

namespace detail {
    // Length of the valid UTF-8 sequence starting at p (at most `left` bytes), 0 if invalid:
    // rejects overlong forms, surrogates and code points above U+10FFFF.
    size_t
    utf8Length(const unsigned char *p, size_t left) noexcept;

    // The escape of one byte that cannot be copied as is (quote, backslash, control, or not
    // part of valid UTF-8); returns its length in `esc`.
    size_t
    escapeByte(unsigned char c, char esc[6]) noexcept;
} // namespace detail

/**
 * Appends the body of a JSON string (no quotes) holding `s`: '"', '\\' and control characters
 * escaped, valid UTF-8 copied as is, and each byte that is not part of a valid UTF-8 sequence
 * written as \u00XX, so that any bytes give valid JSON. At most kMaxStringBytes of `s` are
 * written; a longer value ends with "...[truncated N bytes]".
 */
template<typename Out>
void
appendEscaped(Out &out, std::string_view s);

template<typename Out>
void
appendEscapedCut(Out &out, std::string_view s, size_t full);

template<typename Out>
void
appendEscaped(Out &out, std::string_view s) {
    appendEscapedCut(out, s.substr(0, s.size() < kMaxStringBytes ? s.size() : kMaxStringBytes),
                     s.size());
}

/**
 * The same for a value already cut to its first s.size() (at most kMaxStringBytes) bytes, whose
 * length was `full`: what the writer thread formats from a queued record.
 */
template<typename Out>
void
appendEscapedCut(Out &out, std::string_view s, size_t full) {
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
        if (c >= 0x80) {
            const size_t len = detail::utf8Length(p + i, n - i);
            if (len != 0) {
                i += len;
                continue;
            }
        }
        out.append(s.data() + run, i - run);
        char esc[6];
        out.append(esc, detail::escapeByte(c, esc));
        ++i;
        run = i;
    }
    out.append(s.data() + run, n - run);
    if (full > n) {
        out.append("...[truncated ", 14);
        appendU64(out, full - n);
        out.append(" bytes]", 7);
    }
}

} // namespace nixlChromeJson

#endif // NIXL_TRACE_CHROME_JSON_H
