/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test_registry.h"

#include <atomic>
#include <limits>
#include <utility>

nixlTestEndpoint::nixlTestEndpoint(std::string name, uint64_t token)
    : name_(std::move(name)),
      token_(token) {}

std::shared_ptr<nixlTestRegion>
nixlTestEndpoint::addRegion(uintptr_t addr, size_t len, uint64_t dev_id) {
    std::unique_lock<std::shared_mutex> guard(lock_);
    auto region = std::make_shared<nixlTestRegion>(addr, len, dev_id, nextRegionId_++, alive_);
    regions_.emplace(region->id, region);
    try {
        ++lenCount_[len];
        // Registrations usually come in address order: hinted at the end, that costs O(1)
        // instead of a descent (anything else is an ordinary O(log N) insertion).
        region->rangeIt = byRange_.emplace_hint(byRange_.end(), dev_id, addr, len, region->id);
    }
    catch (...) {
        regions_.erase(region->id);
        auto c = lenCount_.find(len);
        if (c != lenCount_.end() && --c->second == 0) {
            lenCount_.erase(c);
        }
        throw;
    }
    return region;
}

void
nixlTestEndpoint::removeRegion(nixlTestRegion &region) {
    std::unique_lock<std::shared_mutex> guard(lock_);
    region.live = false;
    if (regions_.erase(region.id) == 0) {
        return; // already gone with shutdown()
    }
    byRange_.erase(region.rangeIt);
    auto c = lenCount_.find(region.len);
    if (c != lenCount_.end() && --c->second == 0) {
        lenCount_.erase(c);
    }
}

std::shared_ptr<nixlTestRegion>
nixlTestEndpoint::findRegion(uint64_t id) const {
    std::shared_lock<std::shared_mutex> guard(lock_);
    auto it = regions_.find(id);
    return it == regions_.end() ? nullptr : it->second;
}

bool
nixlTestEndpoint::covered(const nixlBasicDesc &desc) const {
    std::shared_lock<std::shared_mutex> guard(lock_);
    if (byRange_.empty()) {
        return false;
    }
    const size_t max_len = lenCount_.rbegin()->first;
    // Past every region of desc's device that starts at or before desc.addr; walk back.
    auto it = byRange_.upper_bound(std::make_tuple(desc.devId,
                                                   desc.addr,
                                                   std::numeric_limits<size_t>::max(),
                                                   std::numeric_limits<uint64_t>::max()));
    while (it != byRange_.begin()) {
        --it;
        const auto &[dev, addr, len, id] = *it;
        if (dev != desc.devId || desc.addr - addr > max_len) {
            return false;
        }
        if (nixlBasicDesc(addr, len, dev).covers(desc)) {
            return true;
        }
    }
    return false;
}

void
nixlTestEndpoint::shutdown() {
    std::unique_lock<std::shared_mutex> guard(lock_);
    alive_ = false;
    for (auto &[id, region] : regions_) {
        region->live = false;
    }
    regions_.clear();
    byRange_.clear();
    lenCount_.clear();
}

void
nixlTestEndpoint::pushNotif(std::string_view sender, std::string_view msg) {
    // Build the entry before taking the lock so that concurrent senders and getNotifs do not
    // wait on each other's allocations.
    std::pair<std::string, std::string> entry(sender, msg);
    std::lock_guard<std::mutex> guard(notifLock_);
    notifs_.push_back(std::move(entry));
}

void
nixlTestEndpoint::drainNotifs(notif_list_t &out) {
    notif_list_t taken;
    {
        std::lock_guard<std::mutex> guard(notifLock_);
        taken.swap(notifs_);
    }
    out.reserve(out.size() + taken.size());
    for (auto &entry : taken) {
        out.push_back(std::move(entry));
    }
}

nixlTestRegistry &
nixlTestRegistry::instance() {
    // Deliberately leaked: an engine destroyed from another static destructor at exit must
    // still find the registry intact.
    static nixlTestRegistry *registry = new nixlTestRegistry();
    return *registry;
}

uint64_t
nixlTestRegistry::newToken() noexcept {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

void
nixlTestRegistry::add(const std::shared_ptr<nixlTestEndpoint> &ep) {
    std::lock_guard<std::mutex> guard(lock_);
    byName_[ep->name()] = ep;
}

void
nixlTestRegistry::remove(const nixlTestEndpoint *ep) {
    std::lock_guard<std::mutex> guard(lock_);
    auto it = byName_.find(ep->name());
    if (it == byName_.end()) {
        return;
    }
    std::shared_ptr<nixlTestEndpoint> current = it->second.lock();
    // A newer engine of the same agent name may have taken the slot; leave it alone.
    if (current == nullptr || current.get() == ep) {
        byName_.erase(it);
    }
}

std::shared_ptr<nixlTestEndpoint>
nixlTestRegistry::find(const std::string &name, uint64_t token) const {
    std::lock_guard<std::mutex> guard(lock_);
    auto it = byName_.find(name);
    if (it == byName_.end()) {
        return nullptr;
    }
    std::shared_ptr<nixlTestEndpoint> ep = it->second.lock();
    if (ep == nullptr || ep->token() != token) {
        return nullptr;
    }
    return ep;
}
