/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "nvtx_tracer.h"

#include <array>
#include <cstddef>

namespace {

// One ARGB colour per nixl_trace_kind_t, opaque, distinct on Nsight Systems' dark and light
// themes; the index is the kind.
constexpr std::array<uint32_t, NIXL_TRACE_KIND_COUNT> kindColour = {
    0xFF9E9E9Eu, // GENERIC: grey
    0xFF4CAF50u, // COMPUTE: green
    0xFF2196F3u, // MEMORY_R: blue
    0xFF3F51B5u, // MEMORY_W: indigo
    0xFFFF9800u, // COMM_SEND: orange
    0xFFFFC107u, // COMM_RECV: amber
    0xFF9C27B0u, // COMM_COLL: purple
    0xFF009688u, // METADATA: teal
};

// NVTX category of a kind: kind + 1 (category 0 means "none" to NVTX).
constexpr std::array<const char *, NIXL_TRACE_KIND_COUNT> kindName = {
    "Generic", "Compute", "MemoryR", "MemoryW", "CommSend", "CommRecv", "CommColl", "Metadata",
};

uint32_t
kindIndex(uint32_t kind) noexcept {
    return kind < NIXL_TRACE_KIND_COUNT ? kind : uint32_t{NIXL_TRACE_KIND_GENERIC};
}

// The attribute payloads point straight at core's nixl_trace_attr_t (borrowed for the call,
// which is all NVTX needs: a tool copies what it keeps before the call returns), so the
// schemas describe that struct's layout.
static_assert(offsetof(nixl_trace_attr_t, key) == 0);
static_assert(offsetof(nixl_plugin_str_t, data) == 0);
constexpr uint64_t attrValueOffset = offsetof(nixl_trace_attr_t, value);
constexpr uint64_t attrStrLenOffset = attrValueOffset + offsetof(nixl_plugin_str_t, len);

// Open spans of this thread (all instances: span ids are unique in the process), to tell
// which of span_end's attributes span_begin did not have. Trivially destructible, so the
// thread_local costs no registration; deeper nesting than this is traced, but its late
// attributes cannot be told from the early ones and all are repeated in the closing mark.
constexpr size_t maxTrackedDepth = 64;
struct openSpan {
    uint64_t spanId;
    size_t beginAttrs;
};
struct spanStack {
    openSpan entries[maxTrackedDepth];
    size_t depth;
};
thread_local spanStack tlsSpans;

} // namespace

nixlNvtxTracer::nixlNvtxTracer(const nixlTraceBackendContext &ctx)
    // NVTX takes a C string: an agent name with a NUL byte is cut there.
    : domainName_(ctx.agentName.substr(0, ctx.agentName.find('\0'))) {
    if (domainName_.empty()) {
        domainName_ = "nixl";
    }
    // The first NVTX call of the process loads the tool named by NVTX_INJECTION64_PATH. With
    // none, NVTX's stubs return a null domain, and the plugin declines the agent: core then
    // keeps no instance, so an always-on NIXL_TRACE_BACKENDS=nvtx costs nothing outside
    // Nsight Systems. A tool returns a domain handle (null is NVTX's default domain, which a
    // tool that handles domains does not hand out for a created one).
    domain_ = nvtxDomainCreateA(domainName_.c_str());
    if (domain_ == nullptr) {
        throw nixlTraceBackendDeclined("nvtx: agent '" + domainName_ +
                                       "': no NVTX tool attached (NVTX_INJECTION64_PATH names "
                                       "none, or the tool created no domain); not tracing");
    }
    for (uint32_t k = 0; k < NIXL_TRACE_KIND_COUNT; ++k) {
        nvtxDomainNameCategoryA(domain_, k + 1, kindName[k]);
    }
    registerSchemas();
    names_.assign(ctx.names.size(), nullptr);
    for (size_t i = 0; i < ctx.names.size(); ++i) {
        const nixl_trace_name_t &n = ctx.names[i];
        // An entry that breaks the table's contract (id == index) is not registered; events
        // naming it then fall back to their ASCII name, which core always sets.
        if (n.id == i && n.name != nullptr) {
            names_[i] = nvtxDomainRegisterStringA(domain_, n.name);
        }
    }
}

nixlNvtxTracer::~nixlNvtxTracer() {
    const uint64_t dropped = droppedAttrs_.load(std::memory_order_relaxed);
    if (dropped != 0) {
        NIXL_SDK_WARN("nvtx: agent '" << domainName_ << "': " << dropped
                                      << " attributes not traced (an NVTX event carries at most "
                                      << maxPayloads << " payloads, the correlation id included)");
    }
    nvtxDomainDestroy(domain_);
}

void
nixlNvtxTracer::registerSchemas() noexcept {
    const uint64_t mask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME |
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE |
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
    const uint64_t keyFlags =
        NVTX_PAYLOAD_ENTRY_FLAG_POINTER | NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_ZERO_TERMINATED;

    const nvtxPayloadSchemaEntry_t correlation[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "correlation_id", nullptr, 0, 0, nullptr, nullptr},
    };
    const nvtxPayloadSchemaEntry_t i64[] = {
        {keyFlags, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "key", nullptr, 0, 0, nullptr, nullptr},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT64, "value", nullptr, 0, attrValueOffset, nullptr, nullptr},
    };
    const nvtxPayloadSchemaEntry_t f64[] = {
        {keyFlags, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "key", nullptr, 0, 0, nullptr, nullptr},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "value", nullptr, 0, attrValueOffset, nullptr, nullptr},
    };
    // The string's bytes are not NUL-terminated: its length is entry 2.
    const nvtxPayloadSchemaEntry_t str[] = {
        {keyFlags, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "key", nullptr, 0, 0, nullptr, nullptr},
        {NVTX_PAYLOAD_ENTRY_FLAG_POINTER | NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_LENGTH_INDEX,
         NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "value", nullptr, 2, attrValueOffset, nullptr, nullptr},
        {NVTX_PAYLOAD_ENTRY_FLAG_HIDE, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "length", nullptr, 0,
         attrStrLenOffset, nullptr, nullptr},
    };
    struct schemaDef {
        const char *name;
        const nvtxPayloadSchemaEntry_t *entries;
        size_t count;
        size_t size;
        uint64_t id;
    };
    const schemaDef defs[] = {
        {"nixl.correlation", correlation, 1, sizeof(uint64_t), schemaCorrelation},
        {"nixl.attr.int64", i64, 2, sizeof(nixl_trace_attr_t), schemaAttrInt64},
        {"nixl.attr.double", f64, 2, sizeof(nixl_trace_attr_t), schemaAttrDouble},
        {"nixl.attr.string", str, 3, sizeof(nixl_trace_attr_t), schemaAttrString},
    };
    for (const schemaDef &d : defs) {
        nvtxPayloadSchemaAttr_t a{};
        a.fieldMask = mask;
        a.name = d.name;
        a.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
        a.entries = d.entries;
        a.numEntries = d.count;
        a.payloadStaticSize = d.size;
        a.schemaId = d.id;
        // Static ids: the return value (0 without a tool that has the payload extension) is
        // not needed, and a tool without the extension simply never decodes these payloads.
        (void)nvtxPayloadSchemaRegister(domain_, &a);
    }
}

size_t
nixlNvtxTracer::describe(const nixl_trace_event_t &ev,
                         size_t first,
                         nvtxEventAttributes_t &attr,
                         nvtxPayloadData_t *payloads) noexcept {
    const uint32_t kind = kindIndex(ev.kind);
    attr = nvtxEventAttributes_t{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.category = kind + 1;
    attr.colorType = NVTX_COLOR_ARGB;
    attr.color = kindColour[kind];
    if (ev.name_id < names_.size() && names_[ev.name_id] != nullptr) {
        attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        attr.message.registered = names_[ev.name_id];
    } else {
        attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attr.message.ascii = ev.name != nullptr ? ev.name : "";
    }

    size_t n = 0;
    if (ev.correlation_id != 0) {
        payloads[n++] = {schemaCorrelation, sizeof(ev.correlation_id), &ev.correlation_id};
    }
    const size_t attrsFrom = n;
    const size_t count = ev.attrs == nullptr ? 0 : ev.attr_count;
    for (size_t i = first; i < count; ++i) {
        const nixl_trace_attr_t &a = ev.attrs[i];
        uint64_t schema;
        switch (a.type) {
        case NIXL_TRACE_ATTR_INT64:
            schema = schemaAttrInt64;
            break;
        case NIXL_TRACE_ATTR_DOUBLE:
            schema = schemaAttrDouble;
            break;
        case NIXL_TRACE_ATTR_STRING:
            schema = schemaAttrString;
            break;
        default:
            continue; // a type this plugin does not know (the ABI says: skip it)
        }
        if (a.key == nullptr) {
            continue;
        }
        if (n == maxPayloads) {
            droppedAttrs_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        payloads[n++] = {schema, sizeof(nixl_trace_attr_t), &a};
    }
    if (n != 0) {
        attr.payloadType = NVTX_PAYLOAD_TYPE_EXT;
        attr.reserved0 = static_cast<int32_t>(n);
        attr.payload.ullValue = NVTX_POINTER_AS_PAYLOAD_ULLVALUE(payloads);
    }
    return n - attrsFrom;
}

void
nixlNvtxTracer::spanBegin(const nixl_trace_event_t &ev) noexcept {
    spanStack &s = tlsSpans;
    if (s.depth < maxTrackedDepth) {
        s.entries[s.depth] = {ev.span_id, ev.attrs == nullptr ? 0 : ev.attr_count};
    }
    ++s.depth;
    nvtxEventAttributes_t attr;
    nvtxPayloadData_t payloads[maxPayloads];
    describe(ev, 0, attr, payloads);
    nvtxDomainRangePushEx(domain_, &attr);
}

void
nixlNvtxTracer::spanEnd(const nixl_trace_event_t &ev) noexcept {
    spanStack &s = tlsSpans;
    size_t known = 0; // attributes the push carried; 0 if this span's begin was not tracked
    if (s.depth > 0) {
        --s.depth;
        if (s.depth < maxTrackedDepth && s.entries[s.depth].spanId == ev.span_id) {
            known = s.entries[s.depth].beginAttrs;
        }
    }
    const size_t count = ev.attrs == nullptr ? 0 : ev.attr_count;
    if (count > known) {
        nvtxEventAttributes_t attr;
        nvtxPayloadData_t payloads[maxPayloads];
        // Late attributes of types this plugin skips would make a mark with nothing new.
        if (describe(ev, known, attr, payloads) != 0) {
            nvtxDomainMarkEx(domain_, &attr);
        }
    }
    nvtxDomainRangePop(domain_);
}

void
nixlNvtxTracer::mark(const nixl_trace_event_t &ev) noexcept {
    nvtxEventAttributes_t attr;
    nvtxPayloadData_t payloads[maxPayloads];
    describe(ev, 0, attr, payloads);
    nvtxDomainMarkEx(domain_, &attr);
}

NIXL_TRACE_BACKEND_PLUGIN_DEFINE(nixlNvtxTracer, "nvtx", "0.1.0")
