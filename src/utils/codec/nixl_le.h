/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_le.h
 * @brief Little-endian unsigned integers in wire formats (the metadata blob, P2P frames),
 *        written and read byte by byte: no read is misaligned and the host's byte order does
 *        not matter.
 *
 * Header-only (the fuzzers compile the format code alone; plugins do not link libnixl). The
 * plugins' nixl_byte_codec.h writes its integers with it. Thread safety: pure functions.
 */
#ifndef NIXL_SRC_UTILS_CODEC_NIXL_LE_H
#define NIXL_SRC_UTILS_CODEC_NIXL_LE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace nixlLe {

/** Appends v's sizeof(T) bytes to out, least significant first. */
template<typename T>
void
put(std::string &out, T v) {
    static_assert(std::is_unsigned_v<T>);
    for (size_t i = 0; i < sizeof(T); ++i) {
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
}

/** The T whose sizeof(T) bytes start at p, least significant first. */
template<typename T>
T
get(const char *p) noexcept {
    static_assert(std::is_unsigned_v<T>);
    T v = 0;
    for (size_t i = sizeof(T); i-- > 0;) {
        v = static_cast<T>((v << 8) | static_cast<uint8_t>(p[i]));
    }
    return v;
}

} // namespace nixlLe

#endif // NIXL_SRC_UTILS_CODEC_NIXL_LE_H
