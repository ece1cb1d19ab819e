/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "prom_test_utils.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace nixl_prom_test {

namespace {

std::mutex log_mutex;
std::vector<logLine> log_lines;

void
captureLog(void *, int32_t level, const char *msg, size_t len) {
    std::lock_guard<std::mutex> lock(log_mutex);
    log_lines.push_back({level, std::string(msg, len)});
}

int32_t
captureEnabled(void *, int32_t) {
    return 1;
}

const nixl_plugin_core_services_t capture_services = {
    sizeof(nixl_plugin_core_services_t),
    nullptr,
    &captureLog,
    &captureEnabled,
    nullptr, // get_config: the SDK then reads options from the environment
    nullptr, // record_phases: backends only
};

struct loaded_t {
    const nixl_telemetry_exporter_plugin_t *plugin = nullptr;
    std::string error;
};

const loaded_t &
loaded() {
    static const loaded_t l = [] {
        loaded_t r;
        const char *path = std::getenv("NIXL_TEST_PROMETHEUS_PLUGIN");
        if (path == nullptr || *path == '\0') {
            r.error = "NIXL_TEST_PROMETHEUS_PLUGIN is not set";
            return r;
        }
        // Never closed: the plugin's endpoint registry lives for the process, as under core.
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) {
            r.error = std::string("dlopen ") + path + ": " + dlerror();
            return r;
        }
        auto entry = reinterpret_cast<nixl_telemetry_exporter_plugin_entry_fn>(
            dlsym(h, NIXL_TELEMETRY_EXPORTER_PLUGIN_ENTRY));
        if (entry == nullptr) {
            r.error = std::string("no entry symbol in ") + path;
            return r;
        }
        r.plugin = entry();
        return r;
    }();
    return l;
}

} // namespace

const std::vector<std::string> &
statusLabels() {
    static const std::vector<std::string> labels = {
        "not_posted",   "invalid_param", "backend",       "not_found",
        "mismatch",     "not_allowed",   "repost_active", "unknown",
        "not_supported", "remote_disconnect", "canceled",  "no_telemetry",
    };
    return labels;
}

const std::vector<nixl_telemetry_event_info_t> &
eventTable() {
    static const std::vector<std::string> err_names = [] {
        std::vector<std::string> n;
        for (const auto &s : statusLabels()) {
            n.push_back("agent_err_" + s);
        }
        return n;
    }();
    static const std::vector<nixl_telemetry_event_info_t> table = [] {
        std::vector<nixl_telemetry_event_info_t> t = {
            {0, NIXL_TELEMETRY_CAT_BYTES, "agent_tx_bytes", nullptr, "Bytes written by transfers"},
            {1, NIXL_TELEMETRY_CAT_BYTES, "agent_rx_bytes", nullptr, "Bytes read by transfers"},
            {2, NIXL_TELEMETRY_CAT_COUNT, "agent_tx_requests_num", nullptr,
             "Completed write requests"},
            {3, NIXL_TELEMETRY_CAT_COUNT, "agent_rx_requests_num", nullptr,
             "Completed read requests"},
            {4, NIXL_TELEMETRY_CAT_BYTES, "agent_memory_registered", nullptr,
             "Bytes of memory registered"},
            {5, NIXL_TELEMETRY_CAT_BYTES, "agent_memory_deregistered", nullptr,
             "Bytes of memory deregistered"},
            {6, NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_time", nullptr,
             "Time from post to completion of a transfer"},
            {7, NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_post_time", nullptr,
             "Time spent posting a transfer"},
        };
        for (uint32_t i = 0; i < statusLabels().size(); ++i) {
            t.push_back({8 + i, NIXL_TELEMETRY_CAT_ERROR, err_names[i].c_str(),
                         statusLabels()[i].c_str(), "Errors with this status"});
        }
        t.push_back({20, NIXL_TELEMETRY_CAT_COUNT, "agent_trace_phases_dropped", nullptr,
                     "Backend trace phases that could not be delivered"});
        t.push_back({21, NIXL_TELEMETRY_CAT_DROPPED, "agent_telemetry_events_dropped", nullptr,
                     "Telemetry events dropped before export"});
        return t;
    }();
    return table;
}

const nixl_plugin_core_services_t *
captureServices() {
    return &capture_services;
}

void
clearLog() {
    std::lock_guard<std::mutex> lock(log_mutex);
    log_lines.clear();
}

std::vector<logLine>
takeLog() {
    std::lock_guard<std::mutex> lock(log_mutex);
    return std::exchange(log_lines, {});
}

const nixl_telemetry_exporter_plugin_t *
plugin() {
    return loaded().plugin;
}

std::string
pluginError() {
    return loaded().error;
}

nixl_plugin_status_t
createExporter(const std::string &agent,
               nixl_telemetry_exporter_t **out,
               const std::vector<nixl_telemetry_event_info_t> &table) {
    nixl_telemetry_exporter_init_params_t p{};
    p.size = sizeof(p);
    p.core = captureServices();
    p.agent_name = {agent.data(), agent.size()};
    p.max_events_buffered = 4096;
    p.event_types = table.data();
    p.event_type_count = static_cast<uint32_t>(table.size());
    return plugin()->ops->create(&p, out);
}

void
exporterHandle::reset() {
    if (e_ != nullptr) {
        plugin()->ops->destroy(e_);
        e_ = nullptr;
    }
}

nixl_plugin_status_t
exporterHandle::flush(const std::vector<nixl_telemetry_event_abi_t> &events) const {
    const nixl_telemetry_exporter_ops_t *ops = plugin()->ops;
    if (ops->batch_begin != nullptr) {
        ops->batch_begin(e_);
    }
    const nixl_plugin_status_t st = ops->export_events(e_, events.data(), events.size());
    if (ops->batch_end != nullptr) {
        ops->batch_end(e_);
    }
    return st;
}

uint16_t
freePort() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ADD_FAILURE() << "socket: " << std::strerror(errno);
        return 0;
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof(sa);
    uint16_t port = 0;
    if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len) == 0) {
        port = ntohs(sa.sin_port);
    } else {
        ADD_FAILURE() << "bind/getsockname: " << std::strerror(errno);
    }
    close(fd);
    return port;
}

namespace {

int
connectTo(const char *ip, uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    // A generous bound so a wedged server fails the test instead of hanging it.
    const timeval tv{30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1 ||
        connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

} // namespace

bool
canConnect(const char *ip, uint16_t port) {
    const int fd = connectTo(ip, port);
    if (fd < 0) {
        return false;
    }
    close(fd);
    return true;
}

std::optional<std::string>
httpGet(const char *ip, uint16_t port, const char *path) {
    const int fd = connectTo(ip, port);
    if (fd < 0) {
        return std::nullopt;
    }
    const std::string req = std::string("GET ") + path + " HTTP/1.0\r\nHost: " + ip + "\r\n\r\n";
    size_t sent = 0;
    while (sent < req.size()) {
        const ssize_t n = send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) {
            close(fd);
            return std::nullopt;
        }
        sent += static_cast<size_t>(n);
    }
    std::string resp;
    char buf[4096];
    while (true) {
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        resp.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    const size_t eoh = resp.find("\r\n\r\n");
    if (eoh == std::string::npos || resp.size() < 12 ||
        (resp.compare(0, 9, "HTTP/1.1 ") != 0 && resp.compare(0, 9, "HTTP/1.0 ") != 0)) {
        return std::nullopt;
    }
    if (resp.compare(9, 3, "200") != 0) {
        return std::nullopt;
    }
    return resp.substr(eoh + 4);
}

idleFlood::idleFlood(uint16_t port, size_t n) : port_(port), n_(n) {
    wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wakeFd_ < 0) {
        throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    }
    thread_ = std::thread([this] { run(); });
}

idleFlood::~idleFlood() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = write(wakeFd_, &one, sizeof(one));
    thread_.join();
    close(wakeFd_);
}

void
idleFlood::run() noexcept {
    struct conn {
        int fd = -1;
        bool connected = false;
    };
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port_);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    auto open = [&sa](conn &c) {
        c.connected = false;
        c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c.fd >= 0 && connect(c.fd, reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) != 0 &&
            errno != EINPROGRESS) {
            close(c.fd);
            c.fd = -1; // retried on the next round
        }
    };
    std::vector<conn> conns(n_);
    std::vector<pollfd> fds;
    char buf[4096];
    while (true) {
        fds.clear();
        fds.push_back({wakeFd_, POLLIN, 0});
        bool missing = false;
        for (conn &c : conns) {
            if (c.fd < 0) {
                open(c);
            }
            missing = missing || c.fd < 0;
            fds.push_back({c.fd, static_cast<short>(c.connected ? POLLIN : POLLOUT), 0});
        }
        if (poll(fds.data(), fds.size(), missing ? 10 : 1000) < 0 && errno != EINTR) {
            break;
        }
        if (fds[0].revents != 0) {
            break;
        }
        for (size_t i = 0; i < conns.size(); ++i) {
            conn &c = conns[i];
            const short ev = fds[i + 1].revents;
            if (c.fd < 0 || ev == 0) {
                continue;
            }
            bool reopen = false;
            if (!c.connected) {
                int err = 0;
                socklen_t len = sizeof(err);
                getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
                reopen = err != 0 || (ev & (POLLERR | POLLHUP)) != 0;
                c.connected = !reopen;
            } else {
                // Whatever the server sends is read; EOF or an error reopens.
                const ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
                reopen = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
            }
            if (reopen) {
                close(c.fd);
                reconnects_.fetch_add(1);
                open(c);
            }
        }
    }
    for (conn &c : conns) {
        if (c.fd >= 0) {
            close(c.fd);
        }
    }
}

std::vector<sample>
parseSamples(const std::string &text) {
    std::vector<sample> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) {
            eol = text.size();
        }
        const std::string line = text.substr(pos, eol - pos);
        pos = eol + 1;
        if (line.empty() || line[0] == '#') {
            continue;
        }
        sample s;
        size_t i = 0;
        while (i < line.size() && line[i] != '{' && line[i] != ' ') {
            s.name += line[i++];
        }
        if (i < line.size() && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                std::string key;
                while (i < line.size() && line[i] != '=') {
                    key += line[i++];
                }
                if (i + 1 >= line.size() || line[i + 1] != '"') {
                    ADD_FAILURE() << "malformed labels in: " << line;
                    return out;
                }
                i += 2;
                std::string value;
                while (i < line.size() && line[i] != '"') {
                    if (line[i] == '\\' && i + 1 < line.size()) {
                        const char e = line[i + 1];
                        value += e == 'n' ? '\n' : e;
                        i += 2;
                    } else {
                        value += line[i++];
                    }
                }
                ++i; // closing quote
                if (i < line.size() && line[i] == ',') {
                    ++i;
                }
                s.labels[key] = value;
            }
            ++i; // closing brace
        }
        if (i >= line.size() || line[i] != ' ') {
            ADD_FAILURE() << "no value in: " << line;
            return out;
        }
        char *end = nullptr;
        s.value = std::strtod(line.c_str() + i + 1, &end);
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<double>
findValue(const std::vector<sample> &samples,
          const std::string &name,
          const std::map<std::string, std::string> &labels) {
    std::optional<double> found;
    for (const sample &s : samples) {
        if (s.name != name || s.labels.size() != labels.size()) {
            continue;
        }
        bool match = true;
        for (const auto &[k, v] : labels) {
            auto it = s.labels.find(k);
            if (it == s.labels.end()) {
                match = false;
            } else if (k == "le") {
                match = match && std::strtod(it->second.c_str(), nullptr) ==
                        std::strtod(v.c_str(), nullptr);
            } else {
                match = match && it->second == v;
            }
        }
        if (match) {
            EXPECT_FALSE(found.has_value()) << "duplicate series " << name;
            found = s.value;
        }
    }
    return found;
}

std::string
hostName() {
    char buf[HOST_NAME_MAX + 1] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') {
        return "unknown";
    }
    return buf;
}

/** Runs promtool check metrics on @p text; returns its exit status and output. */
std::pair<int, std::string>
promtoolCheck(const std::string &promtool, const std::string &text) {
    char path[] = "/tmp/nixl_prom_scrape_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) {
        return {-1, "mkstemp failed"};
    }
    close(fd);
    std::ofstream(path, std::ios::binary) << text;
    const std::string cmd = promtool + " check metrics < " + path + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    std::string out;
    if (p != nullptr) {
        char buf[512];
        size_t n = 0;
        while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
            out.append(buf, n);
        }
    }
    const int st = p == nullptr ? -1 : pclose(p);
    unlink(path);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::string
promtoolPath() {
    const char *env = std::getenv("NIXL_TEST_PROMTOOL");
    const std::string path = env != nullptr && *env != '\0' ? env : "/usr/bin/promtool";
    return access(path.c_str(), X_OK) == 0 ? path : std::string();
}

} // namespace nixl_prom_test
