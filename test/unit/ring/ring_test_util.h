/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Helpers for the ring tests: a scratch directory and raw file bytes.
#ifndef NIXL_TEST_UNIT_RING_RING_TEST_UTIL_H
#define NIXL_TEST_UNIT_RING_RING_TEST_UTIL_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

/** A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction. */
class ringTestDir {
public:
    ringTestDir() {
        const char *tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
            "/nixl_ring_test.XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed for " + tmpl);
        }
        root_ = tmpl;
    }

    ~ringTestDir() {
        std::error_code ec;
        std::filesystem::remove_all(root_, ec);
    }

    ringTestDir(const ringTestDir &) = delete;
    ringTestDir &
    operator=(const ringTestDir &) = delete;

    const std::string &
    root() const {
        return root_;
    }

    std::string
    path(const std::string &name) const {
        return root_ + "/" + name;
    }

private:
    std::string root_;
};

template<typename I>
inline void
putInt(std::vector<uint8_t> &b, size_t off, I v) {
    std::memcpy(b.data() + off, &v, sizeof(v));
}

template<typename I>
inline I
getInt(const std::vector<uint8_t> &b, size_t off) {
    I v{};
    std::memcpy(&v, b.data() + off, sizeof(v));
    return v;
}

inline void
writeBytes(const std::string &p, const std::vector<uint8_t> &b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline std::vector<uint8_t>
readBytes(const std::string &p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f),
                                std::istreambuf_iterator<char>());
}

inline bool
fileExists(const std::string &p) {
    std::error_code ec;
    return std::filesystem::exists(std::filesystem::symlink_status(p, ec));
}

inline uint64_t
fileSize(const std::string &p) {
    std::error_code ec;
    return std::filesystem::file_size(p, ec);
}

/** A ring file in NIXL 1.4's layout version 4 (40-byte header), holding two events. */
inline void
writeV4Ring(const std::string &p, uint64_t capacity) {
    std::vector<uint8_t> b(40 + 16 * capacity, 0);
    putInt<uint64_t>(b, 0, 2); // write_pos
    putInt<uint64_t>(b, 8, 0); // read_pos
    putInt<int32_t>(b, 16, 4); // version
    putInt<int32_t>(b, 20, 4); // expected_version
    putInt<uint64_t>(b, 24, capacity);
    putInt<uint64_t>(b, 32, capacity - 1);
    putInt<uint32_t>(b, 40, 0);
    putInt<uint64_t>(b, 48, 4096);
    putInt<uint32_t>(b, 56, 2);
    putInt<uint64_t>(b, 64, 1);
    writeBytes(p, b);
}

/**
 * A ring file in layout version 5 (libnixl before issue 12: the header of version 6, but event
 * types numbered with "events dropped" at 20), holding two events: 20 = 3 and 0 = 4096. A v6
 * reader that accepted it would print the 3 under agent_trace_phases_dropped.
 */
inline void
writeV5Ring(const std::string &p, uint64_t capacity) {
    std::vector<uint8_t> b(512 + 16 * capacity, 0);
    putInt<uint64_t>(b, 0, 2); // write_pos
    putInt<uint64_t>(b, 8, capacity);
    putInt<int32_t>(b, 16, 5); // version
    putInt<int32_t>(b, 20, 5); // expected_version
    putInt<uint64_t>(b, 24, capacity - 1);
    putInt<uint64_t>(b, 256, 0); // read_pos
    putInt<uint32_t>(b, 512, 20);
    putInt<uint64_t>(b, 520, 3);
    putInt<uint32_t>(b, 528, 0);
    putInt<uint64_t>(b, 536, 4096);
    writeBytes(p, b);
}

/** One log line an exporter wrote through core services (see captureLog). */
struct logged {
    int32_t level;
    std::string msg;
};

/** A core-services log callback that appends to the std::vector<logged> in ctx. */
inline void
captureLog(void *ctx, int32_t level, const char *msg, size_t len) {
    static_cast<std::vector<logged> *>(ctx)->push_back(logged{level, std::string(msg, len)});
}

/** A core-services log_enabled callback: every level is enabled. */
inline int32_t
logAll(void *, int32_t) {
    return 1;
}

#endif // NIXL_TEST_UNIT_RING_RING_TEST_UTIL_H
