/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * prom_flood: scrape latency of the Prometheus exporters' /metrics while N idle connections
 * are held open and reopened as soon as the server closes them (issue 43 item 6).
 *
 * For each exporter of --exporters (default prometheus,prometheus_mp) it starts one
 * nixl_exporter_driver process serving that exporter on a free loopback port, then for each
 * N of --conns (default 0,100,400):
 *   - a flood thread opens N TCP connections that never send a byte; whenever one is closed
 *     by the server (or fails) it is replaced at once, so N stay open or connecting;
 *   - once N are established and --settle-ms has passed (past the servers' 3 s request
 *     timeouts, so the flood is in its steady state of closes and reconnects), --scrapes
 *     scrapes are made one after another, started --interval-ms apart, each a fresh
 *     connection with "GET /metrics HTTP/1.0", timed from connect() to the last body byte; a scrape counts as ok only when it is a 200 whose body
 *     has every sample line of the agent that the scrape without flood had (complete and
 *     not truncated). A scrape not done within --scrape-timeout-s is a failure.
 * It prints one table line per (exporter, N): ok/total, p50, p99, max (ms), and how many
 * reconnects the flood made per second, then one JSON line with the same numbers.
 *
 * --check makes it exit 1 when any scrape failed (the smoke test); the latencies are never
 * checked. Exit codes: 0 ok, 1 a scrape failed with --check or the setup failed, 2 bad
 * arguments, 77 a plugin was not built (skip).
 *
 *   prom_flood --driver build/test/e2e/nixl_exporter_driver --plugin-dir build/src/plugins \
 *              --conns 0,100,400 --scrapes 50
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

constexpr const char *kAgent = "flood-0";

struct options_t {
    std::string driver;
    std::string pluginDir;
    std::vector<std::string> exporters{"prometheus", "prometheus_mp"};
    std::vector<size_t> conns{0, 100, 400};
    size_t scrapes = 50;
    int scrapeTimeoutS = 60;
    int settleMs = 5000;
    int intervalMs = 200;
    bool check = false;
};

double
msSince(clock_type::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::vector<std::string>
splitComma(const std::string &s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t end = std::min(s.find(',', start), s.size());
        if (end > start) {
            out.push_back(s.substr(start, end - start));
        }
        start = end + 1;
    }
    return out;
}

uint16_t
freePort() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    uint16_t port = 0;
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len) == 0) {
        port = ntohs(sa.sin_port);
    }
    if (fd >= 0) {
        close(fd);
    }
    return port;
}

sockaddr_in
loopback(uint16_t port) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return sa;
}

/** One scrape: ok when a 200 with a full body arrived before the deadline. */
struct scrape_t {
    bool ok = false;
    double ms = 0;
    std::string body;
    std::string why;
};

scrape_t
scrapeOnce(uint16_t port, int timeoutS) {
    scrape_t r;
    const auto t0 = clock_type::now();
    const auto deadline = t0 + std::chrono::seconds(timeoutS);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        r.why = std::string("socket: ") + std::strerror(errno);
        return r;
    }
    // Non-blocking with poll, so the deadline covers connect, send and every read.
    auto waitFor = [&](short ev) {
        while (true) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  deadline - clock_type::now())
                                  .count();
            if (left <= 0) {
                return false;
            }
            pollfd p{fd, ev, 0};
            const int n = poll(&p, 1, static_cast<int>(left));
            if (n > 0) {
                return true;
            }
            if (n < 0 && errno != EINTR) {
                return false;
            }
        }
    };
    const sockaddr_in sa = loopback(port);
    std::string resp;
    if (connect(fd, reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) != 0 &&
        errno != EINPROGRESS) {
        r.why = std::string("connect: ") + std::strerror(errno);
    } else if (!waitFor(POLLOUT)) {
        r.why = "connect timed out";
    } else {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        const std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (err != 0) {
            r.why = std::string("connect: ") + std::strerror(err);
        } else if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) !=
                   static_cast<ssize_t>(req.size())) {
            r.why = std::string("send: ") + std::strerror(errno);
        } else {
            char buf[65536];
            while (true) {
                if (!waitFor(POLLIN)) {
                    r.why = "no complete answer before the deadline";
                    break;
                }
                const ssize_t n = recv(fd, buf, sizeof(buf), 0);
                if (n > 0) {
                    resp.append(buf, static_cast<size_t>(n));
                } else if (n == 0) {
                    break;
                } else if (errno != EAGAIN && errno != EINTR) {
                    r.why = std::string("recv: ") + std::strerror(errno);
                    break;
                }
            }
        }
    }
    r.ms = msSince(t0);
    close(fd);
    if (!r.why.empty()) {
        return r;
    }
    const size_t headEnd = resp.find("\r\n\r\n");
    if (resp.rfind("HTTP/1.", 0) != 0 || headEnd == std::string::npos ||
        resp.compare(9, 3, "200") != 0) {
        r.why = "not a 200 answer: '" + resp.substr(0, std::min<size_t>(resp.size(), 60)) + "'";
        return r;
    }
    r.body = resp.substr(headEnd + 4);
    const size_t cl = resp.find("Content-Length: ");
    if (cl != std::string::npos && cl < headEnd &&
        std::strtoull(resp.c_str() + cl + 16, nullptr, 10) != r.body.size()) {
        r.why = "body shorter than its Content-Length";
        return r;
    }
    r.ok = true;
    return r;
}

/** The sample lines of our agent, in order: what a complete scrape must contain. */
std::vector<std::string>
agentSamples(const std::string &body) {
    std::vector<std::string> out;
    const std::string tag = std::string("agent_name=\"") + kAgent + "\"";
    size_t start = 0;
    while (start < body.size()) {
        size_t end = body.find('\n', start);
        if (end == std::string::npos) {
            end = body.size();
        }
        const std::string line = body.substr(start, end - start);
        if (!line.empty() && line[0] != '#' && line.find(tag) != std::string::npos) {
            out.push_back(line.substr(0, line.rfind(' '))); // name and labels, not the value
        }
        start = end + 1;
    }
    return out;
}

/**
 * N idle connections kept open: each is reopened as soon as the server closes it or it fails.
 * Runs on its own thread; never sends anything.
 */
class flooder {
public:
    flooder(uint16_t port, size_t n) : port_(port), n_(n) {
        wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        thread_ = std::thread([this] { run(); });
    }

    ~flooder() {
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t w = write(wake_, &one, sizeof(one));
        thread_.join();
        close(wake_);
    }

    size_t
    established() const {
        return established_.load();
    }

    uint64_t
    reconnects() const {
        return reconnects_.load();
    }

private:
    struct conn_t {
        int fd = -1;
        bool connected = false;
    };

    void
    open(conn_t &c) {
        c.connected = false;
        c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c.fd < 0) {
            return;
        }
        const sockaddr_in sa = loopback(port_);
        if (connect(c.fd, reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) != 0 &&
            errno != EINPROGRESS) {
            close(c.fd);
            c.fd = -1; // retried on the next round
        }
    }

    void
    reopen(conn_t &c) {
        if (c.connected) {
            established_.fetch_sub(1);
        }
        close(c.fd);
        c.fd = -1;
        reconnects_.fetch_add(1);
        open(c);
    }

    void
    run() {
        std::vector<conn_t> conns(n_);
        for (conn_t &c : conns) {
            open(c);
        }
        std::vector<pollfd> fds;
        char buf[4096];
        while (true) {
            fds.clear();
            fds.push_back({wake_, POLLIN, 0});
            bool missing = false;
            for (conn_t &c : conns) {
                if (c.fd < 0) {
                    open(c);
                }
                missing = missing || c.fd < 0;
                fds.push_back({c.fd, static_cast<short>(c.connected ? POLLIN : POLLOUT), 0});
            }
            if (poll(fds.data(), fds.size(), missing ? 10 : 1000) < 0 && errno != EINTR) {
                return;
            }
            if (fds[0].revents != 0) {
                break;
            }
            for (size_t i = 0; i < conns.size(); ++i) {
                conn_t &c = conns[i];
                const short ev = fds[i + 1].revents;
                if (c.fd < 0 || ev == 0) {
                    continue;
                }
                if (!c.connected) {
                    int err = 0;
                    socklen_t len = sizeof(err);
                    getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
                    if (err != 0 || (ev & (POLLERR | POLLHUP)) != 0) {
                        reopen(c);
                    } else {
                        c.connected = true;
                        established_.fetch_add(1);
                    }
                    continue;
                }
                // Whatever the server sends (an error page) is read; EOF or an error reopens.
                const ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                    reopen(c);
                }
            }
        }
        for (conn_t &c : conns) {
            if (c.fd >= 0) {
                close(c.fd);
            }
        }
    }

    uint16_t port_;
    size_t n_;
    int wake_ = -1;
    std::atomic<size_t> established_{0};
    std::atomic<uint64_t> reconnects_{0};
    std::thread thread_;
};

/** One nixl_exporter_driver process serving one exporter on a loopback port. */
class driverProcess {
public:
    bool
    start(const options_t &o, const std::string &exporter, const std::string &dir) {
        port_ = freePort();
        const std::string ready = dir + "/ready";
        const std::string mpDir = dir + "/mp";
        mkdir(mpDir.c_str(), 0700);
        int in[2];
        if (port_ == 0 || pipe2(in, O_CLOEXEC) != 0) {
            return false;
        }
        const std::string log = dir + "/driver.log";
        pid_ = fork();
        if (pid_ == 0) {
            dup2(in[0], 0);
            const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
            setenv("NIXL_TELEMETRY_PROMETHEUS_PORT", std::to_string(port_).c_str(), 1);
            setenv("NIXL_TELEMETRY_PROMETHEUS_LOCAL", "true", 1);
            setenv("NIXL_TELEMETRY_MULTIPROC_DIR", mpDir.c_str(), 1);
            execl(o.driver.c_str(), o.driver.c_str(), "--plugin-dir", o.pluginDir.c_str(),
                  "--exporter", exporter.c_str(), "--agent-name", kAgent, "--events", "100",
                  "--errors", "1", "--ready-file", ready.c_str(), "--until-stdin-eof",
                  static_cast<char *>(nullptr));
            _exit(127);
        }
        close(in[0]);
        stdin_ = in[1];
        if (pid_ < 0) {
            return false;
        }
        // Ready once the workload is exported and a scrape shows the agent.
        const auto deadline = clock_type::now() + std::chrono::seconds(60);
        while (clock_type::now() < deadline) {
            int st = 0;
            if (waitpid(pid_, &st, WNOHANG) == pid_) {
                pid_ = -1;
                return false;
            }
            if (access(ready.c_str(), F_OK) == 0) {
                const scrape_t s = scrapeOnce(port_, 10);
                if (s.ok && !agentSamples(s.body).empty()) {
                    return true;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }

    /** Closes the driver's stdin and reaps it (SIGKILL after 30 s); true on exit code 0. */
    bool
    stop() {
        if (stdin_ >= 0) {
            close(stdin_);
            stdin_ = -1;
        }
        if (pid_ <= 0) {
            return false;
        }
        const auto deadline = clock_type::now() + std::chrono::seconds(30);
        int st = 0;
        while (waitpid(pid_, &st, WNOHANG) == 0) {
            if (clock_type::now() > deadline) {
                kill(pid_, SIGKILL);
                waitpid(pid_, &st, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        pid_ = -1;
        return WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }

    ~driverProcess() {
        stop();
    }

    uint16_t
    port() const {
        return port_;
    }

private:
    pid_t pid_ = -1;
    int stdin_ = -1;
    uint16_t port_ = 0;
};

struct row_t {
    std::string exporter;
    size_t conns = 0;
    size_t established = 0;
    size_t ok = 0;
    size_t total = 0;
    double p50 = 0, p99 = 0, max = 0;
    double reconnectsPerS = 0;
    std::string firstFailure;
};

double
percentile(std::vector<double> v, double q) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    // Nearest rank.
    size_t rank = static_cast<size_t>(q * static_cast<double>(v.size()) + 0.999999);
    rank = std::clamp<size_t>(rank, 1, v.size());
    return v[rank - 1];
}

bool
runExporter(const options_t &o, const std::string &exporter, std::vector<row_t> &rows) {
    char tmpl[] = "/tmp/prom_flood.XXXXXX";
    const char *dir = mkdtemp(tmpl);
    if (dir == nullptr) {
        std::fprintf(stderr, "prom_flood: mkdtemp: %s\n", std::strerror(errno));
        return false;
    }
    driverProcess driver;
    if (!driver.start(o, exporter, dir)) {
        std::fprintf(stderr, "prom_flood: the driver with exporter '%s' did not come up; see %s/driver.log\n",
                     exporter.c_str(), dir);
        return false;
    }
    const scrape_t base = scrapeOnce(driver.port(), o.scrapeTimeoutS);
    const std::vector<std::string> want = agentSamples(base.body);
    if (!base.ok || want.empty()) {
        std::fprintf(stderr, "prom_flood: the scrape of '%s' without flood failed: %s\n",
                     exporter.c_str(), base.why.c_str());
        return false;
    }
    for (const size_t n : o.conns) {
        row_t row;
        row.exporter = exporter;
        row.conns = n;
        flooder flood(driver.port(), n);
        const auto settle = clock_type::now() + std::chrono::milliseconds(o.settleMs);
        const auto full = clock_type::now() + std::chrono::seconds(30);
        // Until every connection is up, or the server holds no more (then the rest keep
        // knocking), and at least --settle-ms.
        while (clock_type::now() < settle ||
               (flood.established() < n && clock_type::now() < full)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        row.established = flood.established();
        const uint64_t r0 = flood.reconnects();
        const auto t0 = clock_type::now();
        std::vector<double> ms;
        for (size_t i = 0; i < o.scrapes; ++i) {
            // Paced, so the scrapes sample the whole cycle of the server's timeouts.
            std::this_thread::sleep_until(t0 + i * std::chrono::milliseconds(o.intervalMs));
            scrape_t s = scrapeOnce(driver.port(), o.scrapeTimeoutS);
            if (s.ok && agentSamples(s.body) != want) {
                s.ok = false;
                s.why = "the body lacks sample lines of the agent (truncated or empty)";
            }
            ms.push_back(s.ms);
            ++row.total;
            if (s.ok) {
                ++row.ok;
            } else if (row.firstFailure.empty()) {
                row.firstFailure = s.why;
            }
        }
        const double secs = msSince(t0) / 1000.0;
        row.reconnectsPerS = secs > 0 ? static_cast<double>(flood.reconnects() - r0) / secs : 0;
        row.p50 = percentile(ms, 0.50);
        row.p99 = percentile(ms, 0.99);
        row.max = ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end());
        rows.push_back(row);
        std::fprintf(stdout, "%-14s %6zu %6zu  %4zu/%-4zu %9.1f %9.1f %9.1f %10.0f%s%s\n",
                     row.exporter.c_str(), row.conns, row.established, row.ok, row.total,
                     row.p50, row.p99, row.max, row.reconnectsPerS,
                     row.firstFailure.empty() ? "" : "  first failure: ",
                     row.firstFailure.c_str());
        std::fflush(stdout);
    }
    if (!driver.stop()) {
        std::fprintf(stderr, "prom_flood: the driver with exporter '%s' did not exit cleanly; see %s/driver.log\n",
                     exporter.c_str(), dir);
        return false;
    }
    return true;
}

void
usage() {
    std::fprintf(stderr,
                 "usage: prom_flood --driver PATH --plugin-dir DIR [--exporters a,b]\n"
                 "                  [--conns 0,100,400] [--scrapes 50] [--scrape-timeout-s 60]\n"
                 "                  [--settle-ms 5000] [--interval-ms 200] [--check]\n");
}

} // namespace

int
main(int argc, char **argv) {
    options_t o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--check") {
            o.check = true;
        } else if (a == "--driver" && hasValue) {
            o.driver = argv[++i];
        } else if (a == "--plugin-dir" && hasValue) {
            o.pluginDir = argv[++i];
        } else if (a == "--exporters" && hasValue) {
            o.exporters = splitComma(argv[++i]);
        } else if (a == "--conns" && hasValue) {
            o.conns.clear();
            for (const std::string &s : splitComma(argv[++i])) {
                o.conns.push_back(std::strtoul(s.c_str(), nullptr, 10));
            }
        } else if (a == "--scrapes" && hasValue) {
            o.scrapes = std::strtoul(argv[++i], nullptr, 10);
        } else if (a == "--scrape-timeout-s" && hasValue) {
            o.scrapeTimeoutS = std::atoi(argv[++i]);
        } else if (a == "--settle-ms" && hasValue) {
            o.settleMs = std::atoi(argv[++i]);
        } else if (a == "--interval-ms" && hasValue) {
            o.intervalMs = std::atoi(argv[++i]);
        } else {
            usage();
            return 2;
        }
    }
    if (o.driver.empty() || o.pluginDir.empty() || o.exporters.empty() || o.scrapes == 0 ||
        o.scrapeTimeoutS <= 0) {
        usage();
        return 2;
    }
    for (const std::string &e : o.exporters) {
        const std::string so = o.pluginDir + "/libtelemetry_exporter_" + e + ".so";
        if (access(so.c_str(), R_OK) != 0) {
            std::fprintf(stderr, "prom_flood: %s not built: skip\n", so.c_str());
            return 77;
        }
    }
    // The flood holds N sockets; the default soft limit may be 1024.
    const size_t most = *std::max_element(o.conns.begin(), o.conns.end());
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < most + 64) {
        rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, most + 64);
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGPIPE, SIG_IGN);
    std::fprintf(stdout,
                 "# /metrics while N idle connections reconnect as soon as closed; %zu scrapes "
                 "each, ms from connect to last byte\n"
                 "%-14s %6s %6s  %9s %9s %9s %9s %10s\n",
                 o.scrapes, "exporter", "N", "estab", "ok/total", "p50", "p99", "max",
                 "reconn/s");
    std::vector<row_t> rows;
    bool setupOk = true;
    for (const std::string &e : o.exporters) {
        setupOk = runExporter(o, e, rows) && setupOk;
    }
    std::string json = "{\"rows\":[";
    bool allOk = true;
    for (size_t i = 0; i < rows.size(); ++i) {
        const row_t &r = rows[i];
        allOk = allOk && r.ok == r.total;
        char line[512];
        std::snprintf(line, sizeof(line),
                      "%s{\"exporter\":\"%s\",\"conns\":%zu,\"established\":%zu,\"ok\":%zu,"
                      "\"total\":%zu,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,"
                      "\"reconnects_per_s\":%.1f}",
                      i ? "," : "", r.exporter.c_str(), r.conns, r.established, r.ok, r.total,
                      r.p50, r.p99, r.max, r.reconnectsPerS);
        json += line;
    }
    json += "]}";
    std::fprintf(stdout, "%s\n", json.c_str());
    if (!setupOk) {
        return 1;
    }
    return o.check && !allOk ? 1 : 0;
}
