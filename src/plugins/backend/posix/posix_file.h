/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file posix_file.h
 * @brief The POSIX backend's registrations: what a FILE_SEG descriptor names (fd mode or path
 *        mode, the metaInfo grammar), the files it opened, and DRAM registrations.
 *
 * FILE_SEG descriptor: addr is a file offset, len a length (0: to the end), devId an fd.
 * metaInfo "<modes>:<path>" selects path mode, where modes is "ro" or "rw" followed by any of
 * ",direct" (O_DIRECT), ",sync" (O_SYNC), ",noatime" (O_NOATIME), ",create" (O_CREAT, 0644, rw
 * only), each at most once: the backend opens path at registration and closes it at
 * deregistration, and devId is then only the registration's key (two path-mode registrations
 * need distinct devIds). Any other metaInfo means fd mode (devId is an fd the application
 * opened and keeps open), except one whose part before the first ':' is made of mode words
 * with a mistake (an unknown word, a repeat, "create" with "ro", upper case): that is refused,
 * so a typo never silently turns into fd mode.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_FILE_H
#define NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_FILE_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "nixl_backend_sdk.h"

/** What a FILE_SEG descriptor's metaInfo says. */
struct nixlPosixFileSpec {
    enum class kind_t { FD, PATH, BAD };

    kind_t kind = kind_t::FD;
    /** Path mode: the path and open(2) flags; BAD: why, one sentence. */
    std::string path;
    int flags = 0;
    std::string why;

    static nixlPosixFileSpec
    parse(std::string_view meta_info);
};

/** Metadata of a DRAM registration: nothing to keep, the address is the buffer. */
class nixlPosixDramMD : public nixlBackendMD {
public:
    nixlPosixDramMD() : nixlBackendMD(true) {}
};

/**
 * Metadata of a FILE_SEG registration: the fd transfers use and how to name the file in log
 * lines. Immutable after registration; any thread may read it while it is registered.
 */
class nixlPosixFileMD : public nixlBackendMD {
public:
    nixlPosixFileMD() : nixlBackendMD(true) {}
    ~nixlPosixFileMD() override;

    int fd = -1;
    /** Whether the backend opened fd (path mode) and so closes it. */
    bool owned = false;
    uint64_t devId = 0;
    /** The path (path mode) or "fd <n>" (fd mode), for log lines. */
    std::string name;
    /** O_DIRECT is on: transfers must meet memAlign and offAlign. */
    bool direct = false;
    uint32_t memAlign = 1;
    uint32_t offAlign = 1;
};

/**
 * The FILE_SEG registrations of one engine, keyed by devId for path mode (where devId is only
 * a key, so two registrations must not share one).
 *
 * Thread safety: every member locks mu_; core serialises registrations anyway, the lock only
 * keeps a stray concurrent call from corrupting the table.
 */
class nixlPosixFileRegistry {
public:
    /**
     * Opens (path mode) or checks (fd mode) the file of desc and makes its metadata. On
     * failure returns the status and sets why (one sentence naming the file and the errno).
     */
    nixl_status_t
    add(const nixlBlobDesc &desc, nixlPosixFileMD *&out, std::string &why);
    /** Forgets md and closes its file if the backend opened it. */
    void
    remove(nixlPosixFileMD *md);

private:
    std::mutex mu_;
    /** Path-mode registrations by devId. */
    std::map<uint64_t, const nixlPosixFileMD *> byDev_;
};

/** Reads the O_DIRECT alignment of fd into md (statx DIOALIGN, else 4096 for both). */
void
nixlPosixDirectAlignment(int fd, nixlPosixFileMD &md);

#endif // NIXL_SRC_PLUGINS_BACKEND_POSIX_POSIX_FILE_H
