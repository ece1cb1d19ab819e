/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Trace backends that core must refuse or survive, one library per variant (TRACE_BAD_*):
 *   STALE      ABI version 1            -> loader refuses, naming versions 1 and 3
 *   FUTURE     ABI version 4            -> loader refuses, naming versions 4 and 3
 *   WRONGKIND  header says backend kind -> loader refuses
 *   NOENTRY    no entry symbol          -> loader refuses
 *   SHORTOPS   ops->size too small      -> core refuses
 *   NOOPS      no operations table      -> core refuses
 *   FAILCREATE create() returns an error without logging -> core logs it once
 *   NOP        valid, event callbacks that do nothing: core's own cost of tracing, for
 *              benchmark/agent_overhead (put it in a NIXL_PLUGIN_DIR next to libplugin_TEST.so)
 *   NOPEND     NOP without span_begin (what the chrome plugin implements): core's share of
 *              the chrome plugin's figure in benchmark/agent_overhead
 * Plain C, no SDK: the failure modes a C plugin can have. Built once more against the frozen
 * version-2 header (abi_v2/) as libtrace_backend_previous.so (NOP variant): a real plugin of
 * the previous ABI version.
 */
#include <stddef.h>

#include "nixl_trace_backend_plugin.h"

#ifndef TRACE_BAD_NAME
#error "TRACE_BAD_NAME must be defined"
#endif

__attribute__((unused)) static int instance_storage;

static nixl_plugin_status_t
bad_create(const nixl_trace_backend_init_params_t *params, nixl_trace_backend_t **out) {
    (void)params;
#ifdef TRACE_BAD_FAILCREATE
    (void)out;
    return NIXL_PLUGIN_ERR_BACKEND;
#else
    *out = (nixl_trace_backend_t *)&instance_storage;
    return NIXL_PLUGIN_SUCCESS;
#endif
}

static void
bad_destroy(nixl_trace_backend_t *backend) {
    (void)backend;
}

#if defined(TRACE_BAD_NOP) || defined(TRACE_BAD_NOPEND)
static void
nop_event(nixl_trace_backend_t *backend, const nixl_trace_event_t *event) {
    (void)backend;
    (void)event;
}
#define EVENT_FN nop_event
#else
#define EVENT_FN NULL
#endif

__attribute__((unused)) static const nixl_trace_backend_ops_t bad_ops = {
#ifdef TRACE_BAD_SHORTOPS
    /* What a plugin built against a table that ended before mark would say. */
    .size = offsetof(nixl_trace_backend_ops_t, mark),
#else
    .size = sizeof(nixl_trace_backend_ops_t),
#endif
    .create = bad_create,
    .destroy = bad_destroy,
#ifdef TRACE_BAD_NOPEND
    .span_begin = NULL, /* as the chrome plugin: no begin event is built or sent */
#else
    .span_begin = EVENT_FN,
#endif
    .span_end = EVENT_FN,
    .mark = EVENT_FN,
};

#if defined(TRACE_BAD_STALE)
#define BAD_ABI 1u
#elif defined(TRACE_BAD_FUTURE)
#define BAD_ABI (NIXL_TRACE_BACKEND_ABI_VERSION + 1u)
#else
#define BAD_ABI NIXL_TRACE_BACKEND_ABI_VERSION
#endif

#ifdef TRACE_BAD_WRONGKIND
#define BAD_KIND NIXL_PLUGIN_KIND_BACKEND
#else
#define BAD_KIND NIXL_PLUGIN_KIND_TRACE_BACKEND
#endif

static const nixl_trace_backend_plugin_t bad_plugin = {
    .hdr = {.abi_version = BAD_ABI,
            .kind = BAD_KIND,
            .size = sizeof(nixl_trace_backend_plugin_t),
            .name = TRACE_BAD_NAME,
            .version = "0.0.1"},
#ifdef TRACE_BAD_NOOPS
    .ops = NULL,
#else
    .ops = &bad_ops,
#endif
};

#ifdef TRACE_BAD_NOENTRY
__attribute__((visibility("default"))) const nixl_trace_backend_plugin_t *
not_the_entry(void) {
    return &bad_plugin;
}
#else
__attribute__((visibility("default"))) const nixl_trace_backend_plugin_t *
nixl_trace_backend_plugin_get(void) {
    return &bad_plugin;
}
#endif
