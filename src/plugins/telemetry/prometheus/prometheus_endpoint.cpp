/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "prometheus_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include "nixl_telemetry_exporter_sdk.h"
#include "prometheus_config.h"

namespace {

/**
 * What one port's /metrics serves: the series of every agent attached to it.
 * Thread safety: mutex_ guards the agent list; Collect runs on HTTP threads concurrently with
 * add/remove and never throws (an exception would unwind into civetweb).
 */
class promCollector : public prometheus::Collectable {
public:
    std::vector<prometheus::MetricFamily>
    Collect() const override {
        try {
            std::vector<std::shared_ptr<const nixlPromAgentSeries>> agents;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                agents = agents_;
            }
            nixlPromFamilySet families;
            for (const auto &agent : agents) {
                agent->collectInto(families);
            }
            return families.take();
        }
        catch (const std::exception &e) {
            NIXL_SDK_WARN("prometheus: scrape answered empty: " << e.what());
        }
        catch (...) {
            NIXL_SDK_WARN("prometheus: scrape answered empty: unknown exception");
        }
        return {};
    }

    bool
    hasAgent(const std::string &label) const {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::any_of(agents_.begin(), agents_.end(),
                           [&](const auto &a) { return a->agentLabel() == label; });
    }

    void
    add(std::shared_ptr<const nixlPromAgentSeries> series) {
        std::lock_guard<std::mutex> lock(mutex_);
        agents_.push_back(std::move(series));
    }

    /** Returns how many agents remain. */
    size_t
    remove(const nixlPromAgentSeries *series) noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        std::erase_if(agents_, [&](const auto &a) { return a.get() == series; });
        return agents_.size();
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<const nixlPromAgentSeries>> agents_;
};

/** Opens and closes one TCP connection to 127.0.0.1:port. */
void
pokePort(uint16_t port) noexcept {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return;
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)::connect(fd, reinterpret_cast<const sockaddr *>(&sa), sizeof(sa));
    ::close(fd);
}

struct endpoint_t {
    std::string address;
    uint16_t port = 0;
    std::shared_ptr<promCollector> collector;
    std::unique_ptr<prometheus::Exposer> exposer;

    ~endpoint_t() {
        // Stop the HTTP threads first: they may hold a reference to the collector.
        stopServer();
    }

    /**
     * civetweb's listener thread looks at its stop flag only between polls of the listening
     * socket, which time out every 2 s; once it has served a scrape, stopping takes that long
     * unless a connection wakes it. So connect to our own port until the stop is done: agent
     * destruction then takes milliseconds instead of up to 2 s.
     */
    void
    stopServer() noexcept {
        if (!exposer) {
            return;
        }
        std::atomic<bool> stopped{false};
        std::thread waker;
        try {
            waker = std::thread([&stopped, p = port] {
                while (!stopped.load(std::memory_order_acquire)) {
                    pokePort(p);
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
            });
        }
        catch (...) {
            // No thread: the stop is merely slow.
        }
        exposer.reset();
        stopped.store(true, std::memory_order_release);
        if (waker.joinable()) {
            waker.join();
        }
    }
};

struct registry_t {
    std::mutex mutex;
    std::map<uint16_t, std::unique_ptr<endpoint_t>> endpoints;
};

registry_t &
registry() {
    // Never destroyed: an agent still alive at exit must not find its endpoint torn down by
    // static destructors while its flush thread runs.
    static auto *r = new registry_t;
    return *r;
}

/** Why binding failed, from a bind of our own on the same address: strerror text. */
std::string
bindError(bool local, uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return std::strerror(errno);
    }
    const int one = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(local ? INADDR_LOOPBACK : INADDR_ANY);
    std::string why = "the HTTP server could not be started";
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) != 0) {
        why = std::strerror(errno);
    }
    ::close(fd);
    return why;
}

} // namespace

namespace nixlPromEndpoints {

void
attach(const std::string &bindAddress,
       uint16_t port,
       std::shared_ptr<const nixlPromAgentSeries> series) {
    registry_t &reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    const std::string who = "prometheus: agent '" + series->agentLabel() + "': ";
    auto it = reg.endpoints.find(port);
    if (it != reg.endpoints.end()) {
        endpoint_t &ep = *it->second;
        if (ep.address != bindAddress) {
            throw nixlTelemetryExporterUnavailable(
                who + "port " + std::to_string(port) + " is already served by this process on " +
                ep.address + ", not " + bindAddress + " (agents disagree on " +
                nixlPromConfig::kLocalVar + "); this agent runs without Prometheus export");
        }
        if (ep.collector->hasAgent(series->agentLabel())) {
            throw std::invalid_argument(
                who + "another agent of this process with the same name already exports on " +
                ep.address + "; give agents distinct names or set a different " +
                nixlPromConfig::kPortVar);
        }
        ep.collector->add(std::move(series));
        return;
    }
    auto ep = std::make_unique<endpoint_t>();
    ep->address = bindAddress;
    ep->port = port;
    ep->collector = std::make_shared<promCollector>();
    ep->collector->add(std::move(series));
    try {
        // civetweb 1.15 gives each connection a worker thread until its request is read, so
        // the thread count and a whole-request timeout are what bound hostile clients: with
        // 2 threads and the default 30 s, 2 silent connections took the endpoint down for 30 s.
        // 80 workers (prespawned, idle in a condition wait) keep a scrape answered with 64
        // silent connections open; 3 s bounds each of them.
        ep->exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
            "listening_ports", bindAddress, "num_threads", "80", "request_timeout_ms", "3000",
            "linger_timeout_ms", "0"});
    }
    catch (const std::exception &) {
        const bool local = bindAddress.rfind("127.", 0) == 0;
        throw nixlTelemetryExporterUnavailable(
            who + "cannot listen on " + bindAddress + " (" + nixlPromConfig::kPortVar + "=" +
            std::to_string(port) + "): " + bindError(local, port) +
            "; this agent runs without Prometheus export");
    }
    ep->exposer->RegisterCollectable(ep->collector);
    reg.endpoints.emplace(port, std::move(ep));
}

void
detach(uint16_t port, const nixlPromAgentSeries *series) noexcept {
    try {
        registry_t &reg = registry();
        std::lock_guard<std::mutex> lock(reg.mutex);
        auto it = reg.endpoints.find(port);
        if (it == reg.endpoints.end()) {
            return;
        }
        if (it->second->collector->remove(series) == 0) {
            // Last agent: stop the server now, under the lock, so the port is free before
            // another agent may try to bind it.
            std::unique_ptr<endpoint_t> last = std::move(it->second);
            reg.endpoints.erase(it);
            last.reset();
        }
    }
    catch (const std::exception &e) {
        NIXL_SDK_ERROR("prometheus: stopping the endpoint on port " << port
                                                                    << " failed: " << e.what());
    }
    catch (...) {
        NIXL_SDK_ERROR("prometheus: stopping the endpoint on port " << port << " failed");
    }
}

} // namespace nixlPromEndpoints
