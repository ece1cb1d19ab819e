/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_watch.h
 * @brief nixlEtcdWatch: a streaming watch of a key or key range of an nixlEtcdClient.
 *
 * Thread safety: see the class comment (its own thread; other methods from any thread).
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_WATCH_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_WATCH_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "etcd_kv.h"

class nixlEtcdClient;

/**
 * A watch of [key, rangeEnd) from startRevision (0 = from now), on its own thread, as one
 * streaming POST /v3/watch. When the stream breaks (member killed, connection lost) it
 * reconnects, trying the endpoints in turn with a growing pause (100 ms to 2 s), and resumes
 * after the last revision it delivered, so no event is lost or repeated (unless etcd compacted
 * them meanwhile: then one WARN line and it resumes at the oldest revision still kept).
 *
 * The callback runs on the watch thread, one call per batch of events in revision order; it
 * must not destroy the watch. Destruction (or stop()) ends the stream promptly and joins the
 * thread. Other methods may be called from any thread.
 */
class nixlEtcdWatch {
public:
    using events_cb_t = std::function<void(const std::vector<nixlEtcdEvent> &)>;

    /** Which events the server sends (etcd's watch filters). */
    enum class filter_t { ALL, DELETES_ONLY, PUTS_ONLY };

    /** client must outlive the watch. rangeEnd empty = the single key. */
    nixlEtcdWatch(nixlEtcdClient &client,
                  std::string key,
                  std::string rangeEnd,
                  int64_t startRevision,
                  events_cb_t cb,
                  filter_t filter = filter_t::ALL);
    ~nixlEtcdWatch();

    nixlEtcdWatch(const nixlEtcdWatch &) = delete;
    nixlEtcdWatch &
    operator=(const nixlEtcdWatch &) = delete;

    /** Waits until the server has confirmed the watch at least once; false on timeout, stop or
     *  the client's shutdown (nixlEtcdClient::shuttingDown). */
    bool
    waitCreated(std::chrono::milliseconds timeout);

    /** The revision of the server's first confirmation (events after it are delivered); 0
     *  before it. */
    int64_t
    createdRevision() const;

    /** Ends the stream and joins the thread (idempotent). Not from the callback. */
    void
    stop();

private:
    void
    run();
    /**
     * One stream to endpoint ep; returns when it ends or on stop, why = how it ended. true if
     * the server confirmed it.
     */
    bool
    streamOnce(size_t ep, std::string &why);
    /** Handles one newline-delimited message; false ends the stream (endReason_ says why). */
    bool
    onMessage(std::string_view line);
    static size_t
    onData(char *ptr, size_t size, size_t nmemb, void *self);

    nixlEtcdClient &client_;
    std::string key_;
    std::string rangeEnd_;
    int64_t nextRevision_;
    events_cb_t cb_;
    filter_t filter_;

    mutable std::mutex mutex_;
    std::condition_variable cv_;
    bool stopping_ = false;
    bool created_ = false;
    int64_t createdRevision_ = 0;
    void *multi_ = nullptr; ///< CURLM of the current stream, for curl_multi_wakeup (under mutex_)
    uint64_t wakeId_ = 0; ///< client shutdown waker: ends waitCreated when the agent goes

    // State of the current stream, used by the watch thread only.
    std::string buffer_; ///< bytes not yet split into messages
    bool createdThisStream_ = false;
    std::string endReason_;
    std::string tokenUsed_;
    std::string currentUrl_;
    bool failing_ = false; ///< the last stream ended and no new one was confirmed yet
    std::thread thread_;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_WATCH_H
