/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: its UCP context and workers. initUcx reads the process identity, opens the
// registration table, probes what the direct path may use and creates the context; the private
// context serves the workers a thread asks for beside the home ones; learnRkeyLayout finds the
// packed-rkey layout the plugin checks peers' keys against; openWorker / createWorker make a
// worker and hand it to the worker set. Creation and teardown are ucx_backend.cpp.
#include "ucx_internal.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uct/api/uct.h>

using nixlUcx::reg_table_slots;
using nixlUcx::nowNs;

ucp_context_h
nixlUcxEngine::privateContext() const {
    if (!mmAllowed_) {
        return ctx_; // nothing to make smaller (and UCX would warn of an unused key)
    }
    return privCtx_->get(ctx_, [this]() -> ucp_context_h {
        // Same configuration as the engine's context, then smaller shared-memory receive
        // queues unless the user sized them (docs/backends/ucx.md, private workers).
        ucp_context_h made = nullptr;
        ucp_config_t *config = nullptr;
        ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
        std::string why;
        if (st != UCS_OK) {
            why = std::string("ucp_config_read: ") + ucs_status_string(st);
        } else if (!cfg_.apply(config, localAgent, false)) {
            why = "configuration refused";
        } else {
            cfg_.applyPrivate(config, localAgent);
            const std::string name = localAgent + "/private";
            const ucp_params_t params = cfg_.contextParams(name.c_str());
            st = ucp_init(&params, config, &made);
            if (st != UCS_OK) {
                made = nullptr;
                why = std::string("ucp_init: ") + ucs_status_string(st);
            }
        }
        if (config != nullptr) {
            ucp_config_release(config);
        }
        if (made == nullptr) {
            NIXL_SDK_WARN("agent " << localAgent << ": UCX: no context of its own for private "
                                   << "workers (" << why << "); they use the engine's, with "
                                   << "UCX's default shared-memory queue sizes");
            return nullptr;
        }
        NIXL_SDK_DEBUG("agent " << localAgent << ": UCX context for private workers created");
        return made;
    });
}

bool
nixlUcxEngine::initUcx() {
    std::string err;
    if (!nixlUcx::readSelfIdentity(self_, err)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX: " << err);
        return false;
    }
    std::random_device rd;
    nonce_ = (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(nowNs()) ^ uint64_t(self_.pid);
    if (nonce_ == 0) {
        nonce_ = 1;
    }

    {
        std::string why;
        if (!registry_->open(self_, nonce_, reg_table_slots, why)) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX: " << why);
            return false;
        }
        if (!why.empty()) {
            NIXL_SDK_WARN("agent " << localAgent << ": UCX registration table: " << why
                                   << "; same-host peers check registrations with "
                                   << "process_vm_readv and get no deregistration fence");
        }
    }
    void *table = reinterpret_cast<void *>(registry_->address());

    // Can this process read memory by pid at all (seccomp and LSMs may forbid it)?
    uint64_t probe = 0;
    struct iovec liov = {&probe, sizeof(probe)};
    struct iovec riov = {table, sizeof(probe)};
    cmaWorks_ = ::process_vm_readv(::getpid(), &liov, 1, &riov, 1, 0) ==
            static_cast<ssize_t>(sizeof(probe)) &&
        probe == nonce_;
    if (!cmaWorks_) {
        NIXL_SDK_DEBUG("agent " << localAgent << ": UCX: process_vm_readv is not permitted ("
                                << std::strerror(errno) << "); data goes through UCX only");
    }

    ucp_config_t *config = nullptr;
    ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_config_read: " << ucs_status_string(st));
        return false;
    }
    std::unique_ptr<ucp_config_t, void (*)(ucp_config_t *)> cfg_guard(config,
                                                                       ucp_config_release);
    if (!cfg_.apply(config, localAgent, true)) {
        return false;
    }
    std::string tls = "all";
    nixlUcx::configValue(config, "TLS", tls);
    cmaAllowed_ = nixlUcx::tlsAllowsCma(tls);
    shmAllowed_ = nixlUcx::tlsAllowsShm(tls);
    mmAllowed_ = nixlUcx::tlsAllowsMm(tls);

    const ucp_params_t params = cfg_.contextParams(localAgent.c_str());
    st = ucp_init(&params, config, &ctx_);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_init: " << ucs_status_string(st));
        return false;
    }
    ucp_context_attr_t attr{};
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    if (ucp_context_query(ctx_, &attr) == UCS_OK) {
        vram_ = (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
    }

    if (!learnRkeyLayout()) {
        return false;
    }
    nixlUcx::connInfoWire ci;
    ci.nonce = nonce_;
    ci.bootId = self_.bootId;
    ci.pidNs = self_.pidNs;
    ci.pid = self_.pid;
    ci.startTime = self_.startTime;
    ci.regTable = registry_->address();
    ci.regSlots = registry_->slotCount();
    ci.regTableName = registry_->name();
    for (size_t i = 0; i < cfg_.numWorkers; ++i) {
        auto worker = createWorker(true, localAgent + "/home" + std::to_string(i));
        if (!worker) {
            return false;
        }
        ucp_address_t *addr = nullptr;
        size_t addr_len = 0;
        st = ucp_worker_get_address(worker->worker, &addr, &addr_len);
        if (st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << localAgent
                                    << ": ucp_worker_get_address: " << ucs_status_string(st));
            return false;
        }
        ci.addrs.emplace_back(reinterpret_cast<const char *>(addr), addr_len);
        ucp_worker_release_address(worker->worker, addr);
        home_.push_back(std::move(worker));
    }
    connInfo_ = nixlUcx::encodeConnInfo(ci);
    // NIXL 1.4 publishes worker 0's address only; its peers connect every lane to it.
    connInfoNixl_ = ci.addrs.front();
    NIXL_SDK_DEBUG("agent " << localAgent << ": UCX engine up: " << cfg_.numWorkers
                            << " worker(s), UCX_TLS=" << tls << ", direct cma "
                            << (cfg_.directCma && cmaAllowed_ && cmaWorks_ ? "on" : "off")
                            << ", error handling "
                            << (cfg_.peerErrMode ? "peer" : "none") << ", progress thread "
                            << (cfg_.progressThread ? "on" : "off"));
    return true;
}

bool
nixlUcxEngine::learnRkeyLayout() {
    const size_t len = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    void *page = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX: cannot map a probe page: "
                                << std::strerror(errno));
        return false;
    }
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
        UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    mp.address = page;
    mp.length = len;
    mp.memory_type = UCS_MEMORY_TYPE_HOST;
    ucp_mem_h memh = nullptr;
    void *rkey = nullptr;
    size_t rkey_len = 0;
    ucs_status_t st = ucp_mem_map(ctx_, &mp, &memh);
    if (st == UCS_OK) {
        st = ucp_rkey_pack(ctx_, memh, &rkey, &rkey_len);
    }
    std::string why;
    if (st != UCS_OK) {
        why = std::string("packing a probe key: ") + ucs_status_string(st);
    } else if (nixlUcx::parsePackedRkey(
                   std::string_view(static_cast<const char *>(rkey), rkey_len), hostRkey_, why)) {
        rkeyLayoutKnown_ = true;
    }
    if (rkey != nullptr) {
        ucp_rkey_buffer_release(rkey);
    }
    if (memh != nullptr) {
        ucp_mem_unmap(ctx_, memh);
    }
    ::munmap(page, len);
    if (!rkeyLayoutKnown_) {
        // A UCX whose key layout differs from the one ucx_wire.cpp knows: peers' keys are then
        // only covered by the checksum.
        NIXL_SDK_WARN("agent " << localAgent << ": UCX: the layout of this UCX's remote keys "
                               << "is not the expected one (" << why
                               << "); peers' keys are checked by checksum only");
    }
    return true;
}

bool
nixlUcxEngine::openWorker(ucp_context_h ctx,
                          const std::string &name,
                          ucp_worker_h &h,
                          int &efd) const {
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE | UCP_WORKER_PARAM_FIELD_NAME;
    // Every use of a worker holds its mutex, so UCX needs no locking of its own.
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    wp.name = name.c_str();
    h = nullptr;
    ucs_status_t st = ucp_worker_create(ctx, &wp, &h);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_worker_create(" << name
                                << "): " << ucs_status_string(st));
        h = nullptr;
        return false;
    }
    efd = -1;
    if (cfg_.progressThread) {
        st = ucp_worker_get_efd(h, &efd);
        if (st != UCS_OK) {
            NIXL_SDK_WARN("agent " << localAgent << ": ucp_worker_get_efd(" << name
                                   << "): " << ucs_status_string(st)
                                   << "; the progress thread will poll it");
            efd = -1;
        }
    }
    return true;
}

std::shared_ptr<nixlUcxWorker>
nixlUcxEngine::createWorker(bool home, const std::string &name) const {
    ucp_worker_h h = nullptr;
    int efd = -1;
    if (!openWorker(ctx_, name, h, efd)) {
        return nullptr;
    }
    auto w = std::make_shared<nixlUcxWorker>(h, efd, home, name);
    w->engine = this;
    if (home) {
        if (const ucs_status_t st = nixlUcx::receiveNotifs(*w); st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << localAgent << ": cannot install the notification "
                                    << "handler on " << name << ": " << ucs_status_string(st));
            return nullptr;
        }
    }
    workers_->add(w);
    wakeProgress();
    return w;
}
