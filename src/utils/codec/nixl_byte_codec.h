/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_byte_codec.h
 * @brief The little-endian byte codec of the plugins' wire formats: a writer that appends
 *        trivially-copyable values and length-prefixed byte strings, and a positional reader
 *        in which every read is bounds-checked.
 *
 * Templated on the length prefix (uint16_t for LIBFABRIC, uint32_t for UCX), the only way the
 * backends' formats differ at this level. Header-only, like nixl_crc32c.h, because plugins do not
 * link libnixl.
 *
 * Byte order: unsigned integers are written least significant byte first (nixl_le.h); other
 * values are copied in host order, so the header refuses to compile on a big-endian host. Every supported target (x86_64, aarch64) is little-endian, and the formats also carry
 * non-integral trivially-copyable values that a per-integer byte swap could not convert; a
 * compile error on a big-endian port is better than wire bytes that silently differ.
 *
 * Thread-safety: none; a writer or reader is used by one thread at a time (they are short-lived
 * locals of an encode or decode call).
 */
#ifndef NIXL_SRC_UTILS_CODEC_NIXL_BYTE_CODEC_H
#define NIXL_SRC_UTILS_CODEC_NIXL_BYTE_CODEC_H

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "codec/nixl_le.h"

namespace nixlCodec {

/** Unsigned integers go through nixlLe (the one little-endian integer codec, shared with the
 *  metadata blob and P2P frames); other trivially-copyable values are copied as they are. */
template<typename T>
inline constexpr bool le_integer_v = std::is_unsigned_v<T> && !std::is_same_v<T, bool>;

static_assert(std::endian::native == std::endian::little,
              "the plugin wire formats are little-endian; see nixl_byte_codec.h");

/**
 * @brief Appends values to a string. Writes either into a caller's string (which then also keeps
 *        what was in it before) or, default-constructed, into its own buffer (str()).
 */
template<typename LenT>
class nixlByteWriter {
    static_assert(std::is_unsigned_v<LenT>, "the length prefix is an unsigned integer");

public:
    nixlByteWriter() noexcept : out_(&own_) {}

    explicit nixlByteWriter(std::string &out) noexcept : out_(&out) {}

    // out_ may point at own_: a copy would write into the original's buffer.
    nixlByteWriter(const nixlByteWriter &) = delete;
    nixlByteWriter &
    operator=(const nixlByteWriter &) = delete;

    template<typename T>
    void
    put(const T &v) {
        static_assert(std::is_trivially_copyable_v<T>);
        if constexpr (le_integer_v<T>) {
            nixlLe::put<T>(*out_, v);
        } else {
            out_->append(reinterpret_cast<const char *>(&v), sizeof(T));
        }
    }

    /** Appends the bytes as they are, without a length. */
    void
    raw(std::string_view s) {
        out_->append(s);
    }

    /**
     * Appends the length as LenT, then the bytes. A string too long for the prefix is refused
     * (false, nothing written) rather than written with a truncated length.
     */
    bool
    bytes(std::string_view s) {
        if (s.size() > std::numeric_limits<LenT>::max()) {
            return false;
        }
        put<LenT>(static_cast<LenT>(s.size()));
        raw(s);
        return true;
    }

    bool
    bytes(const void *data, size_t len) {
        return bytes(std::string_view(static_cast<const char *>(data), len));
    }

    std::string &
    str() noexcept {
        return *out_;
    }

private:
    std::string own_;
    std::string *out_;
};

/**
 * @brief Reads what nixlByteWriter<LenT> wrote. A read that would run past the end fails (false)
 *        and consumes nothing, so the reader never touches bytes outside its input.
 */
template<typename LenT>
class nixlByteReader {
    static_assert(std::is_unsigned_v<LenT>, "the length prefix is an unsigned integer");

public:
    explicit nixlByteReader(std::string_view in) noexcept : in_(in) {}

    template<typename T>
    bool
    get(T &v) noexcept {
        static_assert(std::is_trivially_copyable_v<T>);
        if (left() < sizeof(T)) {
            return false;
        }
        if constexpr (le_integer_v<T>) {
            v = nixlLe::get<T>(in_.data() + pos_);
        } else {
            std::memcpy(&v, in_.data() + pos_, sizeof(T));
        }
        pos_ += sizeof(T);
        return true;
    }

    /** Exactly n bytes, without a length; out views the input. */
    bool
    raw(std::string_view &out, size_t n) noexcept {
        if (left() < n) {
            return false;
        }
        out = in_.substr(pos_, n);
        pos_ += n;
        return true;
    }

    /**
     * A length-prefixed string; out views the input. Fails, consuming nothing, when the length
     * exceeds max or the bytes left.
     */
    bool
    bytes(std::string_view &out, size_t max = std::numeric_limits<LenT>::max()) noexcept {
        if (left() < sizeof(LenT)) {
            return false;
        }
        const LenT n = nixlLe::get<LenT>(in_.data() + pos_);
        if (n > max || left() - sizeof(LenT) < n) {
            return false;
        }
        pos_ += sizeof(LenT);
        return raw(out, n);
    }

    size_t
    left() const noexcept {
        return in_.size() - pos_;
    }

    bool
    atEnd() const noexcept {
        return pos_ == in_.size();
    }

private:
    std::string_view in_;
    size_t pos_ = 0;
};

} // namespace nixlCodec

#endif // NIXL_SRC_UTILS_CODEC_NIXL_BYTE_CODEC_H
