/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file reg_list.h
 * @brief Memory registrations an agent keeps per (memory kind, engine): its own (nixlLocalReg)
 *        and those loaded from peers' metadata (nixlRemoteReg), in an ordered nixlRegList with
 *        the covering-range lookup every transfer descriptor goes through. Not installed.
 *
 * Thread safety: see nixlRegList (readers concurrently under the agent lock held shared,
 * writers under it held exclusively). The registration structs are plain values.
 */
#ifndef NIXL_SRC_CORE_AGENT_REG_LIST_H
#define NIXL_SRC_CORE_AGENT_REG_LIST_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "nixl_backend_plugin.h"
#include "nixl_descriptors.h"

/** A registration of local memory with one engine. */
struct nixlLocalReg {
    /** The range only: the caller's metaInfo is passed to the backend at registration and
     *  not needed after, and without it a list node fits glibc's fast bins (128 bytes). */
    nixlBasicDesc desc;
    nixl_be_md_t *md = nullptr;
    nixl_be_md_t *loopMd = nullptr; ///< loadLocalMD result (local-capable engines)
    std::string publicData; ///< getPublicData result (remote-capable engines)
};

/** A registration of a remote agent's memory, as loaded from its metadata. */
struct nixlRemoteReg {
    nixlBasicDesc desc;
    nixl_be_md_t *md = nullptr;
    /** When this agent last loaded it from the peer's metadata (the remote record's counter):
     *  of the registrations covering a descriptor, the most recently loaded one is used, since
     *  only the peer's newest metadata is sure to describe memory it still has registered. */
    uint64_t seq = 0;
    /** Hash of the public data it was loaded from. The same range loaded again with other
     *  public data is a re-registration (a freed buffer's address handed out again): it
     *  replaces this one. The same public data again changes nothing. */
    uint64_t publicHash = 0;
};

/**
 * Registrations of one (memory kind, engine), ordered by (devId, addr, len). Insert, erase and
 * exact lookup are O(log N), so one call registering or deregistering N descriptors (a KV cache
 * registers hundreds of thousands of blocks) costs O(N log N); lookups start at a finger (the
 * last entry a writer touched) and at the two ends, so lists walked in order in either
 * direction cost O(1) per descriptor. The registration covering a descriptor is found by
 * binary search plus a backward scan that stops once the gap exceeds the longest registration
 * present: short when registrations do not nest, longer only when a few large registrations
 * overlap many small ones.
 *
 * Thread safety: findCovering, findExact, all, empty and size may run concurrently (agent lock
 * held shared); every other member needs it held exclusively.
 */
template<typename Reg> class nixlRegList {
public:
    /** The ordered store: (devId, addr, len) to registration. */
    using map_t = std::map<nixlBasicDesc, Reg>;

    nixlRegList() = default;
    // The copies and moves drop the finger: it points into the source's map.
    nixlRegList(const nixlRegList &other);
    nixlRegList(nixlRegList &&other) noexcept;
    nixlRegList &
    operator=(const nixlRegList &other);
    nixlRegList &
    operator=(nixlRegList &&other) noexcept;
    ~nixlRegList() = default;

    /** Registration covering q, or nullptr. Zero-length registrations of unbounded kinds
     *  (BLK, OBJ, FILE) cover everything from their address on. */
    const Reg *
    findCovering(const nixlBasicDesc &q) const noexcept;

    /** The registration equal to d in (devId, addr, len), or nullptr. Stable until erased.
     *  Reads only: safe for concurrent readers. */
    Reg *
    findExact(const nixlBasicDesc &d) noexcept;

    /** findExact that also moves the search finger to the result, so that looking up the
     *  neighbours next costs O(1). Writers only (the agent lock held exclusively). */
    Reg *
    seek(const nixlBasicDesc &d) noexcept;

    /** False when an equal (devId, addr, len) registration exists. */
    bool
    insert(Reg reg);

    /** True once two registrations of the list have overlapped (never cleared): findCovering
     *  of a list whose entries carry a load order (nixlRemoteReg::seq) then scans every
     *  covering entry for the newest instead of taking the first. */
    bool
    overlapping() const noexcept {
        return overlapping_;
    }

    bool
    erase(const nixlBasicDesc &d) noexcept;

    /** Removes the registration equal to d and returns it; nullopt when there is none. */
    std::optional<Reg>
    take(const nixlBasicDesc &d);

    /**
     * Every registration, in (devId, addr, len) order: a range of const Reg & with size().
     * Hand-written rather than std::views::values, which clang 14 (the fuzz build) cannot
     * instantiate over libstdc++ 12's std::map.
     */
    class valueRange {
    public:
        class iterator {
        public:
            explicit iterator(typename map_t::const_iterator it) noexcept : it_(it) {}
            const Reg &
            operator*() const noexcept {
                return it_->second;
            }
            iterator &
            operator++() noexcept {
                ++it_;
                return *this;
            }
            bool
            operator==(const iterator &other) const noexcept {
                return it_ == other.it_;
            }

        private:
            typename map_t::const_iterator it_;
        };

        explicit valueRange(const map_t &m) noexcept : map_(m) {}
        iterator
        begin() const noexcept {
            return iterator(map_.begin());
        }
        iterator
        end() const noexcept {
            return iterator(map_.end());
        }
        size_t
        size() const noexcept {
            return map_.size();
        }

    private:
        const map_t &map_;
    };

    valueRange
    all() const noexcept {
        return valueRange(regs_);
    }

    bool
    empty() const noexcept {
        return regs_.empty();
    }

    size_t
    size() const noexcept {
        return regs_.size();
    }

    void
    setUnboundedZeroLength(bool v) noexcept {
        unboundedZero_ = v;
    }

private:
    /** The entry equal to d, or end(). */
    typename map_t::iterator
    locate(const nixlBasicDesc &d) noexcept;

    void
    uncount(size_t len) noexcept;

    /** True when the entry at it overlaps a neighbour on its device. */
    bool
    overlapsNeighbour(typename map_t::const_iterator it) const noexcept;

    /** Moves the finger off it before it is erased. */
    void
    forget(typename map_t::iterator it) noexcept;

    map_t regs_;
    /** The last entry sought, inserted or next to one removed: where lookups start. Only
     *  writers move it; hasFinger_ is false when it points nowhere. */
    typename map_t::iterator finger_{};
    bool hasFinger_ = false;
    /** How many registrations have each length: the longest one bounds the covering scan. */
    std::map<size_t, size_t> lenCount_;
    bool unboundedZero_ = false;
    bool overlapping_ = false;
};

#endif // NIXL_SRC_CORE_AGENT_REG_LIST_H
