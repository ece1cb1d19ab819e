/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtelemetry_exporter_dummy.so: a valid telemetry exporter of the current ABI version, written
 * in plain C, that accepts every event and keeps none.
 */
#include "nixl_telemetry_exporter_plugin.h"

static char dummy_instance;

static nixl_plugin_status_t
dummy_create(const nixl_telemetry_exporter_init_params_t *params,
             nixl_telemetry_exporter_t **out) {
    (void)params;
    *out = (nixl_telemetry_exporter_t *)&dummy_instance;
    return NIXL_PLUGIN_SUCCESS;
}

static void
dummy_destroy(nixl_telemetry_exporter_t *exporter) {
    (void)exporter;
}

static nixl_plugin_status_t
dummy_export(nixl_telemetry_exporter_t *exporter,
             const nixl_telemetry_event_abi_t *events,
             size_t count) {
    (void)exporter;
    (void)events;
    (void)count;
    return NIXL_PLUGIN_SUCCESS;
}

static const nixl_telemetry_exporter_ops_t dummy_ops = {
    .size = sizeof(nixl_telemetry_exporter_ops_t),
    .create = dummy_create,
    .destroy = dummy_destroy,
    .batch_begin = NULL,
    .export_events = dummy_export,
    .batch_end = NULL,
};

static const nixl_telemetry_exporter_plugin_t dummy_exporter = {
    .hdr = {.abi_version = NIXL_TELEMETRY_EXPORTER_ABI_VERSION,
            .kind = NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER,
            .size = sizeof(nixl_telemetry_exporter_plugin_t),
            .name = "dummy",
            .version = "0.0.1"},
    .ops = &dummy_ops,
};

__attribute__((visibility("default"))) const nixl_telemetry_exporter_plugin_t *
nixl_telemetry_exporter_plugin_get(void) {
    return &dummy_exporter;
}
