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
    remote->sections.clear();
    remote->conns.clear();
    d.remotes.erase(it);
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
