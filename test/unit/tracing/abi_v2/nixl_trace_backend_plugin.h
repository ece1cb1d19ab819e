/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * FROZEN COPY of src/api/plugin/nixl_trace_backend_plugin.h at trace backend ABI version 2, the
 * version before the current one. Do not update it: it builds libtrace_backend_previous.so, a
 * real version-2 plugin binary that the loader must refuse (tracing_agent_test.cpp).
 *
 * File: nixl_trace_backend_plugin.h
 *
 * The C ABI between libnixl and a trace backend plugin (libtrace_backend_<name>.so): NVTX for
 * Nsight Systems, a Trace Event Format file for Perfetto, or anything else that wants the
 * agent's spans. Core owns the clock, span ids, nesting and correlation ids; a plugin only
 * turns the events it receives into its tool's records, so every plugin sees the same
 * timeline and a plugin needs no per-span state of its own.
 *
 * Contract, for every call below:
 *  - Strings, attributes and event structs are borrowed for the call only; copy what you keep.
 *  - Calls for one plugin instance come from any thread of the agent, concurrently; a span's
 *    span_begin and span_end come from the same thread, properly nested per thread.
 *  - Event callbacks return nothing and must not block: they run on the transfer path. A
 *    plugin that cannot keep up drops (and counts) events. A plugin never throws or longjmps
 *    across this boundary.
 *  - create() failing (a status other than NIXL_PLUGIN_SUCCESS) is logged once by core; the
 *    agent then runs without this plugin. NIXL_PLUGIN_ERR_NOT_ALLOWED means "declined, nothing
 *    to do for this agent" (e.g. NVTX with no tool attached): logged at INFO, not as an error.
 *
 * Version history (NIXL_TRACE_BACKEND_ABI_VERSION; core loads only an exact match):
 *   1  descriptor header only (no operations); never loaded by any release.
 *   2  ops table: create/destroy, span_begin/span_end/mark with typed attributes, a span-name
 *      table passed at create for up-front registration, per-request correlation ids.
 *
 * Includable from C99 and C++.
 */
#ifndef NIXL_TRACE_BACKEND_PLUGIN_H
#define NIXL_TRACE_BACKEND_PLUGIN_H

#include "nixl_plugin_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIXL_TRACE_BACKEND_ABI_VERSION 2u
#define NIXL_TRACE_BACKEND_PLUGIN_ENTRY "nixl_trace_backend_plugin_get"
#define NIXL_TRACE_BACKEND_PLUGIN_PREFIX "libtrace_backend_"

/* What a span or mark represents; NIXL 1.4's nixl::trace::Kind, same order and values. */
typedef enum nixl_trace_kind {
    NIXL_TRACE_KIND_GENERIC = 0,
    NIXL_TRACE_KIND_COMPUTE = 1,
    NIXL_TRACE_KIND_MEMORY_R = 2,
    NIXL_TRACE_KIND_MEMORY_W = 3,
    NIXL_TRACE_KIND_COMM_SEND = 4,
    NIXL_TRACE_KIND_COMM_RECV = 5,
    NIXL_TRACE_KIND_COMM_COLL = 6,
    NIXL_TRACE_KIND_METADATA = 7,
    NIXL_TRACE_KIND_COUNT = 8 /* number of kinds; a plugin treats larger values as GENERIC */
} nixl_trace_kind_t;

typedef enum nixl_trace_attr_type {
    NIXL_TRACE_ATTR_INT64 = 1,
    NIXL_TRACE_ATTR_DOUBLE = 2,
    NIXL_TRACE_ATTR_STRING = 3 /* any bytes, not NUL-terminated */
} nixl_trace_attr_type_t;

/* One typed attribute ("remote_agent" = "target", "bytes" = 4096, ...). */
typedef struct nixl_trace_attr {
    const char *key; /* NUL-terminated, ASCII identifier */
    uint32_t type; /* nixl_trace_attr_type_t; a plugin skips types it does not know */
    uint32_t reserved; /* zero */
    union {
        int64_t i64;
        double f64;
        nixl_plugin_str_t str;
    } value;
} nixl_trace_attr_t;

/*
 * A name core will use for spans and marks, passed once at create so that a plugin can
 * register it with its tool up front (NVTX registered strings) instead of per event.
 */
typedef struct nixl_trace_name {
    uint32_t id; /* the index of this entry in the table */
    uint32_t kind; /* the nixl_trace_kind_t core uses with this name */
    const char *name; /* NUL-terminated, e.g. "nixl::postXferReq.write" */
} nixl_trace_name_t;

/* name_id of an event whose name is not in the table; the plugin uses event->name. */
#define NIXL_TRACE_NAME_DYNAMIC 0xffffffffu

/*
 * One span boundary or one mark. span_begin receives the attributes known when the call
 * starts; span_end receives every attribute of the span (those of the begin first, then those
 * added while it ran), with begin_ns and end_ns both set, so a plugin that writes complete
 * events needs only span_end and one that pushes ranges can attach attributes at the push.
 */
typedef struct nixl_trace_event {
    size_t size; /* sizeof(nixl_trace_event_t) as core built it */
    uint32_t name_id; /* index into the create-time name table, or NIXL_TRACE_NAME_DYNAMIC */
    uint32_t kind; /* nixl_trace_kind_t */
    const char *name; /* NUL-terminated; always set, equal to the table's name when listed */
    uint64_t span_id; /* non-zero, unique in the process; 0 for a mark */
    uint64_t parent_span_id; /* the enclosing span on this thread, or 0 */
    uint64_t correlation_id; /* the request this belongs to (e.g. a transfer handle), or 0 */
    uint64_t begin_ns; /* CLOCK_MONOTONIC nanoseconds; for a mark, its time */
    uint64_t end_ns; /* CLOCK_MONOTONIC nanoseconds; 0 in span_begin and mark */
    const nixl_trace_attr_t *attrs;
    size_t attr_count;
} nixl_trace_event_t;

typedef struct nixl_trace_backend nixl_trace_backend_t; /* opaque, plugin-owned */

typedef struct nixl_trace_backend_init_params {
    size_t size; /* sizeof(nixl_trace_backend_init_params_t) as core built it */
    const nixl_plugin_core_services_t *core; /* logging, options; valid for the process */
    nixl_plugin_str_t agent_name; /* the agent's name, any bytes */
    const nixl_trace_name_t *names; /* valid until destroy */
    uint32_t name_count;
    uint32_t reserved; /* zero */
} nixl_trace_backend_init_params_t;

typedef struct nixl_trace_backend_ops {
    size_t size; /* sizeof(nixl_trace_backend_ops_t) as the plugin built it */
    /* One instance per agent. */
    nixl_plugin_status_t (*create)(const nixl_trace_backend_init_params_t *params,
                                   nixl_trace_backend_t **out);
    /* No event call for this instance runs during or after destroy. Flushes what it holds. */
    void (*destroy)(nixl_trace_backend_t *backend);
    void (*span_begin)(nixl_trace_backend_t *backend, const nixl_trace_event_t *event);
    void (*span_end)(nixl_trace_backend_t *backend, const nixl_trace_event_t *event);
    void (*mark)(nixl_trace_backend_t *backend, const nixl_trace_event_t *event);
} nixl_trace_backend_ops_t;

typedef struct nixl_trace_backend_plugin {
    nixl_plugin_header_t hdr; /* kind NIXL_PLUGIN_KIND_TRACE_BACKEND */
    const nixl_trace_backend_ops_t *ops;
} nixl_trace_backend_plugin_t;

typedef const nixl_trace_backend_plugin_t *(*nixl_trace_backend_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NIXL_TRACE_BACKEND_PLUGIN_H */
