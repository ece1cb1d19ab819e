/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The NVTX trace backend (libtrace_backend_nvtx.so): turns the agent's spans and marks into
 * NVTX ranges and marks, so that Nsight Systems (nsys profile -t nvtx) shows them on the same
 * timeline as the process's CUDA work.
 *
 * Per agent: one NVTX domain named after the agent, a category per kind, four static payload
 * schemas (correlation id, int64/double/string attribute), and one registered string per entry
 * of the create-time name table. Per event: one nvtxDomainRangePushEx (span_begin), one
 * nvtxDomainRangePop (span_end), one nvtxDomainMarkEx (mark); attributes and the correlation
 * id ride on the push or mark as NVTX extended payloads pointing at core's own attribute
 * structs, so nothing is formatted, copied or allocated per event.
 *
 * Ranges are closed with the core pop, never with nvtxRangePopPayload: a tool that does not
 * implement the payload extension must still see every push matched by a pop. Attributes that
 * become known only while a span runs (span_end carries more attributes than span_begin did)
 * are emitted as a mark with the span's name and those attributes just before the pop.
 *
 * With no tool attached (NVTX then creates no domain) the constructor declines the agent
 * (nixlTraceBackendDeclined): core keeps no instance and the agent pays nothing for it.
 *
 * Thread safety: the event methods may run concurrently on any threads; they touch only the
 * immutable handles set up by the constructor, a per-thread span stack, and an atomic
 * counter.
 */
#ifndef NIXL_TRACE_NVTX_TRACER_H
#define NIXL_TRACE_NVTX_TRACER_H

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "nixl_trace_backend_sdk.h"

class nixlNvtxTracer final : public nixlTraceBackendBase {
public:
    /** Static payload schema ids this plugin registers in each agent's domain. */
    static constexpr uint64_t schemaCorrelation = (1ull << 24) + 1;
    static constexpr uint64_t schemaAttrInt64 = (1ull << 24) + 2;
    static constexpr uint64_t schemaAttrDouble = (1ull << 24) + 3;
    static constexpr uint64_t schemaAttrString = (1ull << 24) + 4;
    /** Payloads attached to one NVTX event: the correlation id and up to 15 attributes. */
    static constexpr size_t maxPayloads = 16;

    /** Throws nixlTraceBackendDeclined when no NVTX tool is attached. */
    explicit nixlNvtxTracer(const nixlTraceBackendContext &ctx);
    ~nixlNvtxTracer() override;

    void
    spanBegin(const nixl_trace_event_t &ev) noexcept override;
    void
    spanEnd(const nixl_trace_event_t &ev) noexcept override;
    void
    mark(const nixl_trace_event_t &ev) noexcept override;

private:
    void
    registerSchemas() noexcept;
    // Fills attr with the event's name, colour and category, and payloads (maxPayloads
    // entries) with its correlation id and attrs [first, attr_count); attr points at them.
    // Returns the number of attribute payloads (the correlation id not counted).
    size_t
    describe(const nixl_trace_event_t &ev,
             size_t first,
             nvtxEventAttributes_t &attr,
             nvtxPayloadData_t *payloads) noexcept;

    std::string domainName_;
    nvtxDomainHandle_t domain_ = nullptr;
    // Registered string per name-table id; null where the tool gave none (events then carry
    // the ASCII name).
    std::vector<nvtxStringHandle_t> names_;
    std::atomic<uint64_t> droppedAttrs_{0};
};

#endif // NIXL_TRACE_NVTX_TRACER_H
