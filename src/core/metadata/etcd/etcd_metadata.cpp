/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_metadata.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/nixl_log.h"

nixlEtcdMetadata::nixlEtcdMetadata(std::string agent, nixlEtcdConfig cfg)
    : agent_(std::move(agent)),
      client_(std::move(cfg)),
      prefix_(nixlEtcdAgentPrefix(client_.config().nameSpace, agent_)),
      lease_(client_, agent_, prefix_),
      peers_(client_, agent_) {
    if (!nixlEtcdValidAgentName(agent_)) {
        NIXL_ERROR << "etcd: agent name '" << agent_ << "' is empty or contains '/'";
        throw std::invalid_argument("etcd: agent name '" + agent_ + "' is empty or contains '/'");
    }
}

nixl_status_t
nixlEtcdMetadata::fetch(const std::string &agent,
                        std::string_view label,
                        std::chrono::milliseconds timeout,
                        std::string &blob,
                        int64_t *revision) {
    nixl_status_t st = NIXL_ERR_UNKNOWN;
    fetchMany({agent}, label, timeout, [&](fetch_result_t &r) {
        st = r.status;
        if (st == NIXL_SUCCESS) {
            blob = std::move(r.blob);
            if (revision != nullptr) {
                *revision = r.revision;
            }
        }
    });
    return st;
}

void
nixlEtcdMetadata::fetchMany(const std::vector<std::string> &agents,
                            std::string_view label,
                            std::chrono::milliseconds timeout,
                            const fetch_cb_t &cb) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto deliver = [&](const std::string &agent, nixl_status_t st, std::string blob,
                       int64_t rev) {
        fetch_result_t r{agent, st, std::move(blob), rev};
        cb(r);
    };
    // At the agent's shutdown nobody wants the answer: every agent not delivered yet gets
    // NIXL_ERR_CANCELED, with one line for all of them.
    std::vector<std::string> abandoned;
    auto abandon = [&](const std::string &agent) {
        abandoned.push_back(agent);
        deliver(agent, NIXL_ERR_CANCELED, {}, 0);
    };
    auto sayAbandoned = [&] {
        if (!abandoned.empty()) {
            NIXL_INFO << "etcd: agent " << agent_ << ": " << abandoned.size()
                      << " fetch(es) of label '" << label << "' abandoned (first: "
                      << abandoned.front() << "): the agent is shutting down";
        }
    };
    if (client_.shuttingDown()) {
        for (const std::string &agent : agents) {
            abandon(agent);
        }
        sayAbandoned();
        return;
    }
    // The deletion stream before the reads, so the revisions read are ones it covers and a
    // later watchAgent costs no request. Its failure is logged; the reads do not need it.
    peers_.ensureStream();

    struct pending_t {
        std::string agent;
        int64_t readAt = 0;
        bool arrived = false;
    };
    std::map<std::string, pending_t> pending; // key -> agent not published at readAt
    std::vector<std::string> keys;
    std::vector<std::string> names;
    auto flush = [&] {
        if (keys.empty()) {
            return;
        }
        std::vector<std::optional<nixlEtcdKv>> kvs;
        int64_t rev = 0;
        const nixl_status_t st = client_.getMany(keys, kvs, &rev);
        for (size_t i = 0; i < keys.size(); ++i) {
            if (st != NIXL_SUCCESS) {
                deliver(names[i], st, {}, 0);
            } else if (kvs[i]) {
                deliver(names[i], NIXL_SUCCESS, std::move(kvs[i]->value), rev);
            } else {
                pending[keys[i]] = pending_t{names[i], rev};
            }
        }
        keys.clear();
        names.clear();
    };
    for (const std::string &agent : agents) {
        if (!nixlEtcdValidAgentName(agent)) {
            NIXL_ERROR << "etcd: agent " << agent_ << ": fetch of agent '" << agent
                       << "': the name is empty or contains '/'";
            deliver(agent, NIXL_ERR_INVALID_PARAM, {}, 0);
            continue;
        }
        if (client_.shuttingDown()) {
            abandon(agent);
            continue;
        }
        keys.push_back(nixlEtcdAgentPrefix(client_.config().nameSpace, agent) +
                       std::string(label));
        names.push_back(agent);
        if (keys.size() == nixl_etcd_max_batch_keys) {
            flush();
        }
    }
    flush();
    if (pending.empty() || client_.shuttingDown()) {
        for (const auto &[key, p] : pending) {
            abandon(p.agent);
        }
        sayAbandoned();
        return;
    }

    // Not there yet: one watch of puts over the span of the missing keys, from just after the
    // oldest revision read, so a put between a read and the watch is not missed.
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<std::string, nixlEtcdKv>> arrived; // agent, kv
    int64_t from = 0;
    for (const auto &[key, p] : pending) {
        from = from == 0 ? p.readAt : std::min(from, p.readAt);
    }
    std::string span_end = pending.rbegin()->first;
    span_end.push_back('\0'); // the key right after the last one
    size_t left = pending.size();
    nixlEtcdWatch watch(
        client_,
        pending.begin()->first,
        span_end,
        from + 1,
        [&](const std::vector<nixlEtcdEvent> &events) {
            std::lock_guard lock(m);
            for (const auto &ev : events) {
                auto it = pending.find(ev.kv.key);
                // A put older than our read was followed by a delete: not the value.
                if (ev.type != nixl_etcd_event_type_t::PUT || it == pending.end() ||
                    it->second.arrived || ev.kv.modRevision <= it->second.readAt) {
                    continue;
                }
                it->second.arrived = true;
                arrived.emplace_back(it->second.agent, ev.kv);
            }
            cv.notify_all();
        },
        nixlEtcdWatch::filter_t::PUTS_ONLY);
    // The agent's shutdown ends the wait for peers at once, whatever etcdWatchTimeout says.
    const uint64_t waker = client_.addShutdownWaker([&] {
        std::lock_guard lock(m);
        cv.notify_all();
    });
    while (left > 0) {
        std::vector<std::pair<std::string, nixlEtcdKv>> batch;
        {
            std::unique_lock lock(m);
            if (!cv.wait_until(lock, deadline, [&] {
                    return !arrived.empty() || client_.shuttingDown();
                }) ||
                arrived.empty()) {
                break;
            }
            batch.swap(arrived);
        }
        for (auto &[agent, kv] : batch) {
            --left;
            deliver(agent, NIXL_SUCCESS, std::move(kv.value), kv.modRevision);
        }
    }
    client_.removeShutdownWaker(waker);
    watch.stop();
    // Arrived between the deadline and the stop: found after all.
    for (auto &[agent, kv] : arrived) {
        deliver(agent, NIXL_SUCCESS, std::move(kv.value), kv.modRevision);
    }
    const bool shutdown = client_.shuttingDown();
    for (const auto &[key, p] : pending) {
        if (p.arrived) {
            continue;
        }
        if (shutdown) {
            abandon(p.agent);
        } else {
            NIXL_ERROR << "etcd: agent " << agent_ << ": " << key << " did not appear within "
                       << timeout.count() << " ms";
            deliver(p.agent, NIXL_ERR_NOT_FOUND, {}, 0);
        }
    }
    sayAbandoned();
}
