/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file phase_sink.h
 * @brief The trace sink core gives each backend engine (nixl_be_trace_sink_t, backend ABI v2):
 *        turns the phases a backend records into marks on the agent's tracer. Not installed.
 *
 * One sink per engine, made by the engine proxy when the agent traces, and destroyed after the
 * engine (so a plugin's progress thread may record until it is joined). Each phase becomes a
 * mark named from core's table (nixl::backend.submit, ...; for NIXL_BE_PHASE_OTHER the label,
 * a dynamic name), at the plugin's timestamp converted to the tracer's clock, with the
 * request's correlation id (the context's; with no context, that of the agent call running on
 * the recording thread, if any), with no parent span (a microsecond timestamp may fall just
 * before the span that records it; the correlation id links it to the request), and the
 * attributes nixl.phase.backend, .name (OTHER only: its name is the label), .label,
 * .trace_id (when the context is valid and has no local request, i.e. came from the wire;
 * a local request's trace id is on its post span), .label_truncated (only when the label
 * was cut, see below), then the plugin's own (at most
 * max_phase_attrs; extras are dropped and counted in droppedAttrs()). The mark's time is
 * exactly the plugin's timestamp_us (0: core's trace clock now, in whole microseconds).
 *
 * A label longer than max_phase_label is not a reason to drop the phase (seed 000: the label is
 * always recorded): it is cut to its first max_phase_label bytes, backed off to the start of a
 * UTF-8 sequence so no character is split, the phase carries nixl.phase.label_truncated (the
 * label's full length in bytes), and the cut is counted (truncatedLabels()); the first cut of
 * the sink writes one WARN line built without allocating.
 *
 * A phase that cannot be recorded (phase out of range, label with null data and a non-zero
 * length, attributes null with a non-zero count, a trace plugin throwing) is dropped:
 * counted here and in the agent's telemetry (addTracePhaseDrops), and the first drop of the
 * sink writes one ERROR line built without allocating.
 *
 * Several phases of one context can come in one call (recordBatch, reached from the backend
 * plugins' core services as record_phases): the context's work is done once, and every
 * record stamped 0 gets the same time, one clock read for the batch.
 */
#ifndef NIXL_SRC_CORE_TRACING_PHASE_SINK_H
#define NIXL_SRC_CORE_TRACING_PHASE_SINK_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "nixl_backend_plugin.h"

class nixlTelemetry;

namespace nixl::trace {

class Tracer;

/** Plugin attributes a phase carries; more are dropped (droppedAttrs()). */
inline constexpr std::size_t max_phase_attrs = 8;
/** Longest label recorded, in bytes; a longer one is cut to this (UTF-8 safe) and counted. */
inline constexpr std::size_t max_phase_label = 127;

/**
 * A backend engine's trace sink.
 *
 * Thread safety: record() (and the C record_phase of sink()) may be called from any thread
 * at once. Construction and destruction must not overlap them: the engine that uses the sink
 * is destroyed first. The tracer and the telemetry must outlive the sink.
 */
class nixlTracePhaseSink {
public:
    /** telemetry: where drops are also counted; null when the agent has none. */
    nixlTracePhaseSink(const Tracer &tracer,
                       std::string agent,
                       std::string backend,
                       nixlTelemetry *telemetry);

    nixlTracePhaseSink(const nixlTracePhaseSink &) = delete;
    nixlTracePhaseSink &
    operator=(const nixlTracePhaseSink &) = delete;

    /** The C view handed to the plugin (init_params.trace_sink); valid while this lives. */
    const nixl_be_trace_sink_t *
    sink() const noexcept {
        return &sink_;
    }

    /** What record_phase does. Never throws, never fails the caller. */
    void
    record(const nixl_be_trace_ctx_t *trace,
           uint32_t phase,
           nixl_plugin_str_t label,
           uint64_t timestamp_us,
           const nixl_trace_attr_t *attrs,
           std::size_t n_attrs) noexcept;

    /**
     * What core services' record_phases does for this sink: each record as record() would,
     * in order, with the context's work done once and one clock read for every record whose
     * timestamp_us is 0. rec_size is the records' stride; smaller than core's struct drops
     * all n (counted). Never throws, never fails the caller.
     */
    void
    recordBatch(const nixl_be_trace_ctx_t *trace,
                const nixl_be_trace_phase_rec_t *recs,
                std::size_t rec_size,
                std::size_t n) noexcept;

    /**
     * nixl_plugin_core_services_t.record_phases of backend plugins: recordBatch() of the
     * sink behind sink (ignored unless core made it).
     */
    static void
    recordPhases(void *ctx,
                 const nixl_be_trace_sink_t *sink,
                 const nixl_be_trace_ctx_t *trace,
                 const nixl_be_trace_phase_rec_t *recs,
                 std::size_t rec_size,
                 std::size_t n) noexcept;

    /** Phases dropped so far. */
    std::uint64_t
    dropped() const noexcept {
        return dropped_.load(std::memory_order_relaxed);
    }

    /** Labels cut to max_phase_label so far (the phases themselves recorded). */
    std::uint64_t
    truncatedLabels() const noexcept {
        return truncatedLabels_.load(std::memory_order_relaxed);
    }

    /** Plugin attributes dropped beyond max_phase_attrs (the phases themselves recorded). */
    std::uint64_t
    droppedAttrs() const noexcept {
        return droppedAttrs_.load(std::memory_order_relaxed);
    }

private:
    static void
    recordPhase(void *ctx,
                const nixl_be_trace_ctx_t *trace,
                uint32_t phase,
                nixl_plugin_str_t label,
                uint64_t timestamp_us,
                const nixl_trace_attr_t *attrs,
                std::size_t n_attrs) noexcept;

    /** What the phases of one call share: the context's correlation id and trace id. */
    struct request_t {
        std::uint64_t corr;
        bool hasTrace;
        char traceHex[2 * sizeof(nixl_be_trace_ctx_t::trace_id)];
    };

    /** Whether a phase's arguments are usable; drops it (counted, logged once) if not. */
    bool
    acceptable(uint32_t phase,
               nixl_plugin_str_t label,
               const nixl_trace_attr_t *attrs,
               std::size_t n_attrs) noexcept;

    void
    prepare(const nixl_be_trace_ctx_t *trace, request_t &req) const noexcept;

    /** One acceptable phase at tsUs (resolved: never 0 here) as a mark on the tracer. */
    void
    recordOne(const request_t &req,
              uint32_t phase,
              nixl_plugin_str_t label,
              std::uint64_t tsUs,
              const nixl_trace_attr_t *attrs,
              std::size_t n_attrs) noexcept;

    void
    drop(uint32_t phase, const char *why) noexcept;

    /** Counts a label cut from len bytes (logged once per sink). */
    void
    noteTruncated(uint32_t phase, std::size_t len) noexcept;

    const Tracer &tracer_;
    const std::string agent_;
    const std::string backend_;
    nixlTelemetry *const telemetry_;
    // Core's attribute keys, looked up once (not per phase).
    const char *const keyBackend_;
    const char *const keyName_;
    const char *const keyLabel_;
    const char *const keyTraceId_;
    nixl_be_trace_sink_t sink_;
    std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint64_t> droppedAttrs_{0};
    std::atomic<std::uint64_t> truncatedLabels_{0};
    std::atomic<bool> logged_{false};
    std::atomic<bool> loggedTruncated_{false};
};

} // namespace nixl::trace

#endif // NIXL_SRC_CORE_TRACING_PHASE_SINK_H
