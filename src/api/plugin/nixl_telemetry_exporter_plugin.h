/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * File: nixl_telemetry_exporter_plugin.h
 *
 * The C ABI between libnixl and a telemetry exporter plugin
 * (libtelemetry_exporter_<name>.so). Version 1 fixes the entry point, the file prefix and the
 * descriptor header, which is all the plugin loader reads; the exporter operations table is
 * appended by the telemetry work and bumps NIXL_TELEMETRY_EXPORTER_ABI_VERSION.
 *
 * Includable from C99 and C++.
 */
#ifndef NIXL_TELEMETRY_EXPORTER_PLUGIN_H
#define NIXL_TELEMETRY_EXPORTER_PLUGIN_H

#include "nixl_plugin_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIXL_TELEMETRY_EXPORTER_ABI_VERSION 1u
#define NIXL_TELEMETRY_EXPORTER_PLUGIN_ENTRY "nixl_telemetry_exporter_plugin_get"
#define NIXL_TELEMETRY_EXPORTER_PLUGIN_PREFIX "libtelemetry_exporter_"

typedef struct nixl_telemetry_exporter_plugin {
    nixl_plugin_header_t hdr; /* kind NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER */
} nixl_telemetry_exporter_plugin_t;

typedef const nixl_telemetry_exporter_plugin_t *(*nixl_telemetry_exporter_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NIXL_TELEMETRY_EXPORTER_PLUGIN_H */
