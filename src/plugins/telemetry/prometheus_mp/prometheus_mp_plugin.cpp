/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file prometheus_mp_plugin.cpp
 * @brief Exports nixlPrometheusMpExporter as libtelemetry_exporter_prometheus_mp.so; kept apart
 *        from the exporter so tests can link the classes without a second entry symbol.
 */
#include "mp_exporter.h"

NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE(nixlPromMp::nixlPrometheusMpExporter,
                                      "prometheus_mp",
                                      "1.0.0")
