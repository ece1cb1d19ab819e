/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_fd.h
 * @brief File-descriptor helpers shared by the store's writer and reader.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_FD_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_FD_H

#include <cstring>
#include <string>

#include <unistd.h>

namespace nixlPromMp {

/** strerror_r's message for err (thread-safe, unlike strerror). */
inline std::string
errnoText(int err) {
    char buf[128];
    // GNU strerror_r returns the message, which may not be buf.
    return std::string(strerror_r(err, buf, sizeof(buf)));
}

/** Closes an fd on scope exit unless released. One owner, one thread. */
struct fdGuard {
    int fd = -1;
    ~fdGuard() {
        if (fd >= 0) {
            close(fd);
        }
    }
    int
    release() noexcept {
        const int f = fd;
        fd = -1;
        return f;
    }
};

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_FD_H
