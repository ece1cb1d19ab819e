/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * File: nixl_plugin_names.h
 *
 * The one table of names for status values, memory kinds and operations, shared by libnixl
 * (nixlEnumStrings::statusStr, memTypeStr, xferOpStr are built on it) and by plugins, which do
 * not link libnixl but name these values in their log lines. The names are the enumerator names
 * of nixl_types.h ("NIXL_ERR_NOT_FOUND", "DRAM_SEG") and NIXL's operation names ("READ",
 * "WRITE"); a value outside the enum gets "BAD_STATUS", "BAD_SEG" or "BAD_OP". Values are taken
 * as plain integers, as they cross the C ABI, so any value is safe to pass.
 *
 * Header-only (static inline functions, no data crossing the boundary): using it changes no
 * ABI. Includable from C99 and C++.
 */
#ifndef NIXL_PLUGIN_NAMES_H
#define NIXL_PLUGIN_NAMES_H

#include "nixl_backend_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Name of a nixl_status_t / nixl_plugin_status_t value. */
static inline const char *
nixl_plugin_status_name(int32_t status) {
    switch (status) {
    case NIXL_PLUGIN_IN_PROG:
        return "NIXL_IN_PROG";
    case NIXL_PLUGIN_SUCCESS:
        return "NIXL_SUCCESS";
    case NIXL_PLUGIN_ERR_NOT_POSTED:
        return "NIXL_ERR_NOT_POSTED";
    case NIXL_PLUGIN_ERR_INVALID_PARAM:
        return "NIXL_ERR_INVALID_PARAM";
    case NIXL_PLUGIN_ERR_BACKEND:
        return "NIXL_ERR_BACKEND";
    case NIXL_PLUGIN_ERR_NOT_FOUND:
        return "NIXL_ERR_NOT_FOUND";
    case NIXL_PLUGIN_ERR_MISMATCH:
        return "NIXL_ERR_MISMATCH";
    case NIXL_PLUGIN_ERR_NOT_ALLOWED:
        return "NIXL_ERR_NOT_ALLOWED";
    case NIXL_PLUGIN_ERR_REPOST_ACTIVE:
        return "NIXL_ERR_REPOST_ACTIVE";
    case NIXL_PLUGIN_ERR_UNKNOWN:
        return "NIXL_ERR_UNKNOWN";
    case NIXL_PLUGIN_ERR_NOT_SUPPORTED:
        return "NIXL_ERR_NOT_SUPPORTED";
    case NIXL_PLUGIN_ERR_REMOTE_DISCONNECT:
        return "NIXL_ERR_REMOTE_DISCONNECT";
    case NIXL_PLUGIN_ERR_CANCELED:
        return "NIXL_ERR_CANCELED";
    case NIXL_PLUGIN_ERR_NO_TELEMETRY:
        return "NIXL_ERR_NO_TELEMETRY";
    default:
        return "BAD_STATUS";
    }
}

/* Name of a memory kind (nixl_mem_t value), as memTypeStr gives it. */
static inline const char *
nixl_be_mem_name(uint32_t kind) {
    switch (kind) {
    case NIXL_BE_MEM_DRAM:
        return "DRAM_SEG";
    case NIXL_BE_MEM_VRAM:
        return "VRAM_SEG";
    case NIXL_BE_MEM_BLK:
        return "BLK_SEG";
    case NIXL_BE_MEM_OBJ:
        return "OBJ_SEG";
    case NIXL_BE_MEM_FILE:
        return "FILE_SEG";
    default:
        return "BAD_SEG";
    }
}

/* Name of a transfer operation (nixl_xfer_op_t value), as xferOpStr gives it. */
static inline const char *
nixl_be_op_name(uint32_t op) {
    switch (op) {
    case NIXL_BE_OP_READ:
        return "READ";
    case NIXL_BE_OP_WRITE:
        return "WRITE";
    default:
        return "BAD_OP";
    }
}

#ifdef __cplusplus
}
#endif

#endif /* NIXL_PLUGIN_NAMES_H */
