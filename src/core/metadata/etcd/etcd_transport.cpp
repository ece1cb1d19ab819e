/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_transport.h"

#include <cstring>
#include <mutex>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>

#include <curl/curl.h>

#include "common/nixl_log.h"
#include "etcd_traffic.h"

namespace {

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

// CURLOPT_XFERINFOFUNCTION: non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
int
abortAtShutdown(void *data, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    using clock = std::chrono::steady_clock;
    const auto by =
        static_cast<const std::atomic<clock::rep> *>(data)->load(std::memory_order_relaxed);
    return by != 0 && clock::now().time_since_epoch().count() >= by ? 1 : 0;
}

} // namespace

nixlEtcdTransport::nixlEtcdTransport(const nixlEtcdConfig &cfg) : cfg_(cfg) {
    readPemFile(nixl_etcd_ca_file_var, cfg_.caFile, caPem_);
    readPemFile(nixl_etcd_cert_file_var, cfg_.certFile, certPem_);
    readPemFile(nixl_etcd_key_file_var, cfg_.keyFile, keyPem_);
    // Not thread-safe in every libcurl build: once per process, before any handle exists.
    std::call_once(curl_init_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

void
nixlEtcdTransport::setShutdownDeadline(std::chrono::steady_clock::time_point deadline) noexcept {
    shutdownBy_.store(deadline.time_since_epoch().count(), std::memory_order_release);
}

void
nixlEtcdTransport::setCommonOptions(void *curl, const std::string &url) const {
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

nixlEtcdTransport::attempt_t
nixlEtcdTransport::post(size_t ep,
                        const char *path,
                        const std::string &body,
                        std::chrono::milliseconds timeout,
                        const std::string &token,
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
    CURL *h = fresh ? curl_easy_init() : static_cast<CURL *>(pool_.acquire());
    if (h == nullptr) {
        a.error = "curl_easy_init failed";
        return a;
    }
    const std::string url = cfg_.endpoints[ep] + path;
    setCommonOptions(h, url);
    curl_slist *headers = curl_slist_append(nullptr, "Content-Type: application/json");
    if (!token.empty()) {
        headers = curl_slist_append(headers, ("Authorization: " + token).c_str());
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
        pool_.release(h);
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
