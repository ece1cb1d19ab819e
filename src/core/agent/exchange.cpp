/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: sendLocalMD, sendLocalPartialMD, fetchRemoteMD, invalidateLocalMD. Each call
// builds what it sends on the caller's thread, under the agent lock as getLocalMD does, and
// hands it to one exchange: P2P when extra_params->ipAddr is set, else the central store
// (etcd) when NIXL_ETCD_ENDPOINTS configures one. The exchange's thread loads what arrives
// through nixlAgentMdSink.

#include "agent/exchange.h"
#include "agent/agent_trace.h"

#include <cstring>

#include "common/nixl_log.h"
#include "config/config.h"
#include "metadata/md_blob_nixl.h"
#ifdef NIXL_HAVE_ETCD
#include "metadata/etcd/etcd_exchange.h"
#endif

using nixlEnumStrings::statusStr;

namespace {

constexpr char etcd_endpoints_var[] = "NIXL_ETCD_ENDPOINTS";

class nixlAgentMdSink final : public nixlMdSink {
public:
    nixlAgentMdSink(nixlAgent &agent, nixlAgentData &data) : agent_(agent), data_(data) {}

    const std::string &
    agentName() const noexcept override {
        return data_.name;
    }

    nixl_status_t
    loadRemote(const std::string &blob, const std::string &expected, std::string &name) override {
        std::string peeked;
        if (!expected.empty() && nixlMdPeekAgentName(blob, peeked) && peeked != expected) {
            NIXL_ERROR << "agent " << data_.name << ": fetchRemoteMD("
                       << nixlP2P::printable(expected) << "): the peer sent the metadata of agent " << nixlP2P::printable(peeked)
                       << "; not loaded";
            return NIXL_ERR_MISMATCH;
        }
        return agent_.loadRemoteMD(blob, name);
    }

    nixl_status_t
    invalidateRemote(const std::string &agent) override {
        nixlWriteGuard guard(data_.lock);
        if (agent == data_.name || data_.remotes.count(agent) == 0) {
            NIXL_DEBUG << "agent " << data_.name << ": a peer invalidated agent "
                       << nixlP2P::printable(agent) << ", whose metadata is not loaded";
            return NIXL_ERR_NOT_FOUND;
        }
        nixlDropRemote(data_, agent);
        NIXL_DEBUG << "agent " << data_.name << ": dropped the metadata of " << agent
                   << " at its request";
        return NIXL_SUCCESS;
    }

    nixl_status_t
    localMD(std::string &blob) override {
        return agent_.getLocalMD(blob);
    }

private:
    nixlAgent &agent_;
    nixlAgentData &data_;
};

/** True when NIXL_ETCD_ENDPOINTS asks for the etcd exchange (and this build has it). */
bool
etcdWanted() {
#ifdef NIXL_HAVE_ETCD
    const auto v = nixlConfig::lookup(etcd_endpoints_var);
    return v && !v->text.empty();
#else
    return false;
#endif
}

bool
wantsP2P(const nixl_opt_args_t *extra) noexcept {
    return extra != nullptr && !extra->ipAddr.empty();
}

/** The exchange for a call without ipAddr: the central store, or null after logging why. */
nixlMdExchange *
centralOrLog(const nixlAgentData &d, const char *what, nixl_status_t &st) {
    if (d.central != nullptr) {
        return d.central.get();
    }
    if (nixlConfig::lookup(etcd_endpoints_var)) {
        NIXL_WARN << "agent " << d.name << ": " << what
                  << ": NIXL_ETCD_ENDPOINTS is set, but etcd exchange is not supported in "
                     "this build";
        st = NIXL_ERR_NOT_SUPPORTED;
        return nullptr;
    }
    NIXL_ERROR << "agent " << d.name << ": " << what
               << ": no peer given (extra_params->ipAddr) and no central store configured "
                  "(NIXL_ETCD_ENDPOINTS)";
    st = NIXL_ERR_INVALID_PARAM;
    return nullptr;
}

} // namespace

nixl_thread_sync_t
nixlEffectiveSyncMode(const nixlAgentConfig &cfg) {
    // The listener loads metadata (writer) and answers fetches (reader) beside an application
    // that promised only not to call the agent concurrently itself. RW keeps its calls from
    // waiting on each other (it makes none at once) and only orders them against the
    // listener's. The etcd exchange's threads (fetches load metadata, watches drop peers)
    // count the same way.
    if (cfg.syncMode == nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE &&
        (cfg.useListenThread || etcdWanted())) {
        return nixl_thread_sync_t::NIXL_THREAD_SYNC_RW;
    }
    return cfg.syncMode;
}

void
nixlSetupMdExchange(nixlAgent &agent, nixlAgentData &data) {
    data.mdSink = std::make_unique<nixlAgentMdSink>(agent, data);
    data.p2p = std::make_unique<nixlP2PExchange>(
        *data.mdSink,
        nixlP2PConfig::fromOptions(data.name, data.config.useListenThread, data.config.listenPort));
#ifdef NIXL_HAVE_ETCD
    // Throws on a bad NIXL_ETCD_* value; etcd not answering is no error here (the calls that
    // need it report it).
    data.central = nixlMakeEtcdExchange(
        *data.mdSink,
        std::chrono::duration_cast<std::chrono::milliseconds>(data.config.etcdWatchTimeout));
#endif
    if (data.lock.mode() != data.config.syncMode) {
        NIXL_DEBUG << "agent " << data.name
                   << ": sync mode NONE runs as RW while a metadata thread (P2P listener, etcd) "
                      "runs";
    }
}

void
nixlStopMdExchange(nixlAgentData &data) noexcept {
    if (data.central != nullptr) {
        data.central->stop();
    }
    if (data.p2p != nullptr) {
        data.p2p->stop();
    }
}

/**
 * Sends this agent's metadata, made by get_blob (full, or partial when partial), through the
 * P2P listener when extra names a peer, else through the central exchange (call names the API
 * call in the line logged when there is none).
 */
template<typename GetBlob>
static nixl_status_t
sendLocalBlob(const nixlAgentData &data,
              const char *call,
              bool partial,
              const nixl_opt_args_t *extra,
              GetBlob &&get_blob) {
    nixl_status_t st = NIXL_SUCCESS;
    nixlMdExchange *x = wantsP2P(extra) ? data.p2p.get() : centralOrLog(data, call, st);
    if (x == nullptr) {
        return st;
    }
    nixl_blob_t blob;
    st = get_blob(blob);
    if (st != NIXL_SUCCESS) {
        return st; // the getter logged why
    }
    return x->sendLocal(blob, partial, extra);
}

nixl_status_t
nixlAgent::sendLocalMD(const nixl_opt_args_t *extra_params) const {
    return sendLocalBlob(*data, "sendLocalMD", false, extra_params,
                         [&](nixl_blob_t &blob) { return getLocalMD(blob); });
}

nixl_status_t
nixlAgent::sendLocalPartialMD(const nixl_reg_dlist_t &descs,
                              const nixl_opt_args_t *extra_params) const {
    return sendLocalBlob(*data, "sendLocalPartialMD", true, extra_params, [&](nixl_blob_t &blob) {
        return getLocalPartialMD(descs, blob, extra_params);
    });
}

static nixl_status_t
fetchRemoteMDImpl(nixlAgentData *data,
                  const std::string &remote_name,
                  const nixl_opt_args_t *extra_params) {
    if (remote_name == data->name) {
        NIXL_ERROR << "agent " << data->name
                   << ": fetchRemoteMD: cannot fetch the agent's own metadata";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (!wantsP2P(extra_params)) {
        nixl_status_t st = NIXL_SUCCESS;
        nixlMdExchange *x = centralOrLog(*data, "fetchRemoteMD", st);
        return x == nullptr ? st : x->fetchRemote(remote_name, extra_params);
    }
    if (data->lock.mode() == nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE) {
        // The answer is loaded on the metadata thread: only an agent that locks may take it.
        NIXL_ERROR << "agent " << data->name << ": fetchRemoteMD(" << remote_name
                   << ") over P2P needs nixlAgentConfig::useListenThread or a sync mode other "
                      "than NONE (the answer is loaded on the metadata thread)";
        return NIXL_ERR_INVALID_PARAM;
    }
    return data->p2p->fetchRemote(remote_name, extra_params);
}

nixl_status_t
nixlAgent::fetchRemoteMD(const std::string remote_name, const nixl_opt_args_t *extra_params) {
    return nixlTraced(
        *data, nixl::trace::NameId::FETCH_REMOTE_MD,
        [&](nixl::trace::Span &span) { span.add("remote_agent", remote_name); },
        [&] { return fetchRemoteMDImpl(data.get(), remote_name, extra_params); });
}

nixl_status_t
nixlAgent::invalidateLocalMD(const nixl_opt_args_t *extra_params) const {
    nixl_status_t st = NIXL_SUCCESS;
    nixlMdExchange *x = wantsP2P(extra_params) ? data->p2p.get() :
                                                 centralOrLog(*data, "invalidateLocalMD", st);
    return x == nullptr ? st : x->invalidateLocal(extra_params);
}

uint16_t
nixlAgentInternals::p2pPort(const nixlAgent &agent) noexcept {
    return agent.data->p2p != nullptr ? agent.data->p2p->boundPort() : 0;
}

bool
nixlAgentInternals::waitMdIdle(const nixlAgent &agent, std::chrono::milliseconds timeout) {
#ifdef NIXL_HAVE_ETCD
    if (auto *e = dynamic_cast<nixlEtcdExchange *>(agent.data->central.get())) {
        if (!e->waitIdle(timeout)) {
            return false;
        }
    }
#endif
    return agent.data->p2p == nullptr || agent.data->p2p->waitIdle(timeout);
}

nixlAgentInternals::etcd_stats_t
nixlAgentInternals::etcdStats(const nixlAgent &agent) {
    etcd_stats_t out;
#ifdef NIXL_HAVE_ETCD
    if (auto *e = dynamic_cast<nixlEtcdExchange *>(agent.data->central.get())) {
        const auto s = e->stats();
        out = {true, s.published, s.fetched, s.peersInvalidated, s.fetchesStarted,
               s.fetchAgentsStarted};
    }
#endif
    (void)agent;
    return out;
}

nixlP2PExchange::stats_t
nixlAgentInternals::p2pStats(const nixlAgent &agent) {
    return agent.data->p2p != nullptr ? agent.data->p2p->stats() : nixlP2PExchange::stats_t{};
}

nixlAgentInternals::etcd_traffic_t
nixlAgentInternals::etcdTraffic(const nixlAgent &agent) noexcept {
    (void)agent;
#ifdef NIXL_HAVE_ETCD
    const nixlEtcdTraffic t = nixlEtcdProcessTraffic();
    return {t.requests, t.bytesSent};
#else
    return {};
#endif
}

nixl_thread_sync_t
nixlAgentInternals::syncMode(const nixlAgent &agent) noexcept {
    return agent.data->lock.mode();
}
