/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file log_capture.h
 * @brief Test helpers shared by the unit tests: capture what the library logs on stderr and
 *        check the project's rule of one ERROR line naming the cause.
 *
 * Not thread-safe: gtest's stderr capture is process-wide; use one at a time.
 */
#ifndef NIXL_TEST_COMMON_LOG_CAPTURE_H
#define NIXL_TEST_COMMON_LOG_CAPTURE_H

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <sys/types.h>
#include <unistd.h>

namespace nixl_test {

/** Captures everything written to stderr (fd 2) while alive; stop() returns it. */
class stderrCapture {
public:
    stderrCapture() {
        ::testing::internal::CaptureStderr();
        active_ = true;
    }

    ~stderrCapture() {
        if (active_) {
            (void)::testing::internal::GetCapturedStderr();
        }
    }

    stderrCapture(const stderrCapture &) = delete;
    stderrCapture &
    operator=(const stderrCapture &) = delete;

    std::string
    stop() {
        active_ = false;
        return ::testing::internal::GetCapturedStderr();
    }

private:
    bool active_ = false;
};

/**
 * Everything written to fd 2 while it lives, readable at any time (text(), has()): for tests
 * that wait for a line to be said while the code runs, which stderrCapture (read once, at
 * stop()) cannot do. The core logger writes unbuffered, so a line is there once logged.
 */
class stderrReader {
public:
    stderrReader() {
        char path[] = "/tmp/nixl_stderr_XXXXXX";
        fd_ = ::mkstemp(path);
        ::unlink(path);
        std::fflush(stderr);
        saved_ = ::dup(2);
        ::dup2(fd_, 2);
    }
    ~stderrReader() {
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
    /** What was written since the previous next() (or since the start): a call's own lines. */
    std::string
    next() {
        std::string out;
        char buf[4096];
        for (ssize_t n; (n = ::pread(fd_, buf, sizeof(buf), read_)) > 0; read_ += n) {
            out.append(buf, static_cast<size_t>(n));
        }
        return out;
    }

private:
    int fd_ = -1;
    int saved_ = -1;
    off_t read_ = 0;
};

/** The ERROR lines of captured log output ("[nixl E ..."). */
inline std::vector<std::string>
errorLines(const std::string &log) {
    std::vector<std::string> out;
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("[nixl E ", 0) == 0) {
            out.push_back(line);
        }
    }
    return out;
}

/** Exactly one ERROR line, and it contains every one of needles. */
inline ::testing::AssertionResult
oneErrorLine(const std::string &log, std::initializer_list<std::string> needles) {
    std::vector<std::string> lines = errorLines(log);
    if (lines.size() != 1) {
        return ::testing::AssertionFailure()
               << lines.size() << " ERROR lines instead of one; log:\n"
               << log;
    }
    for (const auto &n : needles) {
        if (lines[0].find(n) == std::string::npos) {
            return ::testing::AssertionFailure()
                   << "the ERROR line does not contain \"" << n << "\": " << lines[0];
        }
    }
    return ::testing::AssertionSuccess();
}

} // namespace nixl_test

#endif // NIXL_TEST_COMMON_LOG_CAPTURE_H
