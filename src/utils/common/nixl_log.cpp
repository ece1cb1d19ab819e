/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "nixl_log.h"
#include "nixl_text.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

namespace nixl::log {
namespace {

    level
    initialLevel() noexcept {
        level lvl = level::WARN;
        const char *env = std::getenv("NIXL_LOG_LEVEL");
        if (env != nullptr && *env != '\0' && !parseLevel(env, lvl)) {
            std::fprintf(stderr,
                         "[nixl W] NIXL_LOG_LEVEL=%s is not one of TRACE, DEBUG, INFO, WARN, "
                         "ERROR, FATAL; using WARN\n",
                         escaped(cut(env)).c_str());
            lvl = level::WARN;
        }
        return lvl;
    }

    std::atomic<int> &
    threshold() noexcept {
        static std::atomic<int> t{static_cast<int>(initialLevel())};
        return t;
    }

    // Read the variable when the library loads, not at the first log line.
    [[maybe_unused]] const int force_init = threshold().load(std::memory_order_relaxed);

    const char kLetters[] = {'T', 'D', 'I', 'W', 'E', 'F'};

} // namespace

void
appendEscaped(std::string &out, std::string_view text) {
    static const char hex[] = "0123456789abcdef";
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\\') {
            out.append("\\\\");
        } else if (c < 0x20 || c >= 0x7f) {
            const char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 0xf]};
            out.append(esc, sizeof(esc));
        } else {
            out.push_back(ch);
        }
    }
}

std::string
escaped(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    appendEscaped(out, text);
    return out;
}

std::string
cut(std::string_view value, size_t max) {
    return nixlText::cut(value, max);
}

namespace {
    std::atomic<bool> rate_limiting{true};
}

void
setRateLimiting(bool on) noexcept {
    rate_limiting.store(on, std::memory_order_relaxed);
}

int64_t
rateLimiter::admit() noexcept {
    if (!rate_limiting.load(std::memory_order_relaxed)) {
        return window_.drain();
    }
    // A coarse clock (vDSO, no system call): a second's resolution is all this needs.
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return window_.admit(ts.tv_sec, limited_lines_per_sec);
}

bool
enabled(level lvl) noexcept {
    return static_cast<int>(lvl) >= threshold().load(std::memory_order_relaxed);
}

void
setLevel(level lvl) noexcept {
    threshold().store(static_cast<int>(lvl), std::memory_order_relaxed);
}

level
getLevel() noexcept {
    return static_cast<level>(threshold().load(std::memory_order_relaxed));
}

bool
parseLevel(std::string_view name, level &out) noexcept {
    static const char *const names[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};
    for (int i = 0; i < 6; ++i) {
        std::string_view n(names[i]);
        if (n.size() != name.size()) {
            continue;
        }
        bool same = true;
        for (size_t k = 0; k < n.size(); ++k) {
            if (std::toupper(static_cast<unsigned char>(name[k])) != n[k]) {
                same = false;
                break;
            }
        }
        if (same) {
            out = static_cast<level>(i);
            return true;
        }
    }
    if (name == "WARNING" || name == "warning") {
        out = level::WARN;
        return true;
    }
    return false;
}

void
write(level lvl, const char *file, int line, std::string_view msg) noexcept {
    try {
        timespec ts{};
        clock_gettime(CLOCK_REALTIME, &ts);
        tm t{};
        localtime_r(&ts.tv_sec, &t);
        const char *base = file != nullptr ? std::strrchr(file, '/') : nullptr;
        base = base != nullptr ? base + 1 : (file != nullptr ? file : "?");
        char prefix[64];
        int n = std::snprintf(prefix,
                              sizeof(prefix),
                              "[nixl %c %02d:%02d:%02d.%06ld %d ",
                              kLetters[static_cast<int>(lvl) % 6],
                              t.tm_hour,
                              t.tm_min,
                              t.tm_sec,
                              ts.tv_nsec / 1000,
                              static_cast<int>(::syscall(SYS_gettid)));
        std::string out;
        out.reserve(sizeof(prefix) + std::strlen(base) + std::min(msg.size(), max_line_bytes) + 32);
        out.append(prefix, n > 0 ? std::min(static_cast<size_t>(n), sizeof(prefix) - 1) : 0);
        // Everything after the prefix may come from outside (a peer's agent name, a plugin's
        // file name, a user's label): escaped, so that the line's own '\n' is the only control
        // byte written and one event stays one line.
        appendEscaped(out, base);
        out.push_back(':');
        out.append(std::to_string(line));
        out.append("] ");
        if (msg.size() > max_line_bytes) {
            // One bounded line however long the message (a plugin's 10 MB string).
            appendEscaped(out, msg.substr(0, max_line_bytes));
            out.append("... (").append(std::to_string(msg.size())).append(" bytes)");
        } else {
            appendEscaped(out, msg);
        }
        out.push_back('\n');
        const char *p = out.data();
        size_t left = out.size();
        while (left > 0) {
            ssize_t w = ::write(STDERR_FILENO, p, left);
            if (w <= 0) {
                break;
            }
            p += w;
            left -= static_cast<size_t>(w);
        }
    }
    catch (...) {
    }
}

} // namespace nixl::log
