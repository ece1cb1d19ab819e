/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "prometheus_endpoint.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>
#include <prometheus/text_serializer.h>

#include "mp_http.h"
#include "nixl_telemetry_exporter_sdk.h"
#include "prometheus_config.h"

namespace {

/**
 * What one port's /metrics serves: the series of every agent attached to it.
 * Thread safety: mutex_ guards the agent list; Collect runs on HTTP threads concurrently with
 * add/remove and never throws (a scrape answers with what it could collect).
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

/**
 * The three series prometheus-cpp's Exposer added to every scrape, kept under the same names,
 * help, type and quantiles so that dashboards of the endpoint itself still work.
 * Thread safety: touched by the endpoint's server thread only.
 */
class promHttpStats {
public:
    promHttpStats()
        : registry_(std::make_shared<prometheus::Registry>()),
          bytes_(prometheus::BuildCounter()
                     .Name("exposer_transferred_bytes_total")
                     .Help("Transferred bytes to metrics services")
                     .Register(*registry_)
                     .Add({})),
          scrapes_(prometheus::BuildCounter()
                       .Name("exposer_scrapes_total")
                       .Help("Number of times metrics were scraped")
                       .Register(*registry_)
                       .Add({})),
          latencies_(prometheus::BuildSummary()
                         .Name("exposer_request_latencies")
                         .Help("Latencies of serving scrape requests, in microseconds")
                         .Register(*registry_)
                         .Add({},
                              prometheus::Summary::Quantiles{
                                  {0.5, 0.05}, {0.9, 0.01}, {0.99, 0.001}})) {}

    std::vector<prometheus::MetricFamily>
    collect() const {
        return registry_->Collect();
    }

    /** Counts one answered scrape; like the Exposer, after its body was made, so a scrape
     *  shows the scrapes before it. */
    void
    record(size_t bodyBytes, std::chrono::steady_clock::time_point start) {
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - start);
        latencies_.Observe(static_cast<double>(us.count()));
        bytes_.Increment(static_cast<double>(bodyBytes));
        scrapes_.Increment();
    }

private:
    std::shared_ptr<prometheus::Registry> registry_;
    prometheus::Counter &bytes_;
    prometheus::Counter &scrapes_;
    prometheus::Summary &latencies_;
};

/**
 * One port's HTTP server and what it serves. The server is prometheus_mp's poll-driven one
 * (mp_http.h), not prometheus-cpp's civetweb Exposer: civetweb gives each connection a worker
 * thread until its request is read, so hundreds of idle clients that reconnect when closed
 * queued every scrape behind them for seconds (issue 43 item 6), while one poll loop reads
 * whichever connection has sent its request. The body is the Exposer's: the same families in
 * the same order, written by prometheus-cpp's TextSerializer.
 */
struct endpoint_t {
    std::string address;
    uint16_t port = 0;
    std::shared_ptr<promCollector> collector;
    promHttpStats stats;
    nixlPromMp::nixlMpHttpServer server; // last: stopped (joined) before the rest is freed

    ~endpoint_t() {
        server.stop();
    }

    /** The server thread's handler: one scrape. */
    void
    serve(std::string &body) {
        const auto start = std::chrono::steady_clock::now();
        std::vector<prometheus::MetricFamily> families = stats.collect();
        std::vector<prometheus::MetricFamily> agents = collector->Collect();
        families.insert(families.end(), std::make_move_iterator(agents.begin()),
                        std::make_move_iterator(agents.end()));
        body.append(prometheus::TextSerializer().Serialize(families));
        stats.record(body.size(), start);
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
    const std::string host = bindAddress.substr(0, bindAddress.rfind(':'));
    const auto unavailable = [&](const std::string &why) {
        return nixlTelemetryExporterUnavailable(
            who + "cannot listen on " + bindAddress + " (" + nixlPromConfig::kPortVar + "=" +
            std::to_string(port) + "): " + why + "; this agent runs without Prometheus export");
    };
    if (const int err = ep->server.listenOn(host, port); err != 0) {
        throw unavailable(std::strerror(err));
    }
    try {
        endpoint_t *raw = ep.get();
        ep->server.start([raw](std::string &body) { raw->serve(body); });
    }
    catch (const std::system_error &e) {
        throw unavailable(std::string("no server thread: ") + e.what());
    }
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
