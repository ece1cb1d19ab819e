/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Helpers on nixlAgentData shared by the agent's source files (declared in agent_data.h). They
// use only the agent state and the engines, so agent.cpp, metadata.cpp, prepare.cpp and
// transfer.cpp all depend on this layer and none of them on another.

#include <algorithm>

#include "agent/agent_data.h"
#include "common/nixl_log.h"

using nixlEnumStrings::statusStr;

std::vector<nixlBackendEngineProxy *>
nixlCandidateEngines(const nixlAgentData &d, const nixl_opt_args_t *extra) {
    std::vector<nixlBackendEngineProxy *> out;
    if (extra != nullptr && !extra->backends.empty()) {
        for (nixlBackendH *h : extra->backends) {
            if (h == nullptr) {
                continue;
            }
            // Only handles of this agent count; a foreign handle is ignored, not dereferenced
            // beyond the pointer comparison.
            for (const auto &mine : d.handles) {
                if (mine.get() == h &&
                    std::find(out.begin(), out.end(), h->engine()) == out.end()) {
                    out.push_back(h->engine());
                }
            }
        }
        return out;
    }
    for (const auto &e : d.engines) {
        out.push_back(e.get());
    }
    return out;
}

bool
nixlHasForeignHint(const nixlAgentData &d, const nixl_opt_args_t *extra) {
    if (extra == nullptr) {
        return false;
    }
    for (nixlBackendH *h : extra->backends) {
        bool mine = false;
        for (const auto &m : d.handles) {
            mine = mine || m.get() == h;
        }
        if (!mine) {
            return true;
        }
    }
    return false;
}

void
nixlDropRemote(nixlAgentData &d, const std::string &name) {
    auto it = d.remotes.find(name);
    if (it == d.remotes.end()) {
        return;
    }
    std::shared_ptr<nixlRemoteAgent> remote = it->second;
    // Requests still holding the record see it invalid and refuse to post.
    remote->valid.store(false, std::memory_order_release);
    for (const auto &[engine, conn] : remote->conns) {
        nixl_status_t st = engine->disconnect(name);
        if (st != NIXL_SUCCESS) {
            NIXL_DEBUG << "agent " << d.name << ": backend " << engine->type()
                       << " failed to disconnect from " << name << ": " << statusStr(st);
        }
    }
    for (auto &[key, list] : remote->sections) {
        for (const auto &reg : list.all()) {
            key.second->unloadMD(reg.md);
        }
    }
    for (const auto &[engine, md] : remote->retired) {
        engine->unloadMD(md);
    }
    remote->retired.clear();
    remote->sections.clear();
    remote->conns.clear();
    d.remotes.erase(it);
}

void
nixlRetireRemoteMds(nixlAgentData &d,
                    nixlRemoteAgent &remote,
                    const std::vector<std::pair<nixlBackendEngineProxy *, nixl_be_md_t *>> &old) {
    if (old.empty() && remote.retired.empty()) {
        return;
    }
    std::vector<std::pair<nixlBackendEngineProxy *, nixl_be_md_t *>> gone = old;
    std::sort(gone.begin(), gone.end());
    auto isGone = [&gone](nixlBackendEngineProxy *e, nixl_be_md_t *md) {
        return std::binary_search(gone.begin(), gone.end(), std::make_pair(e, md));
    };
    // Metadata a running request of this remote still uses (its backend request may read it
    // until the request completes): those wait in retired.
    std::vector<std::pair<nixlBackendEngineProxy *, nixl_be_md_t *>> busy;
    {
        std::lock_guard<std::mutex> lock(d.registryMutex);
        for (nixlXferReqH *req : d.requests) {
            if (req->remote.get() != &remote) {
                continue;
            }
            for (const auto &x : req->remoteDescs) {
                if (!gone.empty() && isGone(req->engine, x.md)) {
                    req->remoteStale = true;
                }
                if (req->status == NIXL_IN_PROG) {
                    busy.emplace_back(req->engine, x.md);
                }
            }
        }
        for (nixlDlistH *dl : d.dlists) {
            if (dl->remote.get() != &remote) {
                continue;
            }
            for (const auto &[e, mds] : dl->engines) {
                for (nixl_be_md_t *md : mds) {
                    dl->remoteStale = dl->remoteStale || isGone(e, md);
                }
            }
        }
    }
    std::sort(busy.begin(), busy.end());
    std::vector<std::pair<nixlBackendEngineProxy *, nixl_be_md_t *>> keep;
    auto settle = [&](const std::pair<nixlBackendEngineProxy *, nixl_be_md_t *> &m) {
        if (std::binary_search(busy.begin(), busy.end(), m)) {
            keep.push_back(m);
        } else {
            m.first->unloadMD(m.second);
        }
    };
    for (const auto &m : remote.retired) {
        settle(m);
    }
    for (const auto &m : old) {
        settle(m);
    }
    remote.retired = std::move(keep);
}

nixl_status_t
nixlDeadRequest(const nixlAgentData &d, const char *call, const nixlXferReqH *req) {
    NIXL_ERROR_LIMITED << "agent " << d.name << ": " << call << ": request handle "
               << static_cast<const void *>(req)
               << " was released or is not a request of this agent";
    return NIXL_ERR_INVALID_PARAM;
}

nixlXferReqH *
nixlAgentData::acquireRequest() {
    nixlXferReqH *req = nullptr;
    if (freeCount <= requestQuarantine) {
        req = new nixlXferReqH();
    } else {
        req = freeHead;
        freeHead = req->nextFree;
        if (freeHead == nullptr) {
            freeTail = nullptr;
        }
        --freeCount;
        req->nextFree = nullptr;
    }
    // Entered now, under the lock that took it from the pool: one lock per create.
    requests.insert(req);
    return req;
}

void
nixlAgentData::recycleRequest(nixlXferReqH *req) {
    // Frees the strings and the remote record now; the object itself stays, and so do the
    // descriptor arrays of a small request (cleared): the next request made from the pool
    // then allocates none (the create path's allocations; large arrays are freed).
    req->resetForPool();
    nixlXferReqH *drop = nullptr;
    {
        std::lock_guard<std::mutex> guard(registryMutex);
        requests.erase(req);
        if (freeTail != nullptr) {
            freeTail->nextFree = req;
        } else {
            freeHead = req;
        }
        freeTail = req;
        if (++freeCount > requestPoolMax) {
            drop = freeHead;
            freeHead = drop->nextFree;
            --freeCount;
        }
    }
    delete drop;
}

void
nixlAgentData::freeRequestPool() noexcept {
    while (freeHead != nullptr) {
        nixlXferReqH *next = freeHead->nextFree;
        delete freeHead;
        freeHead = next;
    }
    freeTail = nullptr;
    freeCount = 0;
}
