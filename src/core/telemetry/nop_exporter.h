/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nop_exporter.h
 * @brief The built-in NOP exporter: accepts every event and keeps none. The default when
 *        neither NIXL_TELEMETRY_EXPORTER nor NIXL_TELEMETRY_DIR is set, so telemetry costs
 *        only the staging queue and the flush thread. Driven through the same C operations
 *        table as a plugin. Stateless: thread-safe.
 */
#ifndef NIXL_SRC_CORE_TELEMETRY_NOP_EXPORTER_H
#define NIXL_SRC_CORE_TELEMETRY_NOP_EXPORTER_H

#include "nixl_telemetry_exporter_plugin.h"

/** The NOP exporter's operations; static storage, never null. */
const nixl_telemetry_exporter_ops_t *
nixlNopExporterOps() noexcept;

#endif // NIXL_SRC_CORE_TELEMETRY_NOP_EXPORTER_H
