/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* libtelemetry_exporter_dummy.so: a valid telemetry exporter of ABI version 1 that does nothing. */
#include "nixl_telemetry_exporter_plugin.h"

static const nixl_telemetry_exporter_plugin_t dummy_exporter = {
    .hdr = {.abi_version = NIXL_TELEMETRY_EXPORTER_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER,
            .size = sizeof(nixl_telemetry_exporter_plugin_t),
            .name = "dummy",
            .version = "0.0.1"},
};

__attribute__((visibility("default"))) const nixl_telemetry_exporter_plugin_t *
nixl_telemetry_exporter_plugin_get(void) {
    return &dummy_exporter;
}
