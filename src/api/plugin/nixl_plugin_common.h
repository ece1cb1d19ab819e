/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * File: nixl_plugin_common.h
 *
 * Pieces of the plugin C ABI shared by every plugin kind (data backends, telemetry exporters,
 * trace backends): the descriptor header every plugin exports, strings, key/value pairs, output
 * sinks and the core services (logging, configuration lookup) that core hands to a plugin.
 *
 * Rules that keep the boundary stable:
 *  - Only C types cross. No C++ object, exception or vtable, and no allocator: memory a plugin
 *    returns to core goes through a core-provided sink, memory core hands in is borrowed for the
 *    duration of the call.
 *  - Every struct that may grow starts with its size (or, for the plugin header, a frozen pair of
 *    abi_version and kind), so a reader can tell how much of it the writer knew.
 *  - Status values are those of nixl_status_t (nixl_types.h): 0 success, 1 in progress,
 *    negative errors.
 *
 * Includable from C99 and C++.
 */
#ifndef NIXL_PLUGIN_COMMON_H
#define NIXL_PLUGIN_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values of nixl_status_t, for plugins written in C. */
typedef int32_t nixl_plugin_status_t;
#define NIXL_PLUGIN_IN_PROG 1
#define NIXL_PLUGIN_SUCCESS 0
#define NIXL_PLUGIN_ERR_NOT_POSTED (-1)
#define NIXL_PLUGIN_ERR_INVALID_PARAM (-2)
#define NIXL_PLUGIN_ERR_BACKEND (-3)
#define NIXL_PLUGIN_ERR_NOT_FOUND (-4)
#define NIXL_PLUGIN_ERR_MISMATCH (-5)
#define NIXL_PLUGIN_ERR_NOT_ALLOWED (-6)
#define NIXL_PLUGIN_ERR_REPOST_ACTIVE (-7)
#define NIXL_PLUGIN_ERR_UNKNOWN (-8)
#define NIXL_PLUGIN_ERR_NOT_SUPPORTED (-9)
#define NIXL_PLUGIN_ERR_REMOTE_DISCONNECT (-10)
#define NIXL_PLUGIN_ERR_CANCELED (-11)
#define NIXL_PLUGIN_ERR_NO_TELEMETRY (-12)

/* Plugin kinds; each has its own ABI version, entry symbol and file-name prefix. */
typedef enum nixl_plugin_kind {
    NIXL_PLUGIN_KIND_BACKEND = 1,
    NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER = 2,
    NIXL_PLUGIN_KIND_TRACE_BACKEND = 3
} nixl_plugin_kind_abi_t;

/*
 * First member of every plugin descriptor. abi_version and kind sit at offsets 0 and 4 in every
 * ABI version of every kind, so the loader can read them from a plugin of any age before it
 * trusts anything else in the descriptor.
 */
typedef struct nixl_plugin_header {
    uint32_t abi_version; /* the kind's NIXL_*_ABI_VERSION the plugin was built with */
    uint32_t kind; /* a nixl_plugin_kind_abi_t */
    size_t size; /* sizeof the whole kind-specific descriptor */
    const char *name; /* NUL-terminated, e.g. "UCX"; must match the file name */
    const char *version; /* NUL-terminated plugin release, e.g. "1.0.0" */
} nixl_plugin_header_t;

/* A borrowed string: not NUL-terminated, may contain NUL bytes. */
typedef struct nixl_plugin_str {
    const char *data;
    size_t len;
} nixl_plugin_str_t;

typedef struct nixl_plugin_kv {
    nixl_plugin_str_t key;
    nixl_plugin_str_t value;
} nixl_plugin_kv_t;

/*
 * Where a plugin writes variable-size output (connection info, public metadata). append may be
 * called several times; the bytes are concatenated. It copies, so the plugin's buffer may be
 * freed after the call.
 */
typedef struct nixl_plugin_bytes_sink {
    void *ctx;
    nixl_plugin_status_t (*append)(void *ctx, const void *data, size_t len);
} nixl_plugin_bytes_sink_t;

/* Where a plugin writes key/value output (default options, effective parameters). Copies. */
typedef struct nixl_plugin_kv_sink {
    void *ctx;
    nixl_plugin_status_t (*put)(void *ctx, nixl_plugin_str_t key, nixl_plugin_str_t value);
} nixl_plugin_kv_sink_t;

/* Log levels, same order as NIXL_LOG_LEVEL. */
typedef enum nixl_plugin_log_level {
    NIXL_PLUGIN_LOG_TRACE = 0,
    NIXL_PLUGIN_LOG_DEBUG = 1,
    NIXL_PLUGIN_LOG_INFO = 2,
    NIXL_PLUGIN_LOG_WARN = 3,
    NIXL_PLUGIN_LOG_ERROR = 4,
    NIXL_PLUGIN_LOG_FATAL = 5
} nixl_plugin_log_level_t;

/*
 * Services core offers a plugin. Passed by pointer in the kind's init parameters and valid until
 * the plugin object it was given to is destroyed. Fields may be appended: check size before
 * reading a field past the ones listed here.
 */
/* Backend trace types used by nixl_plugin_core_services_t.record_phases (nixl_backend_plugin.h). */
struct nixl_be_trace_sink;
struct nixl_be_trace_ctx;
struct nixl_be_trace_phase_rec;

typedef struct nixl_plugin_core_services {
    size_t size; /* sizeof(nixl_plugin_core_services_t) as core built it */
    void *ctx; /* passed back to every callback */
    /* One log line (no trailing newline needed), prefixed by core with the plugin's name. */
    void (*log)(void *ctx, int32_t level, const char *msg, size_t len);
    /* Non-zero when a line at this level would be written; lets plugins skip formatting. */
    int32_t (*log_enabled)(void *ctx, int32_t level);
    /*
     * Appended after log_enabled (no ABI version bump: this struct only grows, and a plugin
     * checks size before calling it; with an older core the field is absent).
     * Looks up the option `name` (name_len bytes, e.g. "NIXL_TELEMETRY_PROMETHEUS_PORT") the way
     * core reads its own options: the environment first, else the configuration file
     * (NIXL_CONFIG_FILE, else $HOME/.nixl.cfg, else /etc/nixl.cfg). An empty environment
     * value counts as unset. Writes the raw value (text, no NUL) through value and, when
     * origin is not NULL, where it came from ("environment" or "<file>:<line>") through origin.
     * Returns NIXL_PLUGIN_SUCCESS; NIXL_PLUGIN_ERR_NOT_FOUND when the option is set nowhere;
     * NIXL_PLUGIN_ERR_INVALID_PARAM for a NULL argument or when the configuration file cannot
     * be read (core logged why). Thread-safe; the file is read once per process.
     */
    nixl_plugin_status_t (*get_config)(void *ctx,
                                       const char *name,
                                       size_t name_len,
                                       const nixl_plugin_bytes_sink_t *value,
                                       const nixl_plugin_bytes_sink_t *origin);
    /*
     * Appended after get_config (no ABI version bump, as above; backend plugins only, NULL in
     * the services of other kinds and with an older core: then record each phase through
     * sink->record_phase). Records n trace phases of one backend in one call: what
     * sink->record_phase does for each record, in order, with shared work done once. Every
     * record whose timestamp_us is 0 gets the same time: one read of core's trace clock
     * taken during this call (so batch only phases that happened within a microsecond or so
     * of the call, e.g. those of a post that completed inline). sink is the engine's
     * nixl_be_init_params_t.trace_sink (a sink core did not make is ignored); trace and recs
     * are borrowed for the call; rec_size is sizeof(nixl_be_trace_phase_rec_t) as the plugin
     * built it (the records' stride; a smaller one than core knows drops the batch, counted).
     * Any thread; never fails the caller; a record that cannot be recorded is dropped and
     * counted like a single phase. Declared in nixl_backend_plugin.h: the struct tags below.
     */
    void (*record_phases)(void *ctx,
                          const struct nixl_be_trace_sink *sink,
                          const struct nixl_be_trace_ctx *trace,
                          const struct nixl_be_trace_phase_rec *recs,
                          size_t rec_size,
                          size_t n);
} nixl_plugin_core_services_t;

#ifdef __cplusplus
}
#endif

#endif /* NIXL_PLUGIN_COMMON_H */
