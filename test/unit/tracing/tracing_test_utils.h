/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file tracing_test_utils.h
 * @brief Shared pieces of the tracing tests: reading back what a record test plugin
 *        (libtrace_backend_recA/recB.so) received, and a fixture whose agents trace through
 *        the test plugins of this directory.
 */
#ifndef NIXL_TEST_UNIT_TRACING_TRACING_TEST_UTILS_H
#define NIXL_TEST_UNIT_TRACING_TRACING_TEST_UTILS_H

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "agent_test_utils.h"

namespace nixl_tracing_test {

using nixl_agent_test::scopedEnv;

/** The directory of the test trace plugins. */
inline std::string
tracePluginDir() {
    const char *dir = std::getenv("NIXL_TEST_TRACE_PLUGIN_DIR");
    return dir != nullptr ? std::string(dir) : std::string(".");
}

/** One event line of a record plugin. */
struct traceEvent {
    char what = '?'; ///< 'B' span_begin, 'E' span_end, 'M' mark
    std::string agent;
    std::string tid;
    uint32_t nameId = 0;
    uint32_t kind = 0;
    std::string name;
    uint64_t span = 0;
    uint64_t parent = 0;
    uint64_t corr = 0;
    uint64_t begin = 0;
    uint64_t end = 0;
    std::string attrs;

    /** A backend's trace phase (a mark the phase sink made). */
    bool
    isPhase() const {
        return what == 'M' && attrs.find("nixl.phase.backend=") != std::string::npos;
    }

    /** "B nixl::registerMem" and friends: what a sequence assertion compares first. */
    std::string
    label() const {
        return std::string(1, what) + " " + name;
    }
};

/**
 * The record of one record plugin library, read through its exported trace_record_*
 * functions. dlopen of the file returns the library the agent loaded when it is loaded, and
 * loads it fresh (an empty record) when not.
 */
class recorder {
public:
    explicit recorder(const std::string &name) {
        const std::string path = tracePluginDir() + "/libtrace_backend_" + name + ".so";
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            ADD_FAILURE() << "cannot open " << path << ": " << dlerror();
            return;
        }
        dump_ = reinterpret_cast<size_t (*)(char *, size_t)>(dlsym(handle_, "trace_record_dump"));
        clear_ = reinterpret_cast<void (*)()>(dlsym(handle_, "trace_record_clear"));
        creates_ = reinterpret_cast<int (*)()>(dlsym(handle_, "trace_record_creates"));
        destroys_ = reinterpret_cast<int (*)()>(dlsym(handle_, "trace_record_destroys"));
        if (dump_ == nullptr || clear_ == nullptr || creates_ == nullptr ||
            destroys_ == nullptr) {
            ADD_FAILURE() << path << " lacks the trace_record_* functions";
        }
    }

    ~recorder() {
        if (handle_ != nullptr) {
            dlclose(handle_);
        }
    }

    recorder(const recorder &) = delete;
    recorder &
    operator=(const recorder &) = delete;

    std::vector<std::string>
    lines() const {
        std::vector<std::string> out;
        if (dump_ == nullptr) {
            return out;
        }
        std::string text(dump_(nullptr, 0) + 1, '\0');
        text.resize(dump_(text.data(), text.size()));
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            out.push_back(line);
        }
        return out;
    }

    /**
     * The span and mark events of core, in arrival order: without the backends' trace phases
     * (marks carrying nixl.phase.backend), which depend on the backend; allEvents() has them.
     */
    std::vector<traceEvent>
    events() const {
        std::vector<traceEvent> out;
        for (traceEvent &ev : allEvents()) {
            if (!ev.isPhase()) {
                out.push_back(std::move(ev));
            }
        }
        return out;
    }

    /** Every span and mark event, backend phases included, in arrival order. */
    std::vector<traceEvent>
    allEvents() const {
        std::vector<traceEvent> out;
        for (const std::string &l : lines()) {
            if (l.size() < 2 || (l[0] != 'B' && l[0] != 'E' && l[0] != 'M') || l[1] != ' ') {
                continue;
            }
            std::istringstream in(l);
            traceEvent ev;
            in >> ev.what >> ev.agent >> ev.tid >> ev.nameId >> ev.kind >> ev.name >> ev.span >>
                ev.parent >> ev.corr >> ev.begin >> ev.end >> ev.attrs;
            out.push_back(ev);
        }
        return out;
    }

    /** Lines other than events: create, destroy, violation. */
    std::vector<std::string>
    otherLines() const {
        std::vector<std::string> out;
        for (const std::string &l : lines()) {
            if (l.size() < 2 || (l[0] != 'B' && l[0] != 'E' && l[0] != 'M') || l[1] != ' ') {
                out.push_back(l);
            }
        }
        return out;
    }

    void
    clear() const {
        if (clear_ != nullptr) {
            clear_();
        }
    }

    int
    creates() const {
        return creates_ != nullptr ? creates_() : -1;
    }

    int
    destroys() const {
        return destroys_ != nullptr ? destroys_() : -1;
    }

private:
    void *handle_ = nullptr;
    size_t (*dump_)(char *, size_t) = nullptr;
    void (*clear_)() = nullptr;
    int (*creates_)() = nullptr;
    int (*destroys_)() = nullptr;
};

/**
 * attrs with the value of a "trace_id=s:" attribute replaced by "*" when it is 32 lower-case
 * hex digits (a request's random trace id), so sequences compare exactly; unchanged otherwise.
 */
inline std::string
maskTraceId(std::string attrs) {
    const std::string key = "trace_id=s:";
    const size_t at = attrs.find(key);
    if (at == std::string::npos) {
        return attrs;
    }
    const size_t v = at + key.size();
    size_t n = 0;
    while (v + n < attrs.size() &&
           ((attrs[v + n] >= '0' && attrs[v + n] <= '9') ||
            (attrs[v + n] >= 'a' && attrs[v + n] <= 'f'))) {
        ++n;
    }
    if (n == 32) {
        attrs.replace(v, 32, "*");
    }
    return attrs;
}

/** Lines of captured log output at one level ('E', 'W', ...). */
inline std::vector<std::string>
logLines(const std::string &log, char level) {
    std::vector<std::string> out;
    std::istringstream in(log);
    std::string line;
    const std::string prefix = std::string("[nixl ") + level + " ";
    while (std::getline(in, line)) {
        if (line.rfind(prefix, 0) == 0) {
            out.push_back(line);
        }
    }
    return out;
}

/**
 * Fixture: NIXL_TRACE_BACKENDS and NVTX_INJECTION64_PATH unset for every test; makeTraced
 * constructs an agent with a given NIXL_TRACE_BACKENDS value and the plugin directory pointed
 * at the test trace plugins only while the agent reads them, so the TEST backend still comes
 * from the normal plugin directory afterwards.
 */
class tracingTest : public nixl_agent_test::agentTest {
public:
    static std::unique_ptr<nixlAgent>
    makeTraced(const std::string &name,
               const char *backends,
               const nixlAgentConfig &cfg = nixlAgentConfig()) {
        const std::string dir = tracePluginDir();
        scopedEnv plugin_dir("NIXL_PLUGIN_DIR", dir.c_str());
        scopedEnv trace("NIXL_TRACE_BACKENDS", backends);
        return makeAgent(name, cfg);
    }

    /** An agent that does not trace, whatever the environment says. */
    static std::unique_ptr<nixlAgent>
    plainAgent(const std::string &name, const nixlAgentConfig &cfg = nixlAgentConfig()) {
        scopedEnv trace("NIXL_TRACE_BACKENDS", "");
        return makeAgent(name, cfg);
    }

    static nixl_status_t
    addTestBackend(nixlAgent &agent, const nixl_b_params_t &params = {}) {
        return addTest(agent, params);
    }

    /** from's metadata loaded into to. */
    static nixl_status_t
    loadMD(nixlAgent &from, nixlAgent &to) {
        return sendMD(from, to);
    }

private:
    scopedEnv backends_{"NIXL_TRACE_BACKENDS", nullptr};
    scopedEnv nvtx_{"NVTX_INJECTION64_PATH", nullptr};
};

} // namespace nixl_tracing_test

#endif // NIXL_TEST_UNIT_TRACING_TRACING_TEST_UTILS_H
