/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file test_backend_log.h
 * @brief Internal to the TEST backend: the pieces of its log lines ("agent 'A' remote 'B' desc 3: "
 *        and address ranges) and the raw reading of ABI enums, shared by its source files.
 *        Stateless helpers; safe from any thread.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_BACKEND_LOG_H
#define NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_BACKEND_LOG_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string_view>

namespace nixlTestLog {

inline constexpr long long no_desc = -1;

/**
 * Where an error happened, printed as the prefix of its log line, e.g.
 * "agent 'A' remote 'B' desc 3: ". Every error line names the three, "-" when one does not apply.
 */
struct where_t {
    std::string_view agent;
    std::string_view remote;
    long long index;
};

inline std::ostream &
operator<<(std::ostream &os, const where_t &w) {
    os << "agent '" << w.agent << "' remote ";
    if (w.remote.empty()) {
        os << "-";
    } else {
        os << "'" << w.remote << "'";
    }
    os << " desc ";
    if (w.index < 0) {
        os << "-";
    } else {
        os << w.index;
    }
    return os << ": ";
}

/** Short builders for the two structs above, to keep log statements on few lines. */
inline where_t
at(std::string_view agent, std::string_view remote, long long index = no_desc) {
    return where_t{agent, remote, index};
}

/** Prints [0xaddr, +len) for log lines. */
struct range_t {
    uintptr_t addr;
    size_t len;
};

inline std::ostream &
operator<<(std::ostream &os, const range_t &r) {
    return os << "[0x" << std::hex << r.addr << std::dec << ", +" << r.len << ")";
}

inline range_t
range(uintptr_t addr, size_t len) {
    return range_t{addr, len};
}

/*
 * The SDK casts the ABI's uint32_t operation and memory kind straight to the enums, so a value
 * outside the enumerators (a buggy or newer caller) reaches us as an enum object holding it.
 * Loading such an object is undefined (UBSan's -fsanitize=enum flags it); copying its bytes is
 * not, which lets us reject the value cleanly.
 */
template<typename E>
inline uint32_t
rawValue(const E &value) noexcept {
    static_assert(sizeof(E) == sizeof(uint32_t), "ABI enums travel as uint32_t");
    uint32_t raw;
    std::memcpy(&raw, &value, sizeof(raw));
    return raw;
}

} // namespace nixlTestLog

#endif // NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_BACKEND_LOG_H
