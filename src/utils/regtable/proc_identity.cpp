/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Process identity and liveness from /proc and pidfd (proc_identity.h).
#include "proc_identity.h"

#include "common/nixl_text.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string_view>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace nixlReg {

namespace {

    using nixlText::parseDecimal; // a /proc field

    /** Reads a small /proc file whole; false if it cannot be opened or read. */
    bool
    readSmallFile(const char *path, std::string &out, int &err) {
        int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            err = errno;
            return false;
        }
        char buf[1024];
        out.clear();
        for (;;) {
            ssize_t n = ::read(fd, buf, sizeof(buf));
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                err = errno;
                ::close(fd);
                return false;
            }
            if (n == 0) {
                break;
            }
            out.append(buf, static_cast<size_t>(n));
        }
        ::close(fd);
        return true;
    }

    /**
     * Splits /proc/<pid>/stat after the command name, which is in parentheses and may itself
     * contain blanks and parentheses; fields[0] is then field 3 (the state).
     */
    bool
    statFields(const std::string &stat, std::vector<std::string_view> &fields) {
        size_t close = stat.rfind(')');
        if (close == std::string::npos) {
            return false;
        }
        std::string_view rest(stat);
        rest.remove_prefix(close + 1);
        fields.clear();
        size_t i = 0;
        while (i < rest.size()) {
            while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\n')) {
                ++i;
            }
            size_t j = i;
            while (j < rest.size() && rest[j] != ' ' && rest[j] != '\n') {
                ++j;
            }
            if (j > i) {
                fields.push_back(rest.substr(i, j - i));
            }
            i = j;
        }
        return fields.size() >= 20;
    }

    constexpr size_t state_field = 0; // field 3 of stat
    constexpr size_t start_time_field = 19; // field 22 of stat

} // namespace

bool
readSelfIdentity(procIdentity &id, std::string &err) {
    id = procIdentity();
    id.pid = static_cast<int32_t>(::getpid());
    std::string s;
    int e = 0;
    if (readSmallFile("/proc/sys/kernel/random/boot_id", s, e)) {
        id.bootId = std::string(nixlText::trim(s));
    }
    struct stat st {};
    if (::stat("/proc/self/ns/pid", &st) == 0) {
        id.pidNs = static_cast<uint64_t>(st.st_ino);
    }
    if (!readSmallFile("/proc/self/stat", s, e)) {
        err = std::string("cannot read /proc/self/stat: ") + std::strerror(e);
        return false;
    }
    std::vector<std::string_view> f;
    if (!statFields(s, f) || !parseDecimal(f[start_time_field], id.startTime)) {
        err = "cannot parse /proc/self/stat";
        return false;
    }
    return true;
}

proc_state_t
probeProcess(int32_t pid, uint64_t start_time) {
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
    std::string s;
    int e = 0;
    if (!readSmallFile(path, s, e)) {
        return e == ENOENT || e == ESRCH ? proc_state_t::GONE : proc_state_t::UNKNOWN;
    }
    std::vector<std::string_view> f;
    uint64_t start = 0;
    if (!statFields(s, f) || !parseDecimal(f[start_time_field], start)) {
        return proc_state_t::UNKNOWN;
    }
    if (start != start_time) {
        return proc_state_t::GONE; // the pid was reused
    }
    // A killed process stays a zombie until its parent reaps it; it will never run again.
    if (f[state_field] == "Z" || f[state_field] == "X" || f[state_field] == "x") {
        return proc_state_t::GONE;
    }
    return proc_state_t::ALIVE;
}

bool
processExited(int32_t pid, uint64_t start_time, int &pidfd) {
    if (pidfd < 0) {
        pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
        if (pidfd < 0) {
            if (errno == ESRCH) {
                return true;
            }
            // No pidfd here (old kernel, seccomp): /proc alone, where a zombie counts as gone.
            return probeProcess(pid, start_time) == proc_state_t::GONE;
        }
        // The pidfd names whatever process had pid when it was opened: that is the one of
        // start_time only if /proc still shows start_time now (a zombie keeps its stat).
        char path[64];
        std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
        std::string s;
        int e = 0;
        std::vector<std::string_view> f;
        uint64_t start = 0;
        if (!readSmallFile(path, s, e)) {
            return e == ENOENT || e == ESRCH;
        }
        if (statFields(s, f) && parseDecimal(f[start_time_field], start) &&
            start != start_time) {
            return true; // the pid was reused: the process of start_time is gone
        }
    }
    // Readable once the whole thread group has exited: a zombie leader whose other thread is
    // still inside a system call is not done yet.
    struct pollfd p = {pidfd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

} // namespace nixlReg
