/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_trace_backend_sdk.h
 * @brief Header-only C++ SDK for writing a trace backend plugin.
 *
 * Derive from nixlTraceBackendBase, give it a constructor taking the context, and export it:
 * @code
 *   class myTracer : public nixlTraceBackendBase {
 *   public:
 *       explicit myTracer(const nixlTraceBackendContext &ctx);  // may throw
 *       void spanEnd(const nixl_trace_event_t &ev) noexcept override;
 *   };
 *   NIXL_TRACE_BACKEND_PLUGIN_DEFINE(myTracer, "mine", "1.0.0")
 * @endcode
 * and build it as libtrace_backend_mine.so; agents use it with NIXL_TRACE_BACKENDS=mine.
 *
 * Construction errors: throw any std::exception when the plugin cannot run for this agent;
 * the SDK logs what() once (make it name the variable, file or version at fault) and core
 * runs the agent without this plugin. No exception crosses into core. A plugin with nothing
 * to do for this agent (e.g. NVTX with no tool attached) throws nixlTraceBackendDeclined
 * instead: create returns NIXL_PLUGIN_ERR_NOT_ALLOWED, which core logs at INFO, not as an
 * error.
 *
 * Thread safety: the event methods of one instance are called from any thread of the agent,
 * concurrently, and must not block (they run on the transfer path): use per-thread state or
 * lock-free structures, and drop rather than wait. spanBegin and spanEnd of one span come
 * from the same thread, nested per thread. Event structs and what they point to are borrowed
 * for the call only.
 */
#ifndef NIXL_TRACE_BACKEND_SDK_H
#define NIXL_TRACE_BACKEND_SDK_H

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>

#include "nixl_plugin_sdk_common.h"
#include "nixl_trace_backend_plugin.h"

/**
 * What a trace backend's constructor receives. The views borrow core's memory and stay valid
 * for the instance's life, so the instance may keep them instead of copying.
 */
struct nixlTraceBackendContext {
    /** Name of the agent whose spans this instance receives (any bytes). */
    std::string_view agentName;
    /** Every name core will use with a table id: names[i].id == i. Register them up front. */
    std::span<const nixl_trace_name_t> names;
    /** Every attribute key core will use with a table id (nixl_trace_attr_t.key_id): keys[i].id
     *  == i, with its length. Keep per-key work (escaping, registration) from here. */
    std::span<const nixl_trace_key_t> keys;
    /** Core services (logging, options); the SDK's NIXL_SDK_* macros already use them. */
    const nixl_plugin_core_services_t *core = nullptr;
};

/**
 * Thrown by a trace backend's constructor to decline the agent: the plugin has nothing to do
 * for it (e.g. no tool to send events to). Not an error: what() is logged at DEBUG and core
 * logs one INFO line; the agent runs without this plugin.
 */
class nixlTraceBackendDeclined : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/** Views over an event's parts, for plugin code that prefers C++ types. */
inline std::span<const nixl_trace_attr_t>
nixlTraceAttrs(const nixl_trace_event_t &ev) noexcept {
    return ev.attrs == nullptr ? std::span<const nixl_trace_attr_t>()
                               : std::span<const nixl_trace_attr_t>(ev.attrs, ev.attr_count);
}

/** A string attribute's value as a view (empty for other types). */
inline std::string_view
nixlTraceAttrString(const nixl_trace_attr_t &a) noexcept {
    return a.type == NIXL_TRACE_ATTR_STRING && a.value.str.data != nullptr
        ? std::string_view(a.value.str.data, a.value.str.len)
        : std::string_view();
}

/**
 * Base class of a trace backend: derive from it, give the class a constructor taking
 * const nixlTraceBackendContext &, override the events it wants (as public members), and
 * export it with NIXL_TRACE_BACKEND_PLUGIN_DEFINE. One instance per agent that uses it. An
 * event it does not override is left out of the operations table, so core does not call into
 * the plugin for it at all.
 */
class nixlTraceBackendBase {
public:
    /**
     * Whether spanEnd handles a folded completion itself (nixl_trace_event_t.complete_ns
     * non-zero: the request completed inside the span, and the event stands for the
     * completion mark too). false (inherited): the SDK calls mark() with that mark's event,
     * then spanEnd(), the two calls a version-2 core made. A class that writes both from one
     * call declares `static constexpr bool foldsCompletion = true;`.
     */
    static constexpr bool foldsCompletion = false;

    nixlTraceBackendBase() = default;
    nixlTraceBackendBase(const nixlTraceBackendBase &) = delete;
    nixlTraceBackendBase &
    operator=(const nixlTraceBackendBase &) = delete;
    /** Runs when the agent goes: write out what is buffered. No event call runs after it. */
    virtual ~nixlTraceBackendBase() = default;

    /** A span starts; attrs are those known at its start. */
    virtual void
    spanBegin(const nixl_trace_event_t &) noexcept {}

    /** A span ends; attrs are all of the span's, begin_ns and end_ns both set (complete_ns:
     *  see foldsCompletion). */
    virtual void
    spanEnd(const nixl_trace_event_t &) noexcept {}

    /** An instant (e.g. nixl::xfer.complete); begin_ns is its time. */
    virtual void
    mark(const nixl_trace_event_t &) noexcept {}
};

// The C-table adapter (nixlSdk::detail), used by NIXL_TRACE_BACKEND_PLUGIN_DEFINE below; not
// API.
#include "internal/nixl_trace_backend_sdk_adapter.h"

/**
 * Exports Tracer as the trace backend NAME (a string literal matching
 * libtrace_backend_NAME.so) of release VERSION: defines the plugin's one exported symbol,
 * nixl_trace_backend_plugin_get. Use once, at namespace scope.
 */
#define NIXL_TRACE_BACKEND_PLUGIN_DEFINE(Tracer, NAME, VERSION)                                 \
    extern "C" __attribute__((visibility("default"))) const nixl_trace_backend_plugin_t *     \
    nixl_trace_backend_plugin_get(void) {                                                     \
        static const nixl_trace_backend_plugin_t plugin = {                                   \
            {NIXL_TRACE_BACKEND_ABI_VERSION,                                                  \
             NIXL_PLUGIN_KIND_TRACE_BACKEND,                                                  \
             sizeof(nixl_trace_backend_plugin_t),                                             \
             NAME,                                                                            \
             VERSION},                                                                        \
            &::nixlSdk::detail::traceBackendOps<Tracer>::table};                              \
        return &plugin;                                                                       \
    }

#endif // NIXL_TRACE_BACKEND_SDK_H
