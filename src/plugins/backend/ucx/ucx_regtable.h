/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_regtable.h
 * @brief The UCX engine's registration table and deregistration fence: the shared
 *        implementation in src/utils/regtable/reg_table.h (design and correctness argument
 *        there), under the names this plugin has always used. Tables are created with tag "ucx"
 *        (ucx_reg_table_tag), so their names stay "/nixl-ucx-" and 32 hex digits.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REGTABLE_H
#define NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REGTABLE_H

#include "reg_table.h"
#include "ucx_utils.h"

namespace nixlUcx {

using nixlUcxRegTable = nixlReg::nixlRegTable;
using nixlReg::reg_table_header_bytes;
using nixlReg::reg_table_magic;
using nixlReg::reg_table_marks;
using nixlReg::reg_table_readers;
using nixlReg::reg_table_version;
using nixlReg::regTableHeader;
using nixlReg::regTableReader;

inline constexpr const char *ucx_reg_table_tag = "ucx";

} // namespace nixlUcx

#endif // NIXL_SRC_PLUGINS_BACKEND_UCX_UCX_REGTABLE_H
