/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "chrome_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

// Whether a line starting with these bytes is a span or a mark (flow, metadata and counter
// lines are not events of their own).
bool
isEventLine(std::string_view head) noexcept {
    return head.starts_with("{\"ph\":\"X\"") || head.starts_with("{\"ph\":\"i\"");
}

} // namespace

namespace nixlChromeFile {

[[noreturn]] void
refuse(const std::string &dir, const std::string &why) {
    // The value cut as every logged value is (256 bytes and its length).
    const std::string shown = dir.size() <= 256
        ? dir
        : dir.substr(0, 256) + "... (" + std::to_string(dir.size()) + " bytes)";
    throw std::runtime_error("chrome: NIXL_TRACE_DIR='" + shown + "' " + why +
                             "; this agent runs without the chrome trace plugin");
}

// Opens NIXL_TRACE_DIR as a directory fd, creating it 0700 when missing. Refuses a symbolic
// link (the last component; O_NOFOLLOW), a directory of another user and a group- or
// world-writable one: another user could then replace or read the trace file.
int
openDir(std::string dir) {
    if (dir.empty()) {
        refuse(dir, "is empty");
    }
    // "link/" would follow the link even with O_NOFOLLOW.
    while (dir.size() > 1 && dir.back() == '/') {
        dir.pop_back();
    }
    bool created = false;
    if (mkdir(dir.c_str(), 0700) == 0) {
        created = true;
    } else if (errno == ENOENT) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
        if (ec) {
            refuse(dir, "cannot be created: " + ec.message());
        }
        if (mkdir(dir.c_str(), 0700) == 0) {
            created = true;
        } else if (errno != EEXIST) {
            refuse(dir, std::string("cannot be created: ") + std::strerror(errno));
        }
    } else if (errno != EEXIST) {
        refuse(dir, std::string("cannot be created: ") + std::strerror(errno));
    }
    const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        struct stat lst{};
        if (lstat(dir.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
            refuse(dir, "is a symbolic link (refused: name the directory itself)");
        }
        refuse(dir, std::string("cannot be opened as a directory: ") + std::strerror(e));
    }
    // The umask may have taken bits from mkdir's mode; a directory we created is exactly 0700.
    if (created && fchmod(fd, 0700) != 0) {
        const int e = errno;
        close(fd);
        refuse(dir, std::string("cannot be made private (0700): ") + std::strerror(e));
    }
    struct stat st{};
    if (fstat(fd, &st) != 0) {
        const int e = errno;
        close(fd);
        refuse(dir, std::string("cannot be read: ") + std::strerror(e));
    }
    if (st.st_uid != geteuid()) {
        close(fd);
        refuse(dir, "is owned by uid " + std::to_string(st.st_uid) + ", not by this process's uid " +
                   std::to_string(geteuid()));
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
        close(fd);
        refuse(dir, std::string("is group- or world-writable (mode ") + mode +
                   "); make it 0700 or 0755");
    }
    return fd;
}

// nixl-trace-<pid>-<UTC start time, microseconds>.json; "-<n>" before ".json" if taken.
std::string
fileName(uint32_t pid, const timespec &now, int attempt) {
    tm utc{};
    gmtime_r(&now.tv_sec, &utc);
    char buf[96];
    std::snprintf(buf, sizeof(buf), "nixl-trace-%u-%04d%02d%02dT%02d%02d%02d.%06ldZ", pid,
                  utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                  utc.tm_sec, static_cast<long>(now.tv_nsec / 1000));
    std::string name(buf);
    if (attempt > 0) {
        name += "-" + std::to_string(attempt);
    }
    return name + ".json";
}

// The spans and marks among the whole lines of iov: what a failed write loses, in the unit of
// the drop counter. Bytes before the first newline belong to a line counted elsewhere unless
// atLineStart.
size_t
countEvents(const iovec *iov, size_t n, bool atLineStart) {
    size_t events = 0;
    char head[16];
    size_t headLen = 0; // bytes of the current line seen so far, up to sizeof(head)
    bool counting = atLineStart;
    for (size_t i = 0; i < n; ++i) {
        const char *p = static_cast<const char *>(iov[i].iov_base);
        for (size_t k = 0; k < iov[i].iov_len; ++k) {
            if (p[k] == '\n') {
                events += counting && isEventLine(std::string_view(head, headLen)) ? 1 : 0;
                headLen = 0;
                counting = true;
            } else if (headLen < sizeof(head)) {
                head[headLen++] = p[k];
            }
        }
    }
    return events;
}

// Whether the line holding the byte before position (i, k) of iov is a span or a mark: the
// line a failed write cut.
bool
cutLineIsEvent(const std::vector<iovec> &iov, size_t i, size_t k) {
    auto byteAt = [&](size_t a, size_t b) { return static_cast<const char *>(iov[a].iov_base)[b]; };
    for (;;) { // back to the line's first byte
        if (k == 0) {
            if (i == 0) {
                break;
            }
            --i;
            k = iov[i].iov_len;
            continue;
        }
        if (byteAt(i, k - 1) == '\n') {
            break;
        }
        --k;
    }
    char head[16];
    size_t headLen = 0;
    while (headLen < sizeof(head) && i < iov.size()) {
        if (k < iov[i].iov_len) {
            head[headLen++] = byteAt(i, k++);
        } else {
            ++i;
            k = 0;
        }
    }
    return isEventLine(std::string_view(head, headLen));
}

} // namespace nixlChromeFile
