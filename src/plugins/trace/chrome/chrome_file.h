/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file chrome_file.h
 * @brief The trace file's place on disk (NIXL_TRACE_DIR checked or created, the file's name)
 *        and the count of events a failed write loses. Stateless functions: safe from any
 *        thread.
 */
#ifndef NIXL_TRACE_CHROME_FILE_H
#define NIXL_TRACE_CHROME_FILE_H

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include <sys/uio.h>

namespace nixlChromeFile {

/** Throws std::runtime_error naming NIXL_TRACE_DIR (cut to 256 bytes) and why it is refused. */
[[noreturn]] void
refuse(const std::string &dir, const std::string &why);

/**
 * Opens NIXL_TRACE_DIR as a directory fd, creating it 0700 when missing. Refuses (refuse()) a
 * symbolic link, a directory of another user and a group- or world-writable one.
 */
int
openDir(std::string dir);

/** nixl-trace-<pid>-<UTC start time, microseconds>.json; "-<n>" before ".json" if attempt > 0. */
std::string
fileName(uint32_t pid, const timespec &now, int attempt);

/** The spans and marks among the whole lines of iov (the drop counter's unit); bytes before
 *  the first newline belong to a line counted elsewhere unless atLineStart. */
size_t
countEvents(const iovec *iov, size_t n, bool atLineStart);

/** Whether the line holding the byte before position (i, k) of iov is a span or a mark. */
bool
cutLineIsEvent(const std::vector<iovec> &iov, size_t i, size_t k);

} // namespace nixlChromeFile

#endif // NIXL_TRACE_CHROME_FILE_H
