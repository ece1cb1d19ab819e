/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Shared by the chrome plugin's tests and their SIGKILL child: the plugin dlopen-ed through
// its C entry point, a fake core (options from a map, log lines captured), synthetic events.
#ifndef NIXL_TEST_TRACE_CHROME_UTIL_H
#define NIXL_TEST_TRACE_CHROME_UTIL_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <dirent.h>
#include <dlfcn.h>

#include "nixl_trace_backend_plugin.h"

namespace chromeTest {

/** Core services for the plugin: options from `options`, log lines kept in `logs`. */
struct fakeCore {
    std::mutex mu;
    std::map<std::string, std::string> options;
    std::vector<std::string> logs;
    nixl_plugin_core_services_t services{};

    static fakeCore &
    get() {
        static fakeCore *core = new fakeCore(); // outlives the plugin's thread_local exits
        return *core;
    }

    void
    set(const std::string &k, const std::string &v) {
        std::lock_guard<std::mutex> lk(mu);
        options[k] = v;
    }

    void
    reset() {
        std::lock_guard<std::mutex> lk(mu);
        options.clear();
        logs.clear();
    }

    std::string
    allLogs() {
        std::lock_guard<std::mutex> lk(mu);
        std::string s;
        for (const auto &l : logs) {
            s += l + "\n";
        }
        return s;
    }

private:
    fakeCore() {
        services.size = sizeof(services);
        services.ctx = this;
        services.log = [](void *ctx, int32_t, const char *msg, size_t len) {
            auto *c = static_cast<fakeCore *>(ctx);
            std::lock_guard<std::mutex> lk(c->mu);
            c->logs.emplace_back(msg, len);
        };
        services.log_enabled = [](void *, int32_t level) -> int32_t {
            return level >= NIXL_PLUGIN_LOG_INFO ? 1 : 0;
        };
        services.get_config = [](void *ctx, const char *name, size_t name_len,
                                 const nixl_plugin_bytes_sink_t *value,
                                 const nixl_plugin_bytes_sink_t *origin) -> nixl_plugin_status_t {
            auto *c = static_cast<fakeCore *>(ctx);
            if (name == nullptr || value == nullptr) {
                return NIXL_PLUGIN_ERR_INVALID_PARAM;
            }
            std::string v;
            {
                std::lock_guard<std::mutex> lk(c->mu);
                auto it = c->options.find(std::string(name, name_len));
                if (it == c->options.end() || it->second.empty()) {
                    return NIXL_PLUGIN_ERR_NOT_FOUND;
                }
                v = it->second;
            }
            value->append(value->ctx, v.data(), v.size());
            if (origin != nullptr) {
                origin->append(origin->ctx, "test", 4);
            }
            return NIXL_PLUGIN_SUCCESS;
        };
    }
};

/** The plugin's ops, loaded once per process from NIXL_PLUGIN_DIR (never unloaded). */
inline const nixl_trace_backend_ops_t *
chromeOps(std::string *err = nullptr) {
    static const nixl_trace_backend_ops_t *ops = [err]() -> const nixl_trace_backend_ops_t * {
        const char *dir = std::getenv("NIXL_PLUGIN_DIR");
        const std::string path =
            std::string(dir == nullptr ? "." : dir) + "/libtrace_backend_chrome.so";
        void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) {
            if (err != nullptr) {
                *err = dlerror();
            }
            return nullptr;
        }
        auto entry = reinterpret_cast<nixl_trace_backend_plugin_entry_fn>(
            dlsym(h, NIXL_TRACE_BACKEND_PLUGIN_ENTRY));
        if (entry == nullptr) {
            return nullptr;
        }
        const nixl_trace_backend_plugin_t *p = entry();
        if (p == nullptr || p->hdr.abi_version != NIXL_TRACE_BACKEND_ABI_VERSION) {
            return nullptr;
        }
        return p->ops;
    }();
    return ops;
}

/** The name table the tests pass at create (a subset of the agent's). */
inline const std::vector<nixl_trace_name_t> &
nameTable() {
    static const std::vector<nixl_trace_name_t> t = {
        {0, NIXL_TRACE_KIND_MEMORY_W, "nixl::registerMem"},
        {1, NIXL_TRACE_KIND_GENERIC, "nixl::createXferReq"},
        {2, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write"},
        {3, NIXL_TRACE_KIND_COMM_RECV, "nixl::postXferReq.read"},
        {4, NIXL_TRACE_KIND_METADATA, "nixl::xfer.complete"},
        {5, NIXL_TRACE_KIND_METADATA, "nixl::getNotifs"},
    };
    return t;
}

inline constexpr uint32_t kRegisterMem = 0;
inline constexpr uint32_t kCreateXferReq = 1;
inline constexpr uint32_t kPostWrite = 2;
inline constexpr uint32_t kPostRead = 3;
inline constexpr uint32_t kXferComplete = 4;

/** The key table the tests pass at create (a subset of the agent's, and a key to escape). */
inline const std::vector<nixl_trace_key_t> &
keyTable() {
    static const std::vector<nixl_trace_key_t> t = {
        {0, 12, "remote_agent"},
        {1, 5, "bytes"},
        {2, 7, "we\"ird\n"},
    };
    return t;
}

/** Creates an instance for agent `name`; returns the status, *out set on success. */
inline nixl_plugin_status_t
createTracer(const std::string &agent, nixl_trace_backend_t **out) {
    nixl_trace_backend_init_params_t p{};
    p.size = sizeof(p);
    p.core = &fakeCore::get().services;
    p.agent_name = nixl_plugin_str_t{agent.data(), agent.size()};
    p.names = nameTable().data();
    p.name_count = static_cast<uint32_t>(nameTable().size());
    p.keys = keyTable().data();
    p.key_count = static_cast<uint32_t>(keyTable().size());
    return chromeOps()->create(&p, out);
}

/** A span or mark under construction; attributes are kept alive by this object. */
struct eventBuilder {
    nixl_trace_event_t ev{};
    std::vector<nixl_trace_attr_t> attrs;
    std::vector<std::string> strings;

    eventBuilder(uint32_t name_id, uint64_t span_id, uint64_t parent, uint64_t begin,
                 uint64_t end, uint64_t corr = 0) {
        ev.size = sizeof(ev);
        ev.name_id = name_id;
        ev.name = name_id < nameTable().size() ? nameTable()[name_id].name : "dynamic";
        ev.kind = name_id < nameTable().size() ? nameTable()[name_id].kind : 0;
        ev.span_id = span_id;
        ev.parent_span_id = parent;
        ev.correlation_id = corr;
        ev.begin_ns = begin;
        ev.end_ns = end;
        strings.reserve(16);
    }

    /** An attribute with an interned key: keyTable()[id]. */
    eventBuilder &
    keyed(uint32_t id, int64_t v) {
        i64(keyTable()[id].key, v);
        attrs.back().key_id = id;
        return *this;
    }

    eventBuilder &
    keyed(uint32_t id, std::string v) {
        str(keyTable()[id].key, std::move(v));
        attrs.back().key_id = id;
        return *this;
    }

    eventBuilder &
    i64(const char *k, int64_t v) {
        nixl_trace_attr_t a{};
        a.key = k;
        a.key_id = NIXL_TRACE_KEY_DYNAMIC;
        a.type = NIXL_TRACE_ATTR_INT64;
        a.value.i64 = v;
        attrs.push_back(a);
        return *this;
    }

    eventBuilder &
    f64(const char *k, double v) {
        nixl_trace_attr_t a{};
        a.key = k;
        a.key_id = NIXL_TRACE_KEY_DYNAMIC;
        a.type = NIXL_TRACE_ATTR_DOUBLE;
        a.value.f64 = v;
        attrs.push_back(a);
        return *this;
    }

    eventBuilder &
    str(const char *k, std::string v) {
        strings.push_back(std::move(v)); // reserved: no reallocation moves earlier strings
        nixl_trace_attr_t a{};
        a.key = k;
        a.key_id = NIXL_TRACE_KEY_DYNAMIC;
        a.type = NIXL_TRACE_ATTR_STRING;
        a.value.str = nixl_plugin_str_t{strings.back().data(), strings.back().size()};
        attrs.push_back(a);
        return *this;
    }

    const nixl_trace_event_t *
    get() {
        ev.attrs = attrs.data();
        ev.attr_count = attrs.size();
        return &ev;
    }
};

/** Names of the regular files in dir. */
inline std::vector<std::string>
listFiles(const std::string &dir) {
    std::vector<std::string> out;
    DIR *d = opendir(dir.c_str());
    if (d == nullptr) {
        return out;
    }
    while (dirent *e = readdir(d)) {
        if (e->d_name[0] != '.') {
            out.emplace_back(e->d_name);
        }
    }
    closedir(d);
    return out;
}

} // namespace chromeTest

#endif // NIXL_TEST_TRACE_CHROME_UTIL_H
