/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// EXAMPLE: the smallest useful data backend, written from docs/BackendGuide.md and the plugin
// SDK headers alone. DRAM only; transfers are memcpy, within one agent and between agents of
// the same process, with notifications. It links against nothing but libc and libstdc++
// (-Wl,-z,defs in examples/meson.build proves it) and passes the conformance suite
// (conformance_EXAMPLE, run with --in-process-only).
//
// Agents of one process find each other through a process-wide directory of engines keyed by
// agent name. A transfer to a peer checks, under the peer's lock, that the peer still has a
// registration covering the range, so nothing is copied into memory the peer deregistered or
// into an agent that is gone.

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "nixl_backend_sdk.h"

namespace {

class exampleEngine;

/** The process-wide directory: agent name -> engine. */
struct exampleDirectory {
    std::mutex mu;
    std::map<std::string, exampleEngine *> engines;
};

exampleDirectory &
directory() {
    static exampleDirectory d; // made on first use, not by a static constructor
    return d;
}

/** One registration, local (private) or a peer's as loaded from its metadata. */
class exampleMD : public nixlBackendMD {
public:
    exampleMD(bool is_private, uintptr_t addr, size_t len)
        : nixlBackendMD(is_private),
          addr(addr),
          len(len) {}
    const uintptr_t addr;
    const size_t len;
};

/** A request's outcome: transfers complete within postXfer. */
class exampleReq : public nixlBackendReqH {
public:
    nixl_status_t status = NIXL_IN_PROG;
};

std::string
connInfo() {
    return "example-pid:" + std::to_string(::getpid());
}

class exampleEngine : public nixlBackendEngine {
public:
    explicit exampleEngine(const nixlBackendInitParams *p) : nixlBackendEngine(p) {
        std::lock_guard<std::mutex> g(directory().mu);
        if (!directory().engines.emplace(localAgent, this).second) {
            NIXL_SDK_ERROR("agent " << localAgent << " already has an EXAMPLE engine");
            initErr = true;
        }
    }

    ~exampleEngine() override {
        if (initErr) {
            return;
        }
        std::lock_guard<std::mutex> g(directory().mu);
        directory().engines.erase(localAgent);
    }

    static nixl_b_params_t
    pluginOptions() {
        return {};
    }

    static nixl_mem_list_t
    pluginMems() {
        return {DRAM_SEG};
    }

    bool
    supportsRemote() const override {
        return true;
    }

    bool
    supportsLocal() const override {
        return true;
    }

    bool
    supportsNotif() const override {
        return true;
    }

    nixl_mem_list_t
    getSupportedMems() const override {
        return pluginMems();
    }

    nixl_status_t
    registerMem(const nixlBlobDesc &mem, const nixl_mem_t &kind, nixlBackendMD *&out) override {
        if (kind != DRAM_SEG) {
            NIXL_SDK_ERROR("EXAMPLE registers DRAM only, not " << kind);
            return NIXL_ERR_NOT_SUPPORTED;
        }
        std::lock_guard<std::mutex> g(mu_);
        regs_.insert({mem.addr, mem.len});
        out = new exampleMD(true, mem.addr, mem.len);
        return NIXL_SUCCESS;
    }

    nixl_status_t
    deregisterMem(nixlBackendMD *meta) override {
        auto *md = static_cast<exampleMD *>(meta);
        {
            std::lock_guard<std::mutex> g(mu_);
            auto it = regs_.find({md->addr, md->len});
            if (it != regs_.end()) {
                regs_.erase(it); // one of possibly several identical registrations
            }
        }
        delete md;
        return NIXL_SUCCESS;
    }

    nixl_status_t
    connect(const std::string &) override {
        return NIXL_SUCCESS;
    }

    nixl_status_t
    disconnect(const std::string &) override {
        return NIXL_SUCCESS;
    }

    nixl_status_t
    unloadMD(nixlBackendMD *input) override {
        delete static_cast<exampleMD *>(input);
        return NIXL_SUCCESS;
    }

    nixl_status_t
    getConnInfo(std::string &str) const override {
        str = connInfo();
        return NIXL_SUCCESS;
    }

    nixl_status_t
    loadRemoteConnInfo(const std::string &remote_agent, const std::string &info) override {
        if (info != connInfo()) {
            NIXL_SDK_ERROR("agent " << remote_agent << " is in another process ('" << info
                                    << "'); EXAMPLE moves data within one process only");
            return NIXL_ERR_NOT_SUPPORTED;
        }
        return NIXL_SUCCESS;
    }

    /** The public data of a registration: "<addr> <len>" in decimal. */
    nixl_status_t
    getPublicData(const nixlBackendMD *meta, std::string &str) const override {
        const auto *md = static_cast<const exampleMD *>(meta);
        str = std::to_string(md->addr) + " " + std::to_string(md->len);
        return NIXL_SUCCESS;
    }

    nixl_status_t
    loadRemoteMD(const nixlBlobDesc &input,
                 const nixl_mem_t &kind,
                 const std::string &remote_agent,
                 nixlBackendMD *&output) override {
        // Bytes from another agent: parse strictly, refuse anything else.
        unsigned long long addr = 0;
        unsigned long long len = 0;
        int used = 0;
        const std::string &s = input.metaInfo;
        if (kind != DRAM_SEG ||
            std::sscanf(s.c_str(), "%llu %llu%n", &addr, &len, &used) != 2 ||
            static_cast<size_t>(used) != s.size() || addr != input.addr || len != input.len) {
            NIXL_SDK_ERROR("malformed EXAMPLE metadata from agent " << remote_agent << ": '"
                                                                    << s << "'");
            return NIXL_ERR_INVALID_PARAM;
        }
        output = new exampleMD(false, addr, len);
        return NIXL_SUCCESS;
    }

    nixl_status_t
    loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) override {
        const auto *md = static_cast<const exampleMD *>(input);
        output = new exampleMD(false, md->addr, md->len);
        return NIXL_SUCCESS;
    }

    nixl_status_t
    prepXfer(const nixl_xfer_op_t &op,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *) const override {
        if ((op != NIXL_WRITE && op != NIXL_READ) || local.size() != remote.size() ||
            local.getType() != DRAM_SEG || remote.getType() != DRAM_SEG) {
            NIXL_SDK_ERROR("EXAMPLE: bad transfer to " << remote_agent);
            return NIXL_ERR_INVALID_PARAM;
        }
        for (size_t i = 0; i < local.size(); ++i) {
            if (local[i].len != remote[i].len) {
                NIXL_SDK_ERROR("EXAMPLE: descriptor " << i << " lengths differ");
                return NIXL_ERR_INVALID_PARAM;
            }
        }
        handle = new exampleReq();
        return NIXL_SUCCESS;
    }

    nixl_status_t
    postXfer(const nixl_xfer_op_t &op,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args) const override {
        auto *req = static_cast<exampleReq *>(handle);
        std::lock_guard<std::mutex> dg(directory().mu);
        auto it = directory().engines.find(remote_agent);
        if (it == directory().engines.end()) {
            NIXL_SDK_ERROR("EXAMPLE: agent " << remote_agent << " is gone");
            req->status = NIXL_ERR_REMOTE_DISCONNECT;
            return req->status;
        }
        exampleEngine &peer = *it->second;
        std::lock_guard<std::mutex> pg(peer.mu_);
        for (size_t i = 0; i < remote.size(); ++i) {
            if (!peer.coveredLocked(remote[i].addr, remote[i].len)) {
                NIXL_SDK_ERROR("EXAMPLE: agent " << remote_agent << " no longer registers "
                                                 << remote[i].len << " bytes at 0x" << std::hex
                                                 << remote[i].addr);
                req->status = NIXL_ERR_NOT_FOUND;
                return req->status;
            }
        }
        for (size_t i = 0; i < local.size(); ++i) {
            auto *l = reinterpret_cast<void *>(local[i].addr);
            auto *r = reinterpret_cast<void *>(remote[i].addr);
            // memmove: a local transfer may name overlapping ranges.
            if (op == NIXL_WRITE) {
                std::memmove(r, l, local[i].len);
            } else {
                std::memmove(l, r, local[i].len);
            }
        }
        if (opt_args != nullptr && opt_args->hasNotif) {
            peer.notifs_.emplace_back(localAgent, opt_args->notifMsg);
        }
        req->status = NIXL_SUCCESS;
        return NIXL_SUCCESS;
    }

    nixl_status_t
    checkXfer(nixlBackendReqH *handle) const override {
        return static_cast<exampleReq *>(handle)->status;
    }

    nixl_status_t
    releaseReqH(nixlBackendReqH *handle) const override {
        delete static_cast<exampleReq *>(handle);
        return NIXL_SUCCESS;
    }

    nixl_status_t
    getNotifs(notif_list_t &notif_list) override {
        std::lock_guard<std::mutex> g(mu_);
        while (!notifs_.empty()) {
            notif_list.push_back(std::move(notifs_.front()));
            notifs_.pop_front();
        }
        return NIXL_SUCCESS;
    }

    nixl_status_t
    genNotif(const std::string &remote_agent, const std::string &msg) const override {
        std::lock_guard<std::mutex> dg(directory().mu);
        auto it = directory().engines.find(remote_agent);
        if (it == directory().engines.end()) {
            NIXL_SDK_ERROR("EXAMPLE: agent " << remote_agent << " is gone");
            return NIXL_ERR_REMOTE_DISCONNECT;
        }
        std::lock_guard<std::mutex> pg(it->second->mu_);
        it->second->notifs_.emplace_back(localAgent, msg);
        return NIXL_SUCCESS;
    }

private:
    /** Whether a registration of this engine covers [addr, +len); mu_ held. */
    bool
    coveredLocked(uintptr_t addr, size_t len) const {
        // Registrations are ordered by address: only those starting at or before addr matter.
        for (auto it = regs_.begin(); it != regs_.end() && it->first <= addr; ++it) {
            if (addr - it->first <= it->second && len <= it->second - (addr - it->first)) {
                return true;
            }
        }
        return false;
    }

    // Lock order: the directory's, then an engine's.
    mutable std::mutex mu_;
    std::multiset<std::pair<uintptr_t, size_t>> regs_;
    std::deque<std::pair<std::string, std::string>> notifs_;
};

} // namespace

NIXL_BACKEND_PLUGIN_DEFINE(exampleEngine, "EXAMPLE", "1.0.0")
