/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtrace_backend_lttng.so, the benchmark's LTTng-UST trace plugin (trace_lttng_bench): every
 * span and mark the chrome plugin receives goes to an LTTng-UST tracepoint of the nixl_trace
 * provider (nixl_lttng_tp.h), with the same content the chrome plugin's calling thread copies
 * into its ring (ids, times, kind, name id, attributes). LTTng-UST's per-CPU ring buffers and
 * its consumer daemon then play the part of the chrome plugin's rings and writer thread.
 * Benchmark only: not installed, not a supported plugin.
 *
 * Thread safety: the event calls may run concurrently from any thread (tracepoints are);
 * construction and destruction are core's (one thread, no event call in flight).
 */
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "nixl_trace_backend_sdk.h"

#include "nixl_lttng_tp.h"

namespace {

/** Table events written (name and key events); the benchmark subtracts them from its count. */
std::atomic<uint64_t> table_events{0};

/** Strings longer than this are cut in the blob, as the chrome plugin cuts them. */
constexpr uint32_t kMaxString = 4096;
/** The blob's capacity: attributes past it are left out. */
constexpr size_t kBlobBytes = 16384;

/**
 * Encodes attrs as [u32 key_id][u16 key_len + key bytes when the id is dynamic][u8 type][value],
 * value: 8 bytes for int64 and double, else u32 original length + at most kMaxString bytes.
 * Returns the bytes used; an attribute that does not fit whole ends the blob.
 */
uint16_t
encodeAttrs(const nixl_trace_event_t &ev, uint32_t key_count, uint8_t *out) noexcept {
    size_t at = 0;
    auto put = [&](const void *p, size_t n) {
        std::memcpy(out + at, p, n);
        at += n;
    };
    for (const nixl_trace_attr_t &a : nixlTraceAttrs(ev)) {
        const bool dynamic = a.key_id >= key_count;
        const size_t key_len = dynamic ? std::strlen(a.key) : 0;
        size_t need = 4 + (dynamic ? 2 + key_len : 0) + 1;
        uint32_t str_len = 0;
        if (a.type == NIXL_TRACE_ATTR_STRING) {
            str_len = a.value.str.len > kMaxString ? kMaxString : uint32_t(a.value.str.len);
            need += 4 + str_len;
        } else if (a.type == NIXL_TRACE_ATTR_INT64 || a.type == NIXL_TRACE_ATTR_DOUBLE) {
            need += 8;
        } else {
            continue; // unknown type: skipped, as the chrome plugin does
        }
        if (key_len > UINT16_MAX || at + need > kBlobBytes) {
            break;
        }
        const uint32_t id = dynamic ? NIXL_TRACE_KEY_DYNAMIC : a.key_id;
        put(&id, 4);
        if (dynamic) {
            const uint16_t kl = uint16_t(key_len);
            put(&kl, 2);
            put(a.key, key_len);
        }
        const uint8_t type = uint8_t(a.type);
        put(&type, 1);
        if (a.type == NIXL_TRACE_ATTR_STRING) {
            const uint32_t orig = uint32_t(a.value.str.len);
            put(&orig, 4);
            put(a.value.str.data, str_len);
        } else {
            put(&a.value, 8);
        }
    }
    return uint16_t(at);
}

class nixlLttngTracer final : public nixlTraceBackendBase {
public:
    /** One call per post that completed at once: the span, then its completion mark. */
    static constexpr bool foldsCompletion = true;

    explicit nixlLttngTracer(const nixlTraceBackendContext &ctx)
        : keyCount_(uint32_t(ctx.keys.size())) {
        const std::string agent(ctx.agentName);
        for (const nixl_trace_name_t &n : ctx.names) {
            lttng_ust_tracepoint(nixl_trace, name, agent.c_str(), n.id, n.name);
            table_events.fetch_add(1, std::memory_order_relaxed);
        }
        for (const nixl_trace_key_t &k : ctx.keys) {
            lttng_ust_tracepoint(nixl_trace, key, agent.c_str(), k.id, k.key);
            table_events.fetch_add(1, std::memory_order_relaxed);
        }
    }

    void
    spanEnd(const nixl_trace_event_t &ev) noexcept override {
        uint8_t blob[kBlobBytes];
        const uint16_t len = encodeAttrs(ev, keyCount_, blob);
        lttng_ust_tracepoint(nixl_trace, span, ev.name_id, ev.kind, dynName(ev.name_id, ev.name),
                             ev.span_id, ev.parent_span_id, ev.correlation_id, ev.begin_ns,
                             ev.end_ns, blob, len);
        if (ev.complete_ns != 0) {
            lttng_ust_tracepoint(nixl_trace, mark, ev.complete_name_id, ev.complete_kind,
                                 dynName(ev.complete_name_id, ev.complete_name), ev.span_id,
                                 ev.correlation_id, ev.complete_ns, blob, 0);
        }
    }

    void
    mark(const nixl_trace_event_t &ev) noexcept override {
        uint8_t blob[kBlobBytes];
        const uint16_t len = encodeAttrs(ev, keyCount_, blob);
        lttng_ust_tracepoint(nixl_trace, mark, ev.name_id, ev.kind, dynName(ev.name_id, ev.name),
                             ev.parent_span_id, ev.correlation_id, ev.begin_ns, blob, len);
    }

private:
    static const char *
    dynName(uint32_t id, const char *name) noexcept {
        return id == NIXL_TRACE_NAME_DYNAMIC && name != nullptr ? name : "";
    }

    const uint32_t keyCount_;
};

} // namespace

NIXL_TRACE_BACKEND_PLUGIN_DEFINE(nixlLttngTracer, "lttng", "0.1.0")

/** For trace_lttng_bench: the name and key events written so far (not transfer events). */
extern "C" __attribute__((visibility("default"))) uint64_t
nixl_bench_lttng_table_events(void) {
    return table_events.load(std::memory_order_relaxed);
}
