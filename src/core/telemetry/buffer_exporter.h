/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file buffer_exporter.h
 * @brief The built-in BUFFER exporter: writes each event into the shared-memory ring
 *        $NIXL_TELEMETRY_DIR/<agent name> (layout: docs/telemetry-ring.md).
 *
 * Built into libnixl but driven through the same C operations table as a loaded exporter
 * plugin, so core has one code path for both.
 */
#ifndef NIXL_CORE_TELEMETRY_BUFFER_EXPORTER_H
#define NIXL_CORE_TELEMETRY_BUFFER_EXPORTER_H

#include "nixl_telemetry_exporter_plugin.h"

/** The BUFFER exporter's operations; static storage, never null. */
const nixl_telemetry_exporter_ops_t *
nixlBufferExporterOps() noexcept;

#endif // NIXL_CORE_TELEMETRY_BUFFER_EXPORTER_H
