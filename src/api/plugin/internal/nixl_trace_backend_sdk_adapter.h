/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl_trace_backend_sdk_adapter.h
 * @brief Internal to the trace backend SDK: the operations table of nixl_trace_backend_plugin.h
 *        implemented over nixlTraceBackendBase. Plugin authors never include or call this;
 *        nixl_trace_backend_sdk.h includes it, and NIXL_TRACE_BACKEND_PLUGIN_DEFINE uses
 *        nixlSdk::detail::traceBackendOps.
 *
 * create() turns the C init parameters into a nixlTraceBackendContext and constructs the
 * plugin, mapping its exceptions to a status with one log line (nixlTraceBackendDeclined to
 * NIXL_PLUGIN_ERR_NOT_ALLOWED at DEBUG, any other to an error); no exception crosses into
 * core. Event calls are noexcept on the C++ side, so nothing can escape them either. An event
 * method the plugin class does not override is a NULL operation, which core skips.
 */
#ifndef NIXL_TRACE_BACKEND_SDK_ADAPTER_H
#define NIXL_TRACE_BACKEND_SDK_ADAPTER_H

#ifndef NIXL_TRACE_BACKEND_SDK_H
#error "include nixl_trace_backend_sdk.h, not internal/nixl_trace_backend_sdk_adapter.h"
#endif

#include <exception>
#include <span>
#include <type_traits>

namespace nixlSdk {
namespace detail {

    template<typename Tracer> struct traceBackendOps {
        static nixl_plugin_status_t
        create(const nixl_trace_backend_init_params_t *p, nixl_trace_backend_t **out) noexcept {
            if (p == nullptr || out == nullptr ||
                p->size < sizeof(nixl_trace_backend_init_params_t)) {
                return NIXL_PLUGIN_ERR_INVALID_PARAM;
            }
            if (p->core != nullptr) {
                coreServices().store(p->core, std::memory_order_release);
            }
            nixlTraceBackendContext ctx;
            ctx.agentName = toView(p->agent_name);
            ctx.names = std::span<const nixl_trace_name_t>(
                p->names, p->names == nullptr ? 0 : p->name_count);
            ctx.keys = std::span<const nixl_trace_key_t>(p->keys,
                                                         p->keys == nullptr ? 0 : p->key_count);
            ctx.core = p->core;
            try {
                auto *t = new Tracer(ctx);
                *out = reinterpret_cast<nixl_trace_backend_t *>(
                    static_cast<nixlTraceBackendBase *>(t));
                return NIXL_PLUGIN_SUCCESS;
            }
            catch (const nixlTraceBackendDeclined &e) {
                NIXL_SDK_DEBUG(e.what());
                return NIXL_PLUGIN_ERR_NOT_ALLOWED;
            }
            catch (const std::exception &e) {
                NIXL_SDK_ERROR(e.what());
                return NIXL_PLUGIN_ERR_INVALID_PARAM;
            }
            catch (...) {
                NIXL_SDK_ERROR("trace backend constructor threw a non-standard exception");
                return NIXL_PLUGIN_ERR_UNKNOWN;
            }
        }

        static nixlTraceBackendBase *
        self(nixl_trace_backend_t *t) noexcept {
            return reinterpret_cast<nixlTraceBackendBase *>(t);
        }

        static void
        destroy(nixl_trace_backend_t *t) noexcept {
            try {
                delete self(t);
            }
            catch (...) {
                NIXL_SDK_ERROR("trace backend destructor threw");
            }
        }

        // Event calls go through the concrete class (create made a Tracer): when Tracer or its
        // method is final, the call is direct, not a second indirect call after core's.
        static Tracer *
        concrete(nixl_trace_backend_t *t) noexcept {
            return static_cast<Tracer *>(self(t));
        }

        static void
        spanBegin(nixl_trace_backend_t *t, const nixl_trace_event_t *ev) noexcept {
            if (ev != nullptr) {
                concrete(t)->spanBegin(*ev);
            }
        }

        static void
        spanEnd(nixl_trace_backend_t *t, const nixl_trace_event_t *ev) noexcept {
            if (ev == nullptr) {
                return;
            }
            if constexpr (!Tracer::foldsCompletion) {
                if (ev->complete_ns != 0) {
                    // The completion mark the event stands for, before the span ends (it
                    // happened inside the span).
                    nixl_trace_event_t m{};
                    m.size = sizeof(m);
                    m.name_id = ev->complete_name_id;
                    m.kind = ev->complete_kind;
                    m.name = ev->complete_name != nullptr ? ev->complete_name : "";
                    m.parent_span_id = ev->span_id;
                    m.correlation_id = ev->correlation_id;
                    m.begin_ns = ev->complete_ns;
                    concrete(t)->mark(m);
                }
            }
            concrete(t)->spanEnd(*ev);
        }

        static void
        mark(nixl_trace_backend_t *t, const nixl_trace_event_t *ev) noexcept {
            if (ev != nullptr) {
                concrete(t)->mark(*ev);
            }
        }

        // An event method Tracer does not override is left NULL in the table, so core never
        // calls it (a call into the base class's empty body costs an indirect call per event).
        // Naming the member through Tracer finds the most derived declaration: its class is
        // nixlTraceBackendBase exactly when no class between them overrides it.
        using baseEventFn = void (nixlTraceBackendBase::*)(const nixl_trace_event_t &) noexcept;
        static constexpr bool hasSpanBegin =
            !std::is_same_v<decltype(&Tracer::spanBegin), baseEventFn>;
        static constexpr bool hasSpanEnd = !std::is_same_v<decltype(&Tracer::spanEnd), baseEventFn>;
        static constexpr bool hasMark = !std::is_same_v<decltype(&Tracer::mark), baseEventFn>;
        static_assert(std::is_same_v<decltype(Tracer::foldsCompletion), const bool>,
                      "foldsCompletion is a static constexpr bool");

        static constexpr nixl_trace_backend_ops_t table = {
            sizeof(nixl_trace_backend_ops_t),
            &create,
            &destroy,
            hasSpanBegin ? &spanBegin : nullptr,
            hasSpanEnd ? &spanEnd : nullptr,
            hasMark ? &mark : nullptr,
        };
    };

} // namespace detail
} // namespace nixlSdk

#endif // NIXL_TRACE_BACKEND_SDK_ADAPTER_H
