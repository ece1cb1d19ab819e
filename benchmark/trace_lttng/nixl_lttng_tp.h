/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * LTTng-UST tracepoint provider "nixl_trace" of the benchmark's LTTng trace plugin
 * (trace_lttng_bench, benchmark/README.md). It records what the chrome plugin's calling thread
 * records: ids, times, kind, the name as its create-time table id and the attributes as one
 * binary blob; the tables go out once per agent as "name" and "key" events, so the trace can
 * be decoded without per-event strings. Included twice by design (LTTng-UST's scheme): no
 * ordinary include guard.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER nixl_trace

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./nixl_lttng_tp.h"

#if !defined(NIXL_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define NIXL_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

/* A name of the agent's create-time table (names[id]); dynamic names travel in the events. */
LTTNG_UST_TRACEPOINT_EVENT(nixl_trace, name,
    LTTNG_UST_TP_ARGS(const char *, agent, uint32_t, id, const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(agent, agent)
        lttng_ust_field_integer(uint32_t, id, id)
        lttng_ust_field_string(name, name)))

/* An attribute key of the agent's create-time key table (keys[id]). */
LTTNG_UST_TRACEPOINT_EVENT(nixl_trace, key,
    LTTNG_UST_TP_ARGS(const char *, agent, uint32_t, id, const char *, key),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(agent, agent)
        lttng_ust_field_integer(uint32_t, id, id)
        lttng_ust_field_string(key, key)))

/* A span (written when it ends). dyn_name is "" when name_id is in the table. */
LTTNG_UST_TRACEPOINT_EVENT(nixl_trace, span,
    LTTNG_UST_TP_ARGS(uint32_t, name_id, uint32_t, kind, const char *, dyn_name,
                      uint64_t, span_id, uint64_t, parent_id, uint64_t, correlation_id,
                      uint64_t, begin_ns, uint64_t, end_ns,
                      const uint8_t *, attrs, uint16_t, attrs_len),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, name_id, name_id)
        lttng_ust_field_integer(uint32_t, kind, kind)
        lttng_ust_field_string(dyn_name, dyn_name)
        lttng_ust_field_integer(uint64_t, span_id, span_id)
        lttng_ust_field_integer(uint64_t, parent_id, parent_id)
        lttng_ust_field_integer_hex(uint64_t, correlation_id, correlation_id)
        lttng_ust_field_integer(uint64_t, begin_ns, begin_ns)
        lttng_ust_field_integer(uint64_t, end_ns, end_ns)
        lttng_ust_field_sequence(uint8_t, attrs, attrs, uint16_t, attrs_len)))

/* An instant: a completion or a backend phase. */
LTTNG_UST_TRACEPOINT_EVENT(nixl_trace, mark,
    LTTNG_UST_TP_ARGS(uint32_t, name_id, uint32_t, kind, const char *, dyn_name,
                      uint64_t, parent_id, uint64_t, correlation_id, uint64_t, time_ns,
                      const uint8_t *, attrs, uint16_t, attrs_len),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, name_id, name_id)
        lttng_ust_field_integer(uint32_t, kind, kind)
        lttng_ust_field_string(dyn_name, dyn_name)
        lttng_ust_field_integer(uint64_t, parent_id, parent_id)
        lttng_ust_field_integer_hex(uint64_t, correlation_id, correlation_id)
        lttng_ust_field_integer(uint64_t, time_ns, time_ns)
        lttng_ust_field_sequence(uint8_t, attrs, attrs, uint16_t, attrs_len)))

#endif /* NIXL_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
