/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "telemetry/nop_exporter.h"

namespace {

// Instances carry no state; every agent gets the address of this one byte.
char nopInstance;

nixl_plugin_status_t
nopCreate(const nixl_telemetry_exporter_init_params_t *, nixl_telemetry_exporter_t **out) {
    if (out == nullptr) {
        return NIXL_PLUGIN_ERR_INVALID_PARAM;
    }
    *out = reinterpret_cast<nixl_telemetry_exporter_t *>(&nopInstance);
    return NIXL_PLUGIN_SUCCESS;
}

void
nopDestroy(nixl_telemetry_exporter_t *) {}

nixl_plugin_status_t
nopExport(nixl_telemetry_exporter_t *, const nixl_telemetry_event_abi_t *, size_t) {
    return NIXL_PLUGIN_SUCCESS;
}

constexpr nixl_telemetry_exporter_ops_t kNopOps = {
    sizeof(nixl_telemetry_exporter_ops_t), &nopCreate, &nopDestroy, nullptr, &nopExport, nullptr};

} // namespace

const nixl_telemetry_exporter_ops_t *
nixlNopExporterOps() noexcept {
    return &kNopOps;
}
