/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * A trace backend for tests, written with the SDK: records every event it receives as one text
 * line, in arrival order, for the test to read back through the exported trace_record_*
 * functions (the test dlopens the same file, which returns the already loaded library).
 * Built twice, as libtrace_backend_recA.so and libtrace_backend_recB.so (TRACE_RECORD_NAME), so
 * two plugins can be active at once; each library has its own record.
 *
 * Line formats (space-separated; names and agent names in tests contain no spaces):
 *   create <agent> <name_count> <table_ok>
 *   destroy <agent>
 *   B|E|M <agent> <tid> <name_id> <kind> <name> <span> <parent> <corr> <begin_ns> <end_ns> <attrs>
 * where attrs is "-" or key=<i|d|s>:<value> joined by ';'.
 *
 * It also checks what the ABI promises (event size, table names, non-zero times) and records
 * a "violation" line when a promise is broken.
 */
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nixl_trace_backend_sdk.h"

#ifndef TRACE_RECORD_NAME
#error "TRACE_RECORD_NAME must be defined"
#endif

namespace {

std::mutex recordMutex;
std::vector<std::string> recordLines;
std::atomic<int> creates{0};
std::atomic<int> destroys{0};

void
append(std::string line) {
    std::lock_guard<std::mutex> lock(recordMutex);
    recordLines.push_back(std::move(line));
}

std::string
attrText(const nixl_trace_event_t &ev) {
    if (ev.attr_count == 0) {
        return "-";
    }
    std::string out;
    for (const nixl_trace_attr_t &a : nixlTraceAttrs(ev)) {
        out += out.empty() ? "" : ";";
        out += a.key != nullptr ? a.key : "(null)";
        switch (a.type) {
        case NIXL_TRACE_ATTR_INT64:
            out += "=i:" + std::to_string(a.value.i64);
            break;
        case NIXL_TRACE_ATTR_DOUBLE:
            out += "=d:" + std::to_string(a.value.f64);
            break;
        case NIXL_TRACE_ATTR_STRING:
            out += "=s:" + std::string(nixlTraceAttrString(a));
            break;
        default:
            out += "=?:";
        }
    }
    return out;
}

class recordTracer : public nixlTraceBackendBase {
public:
    explicit recordTracer(const nixlTraceBackendContext &ctx)
        : agent_(ctx.agentName),
          names_(ctx.names) {
        bool ok = true;
        for (size_t i = 0; i < names_.size(); ++i) {
            ok = ok && names_[i].id == i && names_[i].name != nullptr;
        }
        creates.fetch_add(1);
        append("create " + agent_ + " " + std::to_string(names_.size()) + " " +
               (ok ? "1" : "0"));
    }

    ~recordTracer() override {
        destroys.fetch_add(1);
        append("destroy " + agent_);
    }

    void
    spanBegin(const nixl_trace_event_t &ev) noexcept override {
        record('B', ev);
    }

    void
    spanEnd(const nixl_trace_event_t &ev) noexcept override {
        record('E', ev);
    }

    void
    mark(const nixl_trace_event_t &ev) noexcept override {
        record('M', ev);
    }

private:
    void
    record(char what, const nixl_trace_event_t &ev) noexcept {
        try {
            std::string violation;
            if (ev.size < sizeof(nixl_trace_event_t)) {
                violation = "size";
            } else if (ev.name == nullptr) {
                violation = "null name";
            } else if (ev.name_id != NIXL_TRACE_NAME_DYNAMIC &&
                       (ev.name_id >= names_.size() ||
                        std::strcmp(names_[ev.name_id].name, ev.name) != 0 ||
                        names_[ev.name_id].kind != ev.kind)) {
                violation = "name table";
            } else if (ev.begin_ns == 0 || (what == 'E') != (ev.end_ns != 0) ||
                       (what == 'E' && ev.end_ns < ev.begin_ns)) {
                violation = "times";
            } else if ((what == 'M') != (ev.span_id == 0)) {
                violation = "span id";
            }
            if (!violation.empty()) {
                append("violation " + agent_ + " " + violation);
                return;
            }
            const size_t tid = std::hash<std::thread::id>()(std::this_thread::get_id());
            std::string line;
            line.reserve(160);
            line += what;
            line += " " + agent_ + " " + std::to_string(tid) + " " +
                std::to_string(ev.name_id) + " " + std::to_string(ev.kind) + " " + ev.name +
                " " + std::to_string(ev.span_id) + " " + std::to_string(ev.parent_span_id) + " " +
                std::to_string(ev.correlation_id) + " " + std::to_string(ev.begin_ns) + " " +
                std::to_string(ev.end_ns) + " " + attrText(ev);
            append(std::move(line));
        }
        catch (...) {
        }
    }

    std::string agent_;
    std::span<const nixl_trace_name_t> names_;
};

} // namespace

NIXL_TRACE_BACKEND_PLUGIN_DEFINE(recordTracer, TRACE_RECORD_NAME, "0.0.1")

/* Test access, outside the plugin ABI. */
extern "C" __attribute__((visibility("default"))) size_t
trace_record_dump(char *buf, size_t cap) {
    std::string all;
    {
        std::lock_guard<std::mutex> lock(recordMutex);
        for (const std::string &l : recordLines) {
            all += l;
            all += '\n';
        }
    }
    if (buf != nullptr && cap > 0) {
        const size_t n = all.size() < cap - 1 ? all.size() : cap - 1;
        std::memcpy(buf, all.data(), n);
        buf[n] = '\0';
    }
    return all.size();
}

extern "C" __attribute__((visibility("default"))) void
trace_record_clear(void) {
    std::lock_guard<std::mutex> lock(recordMutex);
    recordLines.clear();
}

extern "C" __attribute__((visibility("default"))) int
trace_record_creates(void) {
    return creates.load();
}

extern "C" __attribute__((visibility("default"))) int
trace_record_destroys(void) {
    return destroys.load();
}
