/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_log.h
 * @brief Internal logging of libnixl: one line per event on stderr.
 *
 * The threshold comes from NIXL_LOG_LEVEL (TRACE, DEBUG, INFO, WARN, ERROR, FATAL; default WARN),
 * read once when libnixl loads. A disabled level costs one relaxed atomic load and builds no
 * string. Each line is written with a single write(2), so lines from several threads do not
 * interleave.
 *
 * The sink escapes: every byte of the message and of the file name outside printable ASCII
 * (0x20-0x7e) is written as \xNN (lowercase hex) and a backslash as \\, so the terminating
 * '\n' is the only control byte in a line. Names and strings from peers, plugins and users
 * (ESC sequences, CR, NUL, a forged "\n[nixl E ..." line) therefore cannot retitle a terminal
 * or fake a log line, whichever call site logs them, and the escaping can be undone exactly.
 * Use:
 * @code
 *   NIXL_ERROR << "agent " << name << ": descriptor " << i << " is not registered";
 * @endcode
 * Thread-safe. Never throws.
 */
#ifndef NIXL_SRC_UTILS_COMMON_NIXL_LOG_H
#define NIXL_SRC_UTILS_COMMON_NIXL_LOG_H

#include <sstream>
#include <string>
#include <string_view>

namespace nixl::log {

enum class level : int { TRACE = 0, DEBUG = 1, INFO = 2, WARN = 3, ERROR = 4, FATAL = 5 };

/** True when a line at lvl would be written. */
bool
enabled(level lvl) noexcept;

/** Changes the threshold (tests; NIXL_LOG_LEVEL sets it at load). */
void
setLevel(level lvl) noexcept;

level
getLevel() noexcept;

/** Parses a level name (case-insensitive); false if it is not one. */
bool
parseLevel(std::string_view name, level &out) noexcept;

/** Appends text to out with the sink's escaping (see the file comment). */
void
appendEscaped(std::string &out, std::string_view text);

/** text with the sink's escaping. */
std::string
escaped(std::string_view text);

/** Writes one complete line, escaped. msg carries no trailing newline. */
void
write(level lvl, const char *file, int line, std::string_view msg) noexcept;

/** Collects one line and writes it when destroyed. */
class lineWriter {
public:
    lineWriter(level lvl, const char *file, int line) noexcept
        : lvl_(lvl),
          file_(file),
          line_(line) {}

    lineWriter(const lineWriter &) = delete;
    lineWriter &
    operator=(const lineWriter &) = delete;

    ~lineWriter() {
        try {
            write(lvl_, file_, line_, os_.str());
        }
        catch (...) {
        }
    }

    std::ostream &
    stream() noexcept {
        return os_;
    }

private:
    level lvl_;
    const char *file_;
    int line_;
    std::ostringstream os_;
};

} // namespace nixl::log

// The if/else shape keeps the macro safe inside an unbraced if and skips building the message
// when the level is off.
#define NIXL_LOG(lvl)                         \
    if (!::nixl::log::enabled(lvl)) {         \
    } else                                    \
        ::nixl::log::lineWriter(lvl, __FILE__, __LINE__).stream()

#define NIXL_TRACE NIXL_LOG(::nixl::log::level::TRACE)
#define NIXL_DEBUG NIXL_LOG(::nixl::log::level::DEBUG)
#define NIXL_INFO NIXL_LOG(::nixl::log::level::INFO)
#define NIXL_WARN NIXL_LOG(::nixl::log::level::WARN)
#define NIXL_ERROR NIXL_LOG(::nixl::log::level::ERROR)
#define NIXL_FATAL NIXL_LOG(::nixl::log::level::FATAL)

#endif // NIXL_SRC_UTILS_COMMON_NIXL_LOG_H
