/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_exchange.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/nixl_log.h"

namespace {

/** Fetch threads: enough that a few peers not yet published do not hold up the others. */
constexpr size_t fetch_threads = 4;

std::string
joinEndpoints(const std::vector<std::string> &eps) {
    std::string out;
    for (const auto &e : eps) {
        out += (out.empty() ? "" : ",") + e;
    }
    return out;
}

} // namespace

nixlEtcdExchange::nixlEtcdExchange(nixlMdSink &sink,
                                   nixlEtcdConfig cfg,
                                   std::chrono::milliseconds watchTimeout)
    : sink_(sink),
      agent_(sink.agentName()),
      watchTimeout_(watchTimeout),
      endpoints_(joinEndpoints(cfg.endpoints)) {
    if (agent_.find('/') != std::string::npos) {
        NIXL_ERROR << "agent " << agent_
                   << ": etcd metadata exchange (NIXL_ETCD_ENDPOINTS) needs an agent name "
                      "without '/' (it is part of the etcd key)";
        throw std::invalid_argument("nixlAgent: agent name with '/' and NIXL_ETCD_ENDPOINTS");
    }
    md_ = std::make_unique<nixlEtcdMetadata>(agent_, std::move(cfg));
    ordered_.push_back([this] { connect(); });
    worker_ = std::thread([this] { orderedLoop(); });
    for (size_t i = 0; i < fetch_threads; ++i) {
        fetchers_.emplace_back([this] { fetchLoop(); });
    }
}

nixlEtcdExchange::~nixlEtcdExchange() {
    stop();
}

void
nixlEtcdExchange::noteDoneLocked() {
    if (ordered_.empty() && fetches_.empty() && running_ == 0) {
        idleCv_.notify_all();
    }
}

void
nixlEtcdExchange::orderedLoop() {
    std::unique_lock lock(mutex_);
    while (true) {
        // Drains its queue before stopping (a last invalidateLocalMD counts).
        workCv_.wait(lock, [&] { return !ordered_.empty() || stopping_; });
        if (stopping_ && ordered_.empty()) {
            return;
        }
        if (stopping_ && std::chrono::steady_clock::now() >= shutdownBy_) {
            NIXL_ERROR << "agent " << agent_ << ": etcd: " << ordered_.size()
                       << " queued operation(s) not started within the "
                       << nixl_etcd_shutdown_budget.count()
                       << " ms shutdown budget were dropped at agent destruction";
            ordered_.clear();
            return;
        }
        task_t t = std::move(ordered_.front());
        ordered_.pop_front();
        ++running_;
        lock.unlock();
        t();
        lock.lock();
        --running_;
        noteDoneLocked();
    }
}

void
nixlEtcdExchange::fetchLoop() {
    std::unique_lock lock(mutex_);
    while (true) {
        // Fetches still queued at stop are abandoned.
        workCv_.wait(lock, [&] { return !fetches_.empty() || stopping_; });
        if (stopping_) {
            return;
        }
        // Everything queued under the first one's label, in one read: N fetches cost one
        // request, not N. Other labels stay queued, in order, for the next round.
        const std::string label = fetches_.front().label;
        std::vector<std::string> batch;
        for (auto it = fetches_.begin();
             it != fetches_.end() && batch.size() < nixl_etcd_max_batch_keys;) {
            if (it->label != label) {
                ++it;
                continue;
            }
            if (std::find(batch.begin(), batch.end(), it->agent) == batch.end()) {
                batch.push_back(std::move(it->agent));
            }
            it = fetches_.erase(it);
        }
        ++running_;
        ++stats_.fetchesStarted;
        stats_.fetchAgentsStarted += batch.size();
        lock.unlock();
        runFetches(batch, label);
        lock.lock();
        --running_;
        noteDoneLocked();
    }
}

nixl_status_t
nixlEtcdExchange::post(task_t t) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_) {
            NIXL_ERROR << "agent " << agent_ << ": etcd exchange is stopping; request dropped";
            return NIXL_ERR_NOT_ALLOWED;
        }
        ordered_.push_back(std::move(t));
    }
    workCv_.notify_all();
    return NIXL_SUCCESS;
}

void
nixlEtcdExchange::connect() {
    const nixl_status_t st = md_->start();
    std::lock_guard lock(mutex_);
    if (st == NIXL_SUCCESS) {
        if (link_ == link_t::DOWN) {
            NIXL_INFO << "agent " << agent_ << ": etcd at " << endpoints_ << " reachable again";
        }
        link_ = link_t::UP;
        return;
    }
    // The client logged the cause per endpoint; this line says what it means for the agent.
    if (link_ != link_t::DOWN) {
        NIXL_ERROR << "agent " << agent_ << ": etcd at " << endpoints_
                   << " not reachable (" << nixlEnumStrings::statusStr(st)
                   << "); metadata calls without ipAddr fail until it is";
    }
    link_ = link_t::DOWN;
}

nixl_status_t
nixlEtcdExchange::checkLink(const char *what) {
    {
        std::lock_guard lock(mutex_);
        if (link_ != link_t::DOWN) {
            return NIXL_SUCCESS;
        }
    }
    NIXL_ERROR << "agent " << agent_ << ": " << what << ": etcd at " << endpoints_
               << " was not reachable at the last attempt; trying again in the background";
    post([this] { connect(); });
    return NIXL_ERR_BACKEND;
}

nixl_status_t
nixlEtcdExchange::sendLocal(const std::string &blob, bool partial, const nixl_opt_args_t *extra) {
    const char *what = partial ? "sendLocalPartialMD" : "sendLocalMD";
    // As NIXL 1.4: the full metadata always goes under "metadata" (metadataLabel is not read),
    // a partial one under the caller's label, which it must give. Any other label is NIXL's
    // too, "metadata" (the partial blob replaces the full one) and '/' (a deeper key, still
    // under our prefix: invalidateLocalMD removes it) included.
    std::string label = nixl_etcd_metadata_label;
    if (partial) {
        label = extra != nullptr ? extra->metadataLabel : "";
        if (label.empty()) {
            NIXL_ERROR << "agent " << agent_
                       << ": sendLocalPartialMD to etcd needs extra_params->metadataLabel (the "
                          "key's last part, "
                       << md_->prefix() << "<label>); none given";
            return NIXL_ERR_INVALID_PARAM;
        }
    }
    if (nixl_status_t st = checkLink(what); st != NIXL_SUCCESS) {
        return st;
    }
    return post([this, what, label, blob] {
        {
            std::lock_guard lock(mutex_);
            if (link_ != link_t::UP) {
                NIXL_ERROR << "agent " << agent_ << ": " << what << ": etcd at " << endpoints_
                           << " not reachable; label '" << label << "' not published";
                return;
            }
        }
        if (md_->publish(label, blob) == NIXL_SUCCESS) {
            std::lock_guard lock(mutex_);
            ++stats_.published;
        } else {
            NIXL_ERROR << "agent " << agent_ << ": " << what << ": label '" << label
                       << "' not published to etcd";
        }
    });
}

nixl_status_t
nixlEtcdExchange::fetchRemote(const std::string &agent, const nixl_opt_args_t *extra) {
    if (agent.empty() || agent.find('/') != std::string::npos) {
        NIXL_ERROR << "agent " << agent_ << ": fetchRemoteMD: agent name '" << agent
                   << "' cannot be an etcd key (empty or contains '/')";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (nixl_status_t st = checkLink("fetchRemoteMD"); st != NIXL_SUCCESS) {
        return st;
    }
    {
        std::lock_guard lock(mutex_);
        if (stopping_) {
            NIXL_ERROR << "agent " << agent_ << ": etcd exchange is stopping; request dropped";
            return NIXL_ERR_NOT_ALLOWED;
        }
        // NIXL 1.4: the caller's label, "metadata" when it gives none.
        fetches_.push_back(fetch_req_t{agent,
                                       extra != nullptr && !extra->metadataLabel.empty() ?
                                           extra->metadataLabel :
                                           std::string(nixl_etcd_metadata_label)});
    }
    workCv_.notify_all();
    return NIXL_SUCCESS;
}

void
nixlEtcdExchange::runFetches(const std::vector<std::string> &agents, const std::string &label) {
    md_->fetchMany(agents, label, watchTimeout_,
                   [this](nixlEtcdMetadata::fetch_result_t &r) { loadFetched(r); });
}

void
nixlEtcdExchange::loadFetched(nixlEtcdMetadata::fetch_result_t &r) {
    if (r.status != NIXL_SUCCESS) {
        return; // fetch logged why
    }
    const std::string &agent = r.agent;
    // Loading and watching under watchOps_, so a queued drop of an older watch of this agent
    // cannot undo what we load here.
    std::lock_guard ops(watchOps_);
    std::string name;
    if (sink_.loadRemote(r.blob, agent, name) != NIXL_SUCCESS) {
        NIXL_ERROR << "agent " << agent_ << ": fetchRemoteMD(" << agent
                   << "): the value in etcd was refused; nothing loaded, not watched";
        return;
    }
    uint64_t gen = 0;
    {
        std::lock_guard lock(mutex_);
        gen = ++nextGen_;
        watchGen_[agent] = gen;
        ++stats_.fetched;
    }
    // From the revision we loaded: a delete in between is still seen.
    md_->watchAgent(agent, r.revision, [this, gen](const std::string &a,
                                                   nixl_etcd_event_type_t type,
                                                   const std::string &label) {
        onPeerEvent(a, gen, type, label);
    });
}

void
nixlEtcdExchange::onPeerEvent(const std::string &agent,
                              uint64_t generation,
                              nixl_etcd_event_type_t type,
                              const std::string &label) {
    // The full metadata or the agent's prefix key gone (invalidateLocalMD, lease expired).
    if (type != nixl_etcd_event_type_t::DELETE ||
        (!label.empty() && label != nixl_etcd_metadata_label)) {
        return;
    }
    std::lock_guard lock(mutex_);
    auto it = watchGen_.find(agent);
    if (stopping_ || it == watchGen_.end() || it->second != generation) {
        return; // already queued, or a newer fetch replaced this watch
    }
    watchGen_.erase(it);
    ordered_.push_back([this, agent] { dropPeer(agent); });
    workCv_.notify_all();
}

void
nixlEtcdExchange::dropPeer(const std::string &agent) {
    std::lock_guard ops(watchOps_);
    {
        std::lock_guard lock(mutex_);
        if (watchGen_.count(agent) != 0) {
            return; // fetched again since: the new watch is in charge
        }
    }
    NIXL_INFO << "agent " << agent_ << ": the metadata of " << agent
              << " was deleted from etcd (invalidated or lease expired); dropping it";
    if (sink_.invalidateRemote(agent) == NIXL_SUCCESS) {
        std::lock_guard lock(mutex_);
        ++stats_.peersInvalidated;
    }
    // Not under mutex_: ending the watch joins its thread, whose callback takes mutex_.
    md_->unwatchAgent(agent);
}

nixl_status_t
nixlEtcdExchange::invalidateLocal(const nixl_opt_args_t *) {
    if (nixl_status_t st = checkLink("invalidateLocalMD"); st != NIXL_SUCCESS) {
        return st;
    }
    return post([this] {
        if (md_->removeLocal() != NIXL_SUCCESS) {
            NIXL_ERROR << "agent " << agent_ << ": invalidateLocalMD: our keys under "
                       << md_->prefix() << " not deleted from etcd";
        }
    });
}

void
nixlEtcdExchange::stop() noexcept {
    std::chrono::steady_clock::time_point by;
    {
        std::lock_guard lock(mutex_);
        if (stopping_ && !worker_.joinable()) {
            return;
        }
        stopping_ = true;
        fetches_.clear();
        // One budget for the whole shutdown, however many operations are queued.
        shutdownBy_ = std::chrono::steady_clock::now() + nixl_etcd_shutdown_budget;
        by = shutdownBy_;
    }
    // Outside mutex_: it wakes the running fetches' waits (watch confirmation, peers not
    // published yet), which end at once; their requests end by the deadline. md_ is only
    // reset below, by this thread.
    if (md_ != nullptr) {
        md_->client().setShutdownDeadline(by);
    }
    workCv_.notify_all();
    if (worker_.joinable()) {
        worker_.join();
    }
    for (auto &t : fetchers_) {
        if (t.joinable()) {
            t.join();
        }
    }
    // Ends the watches (their callbacks see stopping_) and revokes the lease.
    md_.reset();
    idleCv_.notify_all();
}

bool
nixlEtcdExchange::waitIdle(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return idleCv_.wait_for(lock, timeout, [this] {
        return stopping_ || (ordered_.empty() && fetches_.empty() && running_ == 0);
    });
}

nixlEtcdExchange::stats_t
nixlEtcdExchange::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

std::unique_ptr<nixlEtcdExchange>
nixlMakeEtcdExchange(nixlMdSink &sink, std::chrono::milliseconds watchTimeout) {
    std::optional<nixlEtcdConfig> cfg = nixlEtcdConfig::fromProcessConfig();
    if (!cfg) {
        return nullptr;
    }
    return std::make_unique<nixlEtcdExchange>(sink, std::move(*cfg), watchTimeout);
}
