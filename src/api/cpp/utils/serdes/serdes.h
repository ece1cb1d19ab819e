/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file serdes.h
 * @brief nixlSerDes: a tagged, sequential byte stream for handing descriptor lists and small
 *        values between agents.
 *
 * Writers append (tag, value) fields; readers take them back in the same order, naming the tag
 * they expect. A read whose tag does not match, or that would run past the data, fails without
 * moving the read position. Not thread-safe.
 */
#ifndef NIXL_SRC_UTILS_SERDES_SERDES_H
#define NIXL_SRC_UTILS_SERDES_SERDES_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "nixl_types.h"

class nixlSerDes {
private:
    std::string workingStr;
    size_t des_offset;

public:
    nixlSerDes();

    /** Appends a string field. */
    nixl_status_t
    addStr(const std::string &tag, const std::string &str);
    /** Takes the next field if its tag matches; "" on mismatch or truncation. */
    std::string
    getStr(const std::string &tag);

    /** Appends len raw bytes. */
    nixl_status_t
    addBuf(const std::string &tag, const void *buf, ssize_t len);
    /** Length of the next field if its tag matches, else -1. Does not consume. */
    ssize_t
    getBufLen(const std::string &tag) const;
    /** Copies the next field into buf; its length must be exactly len. */
    nixl_status_t
    getBuf(const std::string &tag, void *buf, ssize_t len);

    /** The whole stream, for sending. */
    std::string
    exportStr() const;
    /** Replaces the stream with one made by exportStr(); NIXL_ERR_MISMATCH if it is not one. */
    nixl_status_t
    importStr(const std::string &sdbuf);

    static std::string
    _bytesToString(const void *buf, ssize_t size);
    static void
    _stringToBytes(void *fill_buf, const std::string &s, ssize_t size);
};

#endif // NIXL_SRC_UTILS_SERDES_SERDES_H
