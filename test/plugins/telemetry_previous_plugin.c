/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtelemetry_exporter_previous.so: a telemetry exporter built for the ABI version before the
 * current one (2, whose event table put "events dropped" at 20), to show that a plugin built
 * before a renumbering of the table is refused rather than fed types it would misname.
 */
#include "nixl_telemetry_exporter_plugin.h"

static const nixl_telemetry_exporter_plugin_t previous_exporter = {
    .hdr = {.abi_version = NIXL_TELEMETRY_EXPORTER_ABI_VERSION - 1u,
            .kind = NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER,
            .size = sizeof(nixl_telemetry_exporter_plugin_t),
            .name = "previous",
            .version = "0.0.2"},
};

__attribute__((visibility("default"))) const nixl_telemetry_exporter_plugin_t *
nixl_telemetry_exporter_plugin_get(void) {
    return &previous_exporter;
}
