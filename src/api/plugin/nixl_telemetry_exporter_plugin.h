/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * File: nixl_telemetry_exporter_plugin.h
 *
 * The C ABI between libnixl and a telemetry exporter plugin (libtelemetry_exporter_<name>.so,
 * selected by NIXL_TELEMETRY_EXPORTER=<name>).
 *
 * Model: each agent with telemetry on owns one exporter instance. The agent's flush thread, and
 * only that thread, calls batch_begin, export_events (any number of times) and batch_end on it
 * every NIXL_TELEMETRY_RUN_INTERVAL ms. Several agents in one process mean several instances of
 * the same plugin, driven from several flush threads at once: state shared between instances
 * (an HTTP endpoint, a registry) must be locked by the plugin. create and destroy are called
 * from the thread constructing or destroying the agent.
 *
 * Event types are not compiled into the plugin. Core passes the table of types it emits
 * (nixl_telemetry_event_info_t) at create time, so core can add types (the table grows, the
 * "events dropped" type stays last) without breaking a plugin built against an older table: a
 * plugin names metrics from info->name and info->category and ignores categories it does not
 * know.
 *
 * Versioning: any change to a struct or table in this file bumps
 * NIXL_TELEMETRY_EXPORTER_ABI_VERSION, and core loads only plugins built with exactly its
 * version. Structs start with their size so that fields can be appended within a version
 * family. History: 1 = header only (loader tests), 2 = operations table and event table,
 * 3 = event table of 22 rows: agent_trace_phases_dropped inserted at 20, "events dropped" moved
 * from 20 to 21 (a plugin that followed the table is unaffected, but one that keyed anything on
 * the old numbers is not, so plugins are rebuilt rather than trusted).
 *
 * Includable from C99 and C++.
 */
#ifndef NIXL_TELEMETRY_EXPORTER_PLUGIN_H
#define NIXL_TELEMETRY_EXPORTER_PLUGIN_H

#include "nixl_plugin_common.h"
#include "nixl_xfer_path.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIXL_TELEMETRY_EXPORTER_ABI_VERSION 3u
#define NIXL_TELEMETRY_EXPORTER_PLUGIN_ENTRY "nixl_telemetry_exporter_plugin_get"
#define NIXL_TELEMETRY_EXPORTER_PLUGIN_PREFIX "libtelemetry_exporter_"

/*
 * One telemetry event: 16 bytes, the same layout as the C++ nixlTelemetryEvent (type, 4 bytes of
 * padding, value), so core hands its staging buffer to the plugin without copying.
 */
typedef struct nixl_telemetry_event_abi {
    uint32_t type; /* index into the event table passed at create time */
    /* Zero, except for the transfer bytes and request events: their data path and fallback
     * reason (issue 34, no version bump: older exporters ignore it); see nixl_xfer_path.h. */
    uint32_t reserved;
    uint64_t value; /* bytes, count, or microseconds, by category */
} nixl_telemetry_event_abi_t;

/* What an event's value means, and so how an exporter aggregates it. */
typedef enum nixl_telemetry_event_category {
    NIXL_TELEMETRY_CAT_BYTES = 1, /* value in bytes; counter (sum) and last-value gauge */
    NIXL_TELEMETRY_CAT_COUNT = 2, /* value is a count; counter (sum) */
    NIXL_TELEMETRY_CAT_DURATION_US = 3, /* value in microseconds; histogram, sum, last value */
    NIXL_TELEMETRY_CAT_ERROR = 4, /* value is a count of errors with status_label */
    NIXL_TELEMETRY_CAT_DROPPED = 5 /* value is a count of events lost before the exporter */
} nixl_telemetry_event_category_t;

/* One row of the event table: type == its index in the table. */
typedef struct nixl_telemetry_event_info {
    uint32_t type;
    uint32_t category; /* nixl_telemetry_event_category_t */
    const char *name; /* NIXL 1.4 base name, e.g. "agent_tx_bytes", "agent_err_backend" */
    const char *status_label; /* for CAT_ERROR: "backend", "not_found", ...; else NULL */
    const char *help; /* one line for HELP text */
} nixl_telemetry_event_info_t;

typedef struct nixl_telemetry_exporter nixl_telemetry_exporter_t; /* opaque, plugin-owned */

typedef struct nixl_telemetry_exporter_init_params {
    size_t size; /* sizeof(nixl_telemetry_exporter_init_params_t) as core built it */
    const nixl_plugin_core_services_t *core; /* logging; valid for the life of the process */
    nixl_plugin_str_t agent_name; /* the agent's name, any bytes */
    size_t max_events_buffered; /* NIXL_TELEMETRY_BUFFER_SIZE */
    const nixl_telemetry_event_info_t *event_types; /* valid until destroy */
    uint32_t event_type_count;
    uint32_t reserved; /* zero */
} nixl_telemetry_exporter_init_params_t;

/*
 * Operations. Statuses are nixl_status_t values.
 *
 * create: NIXL_PLUGIN_SUCCESS with *out set; NIXL_PLUGIN_ERR_NOT_ALLOWED when the exporter cannot
 *     run here but the agent should go on without it (e.g. its port is taken by another process;
 *     core logs a warning and runs without exporting); any other error fails agent construction.
 *     The plugin logs the cause first, naming the variable and value at fault.
 * export_events: events in the order they happened. A non-success status is counted by core as
 *     lost events; the plugin must not keep the pointer.
 * batch_begin / batch_end: bracket one flush, so a plugin can take its lock or publish once per
 *     flush. May be NULL.
 * destroy: frees the instance; after it returns no plugin thread touches core services.
 */
typedef struct nixl_telemetry_exporter_ops {
    size_t size; /* sizeof(nixl_telemetry_exporter_ops_t) as the plugin built it */
    nixl_plugin_status_t (*create)(const nixl_telemetry_exporter_init_params_t *params,
                                   nixl_telemetry_exporter_t **out);
    void (*destroy)(nixl_telemetry_exporter_t *exporter);
    void (*batch_begin)(nixl_telemetry_exporter_t *exporter);
    nixl_plugin_status_t (*export_events)(nixl_telemetry_exporter_t *exporter,
                                          const nixl_telemetry_event_abi_t *events,
                                          size_t count);
    void (*batch_end)(nixl_telemetry_exporter_t *exporter);
} nixl_telemetry_exporter_ops_t;

typedef struct nixl_telemetry_exporter_plugin {
    nixl_plugin_header_t hdr; /* kind NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER */
    const nixl_telemetry_exporter_ops_t *ops;
} nixl_telemetry_exporter_plugin_t;

typedef const nixl_telemetry_exporter_plugin_t *(*nixl_telemetry_exporter_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NIXL_TELEMETRY_EXPORTER_PLUGIN_H */
