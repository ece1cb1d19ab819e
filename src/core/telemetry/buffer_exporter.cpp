/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Placeholder until the shared-memory ring lands: BUFFER reports NOT_SUPPORTED at create.
#include "buffer_exporter.h"

namespace {

nixl_plugin_status_t
createBuffer(const nixl_telemetry_exporter_init_params_t *, nixl_telemetry_exporter_t **) {
    return NIXL_PLUGIN_ERR_NOT_SUPPORTED;
}

void
destroyBuffer(nixl_telemetry_exporter_t *) {}

nixl_plugin_status_t
exportBuffer(nixl_telemetry_exporter_t *, const nixl_telemetry_event_abi_t *, size_t) {
    return NIXL_PLUGIN_ERR_NOT_SUPPORTED;
}

constexpr nixl_telemetry_exporter_ops_t kOps = {
    sizeof(nixl_telemetry_exporter_ops_t), &createBuffer, &destroyBuffer, nullptr, &exportBuffer,
    nullptr};

} // namespace

const nixl_telemetry_exporter_ops_t *
nixlBufferExporterOps() noexcept {
    return &kOps;
}
