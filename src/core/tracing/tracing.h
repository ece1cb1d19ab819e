/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file tracing.h
 * @brief The agent's tracing facade (NIXL 1.4's nixl::trace shape): spans, instant marks and
 *        per-request correlation ids, fanned out to every active trace backend plugin
 *        (libtrace_backend_<name>.so, nixl_trace_backend_plugin.h). Not installed.
 *
 * Core owns everything that must agree between plugins: the clock (CLOCK_MONOTONIC
 * nanoseconds), span ids (non-zero, unique in the process), each span's parent (the innermost
 * open span of the same tracer on the same thread) and the correlation id (the innermost open
 * CorrelationScope of the same tracer on the same thread). A plugin receives finished
 * nixl_trace_event_t values and keeps no per-span state.
 *
 * Cost: an agent with tracing off holds no Tracer (a null pointer), so an instrumented call
 * pays one predictable branch. With tracing on, a span costs two reads of the trace clock (a
 * TSC read and a conversion where the TSC is usable, trace_clock.h), one call per plugin that
 * implements span_begin and one per plugin that implements span_end (core skips NULL
 * operations), and no heap allocation: attributes live in a fixed array inside the Span,
 * which lives on the caller's stack.
 *
 * The names and keys events use are in trace_names.h, the typed attribute (Attr) in
 * trace_attr.h; choosing and loading the backends of an
 * agent (NIXL_TRACE_BACKENDS, makeTracer) in trace_setup.h.
 *
 * Usage (inside an `if (tracer) [[unlikely]]` branch):
 * @code
 *   nixl::trace::CorrelationScope corr(tracer, reinterpret_cast<uintptr_t>(req));
 *   nixl::trace::Span span(*tracer, nixl::trace::NameId::POST_XFER_WRITE,
 *                          {{"remote_agent", req->remoteAgent}, {"bytes", req->totalBytes}});
 *   st = doThePost();
 *   span.add("status", "NIXL_ERR_BACKEND");   // reaches span_end only
 * @endcode
 */
#ifndef NIXL_SRC_CORE_TRACING_TRACING_H
#define NIXL_SRC_CORE_TRACING_TRACING_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "nixl_trace_backend_plugin.h"
#include "tracing/trace_attr.h"
#include "tracing/trace_clock.h"
#include "tracing/trace_names.h"

class nixlLoadedPlugin;

namespace nixl::trace {

/** CLOCK_MONOTONIC in nanoseconds: the time base of every event (TraceClock, trace_clock.h). */
std::uint64_t
nowNs() noexcept;

/** A raw timestamp of the clock nowNs() reads (nixlFastClock ticks, shared with telemetry). */
inline std::uint64_t
nowTicks() noexcept {
    return TraceClock::ticks();
}

/** The nowNs() time of a nowTicks() value read on this thread. */
inline std::uint64_t
ticksToNs(std::uint64_t ticks) noexcept {
    return TraceClock::toNs(ticks);
}

class Tracer;

/** Tag of the Span constructor that does not begin the span (see Span::begin()). */
struct DeferBegin {};
inline constexpr DeferBegin defer_begin{};

/** Attributes a span holds; more are dropped. Enough for every core span with room to spare. */
inline constexpr std::size_t max_span_attrs = 8;

/**
 * A span: begins at construction (span_begin with the attributes given), ends at destruction
 * (span_end with those plus every one added meanwhile). Lives on the stack of the thread that
 * made it: neither copyable nor movable, since the thread's span chain points at it, and spans
 * of one thread end in reverse order of construction, as the plugin ABI requires.
 *
 * Thread safety: one Span is used by one thread.
 */
class Span {
public:
    /** A span named by core's table. */
    Span(const Tracer &tracer, NameId name, std::initializer_list<Attr> attrs = {}) noexcept;

    /** A span with a name outside the table (NIXL_TRACE_NAME_DYNAMIC); name must outlive it. */
    Span(const Tracer &tracer,
         const char *name,
         Kind kind,
         std::initializer_list<Attr> attrs = {}) noexcept;

    /**
     * A span named by core's table that has not begun: give it its begin attributes with
     * addString()/addInt(), written in place (the hot post span: no Attr temporaries to copy),
     * then call begin() exactly once before anything else happens on this thread's spans. The
     * destructor requires begin() to have run.
     */
    Span(const Tracer &tracer, NameId name, DeferBegin) noexcept;

    /** Begins a span made with defer_begin (span_begin gets the attributes added so far). */
    void
    begin() noexcept {
        start({});
    }

    ~Span();

    Span(const Span &) = delete;
    Span &
    operator=(const Span &) = delete;
    Span(Span &&) = delete;
    Span &
    operator=(Span &&) = delete;

    /** Adds an attribute that only span_end carries. Returns *this for chaining. */
    Span &
    add(const Attr &attr) noexcept;

    template<typename T>
    Span &
    add(const char *key, const T &value) noexcept {
        return add(Attr(key, value));
    }

    template<typename T>
    Span &
    add(KeyId key, const T &value) noexcept {
        return add(Attr(key, value));
    }

    /** add() of a string attribute, written in place; data is borrowed until the span ends. */
    Span &
    addString(KeyId key, const char *data, std::size_t len) noexcept {
        if (count_ < max_span_attrs) [[likely]] {
            nixl_trace_attr_t &a = attrs_[count_++];
            a.key = keyOf(key);
            a.type = NIXL_TRACE_ATTR_STRING;
            a.key_id = static_cast<std::uint32_t>(key);
            a.value.str.data = data;
            a.value.str.len = len;
        } else {
            ++dropped_;
        }
        return *this;
    }

    /** add() of an int64 attribute, written in place. */
    Span &
    addInt(KeyId key, std::int64_t value) noexcept {
        if (count_ < max_span_attrs) [[likely]] {
            nixl_trace_attr_t &a = attrs_[count_++];
            a.key = keyOf(key);
            a.type = NIXL_TRACE_ATTR_INT64;
            a.key_id = static_cast<std::uint32_t>(key);
            a.value.i64 = value;
        } else {
            ++dropped_;
        }
        return *this;
    }

    /**
     * Makes the span end at at_ns (a nowNs() value the caller already read, e.g. the time of a
     * mark emitted just before) instead of reading the clock again when it is destroyed.
     */
    void
    setEndNs(std::uint64_t at_ns) noexcept {
        endNs_ = at_ns;
    }

    /**
     * The request this span posts completed at at_ns (a nowNs() value), before the span ends:
     * the nixl::xfer.complete mark, inside this span and with its correlation id, travels in
     * the span's end event (nixl_trace_event_t.complete_ns: one plugin call, not two); a
     * plugin without span_end gets it as a mark.
     */
    void
    setCompleted(std::uint64_t at_ns) noexcept {
        completeNs_ = at_ns;
    }

    /**
     * Makes the span end at the raw timestamp end_ticks (a nowTicks() value the caller read,
     * e.g. telemetry's post time), and, when completed, its request complete then too
     * (setCompleted at that time). Both of the span's times are converted once, when it ends,
     * with one read of the clock's line: the cheapest end for a span on the transfer path.
     */
    void
    setEndTicks(std::uint64_t end_ticks, bool completed) noexcept {
        endTicks_ = end_ticks;
        completedAtEnd_ = completed;
    }

    /**
     * The raw timestamp (nowTicks()) the span began at, for a caller that needs the same
     * instant on the telemetry clock instead of reading the counter again.
     */
    std::uint64_t
    beginTicks() const noexcept {
        return beginTicks_;
    }

    /** This span's id (non-zero). */
    std::uint64_t
    id() const noexcept {
        return id_;
    }

    std::uint64_t
    parentId() const noexcept {
        return parent_;
    }

    /** Attributes dropped because the span already held max_span_attrs. */
    std::size_t
    dropped() const noexcept {
        return dropped_;
    }

private:
    friend class Tracer;

    void
    start(std::initializer_list<Attr> attrs) noexcept;

    /** The event fields every begin and end of this span carries (not the completion's). */
    void
    fillEvent(nixl_trace_event_t &ev, std::uint64_t begin_ns, std::uint64_t end_ns) const noexcept;

    const Tracer &tracer_;
    const Span *prev_ = nullptr; ///< the span that was innermost on this thread before this one
    const char *name_;
    std::uint32_t nameId_;
    Kind kind_;
    std::uint64_t id_ = 0;
    std::uint64_t parent_ = 0;
    std::uint64_t correlation_ = 0;
    std::uint64_t beginTicks_ = 0;
    std::uint64_t beginNs_ = 0; ///< 0: not converted yet (no plugin wanted the begin event)
    std::uint64_t beginFloor_ = 0; ///< TraceClock::lastNs() at the begin, for a late conversion
    std::uint64_t endNs_ = 0; ///< 0: read the clock when the span ends
    std::uint64_t endTicks_ = 0; ///< setEndTicks(); 0: none
    std::uint64_t completeNs_ = 0; ///< setCompleted(); 0: not completed inside the span
    bool completedAtEnd_ = false; ///< setEndTicks(..., true)
    std::size_t count_ = 0;
    std::size_t dropped_ = 0;
    nixl_trace_attr_t attrs_[max_span_attrs];
};

/**
 * Sets the correlation id of every span and mark the same tracer emits on this thread while it
 * lives (innermost scope wins). A null tracer makes it a no-op. Stack-only, like Span.
 */
class CorrelationScope {
public:
    CorrelationScope(const Tracer *tracer, std::uint64_t id) noexcept;
    ~CorrelationScope();

    CorrelationScope(const CorrelationScope &) = delete;
    CorrelationScope &
    operator=(const CorrelationScope &) = delete;
    CorrelationScope(CorrelationScope &&) = delete;
    CorrelationScope &
    operator=(CorrelationScope &&) = delete;

private:
    friend class Tracer;
    friend class Span;
    const Tracer *tracer_;
    std::uint64_t id_;
    const CorrelationScope *prev_ = nullptr;
};

/** A trace backend implementation to instantiate: a loaded plugin, or a table (tests). */
struct TraceBackendRef {
    std::string name; ///< e.g. "nvtx"
    std::string origin; ///< the .so path, for messages
    const nixl_trace_backend_ops_t *ops = nullptr;
    /** Keeps the library's descriptor alive (plugins are never unloaded; kept for clarity). */
    std::shared_ptr<const nixlLoadedPlugin> plugin;
};

/**
 * The plugin instances of one agent and the fan-out to them. Created once per agent; the set of
 * instances never changes afterwards, so event calls read it without a lock.
 *
 * Thread safety: mark(), Span and CorrelationScope may be used from any thread concurrently;
 * construction and destruction must not overlap any of them.
 */
class Tracer {
public:
    /**
     * Creates one instance of each backend for agent. A backend whose ops table is unusable or
     * whose create() fails is logged once and left out. Returns null when none remains.
     */
    static std::unique_ptr<Tracer>
    create(const std::string &agent, const std::vector<TraceBackendRef> &backends);

    /** Destroys every instance (each flushes what it holds). */
    ~Tracer();

    Tracer(const Tracer &) = delete;
    Tracer &
    operator=(const Tracer &) = delete;

    /** An instant event of core's table, e.g. nixl::xfer.complete. */
    void
    mark(NameId name, std::initializer_list<Attr> attrs = {}) const noexcept;

    /** mark() at a time the caller already read with nowNs() (one clock read less). */
    void
    markAt(NameId name, std::uint64_t at_ns, std::initializer_list<Attr> attrs = {}) const noexcept;

    /** An instant event with a name outside the table; name is borrowed for the call. */
    void
    mark(const char *name, Kind kind, std::initializer_list<Attr> attrs = {}) const noexcept;

    /**
     * A mark with everything given: the name (name_id from the table or
     * NIXL_TRACE_NAME_DYNAMIC, name always set and borrowed), its time (nowNs() clock), its
     * correlation id, and attributes (borrowed). It has no parent span (0): its time may be
     * coarser than the spans' and fall outside the span open on this thread. Unlike the other event calls it catches an
     * exception a plugin lets out (the other instances still get the event) and returns how
     * many instances threw, so that the backend phase sink can count the event as dropped.
     */
    std::size_t
    markRaw(std::uint32_t name_id,
            const char *name,
            Kind kind,
            std::uint64_t at_ns,
            std::uint64_t correlation_id,
            const nixl_trace_attr_t *attrs,
            std::size_t attr_count) const noexcept;

    /** Names of the active backends, in NIXL_TRACE_BACKENDS order. */
    std::vector<std::string>
    backendNames() const;

    std::size_t
    size() const noexcept {
        return instances_.size();
    }

    bool
    empty() const noexcept {
        return instances_.empty();
    }

    /** The innermost open span of this tracer on the calling thread, or 0. */
    std::uint64_t
    currentSpan() const noexcept;

    /** The innermost correlation id of this tracer on the calling thread, or 0. */
    std::uint64_t
    currentCorrelation() const noexcept;

private:
    friend class Span;

    using event_fn = void (*)(nixl_trace_backend_t *, const nixl_trace_event_t *);

    struct instance {
        std::string name;
        nixl_trace_backend_t *backend;
        void (*destroy)(nixl_trace_backend_t *);
    };

    /** One plugin operation to call for an event kind. */
    struct target {
        event_fn fn;
        nixl_trace_backend_t *backend;
    };

    Tracer() = default;

    /** at_ns 0: now. */
    void
    emitMark(std::uint32_t name_id,
             const char *name,
             Kind kind,
             std::uint64_t at_ns,
             std::initializer_list<Attr> attrs) const noexcept;

    std::string agent_;
    std::vector<instance> instances_;
    // Per event kind, the instances whose plugin implements it (a NULL op is not called, and
    // a kind nobody implements builds no event: a plugin that only wants span ends costs
    // nothing at span begin).
    std::vector<target> spanBegin_;
    std::vector<target> spanEnd_;
    std::vector<target> mark_;
    // Instances with mark but no span_end: they get a span's folded completion as a mark.
    std::vector<target> markNoEnd_;
};

} // namespace nixl::trace

#endif // NIXL_SRC_CORE_TRACING_TRACING_H
