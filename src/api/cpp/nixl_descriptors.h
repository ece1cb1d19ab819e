/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_descriptors.h
 * @brief Memory descriptors and descriptor lists.
 *
 * A descriptor names a byte range (address, length, device id). Lists of descriptors of one
 * memory kind are what an agent registers (nixl_reg_dlist_t, with per-descriptor metaInfo) and
 * what a transfer moves (nixl_xfer_dlist_t). Lists can be serialised with nixlSerDes and rebuilt
 * on another host.
 */
#ifndef _NIXL_DESCRIPTORS_H
#define _NIXL_DESCRIPTORS_H

// What NIXL 1.4's nixl_descriptors.h includes (<algorithm>, <limits>, ...) is included here
// too: programs written for NIXL use those names through nixl.h without including them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "nixl_types.h"

/**
 * @brief A byte range: start address, length and device id. 24 bytes, no virtual functions,
 *        serialised by raw copy.
 *
 * Ordering and equality look at all three fields; ordering is by (devId, addr, len).
 */
class nixlBasicDesc {
public:
    uintptr_t addr; ///< Start address (or offset, for file and object memory).
    size_t len; ///< Length in bytes.
    uint64_t devId; ///< GPU index, file descriptor, object key index...

    /** Leaves the fields uninitialised, as NIXL does. */
    nixlBasicDesc() {}

    nixlBasicDesc(const uintptr_t &addr, const size_t &len, const uint64_t &dev_id);
    /** Rebuilds a descriptor from serialize(); a blob that is not exactly 24 bytes gives zeros. */
    nixlBasicDesc(const nixl_blob_t &str);
    nixlBasicDesc(const nixlBasicDesc &desc) = default;
    nixlBasicDesc &
    operator=(const nixlBasicDesc &desc) = default;
    ~nixlBasicDesc() = default;

    bool
    operator<(const nixlBasicDesc &desc) const noexcept {
        if (devId != desc.devId) {
            return devId < desc.devId;
        }
        if (addr != desc.addr) {
            return addr < desc.addr;
        }
        return len < desc.len;
    }

    friend bool
    operator==(const nixlBasicDesc &lhs, const nixlBasicDesc &rhs);
    friend bool
    operator!=(const nixlBasicDesc &lhs, const nixlBasicDesc &rhs);

    /** True when query lies entirely inside this range on the same device. */
    bool
    covers(const nixlBasicDesc &query) const noexcept {
        return devId == query.devId && query.addr >= addr && query.len <= len &&
            query.addr - addr <= len - query.len;
    }

    /** True on the same device unless one range ends at or before the other starts (NIXL's
     *  rule; a zero-length descriptor overlaps only a range it lies strictly inside). */
    bool
    overlaps(const nixlBasicDesc &query) const;

    /** The 24 raw bytes of the descriptor. */
    nixl_blob_t
    serialize() const;
    /** Writes the descriptor to the log at INFO level. */
    void
    print(const std::string &suffix) const;
};

/** @brief A descriptor with an opaque per-descriptor blob (file path, object key, ...). */
class nixlBlobDesc : public nixlBasicDesc {
public:
    nixl_blob_t metaInfo;

    using nixlBasicDesc::nixlBasicDesc;
    nixlBlobDesc(const uintptr_t &addr,
                 const size_t &len,
                 const uint64_t &dev_id,
                 const nixl_blob_t &meta_info);
    nixlBlobDesc(const nixlBasicDesc &desc, const nixl_blob_t &meta_info);
    /** Rebuilds from serialize(): 24 descriptor bytes followed by metaInfo. */
    nixlBlobDesc(const nixl_blob_t &str);

    friend bool
    operator==(const nixlBlobDesc &lhs, const nixlBlobDesc &rhs);

    nixl_blob_t
    serialize() const;
    void
    print(const std::string &suffix) const;
};

// The descriptor classes are defined inline (print() excepted) so that header-only code, such
// as the plugin SDK, can use them without linking libnixl.

inline nixlBasicDesc::nixlBasicDesc(const uintptr_t &addr, const size_t &len, const uint64_t &dev_id)
    : addr(addr),
      len(len),
      devId(dev_id) {}

inline nixlBasicDesc::nixlBasicDesc(const nixl_blob_t &str) {
    if (str.size() == sizeof(nixlBasicDesc)) {
        std::memcpy(static_cast<void *>(this), str.data(), sizeof(nixlBasicDesc));
    } else {
        addr = 0;
        len = 0;
        devId = 0;
    }
}

inline bool
operator==(const nixlBasicDesc &lhs, const nixlBasicDesc &rhs) {
    return lhs.addr == rhs.addr && lhs.len == rhs.len && lhs.devId == rhs.devId;
}

inline bool
operator!=(const nixlBasicDesc &lhs, const nixlBasicDesc &rhs) {
    return !(lhs == rhs);
}

inline bool
nixlBasicDesc::overlaps(const nixlBasicDesc &query) const {
    if (devId != query.devId) {
        return false;
    }
    // NIXL's rule: apart only when one ends at or before the other starts, i.e. each starts
    // before the other ends. So a zero-length descriptor strictly inside a range overlaps it,
    // one at its start or end does not, and two zero-length ones never do. "Starts before the
    // other ends" is written without addr + len, which could wrap.
    const bool query_starts_before_end = query.addr < addr || query.addr - addr < len;
    const bool starts_before_query_end = addr < query.addr || addr - query.addr < query.len;
    return query_starts_before_end && starts_before_query_end;
}

inline nixl_blob_t
nixlBasicDesc::serialize() const {
    return nixl_blob_t(reinterpret_cast<const char *>(this), sizeof(nixlBasicDesc));
}

inline nixlBlobDesc::nixlBlobDesc(const uintptr_t &addr,
                                  const size_t &len,
                                  const uint64_t &dev_id,
                                  const nixl_blob_t &meta_info)
    : nixlBasicDesc(addr, len, dev_id),
      metaInfo(meta_info) {}

inline nixlBlobDesc::nixlBlobDesc(const nixlBasicDesc &desc, const nixl_blob_t &meta_info)
    : nixlBasicDesc(desc),
      metaInfo(meta_info) {}

inline nixlBlobDesc::nixlBlobDesc(const nixl_blob_t &str)
    : nixlBasicDesc(str.size() >= sizeof(nixlBasicDesc) ?
                        str.substr(0, sizeof(nixlBasicDesc)) :
                        nixl_blob_t()) {
    if (str.size() >= sizeof(nixlBasicDesc)) {
        metaInfo = str.substr(sizeof(nixlBasicDesc));
    }
}

inline bool
operator==(const nixlBlobDesc &lhs, const nixlBlobDesc &rhs) {
    return static_cast<const nixlBasicDesc &>(lhs) == static_cast<const nixlBasicDesc &>(rhs) &&
        lhs.metaInfo == rhs.metaInfo;
}

inline nixl_blob_t
nixlBlobDesc::serialize() const {
    return nixlBasicDesc::serialize() + metaInfo;
}

static_assert(sizeof(nixlBasicDesc) == 24, "nixlBasicDesc is serialised as 24 raw bytes");

/** @brief A descriptor on a named remote agent (used by memory views). */
struct nixlRemoteDesc : public nixlBasicDesc {
    std::string remoteAgent;

    using nixlBasicDesc::nixlBasicDesc;
    nixlRemoteDesc(const uintptr_t addr,
                   const size_t len,
                   const uint64_t dev_id,
                   const std::string &remote_agent);
    nixlRemoteDesc(const nixlBasicDesc &desc, const std::string &remote_agent);
    explicit nixlRemoteDesc(const nixl_blob_t &str);

    nixl_blob_t
    serialize() const;
};

bool
operator==(const nixlRemoteDesc &lhs, const nixlRemoteDesc &rhs);

/**
 * @brief An ordered list of descriptors of one memory kind.
 *
 * Element access is unchecked, like std::vector::operator[]. Not thread-safe: concurrent reads
 * are fine, a write needs exclusive access.
 */
template<class T> class nixlDescList {
protected:
    nixl_mem_t type;
    std::vector<T> descs;

public:
    nixlDescList(const nixl_mem_t &type, const int &init_size = 0);
    /** Rebuilds a list written by serialize(); on any error the list is empty. */
    nixlDescList(nixlSerDes *deserializer);
    nixlDescList(const nixlDescList<T> &d_list) = default;
    nixlDescList &
    operator=(const nixlDescList<T> &d_list) = default;
    virtual ~nixlDescList() = default;

    nixl_mem_t
    getType() const;
    int
    descCount() const;
    bool
    isEmpty() const noexcept;

    const T &
    operator[](size_t index) const;
    T &
    operator[](size_t index);

    typename std::vector<T>::const_iterator
    begin() const;
    typename std::vector<T>::const_iterator
    end() const;
    typename std::vector<T>::iterator
    begin();
    typename std::vector<T>::iterator
    end();

    /** Same type, same count and equal elements (for blob lists, only the basic fields). */
    template<class Y>
    friend bool
    operator==(const nixlDescList<Y> &lhs, const nixlDescList<Y> &rhs);

    virtual void
    resize(const size_t &count);
    void
    reserve(size_t count);
    void
    clear();
    virtual void
    addDesc(const T &desc);

    template<class... Args>
    T &
    emplace(Args &&...args) {
        return descs.emplace_back(std::forward<Args>(args)...);
    }

    /** Removes one element; throws std::out_of_range for a bad index. */
    void
    remDesc(const int &index);
    /** The same list with only the basic (address, length, device) fields. */
    nixlDescList<nixlBasicDesc>
    trim() const;
    /** Index of the element equal (basic fields) to query, else NIXL_ERR_NOT_FOUND (-4). */
    virtual int
    getIndex(const nixlBasicDesc &query) const;
    nixl_status_t
    serialize(nixlSerDes *serializer) const;
    /** Writes the list to standard output. */
    void
    print() const;
    std::string
    to_string(bool compact = false) const;
};

template<class Y>
bool
operator==(const nixlDescList<Y> &lhs, const nixlDescList<Y> &rhs) {
    if (lhs.type != rhs.type || lhs.descs.size() != rhs.descs.size()) {
        return false;
    }
    for (size_t i = 0; i < lhs.descs.size(); ++i) {
        if (static_cast<const nixlBasicDesc &>(lhs.descs[i]) !=
            static_cast<const nixlBasicDesc &>(rhs.descs[i])) {
            return false;
        }
    }
    return true;
}

using nixl_xfer_dlist_t = nixlDescList<nixlBasicDesc>;
using nixl_local_dlist_t = nixlDescList<nixlBasicDesc>;
using nixl_reg_dlist_t = nixlDescList<nixlBlobDesc>;
using nixl_remote_dlist_t = nixlDescList<nixlRemoteDesc>;

#endif // _NIXL_DESCRIPTORS_H
