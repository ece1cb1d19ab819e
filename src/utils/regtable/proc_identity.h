/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file proc_identity.h
 * @brief Which process an engine runs in, and whether a peer's process still exists: what the
 *        shared registration table (reg_table.h) and the backends that use it need from /proc.
 *        Internal; built into the plugins that use it (src/utils/regtable/meson.build).
 */
#ifndef NIXL_SRC_UTILS_REGTABLE_PROC_IDENTITY_H
#define NIXL_SRC_UTILS_REGTABLE_PROC_IDENTITY_H

#include <cstdint>
#include <string>

namespace nixlReg {

/**
 * @brief What identifies a process across the machine: two engines whose boot id and pid
 *        namespace match can address each other's memory by pid (CMA), and the pid plus its
 *        start time names one process even after the pid is reused.
 */
struct procIdentity {
    std::string bootId; ///< /proc/sys/kernel/random/boot_id, empty if unreadable
    uint64_t pidNs = 0; ///< inode of /proc/self/ns/pid, 0 if unreadable
    int32_t pid = 0;
    uint64_t startTime = 0; ///< field 22 of /proc/<pid>/stat (clock ticks since boot)

    /** Same kernel instance and pid namespace: pids mean the same processes. */
    bool
    sameHost(const procIdentity &o) const noexcept {
        return !bootId.empty() && bootId == o.bootId && pidNs != 0 && pidNs == o.pidNs;
    }

    bool
    sameProcess(const procIdentity &o) const noexcept {
        return sameHost(o) && pid == o.pid && startTime == o.startTime;
    }
};

/** Fills id for the calling process; false (with err set) when /proc cannot tell. */
bool
readSelfIdentity(procIdentity &id, std::string &err);

enum class proc_state_t { ALIVE, GONE, UNKNOWN };

/**
 * State of process pid that started at start_time: GONE when it no longer exists, is a zombie
 * or the pid now belongs to another process; UNKNOWN when /proc could not be read for another
 * reason (then the caller keeps trusting the peer).
 */
proc_state_t
probeProcess(int32_t pid, uint64_t start_time);

/**
 * True once process pid of start_time has exited with all its threads (or the pid names another
 * process). pidfd caches a pidfd across calls (start with -1; the caller closes it when >= 0).
 * Without pidfd support it falls back to probeProcess, where a zombie counts as exited.
 */
bool
processExited(int32_t pid, uint64_t start_time, int &pidfd);

} // namespace nixlReg

#endif // NIXL_SRC_UTILS_REGTABLE_PROC_IDENTITY_H
