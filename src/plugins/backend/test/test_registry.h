/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file test_registry.h
 * @brief Process-wide directory of TEST engines, and the part of an engine that peers touch.
 *
 * TEST engines move data with memcpy between agents of one process. An engine publishes a
 * nixlTestEndpoint (its registrations, its liveness and its notification inbox) in the registry
 * under its agent name; a peer that loads its connection info looks it up and keeps a
 * shared_ptr to it. Because the endpoint outlives the engine, a peer can always tell "the engine
 * is gone" instead of following a dangling pointer.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_REGISTRY_H
#define NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_REGISTRY_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "nixl_backend_sdk.h"

/** (devId, addr, len, id) of a live region: the order covered() searches in. */
using nixl_test_range_set_t = std::set<std::tuple<uint64_t, uintptr_t, size_t, uint64_t>>;

/** @brief One registration of an engine; shared with peers that loaded its public data. */
struct nixlTestRegion {
    const uintptr_t addr;
    const size_t len;
    const uint64_t devId;
    const uint64_t id;
    /** False once deregistered or the engine is gone. Guarded by the owner endpoint's lock. */
    bool live;
    /** Its entry in the owner's range set while it is live there, so that removal needs no
     *  search. Guarded by the owner endpoint's lock. */
    nixl_test_range_set_t::iterator rangeIt{};

    nixlTestRegion(uintptr_t addr, size_t len, uint64_t dev_id, uint64_t id, bool live)
        : addr(addr),
          len(len),
          devId(dev_id),
          id(id),
          live(live) {}

    nixlBasicDesc
    desc() const noexcept {
        return nixlBasicDesc(addr, len, devId);
    }
};

/**
 * @brief What other engines see of one engine.
 *
 * Copies into or out of the engine's memory run under a shared lock of the endpoint, and
 * deregistration and shutdown take it exclusively: once deregisterMem or the engine destructor
 * returns, no peer is still touching that memory, and none will start.
 */
class nixlTestEndpoint {
public:
    nixlTestEndpoint(std::string name, uint64_t token);

    nixlTestEndpoint(const nixlTestEndpoint &) = delete;
    nixlTestEndpoint &
    operator=(const nixlTestEndpoint &) = delete;

    const std::string &
    name() const noexcept {
        return name_;
    }

    uint64_t
    token() const noexcept {
        return token_;
    }

    /** Records a registration and returns it (live). */
    std::shared_ptr<nixlTestRegion>
    addRegion(uintptr_t addr, size_t len, uint64_t dev_id);

    /** Marks a registration dead and forgets it; waits for copies that use it. */
    void
    removeRegion(nixlTestRegion &region);

    /** The live registration with this id, or nullptr. */
    std::shared_ptr<nixlTestRegion>
    findRegion(uint64_t id) const;

    /** True when one live registration covers desc entirely. */
    bool
    covered(const nixlBasicDesc &desc) const;

    /** Marks the endpoint and all its registrations gone; waits for in-flight copies. */
    void
    shutdown();

    /**
     * Runs fn under the shared access lock if the endpoint is alive; returns false (without
     * calling fn) if the engine is gone. fn may read nixlTestRegion::live of this endpoint's
     * regions and touch their memory.
     */
    template<typename Fn>
    bool
    withAccess(Fn &&fn) const {
        std::shared_lock<std::shared_mutex> guard(lock_);
        if (!alive_) {
            return false;
        }
        fn();
        return true;
    }

    /** Queues a notification from sender. Safe from any thread. */
    void
    pushNotif(std::string_view sender, std::string_view msg);

    /** Moves every queued notification to the end of out. */
    void
    drainNotifs(notif_list_t &out);

private:
    const std::string name_;
    const uint64_t token_;

    mutable std::shared_mutex lock_;
    bool alive_ = true;
    uint64_t nextRegionId_ = 1;
    std::unordered_map<uint64_t, std::shared_ptr<nixlTestRegion>> regions_;
    /** The live regions ordered by (devId, addr, len, id), and how many have each length, so
     *  that covered() is a binary search plus a scan bounded by the longest region. */
    nixl_test_range_set_t byRange_;
    std::map<size_t, size_t> lenCount_;

    std::mutex notifLock_;
    notif_list_t notifs_;
};

/** @brief Agent name -> endpoint of the live TEST engine of that agent, process-wide. */
class nixlTestRegistry {
public:
    /** The single instance. Never destroyed, so engines destroyed at exit can still leave. */
    static nixlTestRegistry &
    instance();

    /** A token no other engine of this process has had. */
    static uint64_t
    newToken() noexcept;

    /** Publishes ep under its name, replacing an older engine of the same agent name. */
    void
    add(const std::shared_ptr<nixlTestEndpoint> &ep);

    /** Withdraws ep if it is still the one published under its name. */
    void
    remove(const nixlTestEndpoint *ep);

    /** The live endpoint of agent name whose token is token, or nullptr. */
    std::shared_ptr<nixlTestEndpoint>
    find(const std::string &name, uint64_t token) const;

private:
    nixlTestRegistry() = default;

    mutable std::mutex lock_;
    std::unordered_map<std::string, std::weak_ptr<nixlTestEndpoint>> byName_;
};

#endif // NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_REGISTRY_H
