/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "tracing/phase_sink.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/nixl_log.h"
#include "nixl_trace_context.h"
#include "telemetry/telemetry.h"
#include "tracing/tracing.h"

namespace nixl::trace {

namespace {

    static_assert(static_cast<uint32_t>(NameId::BACKEND_REMOTE_OBSERVED) -
                          static_cast<uint32_t>(NameId::BACKEND_SUBMIT) ==
                      NIXL_BE_PHASE_REMOTE_OBSERVED - NIXL_BE_PHASE_SUBMIT,
                  "core's table lists the fixed phases in nixl_be_trace_phase_t order");
    static_assert(NIXL_BE_PHASE_OTHER == NIXL_BE_PHASE_REMOTE_OBSERVED + 1 &&
                      NIXL_BE_PHASE_COUNT == NIXL_BE_PHASE_OTHER + 1,
                  "OTHER is the last phase");

    static_assert(max_phase_label == 127, "the drop message below names the limit");

    /** Core attributes of every phase, before the plugin's. */
    constexpr size_t core_attrs = 5;

    bool
    validTraceId(const nixl_be_trace_ctx_t &c) noexcept {
        for (uint8_t b : c.trace_id) {
            if (b != 0) {
                return true;
            }
        }
        return false;
    }

} // namespace

nixlTracePhaseSink::nixlTracePhaseSink(const Tracer &tracer,
                                       std::string agent,
                                       std::string backend,
                                       nixlTelemetry *telemetry)
    : tracer_(tracer),
      agent_(std::move(agent)),
      backend_(std::move(backend)),
      telemetry_(telemetry),
      sink_{} {
    sink_.size = sizeof(sink_);
    sink_.ctx = this;
    sink_.record_phase = &nixlTracePhaseSink::recordPhase;
}

void
nixlTracePhaseSink::recordPhase(void *ctx,
                                const nixl_be_trace_ctx_t *trace,
                                uint32_t phase,
                                nixl_plugin_str_t label,
                                uint64_t timestamp_us,
                                const nixl_trace_attr_t *attrs,
                                size_t n_attrs) noexcept {
    if (ctx == nullptr) {
        return; // not a sink core made; nothing to count into
    }
    static_cast<nixlTracePhaseSink *>(ctx)->record(trace, phase, label, timestamp_us, attrs,
                                                   n_attrs);
}

void
nixlTracePhaseSink::record(const nixl_be_trace_ctx_t *trace,
                           uint32_t phase,
                           nixl_plugin_str_t label,
                           uint64_t timestamp_us,
                           const nixl_trace_attr_t *attrs,
                           size_t n_attrs) noexcept {
    if (phase >= NIXL_BE_PHASE_COUNT) {
        drop(phase, "the phase is not a nixl_be_trace_phase_t");
        return;
    }
    if (label.data == nullptr && label.len != 0) {
        drop(phase, "its label has no data");
        return;
    }
    if (label.len > max_phase_label) {
        drop(phase, "its label is longer than 127 bytes");
        return;
    }
    if (attrs == nullptr && n_attrs != 0) {
        drop(phase, "its attributes are null with a non-zero count");
        return;
    }
    // Everything the event borrows lives on this stack: no allocation on the phase path.
    char labelText[max_phase_label + 1];
    if (label.len != 0) {
        std::memcpy(labelText, label.data, label.len);
    }
    labelText[label.len] = '\0';
    char traceHex[2 * sizeof(nixl_be_trace_ctx_t::trace_id)];
    const bool hasTrace = trace != nullptr && validTraceId(*trace);
    if (hasTrace) {
        nixl_trace_ctx_to_hex(trace->trace_id, sizeof(trace->trace_id), traceHex);
    }

    nixl_trace_attr_t buf[core_attrs + max_phase_attrs];
    size_t n = 0;
    auto put = [&](const Attr &a) { buf[n++] = a.raw(); };
    put(Attr("nixl.phase.backend", backend_));
    put(Attr("nixl.phase.name", nixl_be_trace_phase_name(phase)));
    put(Attr("nixl.phase.label", std::string_view(labelText, label.len)));
    put(Attr("nixl.phase.timestamp_us", timestamp_us));
    if (hasTrace) {
        put(Attr("nixl.phase.trace_id", std::string_view(traceHex, sizeof(traceHex))));
    }
    size_t extra = 0;
    for (size_t i = 0; i < n_attrs; ++i) {
        if (attrs[i].key == nullptr || extra == max_phase_attrs) {
            droppedAttrs_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        buf[n++] = attrs[i];
        ++extra;
    }

    uint32_t nameId;
    const char *name;
    Kind kind;
    if (phase == NIXL_BE_PHASE_OTHER) {
        nameId = NIXL_TRACE_NAME_DYNAMIC;
        name = label.len != 0 ? labelText : "nixl::backend.other";
        kind = Kind::Generic;
    } else {
        const auto id = static_cast<NameId>(static_cast<uint32_t>(NameId::BACKEND_SUBMIT) + phase);
        nameId = static_cast<uint32_t>(id);
        name = nameOf(id);
        kind = kindOf(id);
    }
    // nixlTime::getUs() reads std::chrono::steady_clock, which libstdc++ on Linux reads from
    // CLOCK_MONOTONIC: the tracer's clock, in microseconds. 0 means "now".
    const uint64_t atNs = timestamp_us != 0 ? timestamp_us * 1000u : nowNs();
    // No context: the request of the agent call running on this thread, if any (a backend
    // recording from inside postXfer), else none.
    const uint64_t corr =
        trace != nullptr ? trace->correlation_id : tracer_.currentCorrelation();
    if (tracer_.markRaw(nameId, name, kind, atNs, corr, buf, n) != 0) {
        drop(phase, "a trace plugin threw while recording it");
    }
}

void
nixlTracePhaseSink::drop(uint32_t phase, const char *why) noexcept {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    if (telemetry_ != nullptr) {
        telemetry_->addTracePhaseDrops(1);
    }
    if (logged_.exchange(true, std::memory_order_relaxed)) {
        return;
    }
    // Built in a fixed buffer: the first drop may be an allocation failure, and this path
    // must not throw.
    char line[512];
    const int len = std::snprintf(line, sizeof(line),
                                  "agent %s: backend %s: trace phase %u (%s) dropped: %s; "
                                  "later drops of this backend are only counted",
                                  agent_.c_str(), backend_.c_str(), phase,
                                  nixl_be_trace_phase_name(phase), why);
    if (len > 0) {
        nixl::log::write(nixl::log::level::ERROR, __FILE__, __LINE__,
                         std::string_view(line, std::min<size_t>(len, sizeof(line) - 1)));
    }
}

} // namespace nixl::trace
