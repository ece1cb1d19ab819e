/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_test_utils.h
 * @brief Helpers for the prometheus_mp tests: NIXL 1.4's event table, a log-capturing core
 *        services struct, environment guards, a private temporary directory, free ports,
 *        a raw-socket HTTP GET, condition polling and promtool.
 *
 * Thread-safety: the log capture is locked; everything else is for the test's main thread.
 */
#ifndef NIXL_TEST_UNIT_PROMETHEUS_MP_MP_TEST_UTILS_H
#define NIXL_TEST_UNIT_PROMETHEUS_MP_MP_TEST_UTILS_H

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nixl_telemetry_exporter_plugin.h"

namespace mpTest {

/** libnixl's 22 event types (NIXL 1.4's 21 with issue 12's agent_trace_phases_dropped at 20),
 *  as core passes them at create time. */
inline const std::vector<nixl_telemetry_event_info_t> &
eventTable() {
    static const std::vector<nixl_telemetry_event_info_t> table = [] {
        std::vector<nixl_telemetry_event_info_t> t;
        auto add = [&](uint32_t cat, const char *name, const char *status, const char *help) {
            t.push_back({static_cast<uint32_t>(t.size()), cat, name, status, help});
        };
        add(NIXL_TELEMETRY_CAT_BYTES, "agent_tx_bytes", nullptr, "Bytes written");
        add(NIXL_TELEMETRY_CAT_BYTES, "agent_rx_bytes", nullptr, "Bytes read");
        add(NIXL_TELEMETRY_CAT_COUNT, "agent_tx_requests_num", nullptr, "Write requests");
        add(NIXL_TELEMETRY_CAT_COUNT, "agent_rx_requests_num", nullptr, "Read requests");
        add(NIXL_TELEMETRY_CAT_BYTES, "agent_memory_registered", nullptr, "Memory registered");
        add(NIXL_TELEMETRY_CAT_BYTES, "agent_memory_deregistered", nullptr, "Memory deregistered");
        add(NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_time", nullptr, "Transfer time");
        add(NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_post_time", nullptr, "Post time");
        static const char *const statuses[] = {"not_posted",
                                               "invalid_param",
                                               "backend",
                                               "not_found",
                                               "mismatch",
                                               "not_allowed",
                                               "repost_active",
                                               "unknown",
                                               "not_supported",
                                               "remote_disconnect",
                                               "canceled",
                                               "no_telemetry"};
        static std::vector<std::string> names;
        names.reserve(12);
        for (const char *s : statuses) {
            names.push_back(std::string("agent_err_") + s);
        }
        for (size_t i = 0; i < 12; ++i) {
            add(NIXL_TELEMETRY_CAT_ERROR, names[i].c_str(), statuses[i], "Errors");
        }
        add(NIXL_TELEMETRY_CAT_COUNT, "agent_trace_phases_dropped", nullptr, "Trace phases dropped");
        add(NIXL_TELEMETRY_CAT_DROPPED, "agent_telemetry_events_dropped", nullptr, "Dropped");
        return t;
    }();
    return table;
}

inline constexpr uint32_t kTx = 0, kTxReq = 2, kXferTime = 6, kErrBackend = 10, kTracePhases = 20,
                           kDropped = 21;

/** Collects log lines written through core services. */
class logCapture {
public:
    logCapture() {
        services_.size = sizeof(services_);
        services_.ctx = this;
        services_.log = [](void *ctx, int32_t level, const char *msg, size_t len) {
            auto *self = static_cast<logCapture *>(ctx);
            std::lock_guard<std::mutex> lk(self->mu_);
            self->lines_.push_back({level, std::string(msg, len)});
        };
        services_.log_enabled = [](void *, int32_t) -> int32_t { return 1; };
    }

    const nixl_plugin_core_services_t *
    services() const {
        return &services_;
    }

    /** Lines at `level` containing `needle`. */
    size_t
    count(int32_t level, const std::string &needle) const {
        std::lock_guard<std::mutex> lk(mu_);
        size_t n = 0;
        for (const auto &[l, s] : lines_) {
            n += (l == level && s.find(needle) != std::string::npos) ? 1 : 0;
        }
        return n;
    }

    std::string
    all() const {
        std::lock_guard<std::mutex> lk(mu_);
        std::string out;
        for (const auto &[l, s] : lines_) {
            out += std::to_string(l) + ": " + s + "\n";
        }
        return out;
    }

    void
    clear() {
        std::lock_guard<std::mutex> lk(mu_);
        lines_.clear();
    }

private:
    nixl_plugin_core_services_t services_{};
    mutable std::mutex mu_;
    std::vector<std::pair<int32_t, std::string>> lines_;
};

/** One capture for the whole test binary: the plugin's SDK keeps the services it was given. */
inline logCapture &
globalLog() {
    static logCapture log;
    return log;
}

/** Sets or unsets variables for a scope, restoring the previous values. */
class envGuard {
public:
    envGuard() = default;
    envGuard(const envGuard &) = delete;
    envGuard &
    operator=(const envGuard &) = delete;

    ~envGuard() {
        for (auto &[k, v] : saved_) {
            if (v) {
                setenv(k.c_str(), v->c_str(), 1);
            } else {
                unsetenv(k.c_str());
            }
        }
    }

    void
    set(const std::string &k, const std::string &v) {
        save(k);
        setenv(k.c_str(), v.c_str(), 1);
    }

    void
    unset(const std::string &k) {
        save(k);
        unsetenv(k.c_str());
    }

private:
    void
    save(const std::string &k) {
        if (saved_.count(k) == 0) {
            const char *v = std::getenv(k.c_str());
            saved_[k] = v == nullptr ? std::nullopt : std::optional<std::string>(v);
        }
    }

    std::map<std::string, std::optional<std::string>> saved_;
};

/** A fresh 0700 directory under TMPDIR, removed on destruction. */
class tempDir {
public:
    tempDir() {
        const char *base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/nixl-mp-test.XXXXXX";
        if (mkdtemp(tmpl.data()) == nullptr) {
            std::abort();
        }
        path_ = tmpl;
    }

    ~tempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }

    const std::string &
    path() const {
        return path_;
    }

private:
    std::string path_;
};

/** A port that was free a moment ago (bound to port 0 and released). */
inline uint16_t
freePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
    socklen_t len = sizeof(sa);
    getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len);
    close(fd);
    return ntohs(sa.sin_port);
}

/** Listens on 127.0.0.1:port from outside any election; returns the fd or -1. */
inline int
holdPort(uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0 || listen(fd, 1) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/** GET http://127.0.0.1:port<path>; nullopt when nothing answers. Returns status line + body. */
inline std::optional<std::string>
httpGet(uint16_t port, const std::string &path = "/metrics", std::string *statusLine = nullptr) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    if (connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0) {
        close(fd);
        return std::nullopt;
    }
    const std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        close(fd);
        return std::nullopt;
    }
    std::string resp;
    char buf[65536];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
        resp.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    const size_t eoh = resp.find("\r\n\r\n");
    if (eoh == std::string::npos) {
        return std::nullopt;
    }
    if (statusLine != nullptr) {
        *statusLine = resp.substr(0, resp.find("\r\n"));
    }
    return resp.substr(eoh + 4);
}

/** Polls cond every 20 ms until it holds or the deadline passes. */
inline bool
waitFor(const std::function<bool()> &cond,
        std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < end) {
        if (cond()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return cond();
}

/** Runs `promtool check metrics` on text; returns its exit status and sets *out to its output. */
inline int
promtoolCheck(const std::string &text, std::string *out) {
    char path[] = "/tmp/nixl-mp-promtool.XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) {
        return -1;
    }
    const ssize_t w = write(fd, text.data(), text.size());
    close(fd);
    if (w != static_cast<ssize_t>(text.size())) {
        unlink(path);
        return -1;
    }
    const std::string cmd = std::string("/usr/bin/promtool check metrics < ") + path + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    out->clear();
    char buf[4096];
    size_t n;
    while (p != nullptr && (n = fread(buf, 1, sizeof(buf), p)) > 0) {
        out->append(buf, n);
    }
    const int rc = p == nullptr ? -1 : pclose(p);
    unlink(path);
    return rc;
}

/** Lines of text that start with prefix and contain every needle. */
inline size_t
countLines(const std::string &text,
           const std::string &prefix,
           const std::vector<std::string> &needles = {}) {
    size_t n = 0, pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) {
            eol = text.size();
        }
        const std::string_view line(text.data() + pos, eol - pos);
        bool ok = line.starts_with(prefix);
        for (const auto &nd : needles) {
            ok = ok && line.find(nd) != std::string_view::npos;
        }
        n += ok ? 1 : 0;
        pos = eol + 1;
    }
    return n;
}

/** The value of the first sample line starting with prefix and containing every needle. */
inline std::optional<double>
sampleValue(const std::string &text,
            const std::string &prefix,
            const std::vector<std::string> &needles = {}) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) {
            eol = text.size();
        }
        const std::string line = text.substr(pos, eol - pos);
        bool ok = line.starts_with(prefix) &&
            (line.size() == prefix.size() || line[prefix.size()] == '{' ||
             line[prefix.size()] == ' ');
        for (const auto &nd : needles) {
            ok = ok && line.find(nd) != std::string::npos;
        }
        if (ok) {
            return std::strtod(line.substr(line.rfind(' ') + 1).c_str(), nullptr);
        }
        pos = eol + 1;
    }
    return std::nullopt;
}

/** The prometheus_mp plugin, dlopen-ed from NIXL_PLUGIN_DIR. */
class pluginHandle {
public:
    pluginHandle() {
        const char *dir = std::getenv("NIXL_PLUGIN_DIR");
        path_ = std::string(dir != nullptr ? dir : ".") +
            "/libtelemetry_exporter_prometheus_mp.so";
        handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            error_ = dlerror();
            return;
        }
        auto entry = reinterpret_cast<nixl_telemetry_exporter_plugin_entry_fn>(
            dlsym(handle_, NIXL_TELEMETRY_EXPORTER_PLUGIN_ENTRY));
        plugin_ = entry == nullptr ? nullptr : entry();
    }

    ~pluginHandle() {
        // Stays loaded, as core keeps plugins loaded: the SDK keeps a pointer to our services.
    }

    const nixl_telemetry_exporter_plugin_t *
    plugin() const {
        return plugin_;
    }

    const std::string &
    error() const {
        return error_;
    }

    const std::string &
    path() const {
        return path_;
    }

    /** create() with the NIXL 1.4 table; *out is null unless SUCCESS. */
    nixl_plugin_status_t
    create(const logCapture &log,
           const std::string &agentName,
           nixl_telemetry_exporter_t **out) const {
        nixl_telemetry_exporter_init_params_t p{};
        p.size = sizeof(p);
        p.core = log.services();
        p.agent_name = {agentName.data(), agentName.size()};
        p.max_events_buffered = 4096;
        p.event_types = eventTable().data();
        p.event_type_count = static_cast<uint32_t>(eventTable().size());
        *out = nullptr;
        return plugin_->ops->create(&p, out);
    }

private:
    std::string path_;
    std::string error_;
    void *handle_ = nullptr;
    const nixl_telemetry_exporter_plugin_t *plugin_ = nullptr;
};

} // namespace mpTest

#endif // NIXL_TEST_UNIT_PROMETHEUS_MP_MP_TEST_UTILS_H
