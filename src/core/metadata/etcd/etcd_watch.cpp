/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlEtcdWatch: POST /v3/watch as one long streaming request per connection. The gateway
// writes one JSON object per line: {"result":{"header":...,"created":true}} first, then one per
// batch of events. The stream is driven by a curl multi handle so stop() can wake it at once
// (curl_multi_wakeup) instead of waiting for the next poll timeout.

#include <curl/curl.h>

#include "etcd_watch.h"

#include "etcd_client.h"
#include "etcd_internal.h"
#include "etcd_traffic.h"
#include "common/nixl_log.h"


using nixl_etcd_detail::gatewayError;
using nixl_etcd_detail::parseWatchMessage;
using nixl_etcd_detail::watchMessage;

nixlEtcdWatch::nixlEtcdWatch(nixlEtcdClient &client,
                             std::string key,
                             std::string rangeEnd,
                             int64_t startRevision,
                             events_cb_t cb,
                             filter_t filter)
    : client_(client),
      key_(std::move(key)),
      rangeEnd_(std::move(rangeEnd)),
      nextRevision_(startRevision),
      cb_(std::move(cb)),
      filter_(filter) {
    wakeId_ = client_.addShutdownWaker([this] {
        std::lock_guard lock(mutex_);
        cv_.notify_all();
    });
    thread_ = std::thread([this] { run(); });
}

nixlEtcdWatch::~nixlEtcdWatch() {
    stop();
    client_.removeShutdownWaker(wakeId_);
}

void
nixlEtcdWatch::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        if (multi_ != nullptr) {
            curl_multi_wakeup(static_cast<CURLM *>(multi_));
        }
    }
    cv_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) {
        thread_.join();
    }
}

bool
nixlEtcdWatch::waitCreated(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    // The agent's shutdown ends the wait at once: nobody needs the confirmation any more.
    cv_.wait_for(lock, timeout,
                 [this] { return created_ || stopping_ || client_.shuttingDown(); });
    return created_;
}

int64_t
nixlEtcdWatch::createdRevision() const {
    std::lock_guard lock(mutex_);
    return createdRevision_;
}

void
nixlEtcdWatch::run() {
    const size_t n = client_.config().endpoints.size();
    size_t ep = client_.failover_.preferred() % n;
    auto backoff = std::chrono::milliseconds(100);
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            if (stopping_) {
                return;
            }
        }
        std::string why;
        const bool created = streamOnce(ep, why);
        {
            std::unique_lock lock(mutex_);
            if (stopping_) {
                return;
            }
        }
        // One line when the watch breaks and one when it is back (onMessage), not one per retry.
        if (!failing_) {
            NIXL_WARN << "etcd: watch of " << key_ << " at " << client_.config().endpoints[ep]
                      << " ended (" << why << "); reconnecting from revision " << nextRevision_;
            failing_ = true;
        }
        backoff = created ? std::chrono::milliseconds(100) :
                            std::min(backoff * 2, std::chrono::milliseconds(2000));
        std::unique_lock lock(mutex_);
        if (cv_.wait_for(lock, backoff, [this] { return stopping_; })) {
            return;
        }
        ep = (ep + 1) % n;
    }
}

size_t
nixlEtcdWatch::onData(char *ptr, size_t size, size_t nmemb, void *self_ptr) {
    auto *self = static_cast<nixlEtcdWatch *>(self_ptr);
    const size_t n = size * nmemb;
    if (self->buffer_.size() + n > self->client_.config().maxResponseBytes) {
        self->endReason_ = "a message larger than " +
            std::to_string(self->client_.config().maxResponseBytes) + " bytes";
        return 0; // aborts this stream
    }
    self->buffer_.append(ptr, n);
    size_t start = 0;
    for (;;) {
        const size_t nl = self->buffer_.find('\n', start);
        if (nl == std::string::npos) {
            break;
        }
        const std::string_view line(self->buffer_.data() + start, nl - start);
        start = nl + 1;
        if (!self->onMessage(line)) {
            return 0;
        }
    }
    self->buffer_.erase(0, start);
    return n;
}

bool
nixlEtcdWatch::onMessage(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
        line.remove_suffix(1);
    }
    if (line.empty()) {
        return true;
    }
    nixlJsonValue reply;
    std::string err;
    if (!nixlJsonParse(line, reply, err) || reply.kind != nixlJsonValue::kind_t::OBJECT) {
        endReason_ =
            "reply is not the gateway's JSON (" + (err.empty() ? "not an object" : err) + ")";
        return false;
    }
    int64_t code = -1;
    std::string message;
    if (gatewayError(reply, 200, code, message)) {
        if (code == 16) {
            client_.auth_.dropToken(tokenUsed_);
        }
        endReason_ = "server error: " + message;
        return false;
    }
    watchMessage msg;
    if (!parseWatchMessage(reply, msg, err)) {
        endReason_ = "bad watch message: " + err;
        return false;
    }
    if (msg.created) {
        createdThisStream_ = true;
        if (failing_) {
            NIXL_WARN << "etcd: watch of " << key_ << " resumed at " << currentUrl_
                      << " from revision " << nextRevision_;
            failing_ = false;
        }
        if (nextRevision_ == 0) {
            // A watch "from now": a reconnect must resume here, not at its own "now".
            nextRevision_ = msg.headerRevision + 1;
        }
        {
            std::lock_guard lock(mutex_);
            if (!created_) {
                createdRevision_ = msg.headerRevision;
            }
            created_ = true;
        }
        cv_.notify_all();
    }
    if (msg.canceled) {
        if (msg.compactRevision > 0) {
            NIXL_WARN << "etcd: watch of " << key_ << ": events before revision "
                      << msg.compactRevision << " were compacted and are lost; resuming there";
            nextRevision_ = msg.compactRevision;
        }
        endReason_ = "canceled by the server" +
            (msg.cancelReason.empty() ? std::string() : ": " + msg.cancelReason);
        return false;
    }
    if (msg.events.empty()) {
        return true;
    }
    int64_t last = nextRevision_ - 1;
    int64_t first = INT64_MAX;
    for (const auto &ev : msg.events) {
        last = std::max(last, ev.kv.modRevision);
        first = std::min(first, ev.kv.modRevision);
    }
    try {
        cb_(msg.events);
    }
    catch (const std::exception &e) {
        NIXL_ERROR << "etcd: watch of " << key_ << ": the event callback threw: " << e.what();
    }
    catch (...) {
        NIXL_ERROR << "etcd: watch of " << key_ << ": the event callback threw";
    }
    // A fragment's revisions may continue in the next message: a reconnect resumes at the
    // first of them (its events are delivered again; consumers take deletions idempotently).
    nextRevision_ = msg.fragment ? std::max(nextRevision_, first) : last + 1;
    return true;
}

bool
nixlEtcdWatch::streamOnce(size_t ep, std::string &why) {
    const nixlEtcdConfig &cfg = client_.config();
    const std::string &url = cfg.endpoints[ep];
    currentUrl_ = url;
    buffer_.clear();
    endReason_.clear();
    createdThisStream_ = false;
    tokenUsed_.clear();

    if (client_.auth_.needToken()) {
        std::string aerr;
        const nixl_status_t st = client_.auth_.authenticate(ep, cfg.requestTimeout, aerr);
        if (st != NIXL_SUCCESS) {
            why = st == NIXL_ERR_NOT_ALLOWED ? "authentication refused" : aerr;
            return false;
        }
    }

    CURL *h = curl_easy_init();
    CURLM *m = curl_multi_init();
    if (h == nullptr || m == nullptr) {
        curl_easy_cleanup(h);
        curl_multi_cleanup(m);
        why = "curl init failed";
        return false;
    }
    client_.transport_.setCommonOptions(h, url + "/v3/watch");
    curl_slist *headers = curl_slist_append(nullptr, "Content-Type: application/json");
    if (!cfg.user.empty()) {
        tokenUsed_ = client_.auth_.token();
        if (!tokenUsed_.empty()) {
            headers = curl_slist_append(headers, ("Authorization: " + tokenUsed_).c_str());
        }
    }
    std::string body = "{\"create_request\":{\"key\":\"" + nixlBase64Encode(key_) + "\"";
    if (!rangeEnd_.empty()) {
        body += ",\"range_end\":\"" + nixlBase64Encode(rangeEnd_) + "\"";
    }
    if (nextRevision_ > 0) {
        body += ",\"start_revision\":\"" + std::to_string(nextRevision_) + "\"";
    }
    if (filter_ != filter_t::ALL) {
        // etcd's filters name what the server leaves out.
        body += filter_ == filter_t::DELETES_ONLY ? ",\"filters\":[\"NOPUT\"]" :
                                                    ",\"filters\":[\"NODELETE\"]";
    }
    // The server splits a response larger than its request limit (1.5 MiB by default) into
    // fragments, so one deleterange of very many keys cannot make a message larger than
    // maxResponseBytes, which would end this stream at the same revision on every reconnect.
    body += ",\"fragment\":true}}";
    char errbuf[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, body.c_str());
    nixlEtcdNoteRequest(body.size());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &nixlEtcdWatch::onData);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, this);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_multi_add_handle(m, h);
    {
        std::lock_guard lock(mutex_);
        multi_ = m;
    }
    CURLcode result = CURLE_OK;
    bool done = false;
    for (;;) {
        int running = 0;
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            break;
        }
        int queued = 0;
        while (CURLMsg *cm = curl_multi_info_read(m, &queued)) {
            if (cm->msg == CURLMSG_DONE) {
                result = cm->data.result;
                done = true;
            }
        }
        if (done || running == 0) {
            break;
        }
        {
            std::lock_guard lock(mutex_);
            if (stopping_) {
                break;
            }
        }
        if (curl_multi_poll(m, nullptr, 0, 1000, nullptr) != CURLM_OK) {
            break;
        }
        std::lock_guard lock(mutex_);
        if (stopping_) {
            break;
        }
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    // An error reply (e.g. 401 for an expired token) is one object without a final newline.
    if (endReason_.empty() && !buffer_.empty()) {
        const std::string rest = std::move(buffer_);
        buffer_.clear();
        onMessage(rest);
    }
    if (status == 401) {
        client_.auth_.dropToken(tokenUsed_);
    }
    {
        std::lock_guard lock(mutex_);
        multi_ = nullptr;
    }
    curl_multi_remove_handle(m, h);
    curl_easy_cleanup(h);
    curl_multi_cleanup(m);
    curl_slist_free_all(headers);

    if (!endReason_.empty()) {
        why = endReason_;
    } else if (done && result != CURLE_OK) {
        why = errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(result));
    } else if (status != 0 && status != 200) {
        why = "HTTP status " + std::to_string(status);
    } else {
        why = "the server closed the stream";
    }
    return createdThisStream_;
}
