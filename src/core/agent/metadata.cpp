/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: local and remote metadata, connections.

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <string_view>

#include "agent/agent_data.h"
#include "agent/agent_trace.h"
#include "common/nixl_log.h"
#include "config/config.h"
#include "common/nixl_text.h"
#include "metadata/md_blob_nixl.h"

using nixlEnumStrings::memTypeStr;
using nixlEnumStrings::statusStr;

namespace {

nixlBackendEngineProxy *
engineByType(const nixlAgentData &d, const std::string &type) {
    auto it = d.byType.find(type);
    return it == d.byType.end() ? nullptr : it->second->engine();
}

constexpr char md_format_var[] = "NIXL_METADATA_FORMAT";

/**
 * Builds both parts of what getLocalMD / getLocalPartialMD send (docs/metadata.md,
 * Interoperability): libnixl's own blob with every remote-capable backend, and NIXL 1.4's
 * layout with the backends that give NIXL's forms (getConnInfoNixl answers).
 * Thread safety: none; a local of one call, made under the agent's read lock.
 */
class nixlMdBuilder {
public:
    explicit nixlMdBuilder(const nixlAgentData &d) : d_(d) {
        own_.agentName = d.name;
        nixl_.agentName = d.name;
    }

    void
    addConns(const std::vector<nixlBackendEngineProxy *> &engines) {
        for (nixlBackendEngineProxy *e : engines) {
            auto it = d_.localConnInfo.find(e);
            if (it == d_.localConnInfo.end()) {
                continue;
            }
            own_.conns.push_back(nixlMdConn{e->type(), it->second});
            const std::string *info = nixlConnInfo(e);
            if (info != nullptr) {
                nixl_.conns.push_back(nixlMdConn{e->type(), *info});
            }
        }
    }

    void
    addSection(nixlBackendEngineProxy *e,
               nixl_mem_t mem,
               const std::vector<const nixlLocalReg *> &regs) {
        nixlMdSection own{e->type(), mem, {}};
        own.descs.reserve(regs.size());
        for (const nixlLocalReg *reg : regs) {
            own.descs.push_back(
                nixlMdDesc{reg->desc.addr, reg->desc.len, reg->desc.devId, reg->publicData});
        }
        own_.sections.push_back(std::move(own));
        if (nixlConnInfo(e) == nullptr) {
            return;
        }
        nixlMdSection nixl{e->type(), mem, {}};
        nixl.descs.reserve(regs.size());
        for (const nixlLocalReg *reg : regs) {
            std::string pub;
            const nixl_status_t st = e->getPublicDataNixl(reg->md, pub);
            if (st != NIXL_SUCCESS) {
                // A NIXL peer then cannot reach this section; libnixl peers read ours.
                NIXL_WARN_LIMITED << "agent " << d_.name << ": backend " << e->type()
                                  << " gave no NIXL 1.4 form of a registration ("
                                  << statusStr(st) << "); its " << memTypeStr(mem)
                                  << " section is left out of the NIXL part of the metadata";
                return;
            }
            nixl.descs.push_back(
                nixlMdDesc{reg->desc.addr, reg->desc.len, reg->desc.devId, std::move(pub)});
        }
        // NIXL 1.4 writes a section in (devId, addr, len) order; its readers do not depend
        // on it, but the same registrations then give the same bytes.
        std::sort(nixl.descs.begin(), nixl.descs.end(), [](const auto &a, const auto &b) {
            return std::tie(a.devId, a.addr, a.len) < std::tie(b.devId, b.addr, b.len);
        });
        nixl_.sections.push_back(std::move(nixl));
    }

    /** The blob to send, in the form NIXL_METADATA_FORMAT asks for; false after logging a bad
     *  value of it. */
    bool
    finish(const char *call, nixl_blob_t &out) const {
        const std::string raw = nixlConfig::getString(md_format_var).value_or(std::string());
        std::string lower(nixlText::trim(raw));
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        const std::string own = nixlMdEncode(own_);
        if (lower.empty() || lower == "libnixl") {
            out = nixlMdEncodeNixl(nixl_, &own);
            return true;
        }
        if (lower == "nixl") {
            out = nixlMdEncodeNixl(nixl_, nullptr);
            return true;
        }
        NIXL_ERROR << "agent " << d_.name << ": " << call << ": " << md_format_var << "="
                   << nixlText::cut(raw, 64) << " is not libnixl or nixl";
        return false;
    }

    bool
    hasSections() const noexcept {
        return !own_.sections.empty();
    }

private:
    /** The engine's NIXL-form connection info, asked once per blob; null when it has none. */
    const std::string *
    nixlConnInfo(nixlBackendEngineProxy *e) {
        auto it = nixlConn_.find(e);
        if (it == nixlConn_.end()) {
            std::string info;
            const bool ok = e->getConnInfoNixl(info) == NIXL_SUCCESS && !info.empty();
            it = nixlConn_.emplace(e, ok ? std::optional<std::string>(std::move(info)) :
                                           std::nullopt)
                     .first;
        }
        return it->second ? &*it->second : nullptr;
    }

    const nixlAgentData &d_;
    nixlMdBlob own_;
    nixlMdBlob nixl_;
    std::map<nixlBackendEngineProxy *, std::optional<std::string>> nixlConn_;
};

std::vector<nixlBackendEngineProxy *>
remoteEngines(const nixlAgentData &d, const nixl_opt_args_t *extra) {
    std::vector<nixlBackendEngineProxy *> out;
    for (nixlBackendEngineProxy *e : nixlCandidateEngines(d, extra)) {
        if (e->supportsRemote()) {
            out.push_back(e);
        }
    }
    return out;
}

} // namespace

nixl_status_t
nixlAgent::getLocalMD(nixl_blob_t &str) const {
    nixlReadGuard guard(data->lock);
    std::vector<nixlBackendEngineProxy *> engines = remoteEngines(*data, nullptr);
    if (engines.empty()) {
        NIXL_ERROR << "agent " << data->name
                   << ": getLocalMD: no backend supports remote transfers";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixlMdBuilder blob(*data);
    blob.addConns(engines);
    for (const auto &[key, list] : data->localSection) {
        if (!key.second->supportsRemote() || list.empty()) {
            continue;
        }
        std::vector<const nixlLocalReg *> regs;
        regs.reserve(list.all().size());
        for (const auto &reg : list.all()) {
            regs.push_back(&reg);
        }
        blob.addSection(key.second, key.first, regs);
    }
    return blob.finish("getLocalMD", str) ? NIXL_SUCCESS : NIXL_ERR_INVALID_PARAM;
}

nixl_status_t
nixlAgent::getLocalPartialMD(const nixl_reg_dlist_t &descs,
                             nixl_blob_t &str,
                             const nixl_opt_args_t *extra_params) const {
    nixlReadGuard guard(data->lock);
    if (nixlHasForeignHint(*data, extra_params)) {
        NIXL_ERROR << "agent " << data->name
                   << ": getLocalPartialMD: a backend hint is not a backend of this agent";
        return NIXL_ERR_INVALID_PARAM;
    }
    std::vector<nixlBackendEngineProxy *> engines = remoteEngines(*data, extra_params);
    if (engines.empty()) {
        NIXL_ERROR << "agent " << data->name
                   << ": getLocalPartialMD: no backend supports remote transfers";
        return NIXL_ERR_BACKEND;
    }
    nixlMdBuilder blob(*data);
    if (descs.isEmpty() || (extra_params != nullptr && extra_params->includeConnInfo)) {
        blob.addConns(engines);
    }
    const nixl_mem_t mem = descs.getType();
    std::vector<bool> found(descs.descCount(), false);
    for (nixlBackendEngineProxy *e : engines) {
        auto it = data->localSection.find({mem, e});
        if (it == data->localSection.end()) {
            continue;
        }
        std::vector<const nixlLocalReg *> regs;
        for (int i = 0; i < descs.descCount(); ++i) {
            const nixlLocalReg *reg = it->second.findExact(descs[i]);
            if (reg != nullptr) {
                regs.push_back(reg);
                found[i] = true;
            }
        }
        if (!regs.empty()) {
            blob.addSection(e, mem, regs);
        }
    }
    for (int i = 0; i < descs.descCount(); ++i) {
        if (!found[i]) {
            NIXL_ERROR << "agent " << data->name << ": getLocalPartialMD: descriptor " << i
                       << " (" << descs[i].len << " bytes at 0x" << std::hex << descs[i].addr
                       << std::dec << ", " << memTypeStr(mem)
                       << ") is not registered with a remote-capable backend";
            return NIXL_ERR_NOT_FOUND;
        }
    }
    return blob.finish("getLocalPartialMD", str) ? NIXL_SUCCESS : NIXL_ERR_INVALID_PARAM;
}

// loadRemoteMD and makeConnection are *Impl functions doing the work and public wrappers that
// trace the call when the agent traces: one branch when it does not.

static nixl_status_t
loadRemoteMDImpl(nixlAgentData *data, const nixl_blob_t &remote_metadata, std::string &agent_name) {
    nixlMdBlob blob;
    std::string error;
    nixl_md_form_t form = nixl_md_form_t::LIBNIXL;
    if (nixlMdDecode(remote_metadata, blob, error, &form) != NIXL_SUCCESS) {
        NIXL_ERROR_LIMITED << "agent " << data->name << ": loadRemoteMD: rejected a "
                   << remote_metadata.size() << "-byte metadata blob: " << error;
        return NIXL_ERR_MISMATCH;
    }
    nixlWriteGuard guard(data->lock);
    if (blob.agentName == data->name) {
        NIXL_ERROR_LIMITED << "agent " << data->name
                   << ": loadRemoteMD: the blob is this agent's own metadata";
        return NIXL_ERR_INVALID_PARAM;
    }
    auto existing = data->remotes.find(blob.agentName);
    if (existing != data->remotes.end() &&
        !existing->second->valid.load(std::memory_order_acquire)) {
        // The peer was reported disconnected; start over with what this blob says.
        nixlDropRemote(*data, blob.agentName);
        existing = data->remotes.end();
    }
    const bool fresh = existing == data->remotes.end();
    std::shared_ptr<nixlRemoteAgent> remote =
        fresh ? std::make_shared<nixlRemoteAgent>() : existing->second;
    remote->name = blob.agentName;

    // Connection info first: a changed one needs invalidateRemoteMD, so check all before
    // loading any.
    std::vector<std::pair<nixlBackendEngineProxy *, const std::string *>> newConns;
    for (const auto &c : blob.conns) {
        nixlBackendEngineProxy *e = engineByType(*data, c.backend);
        if (e == nullptr || !e->supportsRemote()) {
            NIXL_DEBUG << "agent " << data->name << ": ignoring " << blob.agentName
                       << "'s connection info for backend " << c.backend
                       << ", which this agent does not have";
            continue;
        }
        auto known = remote->conns.find(e);
        if (known != remote->conns.end()) {
            if (known->second != c.connInfo) {
                NIXL_ERROR_LIMITED << "agent " << data->name << ": loadRemoteMD: connection info of "
                           << blob.agentName << " for backend " << c.backend
                           << " changed; call invalidateRemoteMD first";
                return NIXL_ERR_NOT_ALLOWED;
            }
            continue;
        }
        newConns.emplace_back(e, &c.connInfo);
    }
    if (fresh && newConns.empty()) {
        NIXL_ERROR_LIMITED << "agent " << data->name << ": loadRemoteMD: " << blob.agentName
                   << (blob.conns.empty() ? " sent no connection info (a partial blob needs "
                                            "one with connection info first)" :
                                            " has no backend in common with this agent");
        return NIXL_ERR_BACKEND;
    }

    // Undo list for a failure half-way.
    std::vector<nixlBackendEngineProxy *> connected;
    std::vector<std::pair<nixl_section_key_t, nixlBasicDesc>> loaded;
    // Registrations this blob replaced (re-registered by the peer): the entry and what it held.
    struct replacedReg {
        nixl_section_key_t key;
        nixlBasicDesc desc;
        nixlRemoteReg before;
    };
    std::vector<replacedReg> replaced;
    auto rollback = [&]() {
        for (auto it = replaced.rbegin(); it != replaced.rend(); ++it) {
            nixlRemoteReg *reg = remote->sections[it->key].findExact(it->desc);
            if (reg != nullptr) {
                it->key.second->unloadMD(reg->md);
                *reg = it->before;
            }
        }
        for (auto it = loaded.rbegin(); it != loaded.rend(); ++it) {
            auto &list = remote->sections[it->first];
            nixlRemoteReg *reg = list.findExact(it->second);
            if (reg != nullptr) {
                it->first.second->unloadMD(reg->md);
                list.erase(it->second);
            }
        }
        for (nixlBackendEngineProxy *e : connected) {
            e->disconnect(blob.agentName);
            remote->conns.erase(e);
        }
    };

    for (const auto &[e, conn] : newConns) {
        nixl_status_t st = e->loadRemoteConnInfo(blob.agentName, *conn);
        if (st != NIXL_SUCCESS) {
            // The backend logged why (one line per error); this adds the context.
            NIXL_DEBUG << "agent " << data->name << ": backend " << e->type()
                       << " rejected the connection info of " << blob.agentName << ": "
                       << statusStr(st);
            rollback();
            return st;
        }
        remote->conns[e] = *conn;
        connected.push_back(e);
    }

    for (size_t s = 0; s < blob.sections.size(); ++s) {
        const nixlMdSection &section = blob.sections[s];
        nixlBackendEngineProxy *e = engineByType(*data, section.backend);
        if (e == nullptr || remote->conns.count(e) == 0) {
            continue; // backend not shared with the peer: nothing to load
        }
        if (!e->supportsMem(section.mem)) {
            continue;
        }
        nixl_section_key_t key{section.mem, e};
        auto &list = remote->sections[key];
        for (size_t i = 0; i < section.descs.size(); ++i) {
            const nixlMdDesc &md = section.descs[i];
            nixlBasicDesc d(md.addr, md.len, md.devId);
            const uint64_t hash = std::hash<std::string_view>{}(md.publicData);
            // Merging: a range known from an earlier blob with the same public data is the
            // same registration. Other public data means the peer deregistered it and
            // registered the same range again (an allocator hands a freed address out
            // again): the new registration replaces the old one, as NIXL's reload does.
            nixlRemoteReg *known = list.findExact(d);
            if (known != nullptr && known->publicHash == hash) {
                known->seq = remote->nextSeq++;
                continue;
            }
            nixlRemoteReg reg;
            reg.desc = d;
            reg.seq = remote->nextSeq++;
            reg.publicHash = hash;
            nixl_status_t st = e->loadRemoteMD(d, md.publicData, section.mem, blob.agentName,
                                               reg.md);
            if (st != NIXL_SUCCESS) {
                // The backend logged why, unless it broke the contract with IN_PROG (core's
                // finding, so core's line).
                if (st == NIXL_IN_PROG) {
                    NIXL_ERROR << "agent " << data->name << ": backend " << e->type()
                               << " answered NIXL_IN_PROG to loading descriptor " << i
                               << " of section " << s << " from " << blob.agentName
                               << "; treated as NIXL_ERR_BACKEND";
                } else {
                    NIXL_DEBUG << "agent " << data->name << ": backend " << e->type()
                               << " rejected descriptor " << i << " of section " << s << " ("
                               << memTypeStr(section.mem) << ") from " << blob.agentName
                               << ": " << statusStr(st);
                }
                rollback();
                return st == NIXL_IN_PROG ? NIXL_ERR_BACKEND : st;
            }
            if (known != nullptr) {
                replaced.push_back({key, d, *known});
                *known = reg;
                continue;
            }
            list.insert(reg);
            loaded.emplace_back(key, d);
        }
    }
    if (!replaced.empty() || !remote->retired.empty()) {
        // Requests and lists made with a replaced registration are refused from now on; its
        // metadata is unloaded once no running request uses it.
        std::vector<std::pair<nixlBackendEngineProxy *, nixl_be_md_t *>> old;
        old.reserve(replaced.size());
        for (const auto &r : replaced) {
            old.emplace_back(r.key.second, r.before.md);
        }
        nixlRetireRemoteMds(*data, *remote, old);
        if (!replaced.empty()) {
            NIXL_DEBUG << "agent " << data->name << ": loadRemoteMD: " << replaced.size()
                       << " registrations of " << blob.agentName
                       << " were re-registered; the new ones replace them";
        }
    }
    if (fresh) {
        data->remotes[blob.agentName] = remote;
    }
    agent_name = blob.agentName;
    NIXL_DEBUG << "agent " << data->name << ": loaded metadata of " << blob.agentName
               << (form == nixl_md_form_t::NIXL ? " (NIXL 1.4 layout alone: a NIXL peer)" : "")
               << ": "
               << connected.size() << " new connections, " << loaded.size()
               << " new descriptors, " << replaced.size() << " replaced";
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::loadRemoteMD(const nixl_blob_t &remote_metadata, std::string &agent_name) {
    return nixlTraced(*data, nixl::trace::NameId::LOAD_REMOTE_MD, nixl_no_trace_attrs,
                      [&](nixl::trace::Span *span) {
                          const nixl_status_t st =
                              loadRemoteMDImpl(data.get(), remote_metadata, agent_name);
                          if (span != nullptr && st == NIXL_SUCCESS) {
                              // Known only once the blob is decoded.
                              span->add(nixl::trace::KeyId::REMOTE_AGENT, agent_name);
                          }
                          return st;
                      });
}

nixl_status_t
nixlAgent::invalidateRemoteMD(const std::string &remote_agent) {
    nixlWriteGuard guard(data->lock);
    if (remote_agent == data->name) {
        NIXL_ERROR << "agent " << data->name
                   << ": invalidateRemoteMD: cannot invalidate the agent's own metadata";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (data->remotes.count(remote_agent) == 0) {
        NIXL_ERROR << "agent " << data->name << ": invalidateRemoteMD: no metadata of agent "
                   << remote_agent << " is loaded";
        return NIXL_ERR_NOT_FOUND;
    }
    nixlDropRemote(*data, remote_agent);
    return NIXL_SUCCESS;
}

static nixl_status_t
makeConnectionImpl(nixlAgentData *data,
                   const std::string &remote_agent,
                   const nixl_opt_args_t *extra_params) {
    nixlWriteGuard guard(data->lock);
    if (nixlHasForeignHint(*data, extra_params)) {
        NIXL_ERROR << "agent " << data->name
                   << ": makeConnection: a backend hint is not a backend of this agent";
        return NIXL_ERR_INVALID_PARAM;
    }
    std::vector<nixlBackendEngineProxy *> engines = nixlCandidateEngines(*data, extra_params);
    if (remote_agent == data->name) {
        for (nixlBackendEngineProxy *e : engines) {
            if (e->supportsLocal()) {
                return NIXL_SUCCESS; // connected to itself at createBackend
            }
        }
        NIXL_ERROR << "agent " << data->name
                   << ": makeConnection to itself: no backend supports local transfers";
        return NIXL_ERR_BACKEND;
    }
    auto it = data->remotes.find(remote_agent);
    if (it == data->remotes.end() || !it->second->valid.load(std::memory_order_acquire)) {
        NIXL_ERROR << "agent " << data->name << ": makeConnection: no metadata of agent "
                   << remote_agent << " is loaded";
        return NIXL_ERR_NOT_FOUND;
    }
    bool any = false;
    for (nixlBackendEngineProxy *e : engines) {
        if (it->second->conns.count(e) == 0) {
            continue;
        }
        nixl_status_t st = e->connect(remote_agent);
        if (st != NIXL_SUCCESS) {
            NIXL_DEBUG << "agent " << data->name << ": backend " << e->type()
                       << " failed to connect to " << remote_agent << ": " << statusStr(st);
            return st;
        }
        any = true;
    }
    if (!any) {
        NIXL_ERROR << "agent " << data->name << ": makeConnection: no "
                   << (extra_params != nullptr && !extra_params->backends.empty() ? "hinted " :
                                                                                    "")
                   << "backend is shared with " << remote_agent;
        return NIXL_ERR_BACKEND;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::makeConnection(const std::string &remote_agent, const nixl_opt_args_t *extra_params) {
    return nixlTraced(
        *data, nixl::trace::NameId::MAKE_CONNECTION,
        [&](nixl::trace::Span &span) { span.add(nixl::trace::KeyId::REMOTE_AGENT, remote_agent); },
        [&] { return makeConnectionImpl(data.get(), remote_agent, extra_params); });
}

nixl_status_t
nixlAgent::checkRemoteMD(const std::string remote_name, const nixl_xfer_dlist_t &descs) const {
    nixlReadGuard guard(data->lock);
    auto it = data->remotes.find(remote_name);
    if (it == data->remotes.end() || !it->second->valid.load(std::memory_order_acquire)) {
        return NIXL_ERR_NOT_FOUND;
    }
    if (descs.isEmpty()) {
        return NIXL_SUCCESS;
    }
    for (const auto &[engine, conn] : it->second->conns) {
        auto sec = it->second->sections.find({descs.getType(), engine});
        if (sec == it->second->sections.end()) {
            continue;
        }
        bool all = true;
        for (const auto &d : descs) {
            all = all && sec->second.findCovering(d) != nullptr;
        }
        if (all) {
            return NIXL_SUCCESS;
        }
    }
    return NIXL_ERR_NOT_FOUND;
}
