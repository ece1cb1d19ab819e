/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_registry.h
 * @brief The LIBFABRIC engine's registrations: local and remote metadata, and the slots of the
 *        shared registration table that same-host peers check before a fast RMA.
 *
 * Thread safety: lfRegistry's slot bookkeeping is under its own mutex; the table's slot words
 * are atomics read by peers lock-free (reg_table.h). Core serialises registerMem and
 * deregisterMem, so one registration's slot is assigned and released by one thread at a time.
 * lfLocalMD and lfRemoteMD are written once, before core hands them out, and only read after.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_REGISTRY_H
#define NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_REGISTRY_H

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "nixl_backend_sdk.h"
#include "proc_identity.h"
#include "reg_table.h"

namespace nixlLf {

/** One of the engine's own registrations: a memory region in every rail's domain. */
class lfLocalMD : public nixlBackendMD {
public:
    lfLocalMD() : nixlBackendMD(true) {}

    uintptr_t base = 0;
    size_t len = 0;
    std::vector<fid_mr *> mrs; ///< by rail index
    std::vector<void *> descs;
    std::vector<uint64_t> keys;
    uint64_t slot = 0; ///< in the engine's registration table; 0: none
    uint64_t regId = 0;
};

/** A peer's registration (or, with local set, one of ours for loopback). */
class lfRemoteMD : public nixlBackendMD {
public:
    lfRemoteMD() : nixlBackendMD(false) {}

    uintptr_t base = 0;
    size_t len = 0;
    lfLocalMD *local = nullptr; ///< loopback: our own registration
    std::vector<uint64_t> keys; ///< by our rail index (what the peer gave for that provider)
    std::vector<uint8_t> virtAddr;
    std::vector<uint8_t> hasRail;
    uint64_t slot = 0; ///< in the owner's registration table; 0: none (or an old peer)
    uint64_t regId = 0;
};

/**
 * The engine's shared registration table (shm fast RMA): which slot each registration holds and
 * which are free. Without a table (no fast rail, or it could not be created) every call is a
 * no-op and registrations hold slot 0: peers reach them with delivery-complete RMA.
 */
class lfRegistry {
public:
    /** Creates the table of the engine of agent (self, nonce); without one, says why once. */
    void
    open(const std::string &agent, const nixlReg::procIdentity &self, uint64_t nonce);

    bool
    enabled() const noexcept {
        return table_ != nullptr;
    }

    /** The table's name, empty without one. */
    std::string
    name() const;

    uint64_t
    slotCount() const noexcept;

    /** Gives md (its regId set) a slot, or none (slot 0) if the table is full or unbacked. */
    void
    assign(const std::string &agent, lfLocalMD &md);

    /**
     * Clears md's slot and waits (fence, up to timeoutMs) for peers' fast RMA that passed its
     * check; only then frees the slot. NIXL_ERR_BACKEND (logged) if a peer stays inside.
     */
    nixl_status_t
    release(const std::string &agent, const lfLocalMD &md, uint64_t timeoutMs);

private:
    std::unique_ptr<nixlReg::nixlRegTable> table_; ///< set in open, before any other thread
    std::mutex mu_;
    std::vector<uint64_t> freeSlots_; ///< mu_
    uint64_t nextSlot_ = 1; ///< mu_ (slot 0 holds the nonce)
    bool unbacked_ = false; ///< mu_: the last slot reservation failed (logged once)
};

} // namespace nixlLf

#endif // NIXL_SRC_PLUGINS_BACKEND_LIBFABRIC_LF_REGISTRY_H
