/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * File: nixl_backend_plugin.h
 *
 * The C ABI between libnixl and a data-backend plugin (libplugin_<NAME>.so).
 *
 * A backend plugin exports one symbol, NIXL_BACKEND_PLUGIN_ENTRY, a function returning a pointer
 * to a static nixl_backend_plugin_t. Core reads its header, refuses the plugin unless
 * hdr.abi_version == NIXL_BACKEND_ABI_VERSION and hdr.kind == NIXL_PLUGIN_KIND_BACKEND, and
 * then calls create_engine once per agent backend. Every later call goes through ops with the
 * engine handle create_engine returned.
 *
 * Call contract (what core guarantees; see docs/BackendGuide.md for the full text):
 *  - createBackend: create_engine, then get_conn_info once if the engine supports remote
 *    transfers, and connect(own agent name) if it supports local ones.
 *  - registerMem: register_mem per descriptor, then load_local_md (local-capable engines) and
 *    get_public_data (remote-capable ones); any failure rolls back what was done.
 *  - loadRemoteMD: load_remote_conn_info once per (agent, engine) and load_remote_md per remote
 *    descriptor; invalidateRemoteMD: disconnect, then unload_md for each of them.
 *  - A transfer: prep_xfer once, post_xfer per (re)post, only when the request is not running,
 *    check_xfer until it returns something other than IN_PROG, release_req once. The descriptor
 *    arrays passed to post_xfer and check_xfer are the ones passed to prep_xfer (same addresses).
 *  - Calls on one engine are serialised by core except post_xfer, check_xfer, release_req,
 *    gen_notif and get_notifs, which may come from several threads at once when the agent runs
 *    in NIXL_THREAD_SYNC_RW mode (sync_mode in the init parameters says which), in any mix:
 *    get_notifs beside posts and beside another get_notifs too. Each received notification
 *    goes to exactly one get_notifs call.
 *  - No function may throw or longjmp across this boundary.
 *
 * Versioning: any change to a struct or table in this file bumps NIXL_BACKEND_ABI_VERSION, and
 * core loads only plugins built with exactly its version, except optional entries appended at
 * the end of nixl_be_ops_t: core reads one only when ops->size covers it, so a plugin built
 * before it was appended still loads (and answers as if the entry were NULL). History is in
 * docs/BackendGuide.md.
 *
 * Includable from C99 and C++.
 */
#ifndef NIXL_BACKEND_PLUGIN_H
#define NIXL_BACKEND_PLUGIN_H

#include "nixl_plugin_common.h"
#include "nixl_trace_backend_plugin.h" /* nixl_trace_attr_t */
#include "nixl_xfer_path.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIXL_BACKEND_ABI_VERSION 2u
#define NIXL_BACKEND_PLUGIN_ENTRY "nixl_backend_plugin_get"
#define NIXL_BACKEND_PLUGIN_PREFIX "libplugin_"

/* Opaque handles owned by the plugin. Core never looks inside. */
typedef struct nixl_be_engine nixl_be_engine_t;
typedef struct nixl_be_md nixl_be_md_t;
typedef struct nixl_be_req nixl_be_req_t;

/* Capability bits of an engine. */
#define NIXL_BE_CAP_REMOTE 0x1u /* transfers to other agents */
#define NIXL_BE_CAP_LOCAL 0x2u /* transfers within the agent (loopback) */
#define NIXL_BE_CAP_NOTIF 0x4u /* notifications */

/*
 * Memory kinds: the numeric values of nixl_mem_t (nixl_types.h; core static_asserts that they
 * agree). Mem masks have bit (1u << kind). Names for a kind: nixl_be_mem_name() in
 * nixl_plugin_names.h.
 */
#define NIXL_BE_MEM_DRAM 0u /* DRAM_SEG */
#define NIXL_BE_MEM_VRAM 1u /* VRAM_SEG */
#define NIXL_BE_MEM_BLK 2u /* BLK_SEG */
#define NIXL_BE_MEM_OBJ 3u /* OBJ_SEG */
#define NIXL_BE_MEM_FILE 4u /* FILE_SEG, the last kind */
#define NIXL_BE_MEM_KIND_COUNT 5u
#define NIXL_BE_MEM_BIT(kind) (1u << (kind))

/* Operations: the numeric values of nixl_xfer_op_t (checked by core like the kinds). */
#define NIXL_BE_OP_READ 0u /* NIXL_READ */
#define NIXL_BE_OP_WRITE 1u /* NIXL_WRITE */

/* A registration (or, in load_remote_md, a remote registration with its public data). */
typedef struct nixl_be_desc {
    uintptr_t addr;
    size_t len;
    uint64_t dev_id;
    nixl_plugin_str_t meta_info; /* registerMem: the user's metaInfo; load_remote_md: public data */
} nixl_be_desc_t;

/* One element of a transfer list: a range and the metadata of the registration covering it. */
typedef struct nixl_be_xfer_desc {
    uintptr_t addr;
    size_t len;
    uint64_t dev_id;
    nixl_be_md_t *md; /* local: from register_mem/load_local_md; remote: from load_remote_md */
} nixl_be_xfer_desc_t;

typedef struct nixl_be_xfer_list {
    uint32_t mem_type; /* nixl_mem_t */
    uint32_t reserved;
    const nixl_be_xfer_desc_t *descs;
    size_t count;
} nixl_be_xfer_list_t;

/*
 * Trace phases (version 2). What a backend records about its own work on a request, through
 * the trace sink below; core turns each into an event of that request on the agent's trace
 * plugins. A closed vocabulary, so that timelines of different backends compare: only core
 * adds values, and adding one is an ABI change. Anything else is OTHER with a label.
 */
typedef enum nixl_be_trace_phase {
    NIXL_BE_PHASE_SUBMIT = 0, /* initiator: the backend starts working on a post */
    NIXL_BE_PHASE_WIRE_SUBMITTED = 1, /* initiator: data handed to the kernel or transport */
    NIXL_BE_PHASE_WIRE_COMPLETED = 2, /* initiator: the transport reports the data moved */
    NIXL_BE_PHASE_NOTIF_SENT = 3, /* initiator: the notification handed to the transport */
    NIXL_BE_PHASE_NOTIF_RECEIVED = 4, /* target: a notification of this request arrived */
    NIXL_BE_PHASE_REMOTE_OBSERVED = 5, /* target: the request's effect was seen (e.g. data) */
    NIXL_BE_PHASE_OTHER = 6, /* plugin-specific; the label names it */
    NIXL_BE_PHASE_COUNT = 7
} nixl_be_trace_phase_t;

/* Lower-case name of a phase ("submit", ..., "other"); "unknown" outside the enum. */
static inline const char *
nixl_be_trace_phase_name(uint32_t phase) {
    static const char *const names[NIXL_BE_PHASE_COUNT] = {
        "submit", "wire_submitted", "wire_completed", "notif_sent",
        "notif_received", "remote_observed", "other"};
    return phase < NIXL_BE_PHASE_COUNT ? names[phase] : "unknown";
}

/*
 * A request's trace context (version 2): W3C trace context fields. Core owns one per transfer
 * request (the same for its prep and every post and repost) and hands the backend a pointer
 * through nixl_be_opt_args_t.trace_ctx; all-zero trace_id means "not traced". A carrier puts
 * it on the wire as the 26-byte W3C binary record (version 0, trace id, span id as parent id,
 * flags), NIXL_BE_TRACE_CTX_WIRE_SIZE bytes, encoded only when it sends (SDK helpers); a
 * target decodes it into a context of its own and records its phases under it.
 */
typedef struct nixl_be_trace_ctx {
    uint8_t trace_id[16];
    uint8_t span_id[8]; /* the request's span: the parent id on the wire */
    uint8_t flags; /* W3C trace-flags; bit 0: sampled */
    uint8_t reserved[7]; /* zero */
    uint64_t correlation_id; /* core-local id of the request (not sent); 0 for a remote one */
} nixl_be_trace_ctx_t;

#define NIXL_BE_TRACE_CTX_WIRE_SIZE 26u

/*
 * Where a backend records trace phases (version 2): nixl_be_init_params_t.trace_sink, NULL when
 * the agent does not trace (then record nothing and encode nothing). record_phase may be called
 * from any thread at once; it never fails the caller and never unwinds into the plugin.
 *   trace      the request's context (from its opt args), or a context decoded from the wire,
 *              or NULL for work that belongs to no request; borrowed for the call
 *   phase      nixl_be_trace_phase_t
 *   label      always recorded; names the event for NIXL_BE_PHASE_OTHER; borrowed; one
 *              longer than 127 bytes is cut (on a UTF-8 character boundary) and the phase
 *              is marked nixl.phase.label_truncated
 *   timestamp_us  when it happened, on the nixlTime::getUs() microsecond counter
 *              (steady clock, CLOCK_MONOTONIC based; not a wall clock), or 0 for "now":
 *              core then takes the time from its trace clock (CLOCK_MONOTONIC as well, read
 *              from the TSC where usable), the cheaper choice for a phase recorded as it happens
 *   attrs      extra attributes, borrowed for the call (may be NULL when n_attrs is 0); their
 *              key_id is ignored (core passes them on as NIXL_TRACE_KEY_DYNAMIC: only core's
 *              own keys are in the trace plugins' key table)
 * Several phases that happened together can be recorded in one call with one clock read:
 * nixl_plugin_core_services_t.record_phases with nixl_be_trace_phase_rec_t records (below).
 */
typedef struct nixl_be_trace_sink {
    size_t size; /* sizeof(nixl_be_trace_sink_t) as core built it */
    void *ctx;
    void (*record_phase)(void *ctx, const nixl_be_trace_ctx_t *trace, uint32_t phase,
                         nixl_plugin_str_t label, uint64_t timestamp_us,
                         const nixl_trace_attr_t *attrs, size_t n_attrs);
} nixl_be_trace_sink_t;

/*
 * One phase of a batch recorded with nixl_plugin_core_services_t.record_phases (appended to
 * the core services, no version bump: with a core whose services lack record_phases, record
 * each with sink->record_phase). The fields mean what record_phase's arguments of the same
 * name mean, except timestamp_us 0: the batch's time, one clock read for the whole batch.
 * New fields are appended; the batch call passes sizeof as the plugin built it.
 */
typedef struct nixl_be_trace_phase_rec {
    uint32_t phase; /* nixl_be_trace_phase_t */
    uint32_t reserved; /* zero */
    nixl_plugin_str_t label;
    uint64_t timestamp_us;
    const nixl_trace_attr_t *attrs;
    size_t n_attrs;
} nixl_be_trace_phase_rec_t;

/* Per-call options of a transfer. */
typedef struct nixl_be_opt_args {
    size_t size; /* sizeof(nixl_be_opt_args_t) as core built it */
    uint32_t has_notif; /* non-zero: send notif to the target once the data is visible there */
    uint32_t reserved;
    nixl_plugin_str_t notif;
    nixl_plugin_str_t custom_param;
    /* Version 2: the request's trace context; see nixl_be_trace_ctx_t. */
    const nixl_be_trace_ctx_t *trace_ctx;
} nixl_be_opt_args_t;

typedef struct nixl_be_init_params {
    size_t size; /* sizeof(nixl_be_init_params_t) as core built it */
    nixl_plugin_str_t agent_name;
    nixl_plugin_str_t backend_type;
    const nixl_plugin_kv_t *params; /* user parameters given to createBackend */
    size_t num_params;
    uint32_t enable_prog_thread; /* nixlAgentConfig::useProgThread */
    uint32_t sync_mode; /* nixl_thread_sync_t: 0 none, 1 strict, 2 rw */
    uint64_t pthr_delay_us; /* nixlAgentConfig::pthrDelay */
    uint32_t enable_telemetry;
    uint32_t reserved;
    const nixl_plugin_core_services_t *core;
    /* Version 2: where to record trace phases; NULL when the agent does not trace. */
    const nixl_be_trace_sink_t *trace_sink;
} nixl_be_init_params_t;

/* What create_engine reports about the new engine. */
typedef struct nixl_be_engine_info {
    size_t size; /* set by core; the plugin fills the fields it knows */
    uint32_t caps; /* NIXL_BE_CAP_* */
    uint32_t mem_mask; /* NIXL_BE_MEM_BIT(nixl_mem_t) for each supported kind */
} nixl_be_engine_info_t;

/* Receives notifications drained by get_notifs; copies. */
typedef struct nixl_be_notif_sink {
    void *ctx;
    void (*push)(void *ctx, nixl_plugin_str_t sender, nixl_plugin_str_t msg);
} nixl_be_notif_sink_t;

/*
 * Receives query_mem answers. put(ctx, i, key, value) adds a pair to the answer for descriptor
 * i; put with key.data == NULL marks descriptor i as found with no pairs. Descriptors never
 * mentioned are answered "not found".
 */
typedef struct nixl_be_query_sink {
    void *ctx;
    nixl_plugin_status_t (*put)(void *ctx, size_t index, nixl_plugin_str_t key,
                                nixl_plugin_str_t value);
} nixl_be_query_sink_t;

/* Engine operations. Optional entries may be NULL; core then answers as noted. */
typedef struct nixl_be_ops {
    size_t size; /* sizeof(nixl_be_ops_t) as the plugin built it */

    void (*destroy_engine)(nixl_be_engine_t *engine);

    nixl_plugin_status_t (*register_mem)(nixl_be_engine_t *engine, const nixl_be_desc_t *desc,
                                         uint32_t mem_type, nixl_be_md_t **out);
    nixl_plugin_status_t (*deregister_mem)(nixl_be_engine_t *engine, nixl_be_md_t *md);

    nixl_plugin_status_t (*connect)(nixl_be_engine_t *engine, nixl_plugin_str_t remote_agent);
    nixl_plugin_status_t (*disconnect)(nixl_be_engine_t *engine, nixl_plugin_str_t remote_agent);
    nixl_plugin_status_t (*unload_md)(nixl_be_engine_t *engine, nixl_be_md_t *md);

    /* Remote-capable engines (NULL: NIXL_ERR_BACKEND). */
    nixl_plugin_status_t (*get_public_data)(nixl_be_engine_t *engine, const nixl_be_md_t *md,
                                            const nixl_plugin_bytes_sink_t *out);
    nixl_plugin_status_t (*get_conn_info)(nixl_be_engine_t *engine,
                                          const nixl_plugin_bytes_sink_t *out);
    nixl_plugin_status_t (*load_remote_conn_info)(nixl_be_engine_t *engine,
                                                  nixl_plugin_str_t remote_agent,
                                                  nixl_plugin_str_t conn_info);
    nixl_plugin_status_t (*load_remote_md)(nixl_be_engine_t *engine, const nixl_be_desc_t *desc,
                                           uint32_t mem_type, nixl_plugin_str_t remote_agent,
                                           nixl_be_md_t **out);
    /* Local-capable engines (NULL: NIXL_ERR_BACKEND). */
    nixl_plugin_status_t (*load_local_md)(nixl_be_engine_t *engine, nixl_be_md_t *in,
                                          nixl_be_md_t **out);

    nixl_plugin_status_t (*prep_xfer)(nixl_be_engine_t *engine, uint32_t op,
                                      const nixl_be_xfer_list_t *local,
                                      const nixl_be_xfer_list_t *remote,
                                      nixl_plugin_str_t remote_agent,
                                      const nixl_be_opt_args_t *opt, nixl_be_req_t **out);
    nixl_plugin_status_t (*post_xfer)(nixl_be_engine_t *engine, uint32_t op,
                                      const nixl_be_xfer_list_t *local,
                                      const nixl_be_xfer_list_t *remote,
                                      nixl_plugin_str_t remote_agent, nixl_be_req_t *req,
                                      const nixl_be_opt_args_t *opt);
    nixl_plugin_status_t (*check_xfer)(nixl_be_engine_t *engine, nixl_be_req_t *req);
    /* Frees the request, aborting it if it runs; an error means it could not be aborted. */
    nixl_plugin_status_t (*release_req)(nixl_be_engine_t *engine, nixl_be_req_t *req);

    /* Notification-capable engines (NULL: NIXL_ERR_BACKEND). */
    nixl_plugin_status_t (*get_notifs)(nixl_be_engine_t *engine, const nixl_be_notif_sink_t *out);
    nixl_plugin_status_t (*gen_notif)(nixl_be_engine_t *engine, nixl_plugin_str_t remote_agent,
                                      nixl_plugin_str_t msg);

    /* Optional (NULL: NIXL_ERR_NOT_SUPPORTED). */
    nixl_plugin_status_t (*query_mem)(nixl_be_engine_t *engine, const nixl_be_desc_t *descs,
                                      size_t count, uint32_t mem_type,
                                      const nixl_be_query_sink_t *out);
    nixl_plugin_status_t (*estimate_xfer_cost)(nixl_be_engine_t *engine, uint32_t op,
                                               const nixl_be_xfer_list_t *local,
                                               const nixl_be_xfer_list_t *remote,
                                               nixl_plugin_str_t remote_agent, nixl_be_req_t *req,
                                               int64_t *duration_us, int64_t *err_margin_us,
                                               uint32_t *method);
    /* Effective parameters (NULL: the parameters given at creation). */
    nixl_plugin_status_t (*get_params)(nixl_be_engine_t *engine, const nixl_plugin_kv_sink_t *out);

    /*
     * Appended (read only when size covers them; NULL or absent: NIXL_ERR_NOT_SUPPORTED).
     * Interoperability with NIXL 1.4 agents: the connection info and a registration's public
     * data in the form NIXL 1.4's backend of the same name writes and reads (for UCX: worker
     * 0's raw address, the raw packed rkey). Core puts them in the part of the metadata blob a
     * NIXL peer reads; libnixl peers still get get_conn_info / get_public_data. A backend that
     * NIXL 1.4 does not have, or whose form it does not implement, leaves them NULL, and NIXL
     * peers do not see it. load_remote_conn_info / load_remote_md then also receive these forms
     * (from a NIXL peer's blob) and must tell them from their own.
     */
    nixl_plugin_status_t (*get_conn_info_nixl)(nixl_be_engine_t *engine,
                                               const nixl_plugin_bytes_sink_t *out);
    nixl_plugin_status_t (*get_public_data_nixl)(nixl_be_engine_t *engine,
                                                 const nixl_be_md_t *md,
                                                 const nixl_plugin_bytes_sink_t *out);
    /*
     * Appended (issue 34; read only when size covers it; NULL or absent: the path is unknown).
     * The data path a prepared request moves on, and the fallback reason when that path is
     * one (nixl_xfer_path.h). Called once per request, right after a successful prep_xfer,
     * and only when the agent's telemetry is on; must not block. out is zeroed by core.
     */
    nixl_plugin_status_t (*get_xfer_path)(nixl_be_engine_t *engine,
                                          const nixl_be_req_t *req,
                                          nixl_xfer_path_info_t *out);
} nixl_be_ops_t;

/* The size of an operations table without the appended entries: the least core accepts. */
#define NIXL_BE_OPS_MIN_SIZE (offsetof(nixl_be_ops_t, get_conn_info_nixl))

/* What NIXL_BACKEND_PLUGIN_ENTRY returns. Static storage, valid while the library is loaded. */
typedef struct nixl_backend_plugin {
    nixl_plugin_header_t hdr; /* kind NIXL_PLUGIN_KIND_BACKEND, size sizeof(nixl_backend_plugin_t) */
    uint32_t mem_mask; /* memory kinds the plugin can support (getPluginParams) */
    uint32_t reserved;
    /* Default parameters, for getPluginParams. */
    nixl_plugin_status_t (*get_options)(const nixl_plugin_kv_sink_t *out);
    /*
     * Creates an engine. On success sets *out and fills info. On failure returns an error and
     * has logged the cause through params->core.
     */
    nixl_plugin_status_t (*create_engine)(const nixl_be_init_params_t *params,
                                          nixl_be_engine_t **out, nixl_be_engine_info_t *info);
    const nixl_be_ops_t *ops;
} nixl_backend_plugin_t;

typedef const nixl_backend_plugin_t *(*nixl_backend_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NIXL_BACKEND_PLUGIN_H */
