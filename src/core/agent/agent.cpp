/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent: construction, backends and memory registration. Metadata is in metadata.cpp,
// prepared lists and request creation in prepare.cpp, transfers and notifications in transfer.cpp.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <tuple>

#include "agent/agent_data.h"
#include "agent/agent_trace.h"
#include "agent/exchange.h"
#include "common/nixl_log.h"
#include "config/config.h"
#include "metadata/md_blob.h"
#include "nixl_plugin_names.h"
#include "tracing/trace_setup.h"

using nixlEnumStrings::memTypeStr;
using nixlEnumStrings::statusStr;

namespace {

bool
isUnboundedKind(nixl_mem_t mem) noexcept {
    return mem == BLK_SEG || mem == OBJ_SEG || mem == FILE_SEG;
}

/** User-space addresses end below 2^57 on every CPU Linux runs on (x86-64 with 5-level
 *  paging: 2^56; aarch64, ppc64, RISC-V sv57: less), so no DRAM or VRAM range ends above. */
constexpr uintptr_t kAddressSpaceEnd = uintptr_t{1} << 57;

/**
 * Why descriptor d of kind mem cannot be registered, or nullptr. Only what cannot be memory of
 * that kind: address 0 for DRAM (a null pointer; VRAM, BLK, OBJ and FILE take 0 as a device
 * address or an offset), length 0 for DRAM and VRAM (BLK, OBJ and FILE use it for "to the
 * end"), and a range that wraps or, for DRAM and VRAM, ends beyond any address space.
 */
const char *
unregistrable(nixl_mem_t mem, const nixlBasicDesc &d) noexcept {
    const bool addressed = mem == DRAM_SEG || mem == VRAM_SEG;
    if (mem == DRAM_SEG && d.addr == 0) {
        return "address 0 is not memory";
    }
    if (addressed && d.len == 0) {
        return "length 0 is no memory";
    }
    if (d.len > UINTPTR_MAX - d.addr) {
        return "the range wraps past the end of the address space";
    }
    if (addressed && d.addr + d.len > kAddressSpaceEnd) {
        return "the range ends beyond 2^57, where no address space reaches";
    }
    return nullptr;
}

// NIXL_TELEMETRY_ENABLE (environment or configuration file) wins over captureTelemetry in both
// directions.
bool
telemetryWanted(const std::string &agent, const nixlAgentConfig &cfg) {
    const std::optional<bool> value =
        nixlConfig::getBool(TELEMETRY_ENABLE_VAR, "agent " + agent + ": ");
    if (!value) {
        return cfg.captureTelemetry;
    }
    if (!*value && cfg.captureTelemetry) {
        NIXL_WARN << "agent " << agent
                  << ": NIXL_TELEMETRY_ENABLE is false; captureTelemetry is ignored";
    }
    return *value;
}

} // namespace

nixlAgentData::nixlAgentData(const std::string &agent_name, const nixlAgentConfig &cfg)
    : name(agent_name),
      config(cfg),
      lock(nixlEffectiveSyncMode(cfg)) {}

nixlAgent::nixlAgent(const std::string &name, const nixlAgentConfig &cfg)
    : data(std::make_unique<nixlAgentData>(name, cfg)) {
    if (name.empty()) {
        NIXL_ERROR << "nixlAgent: the agent name must not be empty";
        throw std::invalid_argument("nixlAgent: empty agent name");
    }
    // A configuration file that does not parse fails construction (as in NIXL), before any
    // option is read from it.
    nixlConfig::ensureLoaded();
    data->telemetryEnabled = telemetryWanted(name, cfg);
    if (data->telemetryEnabled) {
        // Before any request can take a timestamp (a 2 ms calibration, once per process).
        nixlFastClock::init();
        // Throws on a bad NIXL_TELEMETRY_* value or exporter; null if the exporter declined.
        data->telemetry = nixlTelemetry::create(name);
    }
    // Missing or unusable trace plugins are logged and left out; the agent works without them.
    data->tracer = nixl::trace::makeTracer(name, nixl::trace::tracerConfigFromEnvironment());
    // Last: the listener may call into the agent as soon as it runs. Throws when the listen
    // port cannot be bound or a NIXL_P2P_* value is bad.
    nixlSetupMdExchange(*this, *data);
    NIXL_DEBUG << "agent " << name << ": created, sync mode "
               << static_cast<int>(cfg.syncMode) << ", telemetry "
               << (data->telemetryEnabled ? "on" : "off") << ", tracing "
               << (data->tracer != nullptr ? "on" : "off");
}

nixlAgent::~nixlAgent() {
    // Metadata threads first, without the lock: they take it to load what peers send.
    nixlStopMdExchange(*data);
    nixlWriteGuard guard(data->lock);
    // Requests first: they reference metadata of both sides.
    for (nixlXferReqH *req : data->requests) {
        if (req->beReq != nullptr) {
            nixl_status_t st = req->engine->releaseReq(req->beReq);
            if (st != NIXL_SUCCESS) {
                NIXL_DEBUG << "agent " << data->name << ": backend " << req->engine->type()
                           << " could not release a request at agent destruction: "
                           << statusStr(st);
            }
        }
        delete req;
    }
    data->requests.clear();
    data->freeRequestPool();
    for (nixlDlistH *dl : data->dlists) {
        delete dl;
    }
    data->dlists.clear();

    std::vector<std::string> names;
    for (const auto &[n, r] : data->remotes) {
        names.push_back(n);
    }
    for (const auto &n : names) {
        nixlDropRemote(*data, n);
    }

    for (auto &[key, list] : data->localSection) {
        nixlBackendEngineProxy *engine = key.second;
        for (const auto &reg : list.all()) {
            if (reg.loopMd != nullptr) {
                engine->unloadMD(reg.loopMd);
            }
            nixl_status_t st = engine->deregisterMem(reg.md);
            if (st != NIXL_SUCCESS) {
                NIXL_DEBUG << "agent " << data->name << ": backend " << engine->type()
                           << " failed to deregister " << reg.desc.len << " bytes at 0x"
                           << std::hex << reg.desc.addr << std::dec
                           << " at agent destruction: " << statusStr(st);
            }
        }
    }
    data->localSection.clear();

    for (const auto &e : data->engines) {
        if (e->supportsLocal()) {
            e->disconnect(data->name);
        }
    }
    data->byType.clear();
    data->handles.clear();
    // Engines last, in reverse creation order.
    while (!data->engines.empty()) {
        data->engines.pop_back();
    }
    // Final flush: events of the last interval reach the exporter before it is destroyed.
    data->telemetry.reset();
    // Plugins flush what they hold; no traced call can run any more.
    data->tracer.reset();
}

nixl_status_t
nixlAgent::getAvailPlugins(std::vector<nixl_backend_t> &plugins) {
    auto &loader = nixlPluginLoader::instance();
    std::vector<nixl_backend_t> names = loader.discover(nixl_plugin_kind_t::BACKEND);
    for (const auto &n : loader.loaded(nixl_plugin_kind_t::BACKEND)) {
        if (std::find(names.begin(), names.end(), n) == names.end()) {
            names.push_back(n);
        }
    }
    std::sort(names.begin(), names.end());
    plugins = std::move(names);
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::getPluginParams(const nixl_backend_t &type,
                           nixl_mem_list_t &mems,
                           nixl_b_params_t &params) const {
    std::shared_ptr<const nixlLoadedPlugin> plugin;
    nixl_status_t st =
        nixlPluginLoader::instance().load(nixl_plugin_kind_t::BACKEND, type, plugin);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    return nixlBackendPluginDefaults(*plugin, mems, params);
}

nixl_status_t
nixlAgent::getBackendParams(const nixlBackendH *backend,
                            nixl_mem_list_t &mems,
                            nixl_b_params_t &params) const {
    if (backend == nullptr) {
        NIXL_ERROR << "agent " << data->name << ": getBackendParams: backend handle is null";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixlReadGuard guard(data->lock);
    nixlBackendEngineProxy *engine = nullptr;
    for (const auto &h : data->handles) {
        if (h.get() == backend) {
            engine = h->engine();
        }
    }
    if (engine == nullptr) {
        NIXL_ERROR << "agent " << data->name
                   << ": getBackendParams: handle does not belong to this agent";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixl_b_params_t p;
    nixl_status_t st = engine->getParams(p);
    if (st != NIXL_SUCCESS) {
        NIXL_DEBUG << "agent " << data->name << ": backend " << engine->type()
                   << " failed to report its parameters: " << statusStr(st);
        return st;
    }
    mems = engine->supportedMems();
    params = std::move(p);
    return NIXL_SUCCESS;
}

nixl_status_t
nixlAgent::createBackend(const nixl_backend_t &type,
                         const nixl_b_params_t &params,
                         nixlBackendH *&backend) {
    nixlWriteGuard guard(data->lock);
    if (data->byType.count(type) != 0) {
        NIXL_ERROR << "agent " << data->name << ": backend " << type
                   << " already exists; one backend per type";
        return NIXL_ERR_INVALID_PARAM;
    }
    std::shared_ptr<const nixlLoadedPlugin> plugin;
    nixl_status_t st =
        nixlPluginLoader::instance().load(nixl_plugin_kind_t::BACKEND, type, plugin);
    if (st != NIXL_SUCCESS) {
        return st; // the loader logged the cause
    }
    std::unique_ptr<nixlBackendEngineProxy> engine;
    st = nixlBackendEngineProxy::create(
        plugin, data->name, params, data->config, data->telemetryEnabled, engine,
        data->tracer.get(), data->telemetry.get());
    if (st != NIXL_SUCCESS) {
        return st; // logged once: by the plugin (its contract) or by the proxy
    }
    if (engine->supportsRemote()) {
        std::string conn;
        st = engine->getConnInfo(conn);
        if (st != NIXL_SUCCESS) {
            NIXL_DEBUG << "agent " << data->name << ": backend " << type
                       << " failed to provide connection info: " << statusStr(st);
            return st;
        }
        data->localConnInfo[engine.get()] = std::move(conn);
    }
    if (engine->supportsLocal()) {
        st = engine->connect(data->name);
        if (st != NIXL_SUCCESS) {
            data->localConnInfo.erase(engine.get());
            NIXL_DEBUG << "agent " << data->name << ": backend " << type
                       << " failed to connect to its own agent: " << statusStr(st);
            return st;
        }
    }
    for (uint32_t m = DRAM_SEG; m <= FILE_SEG; ++m) {
        auto mem = static_cast<nixl_mem_t>(m);
        if (engine->supportsMem(mem)) {
            data->localSection[{mem, engine.get()}].setUnboundedZeroLength(isUnboundedKind(mem));
        }
    }
    auto handle = std::make_unique<nixlBackendH>(engine.get());
    backend = handle.get();
    data->byType[type] = handle.get();
    data->handles.push_back(std::move(handle));
    data->engines.push_back(std::move(engine));
    NIXL_DEBUG << "agent " << data->name << ": created backend " << type << " from "
               << plugin->path();
    return NIXL_SUCCESS;
}

// registerMem and deregisterMem are *Impl functions doing the work and public wrappers that
// trace the call when the agent traces: one branch when it does not.

/** The work of registerMem, under the writer lock, its hints checked (registrationCall). */
static nixl_status_t
registerMemImpl(nixlAgentData *data,
                const nixl_reg_dlist_t &descs,
                const nixl_opt_args_t *extra_params) {
    const nixl_mem_t mem = descs.getType();
    // Before any backend sees the list: backends differ in what they refuse (TEST and
    // LIBFABRIC took address 0, length 0 and SIZE_MAX).
    for (int i = 0; i < descs.descCount(); ++i) {
        const nixlBasicDesc &d = descs[i];
        if (const char *why = unregistrable(mem, d); why != nullptr) [[unlikely]] {
            NIXL_ERROR << "agent " << data->name << ": registerMem: descriptor " << i << " ("
                       << d.len << " bytes at 0x" << std::hex << d.addr << std::dec << ", dev "
                       << d.devId << ", " << memTypeStr(mem) << ") cannot be registered: "
                       << why;
            return NIXL_ERR_INVALID_PARAM;
        }
    }
    std::vector<nixlBackendEngineProxy *> engines;
    for (nixlBackendEngineProxy *e : nixlCandidateEngines(*data, extra_params)) {
        if (e->supportsMem(mem)) {
            engines.push_back(e);
        }
    }
    if (engines.empty()) {
        NIXL_ERROR << "agent " << data->name << ": registerMem: no "
                   << (extra_params != nullptr && !extra_params->backends.empty() ? "hinted " :
                                                                                    "")
                   << "backend supports " << memTypeStr(mem);
        return NIXL_ERR_NOT_FOUND;
    }
    bool any = false;
    size_t bytes = 0;
    for (const auto &d : descs) {
        bytes += d.len;
    }
    for (nixlBackendEngineProxy *engine : engines) {
        auto &list = data->localSection[{mem, engine}];
        // Registrations enter the list as they succeed (so a descriptor listed twice meets its
        // first copy there) and leave it again if a later one fails. One O(log N) lookup and
        // insertion each: O(N log N) per call.
        nixl_status_t st = NIXL_SUCCESS;
        int done = 0; // descs[0, done) are registered with this engine, all distinct
        for (int i = 0; i < descs.descCount() && st == NIXL_SUCCESS; ++i) {
            const nixlBlobDesc &d = descs[i];
            if (list.findExact(d) != nullptr) {
                NIXL_ERROR << "agent " << data->name << ": registerMem: descriptor " << i
                           << " (" << d.len << " bytes at 0x" << std::hex << d.addr << std::dec
                           << ", dev " << d.devId << ") is already registered with backend "
                           << engine->type();
                st = NIXL_ERR_INVALID_PARAM;
                break;
            }
            nixlLocalReg reg;
            reg.desc = d;
            st = engine->registerMem(d, mem, reg.md);
            if (st != NIXL_SUCCESS) {
                NIXL_DEBUG << "agent " << data->name << ": backend " << engine->type()
                           << " failed to register descriptor " << i << " (" << d.len
                           << " bytes at 0x" << std::hex << d.addr << std::dec << ", "
                           << memTypeStr(mem) << "): " << statusStr(st);
                break;
            }
            if (engine->supportsLocal()) {
                st = engine->loadLocalMD(reg.md, reg.loopMd);
                if (st != NIXL_SUCCESS) {
                    NIXL_DEBUG << "agent " << data->name << ": backend " << engine->type()
                               << " failed to load local metadata of descriptor " << i << ": "
                               << statusStr(st);
                }
            }
            if (st == NIXL_SUCCESS && engine->supportsRemote()) {
                st = engine->getPublicData(reg.md, reg.publicData);
                if (st != NIXL_SUCCESS) {
                    NIXL_DEBUG << "agent " << data->name << ": backend " << engine->type()
                               << " failed to give public metadata of descriptor " << i << ": "
                               << statusStr(st);
                }
            }
            if (st != NIXL_SUCCESS) {
                if (reg.loopMd != nullptr) {
                    engine->unloadMD(reg.loopMd);
                }
                engine->deregisterMem(reg.md);
                break;
            }
            list.insert(std::move(reg));
            done = i + 1;
        }
        if (st != NIXL_SUCCESS) {
            // Roll back this backend's part of the call; others keep theirs. No list of the
            // added keys is kept: they are descs[0, done), a million-entry vector less per call.
            for (int i = done; i-- > 0;) {
                std::optional<nixlLocalReg> reg = list.take(descs[i]);
                if (!reg) {
                    continue; // cannot happen: each key was inserted above
                }
                if (reg->loopMd != nullptr) {
                    engine->unloadMD(reg->loopMd);
                }
                engine->deregisterMem(reg->md);
            }
            continue;
        }
        any = true;
    }
    if (!any) {
        return NIXL_ERR_BACKEND;
    }
    if (data->telemetry != nullptr) {
        data->telemetry->record(nixl_telemetry_event_type_t::AGENT_MEMORY_REGISTERED, bytes);
    }
    NIXL_DEBUG << "agent " << data->name << ": registered " << descs.descCount() << " "
               << memTypeStr(mem) << " descriptors, " << bytes << " bytes";
    return NIXL_SUCCESS;
}

/**
 * registerMem or deregisterMem (call, traced as name with the memory type of descs): impl runs
 * under the writer lock once every backend hint of extra is known to be one of this agent's.
 */
template<typename Impl>
static nixl_status_t
registrationCall(nixlAgentData &data,
                 nixl::trace::NameId name,
                 const char *call,
                 const nixl_reg_dlist_t &descs,
                 const nixl_opt_args_t *extra,
                 Impl &&impl) {
    return nixlTraced(
        data, name,
        [&](nixl::trace::Span &span) {
            span.add(nixl::trace::KeyId::MEM_TYPE, nixl_be_mem_name(descs.getType()));
        },
        [&] {
            nixlWriteGuard guard(data.lock);
            if (nixlHasForeignHint(data, extra)) {
                NIXL_ERROR << "agent " << data.name << ": " << call
                           << ": a backend hint is not a backend of this agent";
                return NIXL_ERR_INVALID_PARAM;
            }
            return impl(&data, descs, extra);
        });
}

nixl_status_t
nixlAgent::registerMem(const nixl_reg_dlist_t &descs, const nixl_opt_args_t *extra_params) {
    return registrationCall(*data,
                            nixl::trace::NameId::REGISTER_MEM,
                            "registerMem",
                            descs,
                            extra_params,
                            registerMemImpl);
}

/** The work of deregisterMem, under the writer lock, its hints checked (registrationCall). */
static nixl_status_t
deregisterMemImpl(nixlAgentData *data,
                  const nixl_reg_dlist_t &descs,
                  const nixl_opt_args_t *extra_params) {
    const nixl_mem_t mem = descs.getType();
    // The sections of the candidate engines that hold any registration of this kind.
    std::vector<std::pair<nixlBackendEngineProxy *, nixlRegList<nixlLocalReg> *>> lists;
    for (nixlBackendEngineProxy *e : nixlCandidateEngines(*data, extra_params)) {
        auto it = data->localSection.find({mem, e});
        if (it != data->localSection.end() && !it->second.empty()) {
            lists.emplace_back(e, &it->second);
        }
    }
    // Memory a posted request still moves data into or out of is not deregistered: after
    // deregisterMem returns no byte of it may change. The walk is here, at the rare call, so
    // the post path pays nothing; each running request is polled once first, so one that
    // finished unobserved does not hold the memory (its status is kept for getXferStatus).
    std::vector<std::tuple<nixlBackendEngineProxy *, const nixl_be_md_t *, nixlXferReqH *>> busy;
    {
        std::lock_guard<std::mutex> lock(data->registryMutex);
        for (nixlXferReqH *req : data->requests) {
            if (req->status != NIXL_IN_PROG) {
                continue;
            }
            const nixl_status_t st = req->engine->checkXfer(req->beReq);
            if (st != NIXL_IN_PROG) {
                req->status = st;
                if (st == NIXL_SUCCESS && req->telemetry) {
                    req->doneTicks = nixlFastClock::now();
                }
                if (st == NIXL_ERR_REMOTE_DISCONNECT && req->remote != nullptr) {
                    req->remote->valid.store(false, std::memory_order_release);
                }
                continue;
            }
            for (const auto &x : req->localDescs) {
                busy.emplace_back(req->engine, x.md, req);
            }
            if (req->loopback) {
                for (const auto &x : req->remoteDescs) {
                    busy.emplace_back(req->engine, x.md, req);
                }
            }
        }
    }
    std::sort(busy.begin(), busy.end());
    auto busyWith = [&busy](nixlBackendEngineProxy *e, const nixl_be_md_t *md) -> nixlXferReqH * {
        auto it = std::lower_bound(busy.begin(), busy.end(),
                                   std::make_tuple(e, md, static_cast<nixlXferReqH *>(nullptr)));
        return it != busy.end() && std::get<0>(*it) == e && std::get<1>(*it) == md ?
            std::get<2>(*it) :
            nullptr;
    };
    // Check everything before changing anything, so a bad list deregisters nothing. Nothing
    // is stored per descriptor: the second pass looks each one up again, which costs O(1)
    // from the finger for lists in order, and spares a million-entry vector.
    for (int i = 0; i < descs.descCount(); ++i) {
        const nixlBasicDesc &d = descs[i];
        bool found = false;
        for (const auto &[e, list] : lists) {
            const nixlLocalReg *reg = list->seek(d);
            if (reg != nullptr) {
                found = true;
                nixlXferReqH *user = busy.empty() ? nullptr : busyWith(e, reg->md);
                if (user == nullptr && reg->loopMd != nullptr && !busy.empty()) {
                    user = busyWith(e, reg->loopMd);
                }
                if (user != nullptr) {
                    NIXL_ERROR_LIMITED << "agent " << data->name << ": deregisterMem: descriptor "
                                       << i << " (" << d.len << " bytes at 0x" << std::hex << d.addr
                               << std::dec << ", " << memTypeStr(mem) << ") is in use by request "
                               << static_cast<const void *>(user) << " ("
                               << nixlEnumStrings::xferOpStr(user->op) << " with "
                               << user->remoteAgent
                               << "), still running: wait for it to complete or release it";
                    return NIXL_ERR_REPOST_ACTIVE;
                }
                if (busy.empty()) {
                    break; // else the other backends' registrations of d may be in use
                }
            }
        }
        if (!found) {
            NIXL_ERROR << "agent " << data->name << ": deregisterMem: descriptor " << i << " ("
                       << d.len << " bytes at 0x" << std::hex << d.addr << std::dec << ", dev "
                       << d.devId << ", " << memTypeStr(mem)
                       << ") does not match a registration exactly";
            return NIXL_ERR_NOT_FOUND;
        }
    }
    // Requests and lists resolved to the removed registrations are refused from now on, even if
    // a later registration gets the same metadata pointer back. Only needed when there are
    // any: the writer lock keeps readers from adding one meanwhile.
    std::unique_lock<std::mutex> lock(data->registryMutex);
    const bool track = !data->requests.empty() || !data->dlists.empty();
    lock.unlock();
    nixl_status_t result = NIXL_SUCCESS;
    std::vector<std::pair<nixlBackendEngineProxy *, const nixl_be_md_t *>> gone;
    for (int i = 0; i < descs.descCount(); ++i) {
        const nixlBasicDesc &d = descs[i];
        for (const auto &[engine, list] : lists) {
            std::optional<nixlLocalReg> reg = list->take(d);
            if (!reg) {
                continue; // not with this engine, or listed twice in descs
            }
            if (track) {
                gone.emplace_back(engine, reg->md);
            }
            if (reg->loopMd != nullptr) {
                if (track) {
                    gone.emplace_back(engine, reg->loopMd);
                }
                engine->unloadMD(reg->loopMd);
            }
            nixl_status_t st = engine->deregisterMem(reg->md);
            if (st != NIXL_SUCCESS) {
                NIXL_DEBUG << "agent " << data->name << ": backend " << engine->type()
                           << " failed to deregister " << d.len << " bytes at 0x" << std::hex
                           << d.addr << std::dec << ": " << statusStr(st);
                result = st;
            }
        }
    }
    lock.lock();
    std::sort(gone.begin(), gone.end());
    auto isGone = [&gone](nixlBackendEngineProxy *e, const nixl_be_md_t *md) {
        return std::binary_search(gone.begin(), gone.end(), std::make_pair(e, md));
    };
    for (nixlXferReqH *req : data->requests) {
        for (const auto &x : req->localDescs) {
            req->localStale = req->localStale || isGone(req->engine, x.md);
        }
        for (const auto &x : req->remoteDescs) {
            req->localStale = req->localStale || (req->loopback && isGone(req->engine, x.md));
        }
    }
    for (nixlDlistH *dl : data->dlists) {
        if (dl->remote != nullptr) {
            continue; // another agent's memory
        }
        for (const auto &[e, mds] : dl->engines) {
            for (const nixl_be_md_t *md : mds) {
                dl->stale = dl->stale || isGone(e, md);
            }
        }
    }
    if (result == NIXL_SUCCESS && data->telemetry != nullptr) {
        // Each distinct range once, however many backends held it or how often it is listed.
        std::vector<std::tuple<uint64_t, uintptr_t, size_t>> ranges;
        ranges.reserve(descs.descCount());
        for (const auto &d : descs) {
            ranges.emplace_back(d.devId, d.addr, d.len);
        }
        std::sort(ranges.begin(), ranges.end());
        ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
        uint64_t bytes = 0;
        for (const auto &r : ranges) {
            bytes += std::get<2>(r);
        }
        data->telemetry->record(nixl_telemetry_event_type_t::AGENT_MEMORY_DEREGISTERED, bytes);
    }
    return result;
}

nixl_status_t
nixlAgent::deregisterMem(const nixl_reg_dlist_t &descs, const nixl_opt_args_t *extra_params) {
    return registrationCall(*data,
                            nixl::trace::NameId::DEREGISTER_MEM,
                            "deregisterMem",
                            descs,
                            extra_params,
                            deregisterMemImpl);
}

nixl_status_t
nixlAgent::queryMem(const nixl_reg_dlist_t &descs,
                    std::vector<nixl_query_resp_t> &resp,
                    const nixl_opt_args_t *extra_params) const {
    nixlReadGuard guard(data->lock);
    if (extra_params == nullptr || extra_params->backends.size() != 1) {
        NIXL_ERROR << "agent " << data->name
                   << ": queryMem needs exactly one backend in extra_params->backends";
        return NIXL_ERR_INVALID_PARAM;
    }
    std::vector<nixlBackendEngineProxy *> engines = nixlCandidateEngines(*data, extra_params);
    if (engines.size() != 1) {
        NIXL_ERROR << "agent " << data->name
                   << ": queryMem: the backend hint is not a backend of this agent";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixl_status_t st = engines[0]->queryMem(descs, resp);
    if (st != NIXL_SUCCESS && st != NIXL_ERR_NOT_SUPPORTED) {
        NIXL_DEBUG << "agent " << data->name << ": backend " << engines[0]->type()
                   << " failed queryMem: " << statusStr(st);
    }
    return st;
}
