/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include <cstring>
#include <string>
#include <type_traits>

#include "nixl_plugin_names.h"
#include "nixl_types.h"

// The C constants of the plugin ABI are the values of nixl_types.h's enums: a plugin written in
// C (or one reading the raw uint32_t of a transfer list) relies on it.
static_assert(NIXL_BE_MEM_DRAM == DRAM_SEG && NIXL_BE_MEM_VRAM == VRAM_SEG &&
              NIXL_BE_MEM_BLK == BLK_SEG && NIXL_BE_MEM_OBJ == OBJ_SEG &&
              NIXL_BE_MEM_FILE == FILE_SEG && NIXL_BE_MEM_KIND_COUNT == FILE_SEG + 1);
static_assert(NIXL_BE_OP_READ == NIXL_READ && NIXL_BE_OP_WRITE == NIXL_WRITE);
static_assert(NIXL_PLUGIN_IN_PROG == NIXL_IN_PROG && NIXL_PLUGIN_SUCCESS == NIXL_SUCCESS &&
              NIXL_PLUGIN_ERR_NOT_POSTED == NIXL_ERR_NOT_POSTED &&
              NIXL_PLUGIN_ERR_INVALID_PARAM == NIXL_ERR_INVALID_PARAM &&
              NIXL_PLUGIN_ERR_BACKEND == NIXL_ERR_BACKEND &&
              NIXL_PLUGIN_ERR_NOT_FOUND == NIXL_ERR_NOT_FOUND &&
              NIXL_PLUGIN_ERR_MISMATCH == NIXL_ERR_MISMATCH &&
              NIXL_PLUGIN_ERR_NOT_ALLOWED == NIXL_ERR_NOT_ALLOWED &&
              NIXL_PLUGIN_ERR_REPOST_ACTIVE == NIXL_ERR_REPOST_ACTIVE &&
              NIXL_PLUGIN_ERR_UNKNOWN == NIXL_ERR_UNKNOWN &&
              NIXL_PLUGIN_ERR_NOT_SUPPORTED == NIXL_ERR_NOT_SUPPORTED &&
              NIXL_PLUGIN_ERR_REMOTE_DISCONNECT == NIXL_ERR_REMOTE_DISCONNECT &&
              NIXL_PLUGIN_ERR_CANCELED == NIXL_ERR_CANCELED &&
              NIXL_PLUGIN_ERR_NO_TELEMETRY == NIXL_ERR_NO_TELEMETRY);

const std::string default_metadata_label = "metadata";
const std::string default_partial_metadata_label = "partial_metadata";
const std::string nixl_null_agent = "NULL_AGENT";

namespace nixlEnumStrings {

namespace {

    // Values may come from other processes or from casts, so they are read as plain integers
    // (an out-of-range value loaded as the enum type would be undefined); the name table gives
    // a BAD_ name for any value outside the enum.
    template<class E>
    std::underlying_type_t<E>
    rawValue(const E &e) noexcept {
        std::underlying_type_t<E> v;
        std::memcpy(&v, &e, sizeof(v));
        return v;
    }

} // namespace

// The names come from the one table in nixl_plugin_names.h, which plugins use too.

std::string
memTypeStr(const nixl_mem_t &mem) {
    return nixl_be_mem_name(rawValue(mem));
}

std::string
xferOpStr(const nixl_xfer_op_t &op) {
    return nixl_be_op_name(rawValue(op));
}

std::string
statusStr(const nixl_status_t &status) {
    return nixl_plugin_status_name(rawValue(status));
}

} // namespace nixlEnumStrings
