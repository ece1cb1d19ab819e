/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Child of chromeTest.FileReadsAfterSigkill: traces into argv[1] until killed. Agent "first"
// writes 1000 spans and is destroyed (its events are then in the file); the child writes 'R'
// to stdout and keeps tracing through agent "second" with a 1 ms writer interval, so that
// the kill lands while the writer is writing (tracing stops after 100000 rounds, in case
// the parent is slow; the child then waits for the kill). With a second argument "efbig" it
// checks the plugin against a write that fails part way instead (see fileTooLarge).
#include <csignal>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include "chrome_test_util.h"

using namespace chromeTest;

namespace {

// Mode "efbig": the file may not grow past 64 KiB (RLIMIT_FSIZE, SIGXFSZ ignored), so a write
// fails part way; the child traces, destroys the agent, prints the plugin's log lines to
// stdout and exits 0 (the plugin neither crashed nor blocked).
int
fileTooLarge(const char *dir) {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit lim{64 * 1024, 64 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) {
        return 5;
    }
    fakeCore::get().set("NIXL_TRACE_DIR", dir);
    fakeCore::get().set("NIXL_TRACE_CHROME_FLUSH_MS", "1");
    nixl_trace_backend_t *t = nullptr;
    if (createTracer("efbig", &t) != NIXL_PLUGIN_SUCCESS) {
        return 3;
    }
    for (uint64_t i = 1; i <= 5000; ++i) {
        eventBuilder e(kPostWrite, i, 0, i * 1000, i * 1000 + 500, i);
        e.str("remote_agent", "peer").i64("bytes", static_cast<int64_t>(i));
        chromeOps()->span_end(t, e.get());
    }
    chromeOps()->destroy(t);
    const std::string logs = fakeCore::get().allLogs();
    return write(1, logs.data(), logs.size()) == static_cast<ssize_t>(logs.size()) ? 0 : 4;
}

} // namespace

int
main(int argc, char **argv) {
    if (argc == 3 && std::string(argv[2]) == "efbig" && chromeOps() != nullptr) {
        return fileTooLarge(argv[1]);
    }
    if (argc != 2 || chromeOps() == nullptr) {
        return 2;
    }
    fakeCore::get().set("NIXL_TRACE_DIR", argv[1]);
    fakeCore::get().set("NIXL_TRACE_CHROME_FLUSH_MS", "1");
    nixl_trace_backend_t *second = nullptr;
    nixl_trace_backend_t *first = nullptr;
    if (createTracer("second", &second) != NIXL_PLUGIN_SUCCESS ||
        createTracer("first", &first) != NIXL_PLUGIN_SUCCESS) {
        return 3;
    }
    uint64_t t = 1000;
    uint64_t id = 1;
    for (int i = 0; i < 1000; ++i, t += 1000, ++id) {
        eventBuilder e(kPostWrite, id, 0, t, t + 500, id);
        e.str("remote_agent", "peer").i64("bytes", i);
        chromeOps()->span_end(first, e.get());
    }
    chromeOps()->destroy(first);
    if (write(1, "R", 1) != 1) {
        return 4;
    }
    // Bounded (about 60 MB of file) in case the parent is slow to kill; then wait for it.
    for (int i = 0; i < 100000; ++i, t += 1000, id += 2) {
        eventBuilder outer(kPostRead, id, 0, t, t + 800, id);
        eventBuilder inner(kRegisterMem, id + 1, id, t + 100, t + 200);
        outer.str("remote_agent", "peer \"quoted\"").f64("ratio", 0.5);
        chromeOps()->span_end(second, inner.get());
        chromeOps()->span_end(second, outer.get());
        eventBuilder m(kXferComplete, 0, 0, t + 900, 0, id);
        chromeOps()->mark(second, m.get());
    }
    for (;;) {
        pause();
    }
}
