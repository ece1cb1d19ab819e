/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file full_fs.h
 * @brief Runs one gtest case of the current binary in a child process that sees a full file
 *        system at a given directory: the child unshares its mount namespace, makes every mount
 *        private, mounts a 1 MiB tmpfs over the directory (/dev/shm, or a temporary one), fills
 *        it until ENOSPC (unless asked not to) and re-executes this binary with a filter naming
 *        the case. Nothing is mounted or left in the parent's namespace; the tmpfs goes with
 *        the child. The parent reports whether the child exited normally with status 0 (the
 *        case passed) or was killed by a signal (the SIGBUS the tests are about).
 *
 * Needs root (CAP_SYS_ADMIN) for unshare and mount: fullFsSkipReason says why not. The child
 * case is named DISABLED_* so that a normal run skips it; it checks inFullFsChild() first and
 * ends with finishChild(HasFailure()).
 */
#ifndef NIXL_TEST_UNIT_FULL_FS_H
#define NIXL_TEST_UNIT_FULL_FS_H

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace nixl_full_fs {

inline constexpr const char *env_var = "NIXL_TEST_FULL_FS_DIR";

/** The exit status of a child case that ran to its end without a failure. */
inline constexpr int child_passed = 42;

/**
 * Ends the child case: exits child_passed if it had no failure, else 1. (An exit status 0 could
 * also come from a filter that matched no case.)
 */
inline void
finishChild(bool failed) {
    std::fflush(nullptr);
    ::_exit(failed ? 1 : child_passed);
}

/** Empty when this process may make a private mount namespace, else why not. */
inline std::string
fullFsSkipReason() {
    if (::geteuid() != 0) {
        return "needs root to mount a small tmpfs in a private mount namespace";
    }
    return "";
}

/** True in the re-executed child (the directory is then full, or fillable). */
inline bool
inFullFsChild() {
    return std::getenv(env_var) != nullptr;
}

/** The full directory, in the child. */
inline std::string
fullFsDir() {
    const char *d = std::getenv(env_var);
    return d != nullptr ? d : "";
}

/** Writes a file into dir until the file system has no block left; true if ENOSPC was hit. */
inline bool
fillUp(const std::string &dir) {
    const std::string path = dir + "/.nixl-test-fill";
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        return false;
    }
    static char block[65536];
    bool full = false;
    for (size_t chunk = sizeof(block); chunk > 0 && !full;) {
        const ssize_t w = ::write(fd, block, chunk);
        if (w < 0 && errno == ENOSPC) {
            if (chunk == 1) {
                full = true;
            }
            chunk /= 2; // the last pages: smaller writes until not one byte fits
        } else if (w < 0) {
            break;
        }
    }
    ::close(fd);
    return full;
}

/**
 * Runs gtest case `test` (Suite.DISABLED_Name) of this binary with a tmpfs of size (1 MiB by
 * default; more for a child that needs room before it fills it) over dir in a child's private
 * mount namespace, filled first when fill is true. Returns the wait status;
 * setup failures of the child exit with 90 + step.
 */
inline int
runInFullFs(const std::string &dir,
            const std::string &test,
            bool fill = true,
            const std::string &size = "1m") {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::unshare(CLONE_NEWNS) != 0) {
            ::_exit(91);
        }
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            ::_exit(92);
        }
        ::mkdir(dir.c_str(), 0755);
        const std::string opts = "size=" + size + ",mode=1777";
        if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
            ::_exit(93);
        }
        if (fill && !fillUp(dir)) {
            ::_exit(94);
        }
        ::setenv(env_var, dir.c_str(), 1);
        const std::string filter = "--gtest_filter=" + test;
        char self[] = "/proc/self/exe";
        std::vector<char *> argv = {self, const_cast<char *>(filter.c_str()),
                                    const_cast<char *>("--gtest_also_run_disabled_tests"),
                                    nullptr};
        ::execv(self, argv.data());
        ::_exit(95);
    }
    int st = 0;
    if (pid < 0 || ::waitpid(pid, &st, 0) != pid) {
        return -1;
    }
    return st;
}

/** What a wait status says, for assertion messages. */
inline std::string
describe(int st) {
    if (st == -1) {
        return "fork or waitpid failed";
    }
    if (WIFSIGNALED(st)) {
        return std::string("killed by signal ") + ::strsignal(WTERMSIG(st));
    }
    if (WIFEXITED(st)) {
        return "exited with status " + std::to_string(WEXITSTATUS(st)) +
            (WEXITSTATUS(st) >= 91 && WEXITSTATUS(st) <= 95 ? " (set-up of the full file system)" :
                                                              "");
    }
    return "stopped";
}

inline bool
passed(int st) {
    return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == child_passed;
}

} // namespace nixl_full_fs

#endif // NIXL_TEST_UNIT_FULL_FS_H
