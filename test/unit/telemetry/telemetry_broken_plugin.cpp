/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtelemetry_exporter_broken.so: a telemetry exporter written against the raw C ABI (no SDK,
 * which would catch for it) that breaks the contract on request, for the guard tests:
 *   NIXL_TEST_BROKEN_MODE  "create_throws"  create throws a std::runtime_error
 *                          "destroy_throws" destroy throws a std::runtime_error
 *                          "export_blocks"  the first export_events blocks until
 *                                           nixl_test_broken_release() is called
 */
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "nixl_telemetry_exporter_plugin.h"

namespace {

struct brokenState {
    std::mutex mutex;
    std::condition_variable cv;
    bool blocked = false; // an export_events call is waiting
    bool released = false;
    bool returned = false; // the blocked call returned
};

brokenState &
state() {
    static auto *s = new brokenState(); // never destroyed: an abandoned thread may use it
    return *s;
}

std::string
mode() {
    const char *m = std::getenv("NIXL_TEST_BROKEN_MODE");
    return m != nullptr ? m : "";
}

char instance_storage[2]; // [0]: destroy throws, [1]: export blocks

nixl_plugin_status_t
brokenCreate(const nixl_telemetry_exporter_init_params_t *, nixl_telemetry_exporter_t **out) {
    const std::string m = mode();
    if (m == "create_throws") {
        throw std::runtime_error("broken exporter: create throws\x1b[31m on request");
    }
    instance_storage[0] = m == "destroy_throws";
    instance_storage[1] = m == "export_blocks";
    *out = reinterpret_cast<nixl_telemetry_exporter_t *>(instance_storage);
    return NIXL_PLUGIN_SUCCESS;
}

void
brokenDestroy(nixl_telemetry_exporter_t *e) {
    if (reinterpret_cast<char *>(e)[0] != 0) {
        throw std::runtime_error("broken exporter: destroy throws on request");
    }
}

nixl_plugin_status_t
brokenExport(nixl_telemetry_exporter_t *e, const nixl_telemetry_event_abi_t *events, size_t n) {
    if (reinterpret_cast<char *>(e)[1] != 0) {
        std::unique_lock<std::mutex> lock(state().mutex);
        if (!state().blocked) {
            state().blocked = true;
            state().cv.notify_all();
            state().cv.wait(lock, [] { return state().released; });
            // Still reading what core handed over, after the agent is gone.
            volatile uint64_t sum = 0;
            for (size_t i = 0; i < n; ++i) {
                sum = sum + events[i].value;
            }
            state().returned = true;
            state().cv.notify_all();
        }
    }
    return NIXL_PLUGIN_SUCCESS;
}

const nixl_telemetry_exporter_ops_t broken_ops = {
    .size = sizeof(nixl_telemetry_exporter_ops_t),
    .create = brokenCreate,
    .destroy = brokenDestroy,
    .batch_begin = nullptr,
    .export_events = brokenExport,
    .batch_end = nullptr,
};

const nixl_telemetry_exporter_plugin_t broken_plugin = {
    .hdr = {.abi_version = NIXL_TELEMETRY_EXPORTER_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER,
            .size = sizeof(nixl_telemetry_exporter_plugin_t),
            .name = "broken",
            .version = "0.0.1"},
    .ops = &broken_ops,
};

} // namespace

extern "C" {

__attribute__((visibility("default"))) const nixl_telemetry_exporter_plugin_t *
nixl_telemetry_exporter_plugin_get(void) {
    return &broken_plugin;
}

/** Waits (up to 30 s) until an export_events call blocks; 1 when one did. */
__attribute__((visibility("default"))) int
nixl_test_broken_wait_blocked(void) {
    std::unique_lock<std::mutex> lock(state().mutex);
    return state().cv.wait_for(lock, std::chrono::seconds(30), [] { return state().blocked; });
}

/** Lets the blocked call return and waits (up to 30 s) until it did; 1 when it did. */
__attribute__((visibility("default"))) int
nixl_test_broken_release(void) {
    std::unique_lock<std::mutex> lock(state().mutex);
    state().released = true;
    state().cv.notify_all();
    return state().cv.wait_for(lock, std::chrono::seconds(30), [] {
        return !state().blocked || state().returned;
    });
}
}
