/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The hot half of the tracing facade: clock, span ids, the per-thread span and correlation
// chains, and the fan-out of events. The name and key tables are in trace_names.cpp; creation
// and configuration in trace_setup.cpp.

#include "tracing/tracing.h"

#include "tracing/trace_clock.h"

#include <atomic>
#include <string>

namespace nixl::trace {

namespace {

    /** The fields of an event that only a span_end with a folded completion sets. */
    inline void
    noCompletion(nixl_trace_event_t &ev) noexcept {
        ev.complete_ns = 0;
        ev.complete_name = nullptr;
        ev.complete_name_id = 0;
        ev.complete_kind = 0;
    }

    /** A mark's event (no span id, no end, no completion); attrs are borrowed. */
    inline nixl_trace_event_t
    markEvent(uint32_t name_id,
              const char *name,
              Kind kind,
              uint64_t parent,
              uint64_t correlation,
              uint64_t at_ns,
              const nixl_trace_attr_t *attrs,
              size_t attr_count) noexcept {
        nixl_trace_event_t ev;
        ev.size = sizeof(ev);
        ev.name_id = name_id;
        ev.kind = static_cast<uint32_t>(kind);
        ev.name = name;
        ev.span_id = 0;
        ev.parent_span_id = parent;
        ev.correlation_id = correlation;
        ev.begin_ns = at_ns;
        ev.end_ns = 0;
        ev.attrs = attr_count != 0 ? attrs : nullptr;
        ev.attr_count = attr_count;
        noCompletion(ev);
        return ev;
    }

    /**
     * What a thread knows about its open spans and correlation scopes: the innermost of each
     * (each links to the one before), and its block of span ids. Trivially constructible, so
     * the thread_local costs no guard on access.
     */
    struct threadState {
        const Span *span = nullptr;
        const CorrelationScope *correlation = nullptr;
        uint64_t nextId = 0;
        uint64_t idEnd = 0;
    };

    // initial-exec: one %fs-relative access instead of a __tls_get_addr call per use (a tenth
    // of a traced transfer's cost). libnixl is normally loaded with the program; dlopen'ed, it
    // takes these 32 bytes from the static TLS surplus glibc reserves for that case.
    thread_local threadState tls __attribute__((tls_model("initial-exec")));

    /**
     * Span ids come in blocks per thread, so the shared counter is touched once per
     * id_block spans rather than once per span; ids start at 1, so none is 0.
     */
    constexpr uint64_t id_block = 1024;
    std::atomic<uint64_t> nextIdBlock{1};

    inline uint64_t
    clockNs() noexcept {
        return TraceClock::nowNs();
    }

    inline uint64_t
    newSpanId() noexcept {
        threadState &t = tls;
        if (t.nextId == t.idEnd) [[unlikely]] {
            t.nextId = nextIdBlock.fetch_add(id_block, std::memory_order_relaxed);
            t.idEnd = t.nextId + id_block;
        }
        return t.nextId++;
    }

} // namespace

uint64_t
nowNs() noexcept {
    return clockNs();
}


// ---- Span ----------------------------------------------------------------------------------

Span::Span(const Tracer &tracer, NameId name, std::initializer_list<Attr> attrs) noexcept
    : tracer_(tracer),
      name_(detail::entry(name).name), // NameId values index the table
      nameId_(static_cast<uint32_t>(name)),
      kind_(static_cast<Kind>(detail::entry(name).kind)) {
    start(attrs);
}

Span::Span(const Tracer &tracer, NameId name, DeferBegin) noexcept
    : tracer_(tracer),
      name_(detail::entry(name).name),
      nameId_(static_cast<uint32_t>(name)),
      kind_(static_cast<Kind>(detail::entry(name).kind)) {}

Span::Span(const Tracer &tracer,
           const char *name,
           Kind kind,
           std::initializer_list<Attr> attrs) noexcept
    : tracer_(tracer),
      name_(name != nullptr ? name : "nixl::unnamed"),
      nameId_(NIXL_TRACE_NAME_DYNAMIC),
      kind_(kind) {
    start(attrs);
}

inline void
Span::fillEvent(nixl_trace_event_t &ev, uint64_t begin_ns, uint64_t end_ns) const noexcept {
    ev.end_ns = end_ns;
    ev.size = sizeof(ev);
    ev.name_id = nameId_;
    ev.kind = static_cast<uint32_t>(kind_);
    ev.name = name_;
    ev.span_id = id_;
    ev.parent_span_id = parent_;
    ev.correlation_id = correlation_;
    ev.begin_ns = begin_ns;
    ev.attrs = count_ != 0 ? attrs_ : nullptr;
    ev.attr_count = count_;
}

void
Span::start(std::initializer_list<Attr> attrs) noexcept {
    for (const Attr &a : attrs) {
        if (count_ < max_span_attrs) {
            attrs_[count_++] = a.raw();
        } else {
            ++dropped_;
        }
    }
    threadState &t = tls;
    parent_ = 0;
    for (const Span *s = t.span; s != nullptr; s = s->prev_) {
        if (&s->tracer_ == &tracer_) {
            parent_ = s->id_;
            break;
        }
    }
    correlation_ = 0;
    for (const CorrelationScope *c = t.correlation; c != nullptr; c = c->prev_) {
        if (c->tracer_ == &tracer_) {
            correlation_ = c->id_;
            break;
        }
    }
    id_ = newSpanId();
    prev_ = t.span;
    t.span = this;

    // The span starts when the traced work does: after core's bookkeeping, before the plugins'.
    beginTicks_ = TraceClock::ticks();
    if (tracer_.spanBegin_.empty()) {
        // No plugin wants span begins (the chrome plugin, for one): the tick is converted when
        // the span ends, with its end (TraceClock::toNsSpan), so nothing here waits for the
        // counter's value.
        beginFloor_ = TraceClock::lastNs();
        return;
    }
    beginNs_ = TraceClock::toNs(beginTicks_);
    nixl_trace_event_t ev;
    fillEvent(ev, beginNs_, 0);
    noCompletion(ev);
    for (const Tracer::target &i : tracer_.spanBegin_) {
        i.fn(i.backend, &ev);
    }
}

Span::~Span() {
    if (tracer_.spanEnd_.empty() && tracer_.markNoEnd_.empty()) {
        tls.span = prev_; // no plugin wants the end or the completion: no time needed
        return;
    }
    // The times go to locals, not back into the span's fields: the event below is filled from
    // those fields with 16-byte loads, and one spanning an 8-byte store made just before cannot
    // take its value from the store buffer (a store-forwarding stall, the hottest instruction
    // of this function when beginNs_ was written through toNsSpan's reference).
    uint64_t endNs = 0;
    uint64_t beginNs = beginNs_;
    uint64_t completeNs = completeNs_;
    if (endTicks_ != 0) {
        if (beginNs == 0) {
            TraceClock::toNsSpan(beginTicks_, beginFloor_, endTicks_, beginNs, endNs);
        } else {
            endNs = TraceClock::toNs(endTicks_);
        }
        if (completedAtEnd_) {
            completeNs = endNs;
        }
    } else if (endNs_ != 0) {
        endNs = endNs_;
        if (beginNs == 0) {
            beginNs = TraceClock::beginNs(beginTicks_, beginFloor_);
            beginNs = beginNs > endNs ? endNs : beginNs;
        }
    } else if (beginNs == 0) {
        TraceClock::toNsSpan(beginTicks_, beginFloor_, TraceClock::ticks(), beginNs, endNs);
    } else {
        endNs = clockNs();
    }
    if (completeNs != 0 && !tracer_.markNoEnd_.empty()) [[unlikely]] {
        // Plugins without span_end still see the completion, as the mark it stands for.
        const nixl_trace_name_t &n = detail::entry(NameId::XFER_COMPLETE);
        const nixl_trace_event_t m = markEvent(n.id, n.name, static_cast<Kind>(n.kind), id_,
                                               correlation_, completeNs, nullptr, 0);
        for (const Tracer::target &i : tracer_.markNoEnd_) {
            i.fn(i.backend, &m);
        }
    }
    if (tracer_.spanEnd_.empty()) {
        tls.span = prev_;
        return;
    }
    nixl_trace_event_t ev;
    fillEvent(ev, beginNs, endNs);
    ev.complete_ns = completeNs;
    if (completeNs != 0) {
        const nixl_trace_name_t &n = detail::entry(NameId::XFER_COMPLETE);
        ev.complete_name = n.name;
        ev.complete_name_id = n.id;
        ev.complete_kind = n.kind;
    } else {
        ev.complete_name = nullptr;
        ev.complete_name_id = 0;
        ev.complete_kind = 0;
    }
    for (const Tracer::target &i : tracer_.spanEnd_) {
        i.fn(i.backend, &ev);
    }
    tls.span = prev_;
}

Span &
Span::add(const Attr &attr) noexcept {
    if (count_ < max_span_attrs) {
        attrs_[count_++] = attr.raw();
    } else {
        ++dropped_;
    }
    return *this;
}

// ---- CorrelationScope ----------------------------------------------------------------------

CorrelationScope::CorrelationScope(const Tracer *tracer, uint64_t id) noexcept
    : tracer_(tracer),
      id_(id) {
    if (tracer_ != nullptr) {
        prev_ = tls.correlation;
        tls.correlation = this;
    }
}

CorrelationScope::~CorrelationScope() {
    if (tracer_ != nullptr) {
        tls.correlation = prev_;
    }
}

// ---- Tracer: events ------------------------------------------------------------------------

uint64_t
Tracer::currentSpan() const noexcept {
    // Chains are short (agent calls do not nest): usually zero or one entry.
    for (const Span *s = tls.span; s != nullptr; s = s->prev_) {
        if (&s->tracer_ == this) {
            return s->id_;
        }
    }
    return 0;
}

uint64_t
Tracer::currentCorrelation() const noexcept {
    for (const CorrelationScope *c = tls.correlation; c != nullptr; c = c->prev_) {
        if (c->tracer_ == this) {
            return c->id_;
        }
    }
    return 0;
}

void
Tracer::mark(NameId name, std::initializer_list<Attr> attrs) const noexcept {
    const nixl_trace_name_t &n = detail::entry(name);
    emitMark(n.id, n.name, static_cast<Kind>(n.kind), 0, attrs);
}

void
Tracer::markAt(NameId name, uint64_t at_ns, std::initializer_list<Attr> attrs) const noexcept {
    const nixl_trace_name_t &n = detail::entry(name);
    emitMark(n.id, n.name, static_cast<Kind>(n.kind), at_ns, attrs);
}

void
Tracer::mark(const char *name, Kind kind, std::initializer_list<Attr> attrs) const noexcept {
    emitMark(NIXL_TRACE_NAME_DYNAMIC, name != nullptr ? name : "nixl::unnamed", kind, 0, attrs);
}

void
Tracer::emitMark(uint32_t name_id,
                 const char *name,
                 Kind kind,
                 uint64_t at_ns,
                 std::initializer_list<Attr> attrs) const noexcept {
    if (mark_.empty()) {
        return;
    }
    nixl_trace_attr_t buf[max_span_attrs];
    size_t n = 0;
    for (const Attr &a : attrs) {
        if (n < max_span_attrs) {
            buf[n++] = a.raw();
        }
    }
    const nixl_trace_event_t ev = markEvent(name_id, name, kind, currentSpan(),
                                            currentCorrelation(), at_ns != 0 ? at_ns : clockNs(),
                                            buf, n);
    for (const target &i : mark_) {
        i.fn(i.backend, &ev);
    }
}

size_t
Tracer::markRaw(uint32_t name_id,
                const char *name,
                Kind kind,
                uint64_t at_ns,
                uint64_t correlation_id,
                const nixl_trace_attr_t *attrs,
                size_t attr_count) const noexcept {
    // No parent: the caller's time may be coarser than the spans' (a backend phase's is in
    // microseconds) and fall just before the span open on this thread; the correlation id is
    // what ties it to its request.
    const nixl_trace_event_t ev =
        markEvent(name_id, name, kind, 0, correlation_id, at_ns, attrs, attr_count);
    // A plugin must not throw (its contract); one that does loses this event only, and the
    // others still get it.
    size_t threw = 0;
    for (const target &i : mark_) {
        try {
            i.fn(i.backend, &ev);
        }
        catch (...) {
            ++threw;
        }
    }
    return threw;
}

std::vector<std::string>
Tracer::backendNames() const {
    std::vector<std::string> names;
    for (const instance &i : instances_) {
        names.push_back(i.name);
    }
    return names;
}

} // namespace nixl::trace
