/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Test helper: reads back what the process writes to fd 2 (the core logger's stream), for
// tests that assert a line is said. Header-only; not thread-safe to construct (it swaps fd 2).
#ifndef NIXL_TEST_UNIT_STDERR_CAPTURE_H
#define NIXL_TEST_UNIT_STDERR_CAPTURE_H

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/types.h>
#include <unistd.h>

namespace nixl_test {

/** Everything written to fd 2 while it lives (the core logger writes there, unbuffered). */
class stderrCapture {
public:
    stderrCapture() {
        char path[] = "/tmp/nixl_stderr_XXXXXX";
        fd_ = ::mkstemp(path);
        ::unlink(path);
        std::fflush(stderr);
        saved_ = ::dup(2);
        ::dup2(fd_, 2);
    }
    ~stderrCapture() {
        restore();
        ::close(fd_);
    }
    void
    restore() {
        if (saved_ >= 0) {
            std::fflush(stderr);
            ::dup2(saved_, 2);
            ::close(saved_);
            saved_ = -1;
        }
    }
    std::string
    text() const {
        std::string out;
        char buf[4096];
        for (off_t off = 0;;) {
            const ssize_t n = ::pread(fd_, buf, sizeof(buf), off);
            if (n <= 0) {
                break;
            }
            out.append(buf, static_cast<size_t>(n));
            off += n;
        }
        return out;
    }
    bool
    has(const std::string &needle) const {
        return text().find(needle) != std::string::npos;
    }

private:
    int fd_ = -1;
    int saved_ = -1;
};

} // namespace nixl_test

#endif // NIXL_TEST_UNIT_STDERR_CAPTURE_H
