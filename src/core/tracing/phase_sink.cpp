/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "tracing/phase_sink.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

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

    static_assert(max_phase_label == 127, "the truncation message below names the limit");

    /** Core attributes of a phase at most (backend, name, label, trace id, label_truncated),
     *  before the plugin's. */
    constexpr size_t core_attrs = 5;

    /** Not in core's key table: it is rare, and the table is part of what plugins see. */
    constexpr const char *key_label_truncated = "nixl.phase.label_truncated";

    /**
     * How many of label's first max_phase_label bytes to keep: all of them, less the bytes of
     * a UTF-8 sequence the cut would split (at most 3: a sequence is at most 4 bytes). A label
     * that is not UTF-8 is still cut at max_phase_label at the latest.
     */
    inline size_t
    labelCut(const char *label) noexcept {
        size_t cut = max_phase_label;
        // label[cut] is the first byte not kept: while it continues a sequence, the sequence
        // started before the cut; back off to its lead byte, which then goes too.
        for (int i = 0; i < 3 && cut > 0 &&
                        (static_cast<unsigned char>(label[cut]) & 0xC0u) == 0x80u;
             ++i) {
            --cut;
        }
        return (static_cast<unsigned char>(label[cut]) & 0xC0u) == 0x80u ? max_phase_label : cut;
    }

    bool
    validTraceId(const nixl_be_trace_ctx_t &c) noexcept {
        uint64_t w[2];
        static_assert(sizeof(w) == sizeof(c.trace_id));
        std::memcpy(w, c.trace_id, sizeof(w));
        return (w[0] | w[1]) != 0;
    }

    /**
     * dst = src, field by field in 8-byte words: the plugin usually wrote src field by field
     * just before the call, and one wide copy of the struct would read across those narrow
     * stores (a store-forwarding stall per attribute).
     */
    inline void
    copyAttr(nixl_trace_attr_t &dst, const nixl_trace_attr_t &src) noexcept {
        static_assert(sizeof(src.value) == 16);
        uint64_t w0;
        uint64_t w1;
        std::memcpy(&w0, &src.value, 8);
        std::memcpy(&w1, reinterpret_cast<const char *>(&src.value) + 8, 8);
        uint32_t type = src.type;
        asm("" : "+r"(w0), "+r"(w1), "+r"(type)); // no wide load across the narrow stores
        dst.key = src.key;
        dst.type = type;
        dst.key_id = NIXL_TRACE_KEY_DYNAMIC; // the plugin's own keys are not core's table
        std::memcpy(&dst.value, &w0, 8);
        std::memcpy(reinterpret_cast<char *>(&dst.value) + 8, &w1, 8);
    }

    /** "00" ... "ff": two lower-case hex digits per byte value. */
    struct hexTable {
        char pairs[512];
        constexpr hexTable() : pairs{} {
            constexpr char digits[] = "0123456789abcdef";
            for (int i = 0; i < 256; ++i) {
                pairs[2 * i] = digits[i >> 4];
                pairs[2 * i + 1] = digits[i & 15];
            }
        }
    };
    constexpr hexTable kHex;

    /** n bytes as 2n lower-case hex digits (nixl_trace_ctx_to_hex's output, a byte at a time). */
    inline void
    hexBytes(const uint8_t *bytes, size_t n, char *out) noexcept {
        for (size_t i = 0; i < n; ++i) {
            std::memcpy(out + 2 * i, kHex.pairs + 2 * bytes[i], 2);
        }
    }

    /** nixl_be_trace_phase_name() of each phase, with its length (no strlen per phase). */
    struct phaseNames {
        std::string_view names[NIXL_BE_PHASE_COUNT];
        phaseNames() noexcept {
            for (uint32_t p = 0; p < NIXL_BE_PHASE_COUNT; ++p) {
                names[p] = nixl_be_trace_phase_name(p);
            }
        }
        std::string_view
        operator[](uint32_t p) const noexcept {
            return names[p];
        }
    };
    const phaseNames kPhaseNames; // at load time: no guard on the phase path

} // namespace

nixlTracePhaseSink::nixlTracePhaseSink(const Tracer &tracer,
                                       std::string agent,
                                       std::string backend,
                                       nixlTelemetry *telemetry)
    : tracer_(tracer),
      agent_(std::move(agent)),
      backend_(std::move(backend)),
      telemetry_(telemetry),
      keyBackend_(keyOf(KeyId::PHASE_BACKEND)),
      keyName_(keyOf(KeyId::PHASE_NAME)),
      keyLabel_(keyOf(KeyId::PHASE_LABEL)),
      keyTraceId_(keyOf(KeyId::PHASE_TRACE_ID)),
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

bool
nixlTracePhaseSink::acceptable(uint32_t phase,
                               nixl_plugin_str_t label,
                               const nixl_trace_attr_t *attrs,
                               size_t n_attrs) noexcept {
    if (phase >= NIXL_BE_PHASE_COUNT) {
        drop(phase, "the phase is not a nixl_be_trace_phase_t");
        return false;
    }
    if (label.data == nullptr && label.len != 0) {
        drop(phase, "its label has no data");
        return false;
    }
    if (attrs == nullptr && n_attrs != 0) {
        drop(phase, "its attributes are null with a non-zero count");
        return false;
    }
    return true;
}

void
nixlTracePhaseSink::prepare(const nixl_be_trace_ctx_t *trace, request_t &req) const noexcept {
    // Only what a viewer cannot derive from the mark itself (its name, time and correlation
    // id) is an attribute: the mark's time is exactly timestamp_us microseconds, the fixed
    // phases' names say the phase, and a request's own trace id is on its post span, which
    // the mark's correlation id names. The trace id is an attribute only for a context with
    // no local request (correlation id 0: a target's context decoded from the wire), where it
    // is the only link to the initiator.
    req.hasTrace = trace != nullptr && trace->correlation_id == 0 && validTraceId(*trace);
    if (req.hasTrace) {
        hexBytes(trace->trace_id, sizeof(trace->trace_id), req.traceHex);
    }
    // No context: the request of the agent call running on this thread, if any (a backend
    // recording from inside postXfer), else none.
    req.corr = trace != nullptr ? trace->correlation_id : tracer_.currentCorrelation();
}

void
nixlTracePhaseSink::record(const nixl_be_trace_ctx_t *trace,
                           uint32_t phase,
                           nixl_plugin_str_t label,
                           uint64_t timestamp_us,
                           const nixl_trace_attr_t *attrs,
                           size_t n_attrs) noexcept {
    if (!acceptable(phase, label, attrs, n_attrs)) {
        return;
    }
    request_t req;
    prepare(trace, req);
    // 0 means "now": core's trace clock (a TSC read where usable, trace_clock.h), which is
    // CLOCK_MONOTONIC like nixlTime::getUs(); truncated to microseconds so that the mark's
    // time is exactly a getUs() value, as if the plugin had passed one.
    recordOne(req, phase, label, timestamp_us != 0 ? timestamp_us : nowNs() / 1000u, attrs,
              n_attrs);
}

void
nixlTracePhaseSink::recordBatch(const nixl_be_trace_ctx_t *trace,
                                const nixl_be_trace_phase_rec_t *recs,
                                size_t rec_size,
                                size_t n) noexcept {
    if (n == 0) {
        return;
    }
    if (recs == nullptr || rec_size < sizeof(nixl_be_trace_phase_rec_t)) {
        // Which phases they were cannot be read safely: logged as phase "unknown".
        const char *why = recs == nullptr ? "a batch of phases has no records" :
                                            "a batch's records are smaller than core's "
                                            "nixl_be_trace_phase_rec_t";
        for (size_t i = 0; i < n; ++i) {
            drop(NIXL_BE_PHASE_COUNT, why);
        }
        return;
    }
    // Shared by every record: the context's work and, for the records stamped 0, one clock
    // read (the batch's time).
    request_t req;
    prepare(trace, req);
    uint64_t batchUs = 0;
    const auto *bytes = reinterpret_cast<const unsigned char *>(recs);
    for (size_t i = 0; i < n; ++i) {
        const auto &r = *reinterpret_cast<const nixl_be_trace_phase_rec_t *>(bytes + i * rec_size);
        if (!acceptable(r.phase, r.label, r.attrs, r.n_attrs)) {
            continue;
        }
        uint64_t tsUs = r.timestamp_us;
        if (tsUs == 0) {
            if (batchUs == 0) {
                batchUs = nowNs() / 1000u;
            }
            tsUs = batchUs;
        }
        recordOne(req, r.phase, r.label, tsUs, r.attrs, r.n_attrs);
    }
}

void
nixlTracePhaseSink::recordPhases(void *,
                                 const nixl_be_trace_sink_t *sink,
                                 const nixl_be_trace_ctx_t *trace,
                                 const nixl_be_trace_phase_rec_t *recs,
                                 size_t rec_size,
                                 size_t n) noexcept {
    // Only a sink core made (its record_phase is ours) has a nixlTracePhaseSink behind ctx.
    if (sink == nullptr || sink->record_phase != &nixlTracePhaseSink::recordPhase ||
        sink->ctx == nullptr) {
        return;
    }
    static_cast<nixlTracePhaseSink *>(sink->ctx)->recordBatch(trace, recs, rec_size, n);
}

void
nixlTracePhaseSink::recordOne(const request_t &req,
                              uint32_t phase,
                              nixl_plugin_str_t label,
                              uint64_t tsUs,
                              const nixl_trace_attr_t *attrs,
                              size_t n_attrs) noexcept {
    // Everything the event borrows lives on this stack: no allocation on the phase path. The
    // attributes are written field by field into the array the plugins read: building them as
    // temporaries and copying them costs a store-forwarding stall per attribute (wide loads of
    // fields just written narrow), the largest part of this function before.
    nixl_trace_attr_t buf[core_attrs + max_phase_attrs];
    size_t n = 0;
    auto putStr = [&](const char *key, KeyId id, const char *data, size_t len) {
        nixl_trace_attr_t &a = buf[n++];
        a.key = key;
        a.type = NIXL_TRACE_ATTR_STRING;
        a.key_id = static_cast<uint32_t>(id);
        a.value.str.data = data;
        a.value.str.len = len;
    };
    putStr(keyBackend_, KeyId::PHASE_BACKEND, backend_.data(), backend_.size());
    if (phase == NIXL_BE_PHASE_OTHER) {
        // Named by its label: the phase is not otherwise visible.
        putStr(keyName_, KeyId::PHASE_NAME, kPhaseNames[phase].data(), kPhaseNames[phase].size());
    }
    const size_t fullLen = label.len;
    if (fullLen > max_phase_label) { // cut, never dropped (seed 000: the label is recorded)
        label.len = labelCut(label.data);
        noteTruncated(phase, fullLen);
    }
    putStr(keyLabel_, KeyId::PHASE_LABEL, label.len != 0 ? label.data : "", label.len);
    if (req.hasTrace) {
        putStr(keyTraceId_, KeyId::PHASE_TRACE_ID, req.traceHex, sizeof(req.traceHex));
    }
    if (fullLen != label.len) {
        nixl_trace_attr_t &a = buf[n++];
        a.key = key_label_truncated;
        a.type = NIXL_TRACE_ATTR_INT64;
        a.key_id = NIXL_TRACE_KEY_DYNAMIC;
        a.value.i64 = static_cast<int64_t>(fullLen);
    }
    size_t extra = 0;
    for (size_t i = 0; i < n_attrs; ++i) {
        if (attrs[i].key == nullptr || extra == max_phase_attrs) {
            droppedAttrs_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        copyAttr(buf[n++], attrs[i]);
        ++extra;
    }

    uint32_t nameId;
    const char *name;
    Kind kind;
    char labelText[max_phase_label + 1]; // OTHER's name: the label, NUL-terminated
    if (phase == NIXL_BE_PHASE_OTHER) {
        nameId = NIXL_TRACE_NAME_DYNAMIC;
        if (label.len != 0) {
            std::memcpy(labelText, label.data, label.len);
            labelText[label.len] = '\0';
        }
        name = label.len != 0 ? labelText : "nixl::backend.other";
        kind = Kind::Generic;
    } else {
        const auto id = static_cast<NameId>(static_cast<uint32_t>(NameId::BACKEND_SUBMIT) + phase);
        nameId = static_cast<uint32_t>(id);
        name = nameOf(id);
        kind = kindOf(id);
    }
    // nixlTime::getUs() reads std::chrono::steady_clock, which libstdc++ on Linux reads from
    // CLOCK_MONOTONIC: the tracer's clock, in microseconds.
    const uint64_t atNs = tsUs * 1000u;
    if (tracer_.markRaw(nameId, name, kind, atNs, req.corr, buf, n) != 0) {
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

void
nixlTracePhaseSink::noteTruncated(uint32_t phase, size_t len) noexcept {
    truncatedLabels_.fetch_add(1, std::memory_order_relaxed);
    if (loggedTruncated_.exchange(true, std::memory_order_relaxed)) {
        return;
    }
    char line[384];
    const int n = std::snprintf(line, sizeof(line),
                                "agent %s: backend %s: trace phase %u (%s): label of %zu bytes "
                                "cut to 127 (attribute %s); later cuts of this backend are "
                                "only counted",
                                agent_.c_str(), backend_.c_str(), phase,
                                nixl_be_trace_phase_name(phase), len, key_label_truncated);
    if (n > 0) {
        nixl::log::write(nixl::log::level::WARN, __FILE__, __LINE__,
                         std::string_view(line, std::min<size_t>(n, sizeof(line) - 1)));
    }
}

} // namespace nixl::trace
