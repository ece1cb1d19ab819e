/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file mp_http.h
 * @brief The smallest HTTP/1.0 server that Prometheus can scrape: GET /metrics answered with
 *        the text a handler writes, on one poll-driven thread over non-blocking sockets.
 *
 * Hostile clients cannot take the endpoint: each connection has one deadline for its whole
 * request (kRequestDeadlineMs from accept, not per recv) and one for its whole life
 * (kConnDeadlineMs); at most kMaxConns connections are held, and a new one beyond that closes
 * the oldest still-reading one once that one is kEvictGraceMs old (until then newcomers wait,
 * in order, in the kernel's accept queue, as long as the kernel allows). stop() wakes the
 * thread, which never blocks on a client, so it returns without waiting for any client.
 *
 * Own code rather than civetweb so that a bind failure is a plain errno (EADDRINUSE decides
 * the election outcome) and so that no foreign thread calls into the plugin.
 *
 * Thread-safety: listenOn/start/stop from one thread (the owner of the object); the handler
 * runs on the server thread and must be thread-safe against the rest of the plugin.
 */
#ifndef NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_HTTP_H
#define NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_HTTP_H

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace nixlPromMp {

class nixlMpHttpServer {
public:
    /**
     * Writes the response body into an empty string it is given; should not throw (a throw is
     * answered with 500). The string is the server's own, reused for every response, so a
     * long-lived server keeps one body-sized buffer instead of allocating and freeing one per
     * scrape (which fragmented the thread's malloc arena and grew the RSS).
     */
    using handler_t = std::function<void(std::string &body)>;

    nixlMpHttpServer() = default;
    ~nixlMpHttpServer();
    nixlMpHttpServer(const nixlMpHttpServer &) = delete;
    nixlMpHttpServer &
    operator=(const nixlMpHttpServer &) = delete;

    /** Binds and listens on addr:port (IPv4 literal). Returns 0 or the errno of the failure. */
    int
    listenOn(const std::string &addr, uint16_t port) noexcept;

    /** Starts serving on the bound socket. Throws std::system_error if no thread can start. */
    void
    start(handler_t handler);

    /** Stops the thread and closes the socket; idempotent. */
    void
    stop() noexcept;

    /** The bound port (useful when 0 was asked). */
    uint16_t
    port() const noexcept {
        return port_;
    }

    static constexpr size_t kMaxConns = 128;
    static constexpr int64_t kRequestDeadlineMs = 3000;
    static constexpr int64_t kConnDeadlineMs = 8000;
    static constexpr size_t kMaxRequestBytes = 8192;
    /** Connections accepted per round of the loop, between reads of the held ones. */
    static constexpr size_t kAcceptBatch = 64;
    /** A held connection is evicted for a newcomer only once it is this old. */
    static constexpr int64_t kEvictGraceMs = 100;

private:
    struct conn_t {
        int fd = -1;
        int64_t acceptMs = 0;
        bool writing = false;
        std::string in;
        std::string out; ///< unsent rest of the response (empty when sent whole at once)
        size_t outOff = 0;
    };

    void
    run() noexcept;
    /** Builds and sends the response to c's request; false when c is done and can be closed. */
    bool
    respond(conn_t &c) noexcept;

    int listenFd_ = -1;
    int wakeFd_ = -1;
    uint16_t port_ = 0;
    handler_t handler_;
    std::string body_; ///< response body, reused; touched by the server thread only
    std::thread thread_;
};

} // namespace nixlPromMp

#endif // NIXL_PLUGINS_TELEMETRY_PROMETHEUS_MP_MP_HTTP_H
