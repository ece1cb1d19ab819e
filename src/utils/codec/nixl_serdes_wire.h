/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_serdes_wire.h
 * @brief NIXL 1.4's serdes container, the one format its metadata blob and its UCX
 *        notifications travel in: a writer that produces it byte for byte, and a strictly
 *        positional reader that checks every length against the bytes really there.
 *
 * Layout (../shared/reference/nixl-wire.md, section 1):
 *
 *   stream := "nixlSerDes|" field*
 *   field  := TAG LEN VALUE '|'     TAG raw bytes (no length, may be empty), LEN 8 bytes LE
 *
 * There is no nesting, no trailer and no overall length; integers travel as fields whose VALUE
 * is the little-endian integer (LEN 8 for a count, 4 for a memory kind).
 *
 * The reader is stricter than NIXL's, never looser on what NIXL writes: a tag must match byte
 * for byte at the cursor (NIXL does not search either), LEN must fit in the bytes left
 * including the delimiter (NIXL trusts LEN), and each read may set a maximum LEN so that a
 * hostile stream cannot make the caller allocate. Like NIXL's, it does not check the
 * delimiter byte's value and ignores bytes after the last field the caller reads. A failed read
 * consumes nothing, so a caller may try another tag at the same place.
 *
 * Header-only (plugins do not link libnixl; the UCX plugin writes notifications with it).
 * Thread safety: none; a writer or reader is a short-lived local of one thread.
 */
#ifndef NIXL_SRC_UTILS_CODEC_NIXL_SERDES_WIRE_H
#define NIXL_SRC_UTILS_CODEC_NIXL_SERDES_WIRE_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "codec/nixl_le.h"

namespace nixlSerdesWire {

/** The 11 bytes every stream starts with. */
inline constexpr std::string_view magic{"nixlSerDes|"};
/** The byte a writer puts after each VALUE (a reader skips it unchecked, as NIXL's does). */
inline constexpr char delimiter = '|';
/** Bytes of a field besides its tag and value: LEN and the delimiter. */
inline constexpr size_t field_overhead = 8 + 1;

/** Whether in starts with the magic (the cheap test of "is this NIXL's container"). */
constexpr bool
hasMagic(std::string_view in) noexcept {
    return in.substr(0, magic.size()) == magic;
}

/** @brief Appends fields to a stream that starts with the magic. */
class writer {
public:
    writer() : out_(magic) {}

    /** A field with a byte-string VALUE (NIXL's addStr and addBuf write the same bytes). */
    void
    str(std::string_view tag, std::string_view value) {
        out_.append(tag);
        nixlLe::put<uint64_t>(out_, value.size());
        out_.append(value);
        out_.push_back(delimiter);
    }

    /** A field whose VALUE is the little-endian T (a count as uint64_t, a mem kind uint32_t). */
    template<typename T>
    void
    integer(std::string_view tag, T v) {
        static_assert(std::is_unsigned_v<T> && !std::is_same_v<T, bool>);
        out_.append(tag);
        nixlLe::put<uint64_t>(out_, sizeof(T));
        nixlLe::put<T>(out_, v);
        out_.push_back(delimiter);
    }

    const std::string &
    bytes() const noexcept {
        return out_;
    }

    /** The stream, moved out; the writer is empty afterwards. */
    std::string
    take() noexcept {
        return std::move(out_);
    }

private:
    std::string out_;
};

/**
 * @brief Reads fields in order. Construct, check ok() (false: no magic), then read each field
 *        with the tag the format puts there.
 */
class reader {
public:
    explicit reader(std::string_view in) noexcept : in_(in), pos_(hasMagic(in) ? magic.size() : 0) {}

    /** False when the input does not start with the magic; every read then fails. */
    bool
    ok() const noexcept {
        return pos_ != 0;
    }

    /**
     * The VALUE of the field at the cursor if its tag is tag and its LEN is at most max; out
     * views the input. False (nothing consumed) on another tag, a LEN over max, or a field that
     * runs past the end.
     */
    bool
    str(std::string_view tag,
        std::string_view &out,
        size_t max = std::numeric_limits<size_t>::max()) noexcept {
        size_t len = 0;
        size_t value_at = 0;
        if (!head(tag, len, value_at) || len > max) {
            return false;
        }
        out = in_.substr(value_at, len);
        pos_ = value_at + len + 1;
        return true;
    }

    /** The little-endian T of the field at the cursor; its LEN must be sizeof(T) exactly. */
    template<typename T>
    bool
    integer(std::string_view tag, T &out) noexcept {
        static_assert(std::is_unsigned_v<T> && !std::is_same_v<T, bool>);
        size_t len = 0;
        size_t value_at = 0;
        if (!head(tag, len, value_at) || len != sizeof(T)) {
            return false;
        }
        out = nixlLe::get<T>(in_.data() + value_at);
        pos_ = value_at + len + 1;
        return true;
    }

    /** Whether the next field carries tag (and is whole); consumes nothing. */
    bool
    next(std::string_view tag) const noexcept {
        size_t len = 0;
        size_t value_at = 0;
        return head(tag, len, value_at);
    }

    /** Bytes after the last field read (NIXL ignores them; so may the caller). */
    size_t
    left() const noexcept {
        return in_.size() - pos_;
    }

    /** Offset of the cursor in the input, for log lines. */
    size_t
    offset() const noexcept {
        return pos_;
    }

private:
    /** Tag, LEN and a whole VALUE plus delimiter at the cursor. */
    bool
    head(std::string_view tag, size_t &len, size_t &value_at) const noexcept {
        if (pos_ == 0 || left() < tag.size() + 8 || in_.substr(pos_, tag.size()) != tag) {
            return false;
        }
        const uint64_t n = nixlLe::get<uint64_t>(in_.data() + pos_ + tag.size());
        const size_t after_len = pos_ + tag.size() + 8;
        // n + 1 (the delimiter) must fit in what is left; written so that it cannot overflow.
        if (in_.size() - after_len < 1 || n > in_.size() - after_len - 1) {
            return false;
        }
        len = static_cast<size_t>(n);
        value_at = after_len;
        return true;
    }

    std::string_view in_;
    size_t pos_;
};

} // namespace nixlSerdesWire

#endif // NIXL_SRC_UTILS_CODEC_NIXL_SERDES_WIRE_H
