/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_client.h"

#include <cstring>

#include <unistd.h>

#include <sys/stat.h>

#include <fcntl.h>

#include <curl/curl.h>

#include <stdexcept>

#include "config/config.h"
#include "etcd_internal.h"
#include "common/nixl_log.h"

namespace {

using steady = std::chrono::steady_clock;

// gRPC status codes the gateway reports in "code".
constexpr int64_t grpc_invalid_argument = 3;
constexpr int64_t grpc_deadline_exceeded = 4;
constexpr int64_t grpc_not_found = 5;
constexpr int64_t grpc_permission_denied = 7;
constexpr int64_t grpc_resource_exhausted = 8;
constexpr int64_t grpc_failed_precondition = 9;
constexpr int64_t grpc_unavailable = 14;
constexpr int64_t grpc_unauthenticated = 16;

nixl_status_t
statusOfCode(int64_t code) {
    switch (code) {
    case grpc_invalid_argument:
    case grpc_resource_exhausted: // request larger than the server's --max-request-bytes
        return NIXL_ERR_INVALID_PARAM;
    case grpc_not_found:
        return NIXL_ERR_NOT_FOUND;
    case grpc_permission_denied:
    case grpc_unauthenticated:
        return NIXL_ERR_NOT_ALLOWED;
    default:
        return NIXL_ERR_BACKEND;
    }
}

struct bodySink {
    std::string *body;
    size_t max;
    bool overflow = false;
};

size_t
collectBody(char *ptr, size_t size, size_t nmemb, void *userdata) {
    auto *sink = static_cast<bodySink *>(userdata);
    const size_t n = size * nmemb;
    if (sink->body->size() + n > sink->max) {
        sink->overflow = true;
        return 0; // aborts the transfer
    }
    sink->body->append(ptr, n);
    return n;
}

std::once_flag curl_init_once;

} // namespace

// --- configuration ---------------------------------------------------------------------------

bool
nixlEtcdConfig::parseEndpoints(std::string_view list,
                               bool tls,
                               std::vector<std::string> &out,
                               std::string &err) {
    out.clear();
    size_t pos = 0;
    while (pos <= list.size()) {
        size_t end = list.find_first_of(",;", pos);
        if (end == std::string_view::npos) {
            end = list.size();
        }
        std::string_view item = list.substr(pos, end - pos);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) {
            item.remove_prefix(1);
        }
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) {
            item.remove_suffix(1);
        }
        std::string_view scheme = tls ? "https" : "http";
        const size_t sep = item.find("://");
        if (sep != std::string_view::npos) {
            scheme = item.substr(0, sep);
            item.remove_prefix(sep + 3);
            if (scheme != "http" && scheme != "https") {
                err = "scheme '" + std::string(scheme) + "' (http or https only)";
                return false;
            }
        }
        while (!item.empty() && item.back() == '/') {
            item.remove_suffix(1);
        }
        if (item.empty()) {
            err = "an entry without a host";
            return false;
        }
        std::string url = std::string(scheme) + "://" + std::string(item);
        out.push_back(std::move(url));
        pos = end + 1;
    }
    return !out.empty();
}

std::optional<nixlEtcdConfig>
nixlEtcdConfig::fromProcessConfig() {
    const auto endpoints = nixlConfig::getString(nixl_etcd_endpoints_var);
    if (!endpoints || endpoints->empty()) {
        return std::nullopt;
    }
    nixlEtcdConfig cfg;
    if (auto v = nixlConfig::getString(nixl_etcd_namespace_var)) {
        cfg.nameSpace = *v;
    }
    cfg.caFile = nixlConfig::getString(nixl_etcd_ca_file_var).value_or("");
    cfg.certFile = nixlConfig::getString(nixl_etcd_cert_file_var).value_or("");
    cfg.keyFile = nixlConfig::getString(nixl_etcd_key_file_var).value_or("");
    cfg.user = nixlConfig::getString(nixl_etcd_user_var).value_or("");
    cfg.password = nixlConfig::getString(nixl_etcd_password_var).value_or("");
    if (!cfg.keyFile.empty() && cfg.certFile.empty()) {
        nixlConfig::reject("etcd: ",
                           nixl_etcd_key_file_var,
                           *nixlConfig::lookup(nixl_etcd_key_file_var),
                           "usable without NIXL_ETCD_CERT_FILE");
    }
    if (!cfg.password.empty() && cfg.user.empty()) {
        nixlConfig::reject(
            "etcd: ",
            nixl_etcd_password_var,
            nixlConfigValue{"(hidden)", nixlConfig::lookup(nixl_etcd_password_var)->origin},
            "usable without NIXL_ETCD_USER");
    }
    std::string err;
    if (!parseEndpoints(
            *endpoints, !cfg.caFile.empty() || !cfg.certFile.empty(), cfg.endpoints, err)) {
        nixlConfig::reject("etcd: ",
                           nixl_etcd_endpoints_var,
                           *nixlConfig::lookup(nixl_etcd_endpoints_var),
                           "a comma-separated list of [http[s]://]host:port (" + err + ")");
    }
    if (auto ttl = nixlConfig::getUnsigned(nixl_etcd_lease_ttl_var, "etcd: ", 1, 86400)) {
        cfg.leaseTtl = std::chrono::seconds(*ttl);
    }
    if (auto t =
            nixlConfig::getMilliseconds(nixl_etcd_request_timeout_var, "etcd: ", 100, 3600000)) {
        cfg.requestTimeout = *t;
    }
    return cfg;
}

// --- client ----------------------------------------------------------------------------------

struct nixlEtcdClient::handlePool {
    std::mutex mutex;
    std::vector<CURL *> idle;

    CURL *
    acquire() {
        {
            std::lock_guard lock(mutex);
            if (!idle.empty()) {
                CURL *h = idle.back();
                idle.pop_back();
                return h;
            }
        }
        return curl_easy_init();
    }

    void
    release(CURL *h) {
        curl_easy_reset(h); // keeps the connection cache: the next request reuses the socket
        std::lock_guard lock(mutex);
        idle.push_back(h);
    }

    ~handlePool() {
        for (CURL *h : idle) {
            curl_easy_cleanup(h);
        }
    }
};

struct nixlEtcdClient::attempt_t {
    bool transportOk = false;
    std::string error; ///< why the transport failed
    long httpStatus = 0;
    std::string body;
    std::string tokenUsed;
};

namespace {

/** Upper bound of a PEM file we read (a CA bundle is ~200 KiB). */
constexpr off_t nixl_etcd_max_pem_bytes = 1 << 20;

/** Reads path (empty: nothing) into out with one non-blocking open; throws naming var and path
 *  for anything but a readable regular file of at most 1 MiB. */
void
readPemFile(const char *var, const std::string &path, std::string &out) {
    if (path.empty()) {
        return;
    }
    auto fail = [&](const std::string &why) {
        throw std::invalid_argument(std::string("etcd client: ") + var + "='" +
                                    nixl::log::cut(path) + "' " + why);
    };
    const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        fail(std::string("cannot be opened: ") + std::strerror(errno));
    }
    struct stat st{};
    std::string why;
    if (fstat(fd, &st) != 0) {
        why = std::string("cannot be inspected: ") + std::strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        why = "is not a regular file";
    } else if (st.st_size > nixl_etcd_max_pem_bytes) {
        why = "is larger than 1 MiB (" + std::to_string(st.st_size) + " bytes)";
    }
    if (why.empty()) {
        // /proc files report size 0: read to the cap and refuse what goes past it.
        char buf[65536];
        while (true) {
            const ssize_t n = read(fd, buf, sizeof(buf));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                why = std::string("cannot be read: ") + std::strerror(errno);
                break;
            }
            if (n == 0) {
                break;
            }
            out.append(buf, static_cast<size_t>(n));
            if (out.size() > static_cast<size_t>(nixl_etcd_max_pem_bytes)) {
                why = "is larger than 1 MiB";
                break;
            }
        }
    }
    close(fd);
    if (!why.empty()) {
        out.clear();
        fail(why);
    }
}

} // namespace

nixlEtcdClient::nixlEtcdClient(nixlEtcdConfig cfg)
    : cfg_(std::move(cfg)),
      pool_(std::make_unique<handlePool>()) {
    if (cfg_.endpoints.empty()) {
        throw std::invalid_argument("etcd client: no endpoint configured");
    }
    readPemFile(nixl_etcd_ca_file_var, cfg_.caFile, caPem_);
    readPemFile(nixl_etcd_cert_file_var, cfg_.certFile, certPem_);
    readPemFile(nixl_etcd_key_file_var, cfg_.keyFile, keyPem_);
    // Not thread-safe in every libcurl build: once per process, before any handle exists.
    std::call_once(curl_init_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

nixlEtcdClient::~nixlEtcdClient() = default;

void
nixlEtcdClient::setShutdownDeadline(std::chrono::steady_clock::time_point deadline) noexcept {
    shutdownBy_.store(deadline.time_since_epoch().count(), std::memory_order_release);
    std::lock_guard lock(wakersMutex_);
    for (auto &[id, wake] : wakers_) {
        wake();
    }
}

uint64_t
nixlEtcdClient::addShutdownWaker(std::function<void()> wake) {
    std::lock_guard lock(wakersMutex_);
    const uint64_t id = ++nextWaker_;
    wakers_.emplace(id, std::move(wake));
    return id;
}

void
nixlEtcdClient::removeShutdownWaker(uint64_t id) noexcept {
    std::lock_guard lock(wakersMutex_);
    wakers_.erase(id);
}

std::string
nixlEtcdClient::currentEndpoint() const {
    return cfg_.endpoints[preferred() % cfg_.endpoints.size()];
}

std::string
nixlEtcdClient::prefixEnd(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        if (static_cast<unsigned char>(end.back()) < 0xff) {
            end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0'); // every key (etcd's convention for "to the end")
}

void
nixlEtcdClient::setCommonOptions(void *curl, const std::string &url) const {
    CURL *h = static_cast<CURL *>(curl);
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); // several threads; timeouts without SIGALRM
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(cfg_.connectTimeout.count()));
    // etcd is addressed directly: an http_proxy meant for the internet must not capture it.
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    // Finds a member that vanished without closing the connection (watch streams idle long).
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 10L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 5L);
    // Blobs of the bytes read at construction: curl opens no file (CURLOPT_*_BLOB, >= 7.77).
    auto blob = [](const std::string &pem) {
        return curl_blob{const_cast<char *>(pem.data()), pem.size(), CURL_BLOB_NOCOPY};
    };
    if (!cfg_.caFile.empty()) {
        curl_blob b = blob(caPem_);
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
    }
    if (!cfg_.certFile.empty()) {
        curl_blob b = blob(certPem_);
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
    }
    if (!cfg_.keyFile.empty()) {
        curl_blob b = blob(keyPem_);
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
    }
}

std::string
nixlEtcdClient::token() const {
    std::lock_guard lock(tokenMutex_);
    return token_;
}

bool
nixlEtcdClient::needToken() const {
    return !cfg_.user.empty() && !authOff_.load(std::memory_order_relaxed) && token().empty();
}

void
nixlEtcdClient::dropToken(const std::string &bad) {
    std::lock_guard lock(tokenMutex_);
    if (token_ == bad) {
        token_.clear();
    }
}

namespace {
std::atomic<uint64_t> traffic_requests{0};
std::atomic<uint64_t> traffic_bytes{0};
} // namespace

void
nixlEtcdNoteRequest(size_t body_bytes) noexcept {
    traffic_requests.fetch_add(1, std::memory_order_relaxed);
    traffic_bytes.fetch_add(body_bytes, std::memory_order_relaxed);
}

nixlEtcdTraffic
nixlEtcdProcessTraffic() noexcept {
    return {traffic_requests.load(std::memory_order_relaxed),
            traffic_bytes.load(std::memory_order_relaxed)};
}

namespace {
// CURLOPT_XFERINFOFUNCTION: non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
int
abortAtShutdown(void *data, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    using clock = std::chrono::steady_clock;
    const auto by =
        static_cast<const std::atomic<clock::rep> *>(data)->load(std::memory_order_relaxed);
    return by != 0 && clock::now().time_since_epoch().count() >= by ? 1 : 0;
}
} // namespace

nixlEtcdClient::attempt_t
nixlEtcdClient::post(size_t ep,
                     const char *path,
                     const std::string &body,
                     std::chrono::milliseconds timeout,
                     bool with_token,
                     bool fresh) {
    attempt_t a;
    if (const auto by = shutdownBy_.load(std::memory_order_relaxed); by != 0) {
        using clock = std::chrono::steady_clock;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            clock::time_point(clock::duration(by)) - clock::now());
        if (left.count() <= 0) {
            a.error = "not sent: the agent's shutdown budget is spent";
            return a;
        }
        timeout = std::min(timeout, left);
    }
    CURL *h = fresh ? curl_easy_init() : pool_->acquire();
    if (h == nullptr) {
        a.error = "curl_easy_init failed";
        return a;
    }
    const std::string url = cfg_.endpoints[ep] + path;
    setCommonOptions(h, url);
    curl_slist *headers = curl_slist_append(nullptr, "Content-Type: application/json");
    if (with_token && !cfg_.user.empty()) {
        a.tokenUsed = token();
        if (!a.tokenUsed.empty()) {
            headers = curl_slist_append(headers, ("Authorization: " + a.tokenUsed).c_str());
        }
    }
    bodySink sink{&a.body, cfg_.maxResponseBytes};
    char errbuf[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    nixlEtcdNoteRequest(body.size());
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, std::max<long>(1, static_cast<long>(timeout.count())));
    curl_easy_setopt(
        h,
        CURLOPT_CONNECTTIMEOUT_MS,
        std::max<long>(1, static_cast<long>(std::min(timeout, cfg_.connectTimeout).count())));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collectBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    // A request already running when the agent starts its shutdown is cut at the shutdown
    // deadline too: curl calls this at least about once a second, even on a silent server.
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, abortAtShutdown);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &shutdownBy_);
    const CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.httpStatus);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
    curl_slist_free_all(headers);
    if (fresh) {
        curl_easy_cleanup(h);
    } else {
        pool_->release(h);
    }
    if (sink.overflow) {
        a.error = "reply larger than " + std::to_string(cfg_.maxResponseBytes) + " bytes";
    } else if (rc != CURLE_OK) {
        a.error = errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    } else {
        a.transportOk = true;
    }
    return a;
}


nixl_status_t
nixlEtcdClient::authenticate(size_t ep, std::chrono::milliseconds timeout, std::string &error) {
    const std::string body = "{\"name\":" + nixlJsonQuote(cfg_.user) +
        ",\"password\":" + nixlJsonQuote(cfg_.password) + "}";
    attempt_t a = post(ep, "/v3/auth/authenticate", body, timeout, false);
    if (!a.transportOk) {
        error = a.error;
        return NIXL_ERR_BACKEND;
    }
    nixlJsonValue reply;
    std::string perr;
    if (!nixlJsonParse(a.body, reply, perr) || reply.kind != nixlJsonValue::kind_t::OBJECT) {
        error = "authentication reply is not the gateway's JSON (" + perr + ")";
        return NIXL_ERR_BACKEND;
    }
    int64_t code = -1;
    std::string message;
    if (nixl_etcd_detail::gatewayError(reply, a.httpStatus, code, message)) {
        if (code == grpc_failed_precondition) {
            // "authentication is not enabled": requests go without a token (until a member asks
            // for one).
            NIXL_DEBUG << "etcd: " << cfg_.endpoints[ep] << ": " << message << "; no token used";
            authOff_.store(true, std::memory_order_relaxed);
            return NIXL_SUCCESS;
        }
        if (code == grpc_unavailable || code == grpc_deadline_exceeded || code < 0) {
            error = message;
            return NIXL_ERR_BACKEND;
        }
        NIXL_ERROR << "etcd: authentication of user '" << cfg_.user << "' at " << cfg_.endpoints[ep]
                   << " failed: " << message;
        return NIXL_ERR_NOT_ALLOWED;
    }
    std::string tok;
    if (!nixlJsonString(reply.find("token"), tok) || tok.empty()) {
        error = "authentication reply without a token";
        return NIXL_ERR_BACKEND;
    }
    std::lock_guard lock(tokenMutex_);
    token_ = std::move(tok);
    return NIXL_SUCCESS;
}

void
nixlEtcdClient::markGood(size_t ep, const std::string &why_moved) {
    const size_t old = preferred_.exchange(ep, std::memory_order_relaxed);
    if (old != ep) {
        NIXL_WARN << "etcd: now using endpoint " << cfg_.endpoints[ep]
                  << (why_moved.empty() ? std::string() : " (" + why_moved + ")");
    }
}

nixl_status_t
nixlEtcdClient::call(const char *path,
                     const std::string &body,
                     nixlJsonValue &out,
                     const std::string &what,
                     bool quiet_not_found,
                     std::chrono::milliseconds timeout,
                     bool fresh_connection) {
    const auto start = steady::now();
    const std::chrono::milliseconds bound = timeout.count() > 0 ? timeout : cfg_.requestTimeout;
    const auto deadline = start + bound;
    const size_t n = cfg_.endpoints.size();
    bool reauthed = false;
    std::string tried;
    for (;;) {
        // Another round only while some member answered "unavailable" (e.g. electing a
        // leader); when none can be reached at all, one round decides.
        bool retriable = false;
        tried.clear();
        const size_t first = preferred() % n;
        for (size_t i = 0; i < n;) {
            const size_t ep = (first + i) % n;
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
            if (left.count() <= 0) {
                break;
            }
            const std::string &url = cfg_.endpoints[ep];
            if (needToken()) {
                std::string aerr;
                const nixl_status_t st = authenticate(ep, left, aerr);
                if (st == NIXL_ERR_NOT_ALLOWED) {
                    return st;
                }
                if (st != NIXL_SUCCESS) {
                    tried += (tried.empty() ? "" : "; ") + url + ": " + aerr;
                    ++i;
                    continue;
                }
            }
            attempt_t a = post(ep, path, body, left, true, fresh_connection);
            if (!a.transportOk) {
                tried += (tried.empty() ? "" : "; ") + url + ": " + a.error;
                ++i;
                continue;
            }
            std::string perr;
            if (!nixlJsonParse(a.body, out, perr) || out.kind != nixlJsonValue::kind_t::OBJECT) {
                tried += (tried.empty() ? "" : "; ") + url + ": HTTP " +
                         std::to_string(a.httpStatus) + " reply is not the gateway's JSON (" +
                         (perr.empty() ? "not an object" : perr) + ")";
                ++i;
                continue;
            }
            int64_t code = -1;
            std::string message;
            if (nixl_etcd_detail::gatewayError(out, a.httpStatus, code, message)) {
                const bool no_user = code == grpc_invalid_argument &&
                    message.find("user name is empty") != std::string::npos;
                if ((code == grpc_unauthenticated || no_user) && !cfg_.user.empty() && !reauthed) {
                    // The token expired or the member restarted: a new one, same endpoint.
                    NIXL_INFO << "etcd: " << url << " refused our token (" << message
                              << "); authenticating again";
                    dropToken(a.tokenUsed);
                    authOff_.store(false, std::memory_order_relaxed);
                    reauthed = true;
                    continue;
                }
                if (code == grpc_unavailable || code == grpc_deadline_exceeded ||
                    (code < 0 && a.httpStatus >= 500)) {
                    retriable = true;
                    tried += (tried.empty() ? "" : "; ") + url + ": " + message;
                    ++i;
                    continue;
                }
                if (code == grpc_not_found && quiet_not_found) {
                    markGood(ep, tried);
                    return NIXL_ERR_NOT_FOUND;
                }
                NIXL_ERROR << "etcd: " << what << " at " << url << ": " << message << " (code "
                           << code << ")";
                // An auth-enabled server refuses a request without a token as "invalid argument".
                if (no_user) {
                    return NIXL_ERR_NOT_ALLOWED;
                }
                return statusOfCode(code);
            }
            markGood(ep, tried);
            return NIXL_SUCCESS;
        }
        const auto left = deadline - steady::now();
        if (!retriable || left <= steady::duration::zero()) {
            break;
        }
        std::this_thread::sleep_for(
            std::min<steady::duration>(left, std::chrono::milliseconds(100)));
    }
    NIXL_ERROR << "etcd: " << what << ": no endpoint could serve it ("
               << (tried.empty() ? std::string("time ran out") : tried)
               << (timeout.count() > 0 ? "; bound " : "; request timeout ") << bound.count()
               << " ms)";
    return NIXL_ERR_BACKEND;
}

// --- operations ------------------------------------------------------------------------------

using nixl_etcd_detail::headerRevision;
using nixl_etcd_detail::parseKv;

nixl_status_t
nixlEtcdClient::put(std::string_view key, std::string_view value, int64_t lease) {
    std::string body = "{\"key\":\"" + nixlBase64Encode(key) + "\",\"value\":\"" +
        nixlBase64Encode(value) + "\"";
    if (lease != 0) {
        body += ",\"lease\":\"" + std::to_string(lease) + "\"";
    }
    body += "}";
    nixlJsonValue reply;
    return call("/v3/kv/put", body, reply, "put " + std::string(key));
}

namespace {

nixl_status_t
readKvs(const nixlJsonValue &reply,
        std::vector<nixlEtcdKv> &out,
        int64_t *revision,
        const std::string &what,
        const std::string &endpoint) {
    out.clear();
    int64_t rev = 0;
    if (!headerRevision(reply, rev)) {
        NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": reply without a revision";
        return NIXL_ERR_BACKEND;
    }
    if (revision != nullptr) {
        *revision = rev;
    }
    const nixlJsonValue *kvs = reply.find("kvs");
    if (kvs == nullptr) {
        return NIXL_SUCCESS;
    }
    if (kvs->kind != nixlJsonValue::kind_t::ARRAY) {
        NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": 'kvs' is not an array";
        return NIXL_ERR_BACKEND;
    }
    for (const nixlJsonValue &item : kvs->items) {
        nixlEtcdKv kv;
        std::string err;
        if (!parseKv(item, kv, err)) {
            NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": " << err;
            return NIXL_ERR_BACKEND;
        }
        out.push_back(std::move(kv));
    }
    return NIXL_SUCCESS;
}

} // namespace

nixl_status_t
nixlEtcdClient::get(std::string_view key, std::optional<nixlEtcdKv> &out, int64_t *revision) {
    out.reset();
    const std::string body = "{\"key\":\"" + nixlBase64Encode(key) + "\"}";
    const std::string what = "get " + std::string(key);
    nixlJsonValue reply;
    nixl_status_t st = call("/v3/kv/range", body, reply, what);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    std::vector<nixlEtcdKv> kvs;
    st = readKvs(reply, kvs, revision, what, currentEndpoint());
    if (st == NIXL_SUCCESS && !kvs.empty()) {
        out = std::move(kvs.front());
    }
    return st;
}

nixl_status_t
nixlEtcdClient::getMany(const std::vector<std::string> &keys,
                        std::vector<std::optional<nixlEtcdKv>> &out,
                        int64_t *revision) {
    out.assign(keys.size(), std::nullopt);
    if (keys.empty() || keys.size() > nixl_etcd_max_batch_keys) {
        NIXL_ERROR << "etcd: get of " << keys.size() << " keys in one request (1 to "
                   << nixl_etcd_max_batch_keys << ")";
        return NIXL_ERR_INVALID_PARAM;
    }
    // A transaction without conditions runs its "success" operations at one revision.
    std::string body = "{\"success\":[";
    for (size_t i = 0; i < keys.size(); ++i) {
        body += (i == 0 ? "" : ",");
        body += "{\"request_range\":{\"key\":\"" + nixlBase64Encode(keys[i]) + "\"}}";
    }
    body += "]}";
    const std::string what = "get " + keys.front() +
        (keys.size() > 1 ? " and " + std::to_string(keys.size() - 1) + " more keys" : "");
    nixlJsonValue reply;
    nixl_status_t st = call("/v3/kv/txn", body, reply, what);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    const std::string endpoint = currentEndpoint();
    int64_t rev = 0;
    if (!headerRevision(reply, rev)) {
        NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": reply without a revision";
        return NIXL_ERR_BACKEND;
    }
    std::string err;
    if (!nixl_etcd_detail::parseTxnRanges(reply, keys.size(), out, err)) {
        NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": " << err;
        out.assign(keys.size(), std::nullopt);
        return NIXL_ERR_BACKEND;
    }
    for (size_t i = 0; i < keys.size(); ++i) {
        if (out[i] && out[i]->key != keys[i]) {
            NIXL_ERROR << "etcd: " << what << " at " << endpoint << ": response " << i
                       << " names another key";
            out.assign(keys.size(), std::nullopt);
            return NIXL_ERR_BACKEND;
        }
    }
    if (revision != nullptr) {
        *revision = rev;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlEtcdClient::getPrefix(std::string_view prefix,
                          std::vector<nixlEtcdKv> &out,
                          int64_t *revision) {
    const std::string body = "{\"key\":\"" + nixlBase64Encode(prefix) + "\",\"range_end\":\"" +
        nixlBase64Encode(prefixEnd(prefix)) + "\"}";
    const std::string what = "get prefix " + std::string(prefix);
    nixlJsonValue reply;
    const nixl_status_t st = call("/v3/kv/range", body, reply, what);
    if (st != NIXL_SUCCESS) {
        out.clear();
        return st;
    }
    return readKvs(reply, out, revision, what, currentEndpoint());
}

namespace {

nixl_status_t
readDeleted(const nixlJsonValue &reply, int64_t *deleted, const std::string &what) {
    int64_t n = 0;
    if (!nixlJsonInt(reply.find("deleted"), n)) {
        NIXL_ERROR << "etcd: " << what << ": 'deleted' is not an integer";
        return NIXL_ERR_BACKEND;
    }
    if (deleted != nullptr) {
        *deleted = n;
    }
    return NIXL_SUCCESS;
}

} // namespace

nixl_status_t
nixlEtcdClient::deleteKey(std::string_view key, int64_t *deleted) {
    const std::string body = "{\"key\":\"" + nixlBase64Encode(key) + "\"}";
    const std::string what = "delete " + std::string(key);
    nixlJsonValue reply;
    const nixl_status_t st = call("/v3/kv/deleterange", body, reply, what);
    return st != NIXL_SUCCESS ? st : readDeleted(reply, deleted, what);
}

nixl_status_t
nixlEtcdClient::deletePrefix(std::string_view prefix, int64_t *deleted) {
    const std::string body = "{\"key\":\"" + nixlBase64Encode(prefix) + "\",\"range_end\":\"" +
        nixlBase64Encode(prefixEnd(prefix)) + "\"}";
    const std::string what = "delete prefix " + std::string(prefix);
    nixlJsonValue reply;
    const nixl_status_t st = call("/v3/kv/deleterange", body, reply, what);
    return st != NIXL_SUCCESS ? st : readDeleted(reply, deleted, what);
}

nixl_status_t
nixlEtcdClient::leaseGrant(int64_t ttl, int64_t &id, int64_t *granted_ttl) {
    const std::string body = "{\"TTL\":\"" + std::to_string(ttl) + "\"}";
    const std::string what = "lease grant (TTL " + std::to_string(ttl) + " s)";
    nixlJsonValue reply;
    const nixl_status_t st = call("/v3/lease/grant", body, reply, what);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    int64_t got_ttl = 0;
    if (!nixlJsonInt(reply.find("ID"), id) || id == 0 || !nixlJsonInt(reply.find("TTL"), got_ttl)) {
        NIXL_ERROR << "etcd: " << what << ": reply without a lease ID and TTL";
        return NIXL_ERR_BACKEND;
    }
    if (granted_ttl != nullptr) {
        *granted_ttl = got_ttl;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlEtcdClient::leaseKeepAlive(int64_t id, int64_t &ttl, std::chrono::milliseconds timeout) {
    const std::string body = "{\"ID\":\"" + std::to_string(id) + "\"}";
    const std::string what = "lease keepalive " + std::to_string(id);
    nixlJsonValue reply;
    nixl_status_t st = call("/v3/lease/keepalive", body, reply, what, true, timeout);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    // A stream reply: {"result": {...}}.
    const nixlJsonValue *result = reply.find("result");
    if (result == nullptr || !nixlJsonInt(result->find("TTL"), ttl)) {
        NIXL_ERROR << "etcd: " << what << ": reply without a result TTL";
        return NIXL_ERR_BACKEND;
    }
    // The server answers an unknown or expired lease with TTL 0 (absent) rather than an error.
    return ttl > 0 ? NIXL_SUCCESS : NIXL_ERR_NOT_FOUND;
}

nixl_status_t
nixlEtcdClient::leaseRevoke(int64_t id, std::chrono::milliseconds timeout) {
    const std::string body = "{\"ID\":\"" + std::to_string(id) + "\"}";
    nixlJsonValue reply;
    return call("/v3/lease/revoke",
                body,
                reply,
                "lease revoke " + std::to_string(id),
                true,
                timeout,
                timeout.count() > 0);
}
