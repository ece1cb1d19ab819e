/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Stream layout (libnixl's own, not NIXL's):
 *
 *   magic "lnxSD1"
 *   field*  where field = tag_len (4 bytes LE) | tag | data_len (8 bytes LE) | data
 *
 * Lengths are written little-endian byte by byte so a stream means the same on every host.
 * Every read goes through parseField(), which checks each length against the bytes that are
 * really there before touching them.
 */
#include "utils/serdes/serdes.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "common/nixl_log.h"

namespace {

constexpr std::string_view kMagic{"lnxSD1"};
constexpr size_t kTagLenBytes = 4;
constexpr size_t kDataLenBytes = 8;

struct fieldView {
    std::string_view tag;
    size_t data_off;
    size_t data_len;
    size_t next_off;
};

void
appendLe(std::string &out, uint64_t value, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) {
        out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
}

uint64_t
readLe(const std::string &in, size_t off, size_t bytes) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) {
        value |= static_cast<uint64_t>(static_cast<unsigned char>(in[off + i])) << (8 * i);
    }
    return value;
}

/**
 * Decodes the field starting at off. Returns false (and leaves out untouched) when the field
 * header or its data would run past the end of buf.
 */
bool
parseField(const std::string &buf, size_t off, fieldView &out) {
    const size_t size = buf.size();
    if (off > size || size - off < kTagLenBytes) {
        return false;
    }
    const uint64_t tag_len = readLe(buf, off, kTagLenBytes);
    off += kTagLenBytes;
    if (tag_len > size - off) {
        return false;
    }
    const size_t tag_off = off;
    off += tag_len;
    if (size - off < kDataLenBytes) {
        return false;
    }
    const uint64_t data_len = readLe(buf, off, kDataLenBytes);
    off += kDataLenBytes;
    // Comparing against the remaining size also keeps data_len within ssize_t.
    if (data_len > size - off) {
        return false;
    }
    out.tag = std::string_view(buf.data() + tag_off, tag_len);
    out.data_off = off;
    out.data_len = data_len;
    out.next_off = off + data_len;
    return true;
}

} // namespace

nixlSerDes::nixlSerDes()
    : workingStr(kMagic),
      des_offset(kMagic.size()) {}

nixl_status_t
nixlSerDes::addStr(const std::string &tag, const std::string &str) {
    return addBuf(tag, str.data(), static_cast<ssize_t>(str.size()));
}

std::string
nixlSerDes::getStr(const std::string &tag) {
    fieldView f;
    if (!parseField(workingStr, des_offset, f) || f.tag != tag) {
        NIXL_DEBUG << "serdes: no field with tag '" << tag << "' at offset " << des_offset;
        return "";
    }
    des_offset = f.next_off;
    return workingStr.substr(f.data_off, f.data_len);
}

nixl_status_t
nixlSerDes::addBuf(const std::string &tag, const void *buf, ssize_t len) {
    if (len < 0 || (len > 0 && buf == nullptr)) {
        NIXL_ERROR << "serdes: invalid buffer for tag '" << tag << "' (len " << len << ")";
        return NIXL_ERR_INVALID_PARAM;
    }
    if (tag.size() > std::numeric_limits<uint32_t>::max()) {
        NIXL_ERROR << "serdes: tag of " << tag.size() << " bytes is too long";
        return NIXL_ERR_INVALID_PARAM;
    }
    workingStr.reserve(workingStr.size() + kTagLenBytes + tag.size() + kDataLenBytes +
                       static_cast<size_t>(len));
    appendLe(workingStr, tag.size(), kTagLenBytes);
    workingStr.append(tag);
    appendLe(workingStr, static_cast<uint64_t>(len), kDataLenBytes);
    if (len > 0) {
        workingStr.append(static_cast<const char *>(buf), static_cast<size_t>(len));
    }
    return NIXL_SUCCESS;
}

ssize_t
nixlSerDes::getBufLen(const std::string &tag) const {
    fieldView f;
    if (!parseField(workingStr, des_offset, f) || f.tag != tag) {
        return -1;
    }
    return static_cast<ssize_t>(f.data_len);
}

nixl_status_t
nixlSerDes::getBuf(const std::string &tag, void *buf, ssize_t len) {
    if (len < 0 || (len > 0 && buf == nullptr)) {
        return NIXL_ERR_INVALID_PARAM;
    }
    fieldView f;
    if (!parseField(workingStr, des_offset, f) || f.tag != tag) {
        NIXL_DEBUG << "serdes: no field with tag '" << tag << "' at offset " << des_offset;
        return NIXL_ERR_MISMATCH;
    }
    if (f.data_len != static_cast<size_t>(len)) {
        NIXL_DEBUG << "serdes: field '" << tag << "' has " << f.data_len << " bytes, caller asked "
                   << len;
        return NIXL_ERR_MISMATCH;
    }
    if (len > 0) {
        std::memcpy(buf, workingStr.data() + f.data_off, f.data_len);
    }
    des_offset = f.next_off;
    return NIXL_SUCCESS;
}

std::string
nixlSerDes::exportStr() const {
    return workingStr;
}

nixl_status_t
nixlSerDes::importStr(const std::string &sdbuf) {
    if (sdbuf.size() < kMagic.size() ||
        std::string_view(sdbuf).substr(0, kMagic.size()) != kMagic) {
        NIXL_ERROR << "serdes: import of " << sdbuf.size()
                   << " bytes rejected: missing stream magic";
        return NIXL_ERR_MISMATCH;
    }
    // Walk every field first so a later get*() never meets a half-written stream.
    size_t off = kMagic.size();
    size_t fields = 0;
    while (off < sdbuf.size()) {
        fieldView f;
        if (!parseField(sdbuf, off, f)) {
            NIXL_ERROR << "serdes: import of " << sdbuf.size() << " bytes rejected: field "
                       << fields << " at offset " << off << " is truncated";
            return NIXL_ERR_MISMATCH;
        }
        off = f.next_off;
        ++fields;
    }
    workingStr = sdbuf;
    des_offset = kMagic.size();
    return NIXL_SUCCESS;
}

std::string
nixlSerDes::_bytesToString(const void *buf, ssize_t size) {
    if (buf == nullptr || size <= 0) {
        return "";
    }
    return std::string(static_cast<const char *>(buf), static_cast<size_t>(size));
}

void
nixlSerDes::_stringToBytes(void *fill_buf, const std::string &s, ssize_t size) {
    if (fill_buf == nullptr || size <= 0) {
        return;
    }
    // Never read past the string: copy at most what it holds.
    const size_t n = std::min(static_cast<size_t>(size), s.size());
    std::memcpy(fill_buf, s.data(), n);
}
