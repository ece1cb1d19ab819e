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
 *
 * Bounds (issue 29): a line's message is cut at max_line_bytes ("... (N bytes)" says how long
 * it was), so a plugin's 10 MB message is one bounded line; a value from outside (an
 * environment or config value, a peer's name) goes through cut(), which keeps max_value_bytes.
 * A line a peer or a loop can trigger uses a rate-limited macro (NIXL_ERROR_LIMITED, ...): at
 * most limited_lines_per_sec lines per second per call site; the first line let through
 * after a suppression ends with "(suppressed K similar lines)".
 * Use:
 * @code
 *   NIXL_ERROR << "agent " << name << ": descriptor " << i << " is not registered";
 *   NIXL_ERROR_LIMITED << "agent " << nixl::log::cut(peer) << ": rejected";
 * @endcode
 * Thread-safe. Never throws.
 */
#ifndef NIXL_SRC_UTILS_COMMON_NIXL_LOG_H
#define NIXL_SRC_UTILS_COMMON_NIXL_LOG_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "internal/nixl_log_limiter.h"

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

/** Longest message written in one line, in bytes before escaping; longer ones are cut. */
inline constexpr std::size_t max_line_bytes = 4096;
/** Default length a logged value keeps (cut()). */
inline constexpr std::size_t max_value_bytes = 256;
/** Lines per second a rate-limited call site writes at most. */
inline constexpr std::uint32_t limited_lines_per_sec = 10;

/**
 * value as it should appear in a line: whole when at most max bytes, else its first max bytes
 * and "... (N bytes)". Not escaped: the sink escapes the whole line, once.
 */
std::string
cut(std::string_view value, std::size_t max = max_value_bytes);

/**
 * Per-call-site state of a rate-limited line (one static per site, see NIXL_LOG_LIMITED).
 * Lock-free; only reached when the line's level is enabled, never on a success path.
 */
class rateLimiter {
public:
    /** -1: suppress this line; otherwise write it, and the value is how many lines were
     *  suppressed since the last one written. */
    std::int64_t
    admit() noexcept;

private:
    nixlLogWindowLimiter window_; ///< shared with the plugin SDK's limiter
};

/** Turns rate limiting on (the default) or off, for every site (tests that count lines). */
void
setRateLimiting(bool on) noexcept;

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

    /** A rate-limited line: suppressed lines of its site since the last one (rateLimiter). */
    lineWriter(level lvl, const char *file, int line, std::int64_t suppressed) noexcept
        : lvl_(lvl),
          file_(file),
          line_(line),
          suppressed_(suppressed) {}

    lineWriter(const lineWriter &) = delete;
    lineWriter &
    operator=(const lineWriter &) = delete;

    ~lineWriter() {
        try {
            if (suppressed_ > 0) {
                os_ << " (suppressed " << suppressed_ << " similar lines)";
            }
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
    std::int64_t suppressed_ = 0;
    std::ostringstream os_;
};

} // namespace nixl::log

// The if/else shape keeps the macro safe inside an unbraced if and skips building the message
// when the level is off.
#define NIXL_LOG(lvl)                         \
    if (!::nixl::log::enabled(lvl)) {         \
    } else                                    \
        ::nixl::log::lineWriter(lvl, __FILE__, __LINE__).stream()

// A line a peer or a loop can trigger: at most limited_lines_per_sec per second from this call
// site (one static rateLimiter each), the next one written saying how many were suppressed.
#define NIXL_LOG_LIMITED(lvl)                                                           \
    if (static ::nixl::log::rateLimiter nixl_log_rl_; !::nixl::log::enabled(lvl)) {    \
    } else if (const std::int64_t nixl_log_sup_ = nixl_log_rl_.admit(); nixl_log_sup_ < 0) { \
    } else                                                                              \
        ::nixl::log::lineWriter(lvl, __FILE__, __LINE__, nixl_log_sup_).stream()

#define NIXL_WARN_LIMITED NIXL_LOG_LIMITED(::nixl::log::level::WARN)
#define NIXL_ERROR_LIMITED NIXL_LOG_LIMITED(::nixl::log::level::ERROR)

#define NIXL_TRACE NIXL_LOG(::nixl::log::level::TRACE)
#define NIXL_DEBUG NIXL_LOG(::nixl::log::level::DEBUG)
#define NIXL_INFO NIXL_LOG(::nixl::log::level::INFO)
#define NIXL_WARN NIXL_LOG(::nixl::log::level::WARN)
#define NIXL_ERROR NIXL_LOG(::nixl::log::level::ERROR)
#define NIXL_FATAL NIXL_LOG(::nixl::log::level::FATAL)

#endif // NIXL_SRC_UTILS_COMMON_NIXL_LOG_H
