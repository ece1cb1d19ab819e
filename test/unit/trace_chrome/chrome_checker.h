/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Runs check_trace.py (/usr/bin/python3) on a trace file; paths come from meson defines.
#ifndef NIXL_TEST_TRACE_CHROME_CHECKER_H
#define NIXL_TEST_TRACE_CHROME_CHECKER_H

#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace chromeTest {

struct runResult {
    int status = -1;
    std::string output;
};

/** s as one single-quoted shell word. */
inline std::string
quote(const std::string &s) {
    std::string q = "'";
    for (char c : s) {
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return q + "'";
}

/** Runs the checker on `file` with extra arguments (shell words, quoted by the caller). */
inline runResult
runChecker(const std::string &file, const std::string &args) {
    const std::string cmd = "NIXL_TRACE_REPAIR_DIR=" + quote(NIXL_TRACE_REPAIR_DIR) +
        " /usr/bin/python3 " + quote(NIXL_TRACE_CHECKER) + " " + quote(file) + " " + args +
        " 2>&1";
    runResult r;
    FILE *p = popen(cmd.c_str(), "r");
    if (p == nullptr) {
        r.output = "popen failed";
        return r;
    }
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
        r.output.append(buf, n);
    }
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

} // namespace chromeTest

#endif // NIXL_TEST_TRACE_CHROME_CHECKER_H
