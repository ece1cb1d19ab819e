/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include <cstring>
#include <string>
#include <type_traits>

#include "nixl_types.h"

const std::string default_metadata_label = "metadata";
const std::string default_partial_metadata_label = "partial_metadata";
const std::string nixl_null_agent = "NULL_AGENT";

namespace nixlEnumStrings {

namespace {

    // Values may come from other processes or from casts, so they are read as plain integers
    // (an out-of-range value loaded as the enum type would be undefined) and every switch falls
    // back to a BAD_ name.
    template<class E>
    std::underlying_type_t<E>
    rawValue(const E &e) noexcept {
        std::underlying_type_t<E> v;
        std::memcpy(&v, &e, sizeof(v));
        return v;
    }

} // namespace

std::string
memTypeStr(const nixl_mem_t &mem) {
    switch (rawValue(mem)) {
    case DRAM_SEG:
        return "DRAM_SEG";
    case VRAM_SEG:
        return "VRAM_SEG";
    case BLK_SEG:
        return "BLK_SEG";
    case OBJ_SEG:
        return "OBJ_SEG";
    case FILE_SEG:
        return "FILE_SEG";
    }
    return "BAD_SEG";
}

std::string
xferOpStr(const nixl_xfer_op_t &op) {
    switch (rawValue(op)) {
    case NIXL_READ:
        return "READ";
    case NIXL_WRITE:
        return "WRITE";
    }
    return "BAD_OP";
}

std::string
statusStr(const nixl_status_t &status) {
    switch (rawValue(status)) {
    case NIXL_IN_PROG:
        return "NIXL_IN_PROG";
    case NIXL_SUCCESS:
        return "NIXL_SUCCESS";
    case NIXL_ERR_NOT_POSTED:
        return "NIXL_ERR_NOT_POSTED";
    case NIXL_ERR_INVALID_PARAM:
        return "NIXL_ERR_INVALID_PARAM";
    case NIXL_ERR_BACKEND:
        return "NIXL_ERR_BACKEND";
    case NIXL_ERR_NOT_FOUND:
        return "NIXL_ERR_NOT_FOUND";
    case NIXL_ERR_MISMATCH:
        return "NIXL_ERR_MISMATCH";
    case NIXL_ERR_NOT_ALLOWED:
        return "NIXL_ERR_NOT_ALLOWED";
    case NIXL_ERR_REPOST_ACTIVE:
        return "NIXL_ERR_REPOST_ACTIVE";
    case NIXL_ERR_UNKNOWN:
        return "NIXL_ERR_UNKNOWN";
    case NIXL_ERR_NOT_SUPPORTED:
        return "NIXL_ERR_NOT_SUPPORTED";
    case NIXL_ERR_REMOTE_DISCONNECT:
        return "NIXL_ERR_REMOTE_DISCONNECT";
    case NIXL_ERR_CANCELED:
        return "NIXL_ERR_CANCELED";
    case NIXL_ERR_NO_TELEMETRY:
        return "NIXL_ERR_NO_TELEMETRY";
    }
    return "BAD_STATUS";
}

} // namespace nixlEnumStrings
