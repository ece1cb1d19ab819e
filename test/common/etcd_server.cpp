/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_server.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace nixl_test {

namespace {

constexpr char etcd_binary[] = "/usr/bin/etcd";

std::string
readFile(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

bool
run(const std::string &cmd, const std::string &log) {
    const std::string full = cmd + " >>'" + log + "' 2>&1";
    return std::system(full.c_str()) == 0;
}

size_t
collect(char *ptr, size_t size, size_t nmemb, void *userdata) {
    static_cast<std::string *>(userdata)->append(ptr, size * nmemb);
    return size * nmemb;
}

/** One request with the test's TLS files; false on transport failure. */
bool
request(const std::string &url,
        const std::string *body,
        const etcdTlsFiles *tls,
        const std::string &token,
        long timeout_ms,
        std::string &out) {
    CURL *h = curl_easy_init();
    if (h == nullptr) {
        return false;
    }
    curl_slist *headers = nullptr;
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    if (tls != nullptr) {
        curl_easy_setopt(h, CURLOPT_CAINFO, tls->caFile.c_str());
        curl_easy_setopt(h, CURLOPT_SSLCERT, tls->clientCert.c_str());
        curl_easy_setopt(h, CURLOPT_SSLKEY, tls->clientKey.c_str());
    }
    if (body != nullptr) {
        headers = curl_slist_append(headers, "Content-Type: application/json");
        if (!token.empty()) {
            headers = curl_slist_append(headers, ("Authorization: " + token).c_str());
        }
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->c_str());
    }
    const CURLcode rc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    curl_slist_free_all(headers);
    return rc == CURLE_OK;
}

bool
processAlive(pid_t pid) {
    if (pid <= 0) {
        return false;
    }
    int status = 0;
    return waitpid(pid, &status, WNOHANG) == 0;
}

} // namespace

uint16_t
pickFreePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        throw std::runtime_error("socket() failed");
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    socklen_t len = sizeof(sa);
    if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len) != 0) {
        close(fd);
        throw std::runtime_error("bind to a free loopback port failed");
    }
    close(fd);
    return ntohs(sa.sin_port);
}

bool
makeEtcdTestCertificates(const std::string &dir, etcdTlsFiles &out, std::string &err) {
    const std::string log = dir + "/openssl.log";
    const std::string d = "'" + dir + "'";
    // P-256 keys: quick to make; the certificates live for the test run only.
    const std::string newkey = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    {
        std::ofstream(dir + "/server.ext")
            << "subjectAltName=IP:127.0.0.1\n"
               "extendedKeyUsage=serverAuth,clientAuth\n"
               "keyUsage=critical,digitalSignature,keyEncipherment\n";
        std::ofstream(dir + "/client.ext") << "extendedKeyUsage=clientAuth\n"
                                              "keyUsage=critical,digitalSignature\n";
    }
    const bool ok =
        run("openssl req -x509" + newkey + " -keyout " + d + "/ca.key -out " + d +
                "/ca.pem -days 2 -subj /CN=nixl-test-ca",
            log) &&
        run("openssl req -x509" + newkey + " -keyout " + d + "/other-ca.key -out " + d +
                "/other-ca.pem -days 2 -subj /CN=nixl-other-ca",
            log) &&
        run("openssl req" + newkey + " -keyout " + d + "/server.key -out " + d +
                "/server.csr -subj /CN=127.0.0.1",
            log) &&
        run("openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d +
                "/ca.key -CAcreateserial -days 2 -extfile " + d + "/server.ext -out " + d +
                "/server.pem",
            log) &&
        run("openssl req" + newkey + " -keyout " + d + "/client.key -out " + d +
                "/client.csr -subj /CN=nixl-client",
            log) &&
        run("openssl x509 -req -in " + d + "/client.csr -CA " + d + "/ca.pem -CAkey " + d +
                "/ca.key -CAcreateserial -days 2 -extfile " + d + "/client.ext -out " + d +
                "/client.pem",
            log);
    if (!ok) {
        err = "openssl failed: " + readFile(log);
        return false;
    }
    out.caFile = dir + "/ca.pem";
    out.otherCaFile = dir + "/other-ca.pem";
    out.serverCert = dir + "/server.pem";
    out.serverKey = dir + "/server.key";
    out.clientCert = dir + "/client.pem";
    out.clientKey = dir + "/client.key";
    return true;
}

etcdCluster::etcdCluster(options opts) : opts_(opts) {
    char tmpl[] = "/tmp/nixl-etcd-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    dir_ = tmpl;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    static std::atomic<unsigned> serial{0};
    const std::string token =
        "nixl-test-" + std::to_string(getpid()) + "-" + std::to_string(serial++);
    const std::string scheme = opts_.tls != nullptr ? "https://" : "http://";
    // A port picked free can be taken before etcd binds it (other tests run in parallel):
    // then a member exits early and the whole start is tried again with new ports.
    for (int attempt = 0; attempt < 5; ++attempt) {
        members_.clear();
        std::string initial;
        for (size_t i = 0; i < opts_.members; ++i) {
            member m;
            m.name = "m" + std::to_string(i);
            m.clientUrl = scheme + "127.0.0.1:" + std::to_string(pickFreePort());
            m.peerUrl = "http://127.0.0.1:" + std::to_string(pickFreePort());
            m.dataDir = dir_ + "/" + m.name + ".data-" + std::to_string(attempt);
            m.logFile = dir_ + "/" + m.name + ".log";
            initial += (initial.empty() ? "" : ",") + m.name + "=" + m.peerUrl;
            members_.push_back(m);
        }
        initialCluster_ = initial + "|" + token + "-" + std::to_string(attempt);
        for (auto &m : members_) {
            spawn(m, true);
        }
        bool all = true;
        const auto deadline = std::chrono::steady_clock::now() + opts_.startTimeout;
        for (size_t i = 0; i < members_.size(); ++i) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (!waitHealthy(i, std::max(left, std::chrono::milliseconds(1)))) {
                all = false;
                break;
            }
        }
        if (all) {
            return;
        }
        bool someoneDied = false;
        for (auto &m : members_) {
            someoneDied = someoneDied || !processAlive(m.pid);
        }
        const std::string tails = logTails();
        for (size_t i = 0; i < members_.size(); ++i) {
            kill(i);
        }
        if (!someoneDied || tails.find("address already in use") == std::string::npos) {
            std::filesystem::remove_all(dir_);
            throw std::runtime_error("etcd did not become healthy:\n" + tails);
        }
    }
    std::filesystem::remove_all(dir_);
    throw std::runtime_error("etcd: no free ports after 5 attempts");
}

etcdCluster::~etcdCluster() {
    for (size_t i = 0; i < members_.size(); ++i) {
        kill(i);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

std::string
etcdCluster::endpoints() const {
    std::string s;
    for (const auto &m : members_) {
        s += (s.empty() ? "" : ",") + m.clientUrl;
    }
    return s;
}

void
etcdCluster::spawn(member &m, bool fresh) {
    const size_t bar = initialCluster_.find('|');
    std::vector<std::string> args = {
        etcd_binary,
        "--name=" + m.name,
        "--data-dir=" + m.dataDir,
        "--listen-client-urls=" + m.clientUrl,
        "--advertise-client-urls=" + m.clientUrl,
        "--listen-peer-urls=" + m.peerUrl,
        "--initial-advertise-peer-urls=" + m.peerUrl,
        "--initial-cluster=" + initialCluster_.substr(0, bar),
        "--initial-cluster-token=" + initialCluster_.substr(bar + 1),
        std::string("--initial-cluster-state=") + (fresh ? "new" : "existing"),
        // Slower heartbeats than the default: a busy 2-core machine must not cause elections.
        "--heartbeat-interval=200",
        "--election-timeout=2000",
        "--logger=zap",
        "--log-level=warn",
    };
    if (opts_.tls != nullptr) {
        args.push_back("--cert-file=" + opts_.tls->serverCert);
        args.push_back("--key-file=" + opts_.tls->serverKey);
        args.push_back("--trusted-ca-file=" + opts_.tls->caFile);
        if (opts_.clientCertAuth) {
            args.push_back("--client-cert-auth");
        }
    }
    args.insert(args.end(), opts_.extraArgs.begin(), opts_.extraArgs.end());
    std::vector<char *> argv;
    for (auto &a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
        // Only async-signal-safe calls between fork and exec.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            _exit(127);
        }
        const int fd = open(m.logFile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        const int devnull = open("/dev/null", O_RDONLY);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
        }
        execv(etcd_binary, argv.data());
        _exit(127);
    }
    m.pid = pid;
}

void
etcdCluster::kill(size_t i) {
    member &m = members_.at(i);
    if (m.pid > 0) {
        ::kill(m.pid, SIGKILL);
        int status = 0;
        waitpid(m.pid, &status, 0);
        m.pid = -1;
    }
}

void
etcdCluster::freeze(size_t i, bool frozen) {
    const member &m = members_.at(i);
    if (m.pid > 0) {
        ::kill(m.pid, frozen ? SIGSTOP : SIGCONT);
    }
}

void
etcdCluster::restart(size_t i) {
    kill(i);
    spawn(members_.at(i), false);
    if (!waitHealthy(i, opts_.startTimeout)) {
        throw std::runtime_error("etcd member " + members_[i].name + " did not come back:\n" +
                                 logTails());
    }
}

bool
etcdCluster::waitHealthy(size_t i, std::chrono::milliseconds timeout) const {
    const member &m = members_.at(i);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        std::string body;
        if (request(m.clientUrl + "/health", nullptr, opts_.tls, "", 2000, body) &&
            body.find("\"health\":\"true\"") != std::string::npos) {
            return true;
        }
        if (!processAlive(m.pid) || std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        // Polling the condition itself; the interval only bounds the polling rate.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

std::string
etcdCluster::post(size_t i, const std::string &path, const std::string &body) const {
    std::string out;
    if (!request(members_.at(i).clientUrl + path, &body, opts_.tls, token_, 30000, out)) {
        throw std::runtime_error("etcd " + path + ": request failed");
    }
    return out;
}

void
etcdCluster::enableAuth(const std::string &rootPassword) const {
    const std::pair<const char *, std::string> steps[] = {
        {"/v3/auth/user/add", "{\"name\":\"root\",\"password\":\"" + rootPassword + "\"}"},
        {"/v3/auth/role/add", "{\"name\":\"root\"}"},
        {"/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}"},
        {"/v3/auth/enable", "{}"},
    };
    for (const auto &[path, body] : steps) {
        const std::string reply = post(0, path, body);
        if (reply.find("\"header\"") == std::string::npos) {
            throw std::runtime_error(std::string("etcd ") + path + " failed: " + reply);
        }
    }
}

std::string
etcdCluster::logTails() const {
    std::string out;
    for (const auto &m : members_) {
        std::string log = readFile(m.logFile);
        if (log.size() > 3000) {
            log = log.substr(log.size() - 3000);
        }
        out += "--- " + m.name + " (" + m.clientUrl + ") ---\n" + log + "\n";
    }
    return out;
}

} // namespace nixl_test
