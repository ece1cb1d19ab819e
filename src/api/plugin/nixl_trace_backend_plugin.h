/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * File: nixl_trace_backend_plugin.h
 *
 * The C ABI between libnixl and a trace backend plugin (libtrace_backend_<name>.so). Version 1
 * fixes the entry point, the file prefix and the descriptor header, which is all the plugin
 * loader reads; the span operations table is appended by the tracing work and bumps
 * NIXL_TRACE_BACKEND_ABI_VERSION.
 *
 * Includable from C99 and C++.
 */
#ifndef NIXL_TRACE_BACKEND_PLUGIN_H
#define NIXL_TRACE_BACKEND_PLUGIN_H

#include "nixl_plugin_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIXL_TRACE_BACKEND_ABI_VERSION 1u
#define NIXL_TRACE_BACKEND_PLUGIN_ENTRY "nixl_trace_backend_plugin_get"
#define NIXL_TRACE_BACKEND_PLUGIN_PREFIX "libtrace_backend_"

typedef struct nixl_trace_backend_plugin {
    nixl_plugin_header_t hdr; /* kind NIXL_PLUGIN_KIND_TRACE_BACKEND */
} nixl_trace_backend_plugin_t;

typedef const nixl_trace_backend_plugin_t *(*nixl_trace_backend_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NIXL_TRACE_BACKEND_PLUGIN_H */
