/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtelemetry_exporter_stale.so: a telemetry exporter built for ABI version 0, to show that
 * version checking is the same mechanism for every plugin kind.
 */
#include "nixl_telemetry_exporter_plugin.h"

static const nixl_telemetry_exporter_plugin_t stale_exporter = {
    .hdr = {.abi_version = 0u,
            .kind = NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER,
            .size = sizeof(nixl_telemetry_exporter_plugin_t),
            .name = "stale",
            .version = "0.0.1"},
};

__attribute__((visibility("default"))) const nixl_telemetry_exporter_plugin_t *
nixl_telemetry_exporter_plugin_get(void) {
    return &stale_exporter;
}
