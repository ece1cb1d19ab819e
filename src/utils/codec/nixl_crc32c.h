/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_crc32c.h
 * @brief CRC32C (Castagnoli, reflected polynomial 0x82F63B78: the checksum of iSCSI and ext4),
 *        the one implementation that seals the UCX and LIBFABRIC wire formats.
 *
 * Header-only so that plugins (which do not link libnixl) and the tests that compile the wire
 * files directly share it. Table-driven, one byte per step: the inputs are connection info and
 * public data of tens to hundreds of bytes, read once per peer or registration, so a faster
 * (slice-by-8, SSE4.2) variant would buy nothing measurable.
 */
#ifndef NIXL_SRC_UTILS_CODEC_NIXL_CRC32C_H
#define NIXL_SRC_UTILS_CODEC_NIXL_CRC32C_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace nixlCodec {

namespace internal {

    constexpr std::array<uint32_t, 256>
    crc32cTable() {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) {
                c = (c & 1u) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            }
            t[i] = c;
        }
        return t;
    }

    inline constexpr std::array<uint32_t, 256> crc32c_table = crc32cTable();

    constexpr uint32_t
    crc32cBytes(const unsigned char *p, size_t len, uint32_t crc) noexcept {
        crc = ~crc;
        for (size_t i = 0; i < len; ++i) {
            crc = crc32c_table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
        }
        return ~crc;
    }

} // namespace internal

/** CRC32C of data[0..len); pass a previous result as crc to continue over more bytes. */
inline uint32_t
crc32c(const void *data, size_t len, uint32_t crc = 0) noexcept {
    return internal::crc32cBytes(static_cast<const unsigned char *>(data), len, crc);
}

// The standard check value (RFC 3720, appendix B.4): CRC32C("123456789") = 0xE3069283.
static_assert(
    [] {
        constexpr unsigned char check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
        return internal::crc32cBytes(check, sizeof(check), 0);
    }() == 0xE3069283u,
    "CRC32C check value");

} // namespace nixlCodec

#endif // NIXL_SRC_UTILS_CODEC_NIXL_CRC32C_H
