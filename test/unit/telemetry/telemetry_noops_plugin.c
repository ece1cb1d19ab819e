/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtelemetry_exporter_noops.so: a telemetry exporter the loader accepts (right kind, version
 * and name) but whose operations table is missing; core must refuse it when an agent selects it.
 */
#include "nixl_telemetry_exporter_plugin.h"

static const nixl_telemetry_exporter_plugin_t noops_exporter = {
    .hdr = {.abi_version = NIXL_TELEMETRY_EXPORTER_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER,
            .size = sizeof(nixl_telemetry_exporter_plugin_t),
            .name = "noops",
            .version = "0.0.1"},
    .ops = NULL,
};

__attribute__((visibility("default"))) const nixl_telemetry_exporter_plugin_t *
nixl_telemetry_exporter_plugin_get(void) {
    return &noops_exporter;
}
