/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "nixl_descriptors.h"

#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "common/nixl_log.h"
#include "utils/serdes/serdes.h"

namespace {

constexpr const char *kListTag = "nixlDList";
constexpr const char *kBasicListName = "nixlBDList";
constexpr const char *kBlobListName = "nixlSDList";
constexpr const char *kTypeTag = "t";
constexpr const char *kCountTag = "n";
constexpr const char *kElemTag = "";

constexpr size_t kBasicSize = sizeof(nixlBasicDesc);

// The wire form stores the memory type in 4 bytes and the count in 8.
using wire_type_t = int32_t;
using wire_count_t = uint64_t;
static_assert(sizeof(nixl_mem_t) == sizeof(wire_type_t), "nixl_mem_t is serialised as 4 bytes");
static_assert(std::is_trivially_copyable_v<nixlBasicDesc>,
              "basic lists are serialised by raw copy");

template<class T> constexpr bool is_basic_v = std::is_same_v<T, nixlBasicDesc>;

void
appendBasic(std::ostream &os, const nixlBasicDesc &d) {
    os << "addr=0x" << std::hex << d.addr << std::dec << " len=" << d.len << " devId=" << d.devId;
}

template<class T>
void
appendExtra(std::ostream &os, const T &d) {
    if constexpr (std::is_same_v<T, nixlBlobDesc>) {
        // metaInfo is opaque and often binary: show its size only.
        os << " meta=" << d.metaInfo.size() << "B";
    } else if constexpr (std::is_same_v<T, nixlRemoteDesc>) {
        os << " agent=" << d.remoteAgent;
    }
}

} // namespace

/* nixlBasicDesc / nixlBlobDesc */

void
nixlBasicDesc::print(const std::string &suffix) const {
    NIXL_INFO << "desc addr=0x" << std::hex << addr << std::dec << " len=" << len
              << " devId=" << devId << suffix;
}

void
nixlBlobDesc::print(const std::string &suffix) const {
    NIXL_INFO << "desc addr=0x" << std::hex << addr << std::dec << " len=" << len
              << " devId=" << devId << " metaInfo=" << metaInfo.size() << "B" << suffix;
}

/* nixlRemoteDesc: wire form is the 24 basic bytes followed by the agent name. */

nixlRemoteDesc::nixlRemoteDesc(const uintptr_t addr,
                               const size_t len,
                               const uint64_t dev_id,
                               const std::string &remote_agent)
    : nixlBasicDesc(addr, len, dev_id),
      remoteAgent(remote_agent) {}

nixlRemoteDesc::nixlRemoteDesc(const nixlBasicDesc &desc, const std::string &remote_agent)
    : nixlBasicDesc(desc),
      remoteAgent(remote_agent) {}

nixlRemoteDesc::nixlRemoteDesc(const nixl_blob_t &str)
    : nixlBasicDesc(str.size() >= kBasicSize ? str.substr(0, kBasicSize) : nixl_blob_t()) {
    if (str.size() >= kBasicSize) {
        remoteAgent = str.substr(kBasicSize);
    }
}

nixl_blob_t
nixlRemoteDesc::serialize() const {
    return nixlBasicDesc::serialize() + remoteAgent;
}

bool
operator==(const nixlRemoteDesc &lhs, const nixlRemoteDesc &rhs) {
    return static_cast<const nixlBasicDesc &>(lhs) == static_cast<const nixlBasicDesc &>(rhs) &&
        lhs.remoteAgent == rhs.remoteAgent;
}

/* nixlDescList */

template<class T>
nixlDescList<T>::nixlDescList(const nixl_mem_t &type, const int &init_size)
    : type(type) {
    if (init_size > 0) {
        descs.resize(static_cast<size_t>(init_size));
    }
}

template<class T>
nixlDescList<T>::nixlDescList(nixlSerDes *deserializer)
    : type(DRAM_SEG) {
    // Each failed step logs its cause once and leaves the list empty.
    auto fail = [this](const std::string &why) {
        NIXL_ERROR << "descriptor list deserialisation failed: " << why;
        descs.clear();
        descs.shrink_to_fit();
        type = DRAM_SEG;
    };

    if (deserializer == nullptr) {
        fail("null deserializer");
        return;
    }

    const std::string expected_name = is_basic_v<T> ? kBasicListName : kBlobListName;
    if (deserializer->getBufLen(kListTag) < 0) {
        fail(std::string("missing '") + kListTag + "' header field");
        return;
    }
    const std::string name = deserializer->getStr(kListTag);
    if (name != expected_name) {
        fail("list kind '" + name + "', expected '" + expected_name + "'");
        return;
    }

    wire_type_t raw_type = 0;
    if (deserializer->getBufLen(kTypeTag) != static_cast<ssize_t>(sizeof(raw_type))) {
        fail("memory type field missing or not 4 bytes");
        return;
    }
    if (deserializer->getBuf(kTypeTag, &raw_type, sizeof(raw_type)) != NIXL_SUCCESS) {
        fail("memory type field unreadable");
        return;
    }
    if (raw_type < static_cast<wire_type_t>(DRAM_SEG) ||
        raw_type > static_cast<wire_type_t>(FILE_SEG)) {
        fail("memory type " + std::to_string(raw_type) + " out of range");
        return;
    }

    wire_count_t count = 0;
    if (deserializer->getBufLen(kCountTag) != static_cast<ssize_t>(sizeof(count))) {
        fail("descriptor count field missing or not 8 bytes");
        return;
    }
    if (deserializer->getBuf(kCountTag, &count, sizeof(count)) != NIXL_SUCCESS) {
        fail("descriptor count field unreadable");
        return;
    }

    type = static_cast<nixl_mem_t>(raw_type);

    if constexpr (is_basic_v<T>) {
        const ssize_t data_len = deserializer->getBufLen(kElemTag);
        // Check the count against the bytes present before allocating anything for it.
        if (data_len < 0 || static_cast<size_t>(data_len) % kBasicSize != 0 ||
            static_cast<size_t>(data_len) / kBasicSize != count) {
            fail("descriptor data of " + std::to_string(data_len) + " bytes does not hold " +
                 std::to_string(count) + " descriptors");
            return;
        }
        descs.resize(static_cast<size_t>(count));
        // Straight into the vector: no intermediate copy of a possibly large blob.
        if (deserializer->getBuf(kElemTag, descs.data(), data_len) != NIXL_SUCCESS) {
            fail("descriptor data unreadable");
            return;
        }
    } else {
        // No reserve(count): count is untrusted, the vector grows only per element read.
        for (wire_count_t i = 0; i < count; ++i) {
            const ssize_t elem_len = deserializer->getBufLen(kElemTag);
            if (elem_len < 0) {
                fail("descriptor " + std::to_string(i) + " of " + std::to_string(count) +
                     " is missing");
                return;
            }
            if (static_cast<size_t>(elem_len) < kBasicSize) {
                fail("descriptor " + std::to_string(i) + " has " + std::to_string(elem_len) +
                     " bytes, needs at least " + std::to_string(kBasicSize));
                return;
            }
            const std::string elem = deserializer->getStr(kElemTag);
            if (elem.size() != static_cast<size_t>(elem_len)) {
                fail("descriptor " + std::to_string(i) + " unreadable");
                return;
            }
            descs.emplace_back(elem);
        }
    }
}

template<class T>
nixl_mem_t
nixlDescList<T>::getType() const {
    return type;
}

template<class T>
int
nixlDescList<T>::descCount() const {
    return static_cast<int>(descs.size());
}

template<class T>
bool
nixlDescList<T>::isEmpty() const noexcept {
    return descs.empty();
}

template<class T>
const T &
nixlDescList<T>::operator[](size_t index) const {
    return descs[index];
}

template<class T>
T &
nixlDescList<T>::operator[](size_t index) {
    return descs[index];
}

template<class T>
typename std::vector<T>::const_iterator
nixlDescList<T>::begin() const {
    return descs.begin();
}

template<class T>
typename std::vector<T>::const_iterator
nixlDescList<T>::end() const {
    return descs.end();
}

template<class T>
typename std::vector<T>::iterator
nixlDescList<T>::begin() {
    return descs.begin();
}

template<class T>
typename std::vector<T>::iterator
nixlDescList<T>::end() {
    return descs.end();
}

template<class T>
void
nixlDescList<T>::resize(const size_t &count) {
    descs.resize(count);
}

template<class T>
void
nixlDescList<T>::reserve(size_t count) {
    descs.reserve(count);
}

template<class T>
void
nixlDescList<T>::clear() {
    descs.clear();
}

template<class T>
void
nixlDescList<T>::addDesc(const T &desc) {
    descs.push_back(desc);
}

template<class T>
void
nixlDescList<T>::remDesc(const int &index) {
    if (index < 0 || static_cast<size_t>(index) >= descs.size()) {
        throw std::out_of_range("nixlDescList::remDesc: index " + std::to_string(index) +
                                " outside a list of " + std::to_string(descs.size()));
    }
    descs.erase(descs.begin() + index);
}

template<class T>
nixlDescList<nixlBasicDesc>
nixlDescList<T>::trim() const {
    if constexpr (is_basic_v<T>) {
        return *this;
    } else {
        nixlDescList<nixlBasicDesc> out(type);
        out.reserve(descs.size());
        for (const auto &d : descs) {
            out.addDesc(static_cast<const nixlBasicDesc &>(d));
        }
        return out;
    }
}

template<class T>
int
nixlDescList<T>::getIndex(const nixlBasicDesc &query) const {
    for (size_t i = 0; i < descs.size(); ++i) {
        if (static_cast<const nixlBasicDesc &>(descs[i]) == query) {
            return static_cast<int>(i);
        }
    }
    return NIXL_ERR_NOT_FOUND;
}

template<class T>
nixl_status_t
nixlDescList<T>::serialize(nixlSerDes *serializer) const {
    if (serializer == nullptr) {
        NIXL_ERROR << "descriptor list serialisation: null serializer";
        return NIXL_ERR_INVALID_PARAM;
    }
    nixl_status_t ret =
        serializer->addStr(kListTag, is_basic_v<T> ? kBasicListName : kBlobListName);
    if (ret != NIXL_SUCCESS) {
        return ret;
    }
    const wire_type_t raw_type = static_cast<wire_type_t>(type);
    ret = serializer->addBuf(kTypeTag, &raw_type, sizeof(raw_type));
    if (ret != NIXL_SUCCESS) {
        return ret;
    }
    const wire_count_t count = descs.size();
    ret = serializer->addBuf(kCountTag, &count, sizeof(count));
    if (ret != NIXL_SUCCESS) {
        return ret;
    }

    if constexpr (is_basic_v<T>) {
        // std::vector is contiguous and nixlBasicDesc is 24 plain bytes: one copy does it.
        return serializer->addBuf(
            kElemTag, descs.data(), static_cast<ssize_t>(descs.size() * kBasicSize));
    } else {
        for (const auto &d : descs) {
            ret = serializer->addStr(kElemTag, d.serialize());
            if (ret != NIXL_SUCCESS) {
                return ret;
            }
        }
        return NIXL_SUCCESS;
    }
}

template<class T>
void
nixlDescList<T>::print() const {
    std::cout << to_string() << std::endl;
}

template<class T>
std::string
nixlDescList<T>::to_string(bool compact) const {
    std::ostringstream os;
    if (compact) {
        os << nixlEnumStrings::memTypeStr(type) << "[";
        for (size_t i = 0; i < descs.size(); ++i) {
            os << (i == 0 ? "(" : ", (");
            appendBasic(os, descs[i]);
            appendExtra(os, descs[i]);
            os << ")";
        }
        os << "]";
        return os.str();
    }
    os << "nixlDescList type=" << nixlEnumStrings::memTypeStr(type) << " count=" << descs.size();
    for (size_t i = 0; i < descs.size(); ++i) {
        os << "\n  [" << i << "] ";
        appendBasic(os, descs[i]);
        appendExtra(os, descs[i]);
    }
    return os.str();
}

template class nixlDescList<nixlBasicDesc>;
template class nixlDescList<nixlBlobDesc>;
template class nixlDescList<nixlRemoteDesc>;
