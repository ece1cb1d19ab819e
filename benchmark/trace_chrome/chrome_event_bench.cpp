/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The chrome trace plugin's two halves, timed apart (see benchmark/README.md): what the calling
 * thread pays to queue an event's record (nixlChromeEnqueue), and what the writer thread pays
 * to turn it into JSON (nixlChromeRecord::format). Events are those of one traced transfer on
 * the prepped path: the post span (three attributes) and its completion mark, in two forms:
 *   ..._transfer        what a trace ABI version-3 core sends: one span_end whose keys are ids
 *                       of the create-time key table and that carries the completion
 *                       (complete_ns), one record
 *   ..._transfer_split  the version-2 form: keys as strings, the mark a record of its own
 */
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "chrome_record.h"
#include "chrome_session.h"

namespace {

const nixlChromeRecord::tables kTables{2, 3}; // names: post, complete; keys: as below

struct transfer {
    nixl_trace_attr_t attrs[3];
    nixl_trace_event_t span{};
    nixl_trace_event_t mark{};

    /** folded: version 3 (interned keys, completion in the span); else version 2. */
    explicit transfer(bool folded) {
        static const char remote[] = "target";
        static const char trace[] = "0af7651916cd43dd8448eb211c80319c";
        attrs[0] = nixl_trace_attr_t{};
        attrs[0].key = "remote_agent";
        attrs[0].type = NIXL_TRACE_ATTR_STRING;
        attrs[0].value.str.data = remote;
        attrs[0].value.str.len = sizeof(remote) - 1;
        attrs[1] = nixl_trace_attr_t{};
        attrs[1].key = "bytes";
        attrs[1].type = NIXL_TRACE_ATTR_INT64;
        attrs[1].value.i64 = 4096;
        attrs[2] = nixl_trace_attr_t{};
        attrs[2].key = "trace_id";
        attrs[2].type = NIXL_TRACE_ATTR_STRING;
        attrs[2].value.str.data = trace;
        attrs[2].value.str.len = sizeof(trace) - 1;
        for (uint32_t i = 0; i < 3; ++i) {
            attrs[i].key_id = folded ? i : NIXL_TRACE_KEY_DYNAMIC;
        }
        for (nixl_trace_event_t *e : {&span, &mark}) {
            e->size = sizeof(nixl_trace_event_t);
            e->begin_ns = 1234567890123ull;
            e->end_ns = 1234567891123ull;
            e->correlation_id = 0x7f0012345678ull;
            e->kind = NIXL_TRACE_KIND_COMM_SEND;
        }
        span.name_id = 0; // a post, in the table
        span.span_id = 42;
        span.attrs = attrs;
        span.attr_count = 3;
        mark.name_id = 1; // the completion mark
        mark.parent_span_id = 42;
        mark.kind = NIXL_TRACE_KIND_METADATA;
        if (folded) {
            span.complete_ns = span.end_ns;
            span.complete_name = "nixl::xfer.complete";
            span.complete_name_id = 1;
            span.complete_kind = NIXL_TRACE_KIND_METADATA;
        }
    }

    /** The events the plugin receives for one transfer. */
    std::vector<const nixl_trace_event_t *>
    events() const {
        if (span.complete_ns != 0) {
            return {&span};
        }
        return {&mark, &span};
    }
};

nixlChromeAgent
makeAgent() {
    nixlChromeAgent agent;
    agent.escaped = "initiator";
    agent.names.resize(2);
    agent.names[0].escaped = std::string(nixlChromeRecord::kPostWrite);
    agent.names[0].flowStart = true;
    agent.names[1].escaped = std::string(nixlChromeRecord::kComplete);
    agent.names[1].flowEnd = true;
    agent.keys = {"remote_agent", "bytes", "trace_id"};
    return agent;
}

// Calling thread: the records of a transfer into a 1 MiB ring, drained at once (no writer,
// so nothing is dropped and the ring's pages stay warm).
void
enqueueTransfer(benchmark::State &state, bool folded) {
    nixlChromeRing ring(1u << 20);
    const transfer t(folded);
    if (folded) {
        for (auto _ : state) {
            benchmark::DoNotOptimize(nixlChromeEnqueue(ring, t.span, true, 0, kTables));
            ring.consume(ring.used());
        }
    } else {
        for (auto _ : state) {
            benchmark::DoNotOptimize(nixlChromeEnqueue(ring, t.mark, false, 0, kTables));
            benchmark::DoNotOptimize(nixlChromeEnqueue(ring, t.span, true, 0, kTables));
            ring.consume(ring.used());
        }
    }
}
BENCHMARK_CAPTURE(enqueueTransfer, BM_chrome_enqueue_transfer, true);
BENCHMARK_CAPTURE(enqueueTransfer, BM_chrome_enqueue_transfer_split, false);

// Writer thread: the JSON lines of the transfer (post span + flow start, flow end + mark).
void
formatTransfer(benchmark::State &state, bool folded) {
    const transfer t(folded);
    const nixlChromeAgent agent = makeAgent();
    std::vector<std::vector<char>> recs;
    for (const nixl_trace_event_t *ev : t.events()) {
        const bool span = ev == &t.span;
        const size_t n = nixlChromeRecord::size(*ev, span, kTables);
        std::vector<char> r(n);
        nixlChromeRecord::encode(
            [&](size_t at, const void *p, size_t len) { std::memcpy(r.data() + at, p, len); },
            *ev, span, 0, kTables, n);
        recs.push_back(std::move(r));
    }
    const std::string pidTid = "\"pid\":4242,\"tid\":4243";
    nixlChromeLine out;
    size_t bytes = 0;
    for (auto _ : state) {
        out.clear();
        for (auto &r : recs) {
            benchmark::DoNotOptimize(
                nixlChromeRecord::format(out, r.data(), r.size(), &agent, pidTid));
        }
        bytes = out.size();
    }
    state.counters["json_bytes"] = static_cast<double>(bytes);
}
BENCHMARK_CAPTURE(formatTransfer, BM_chrome_format_transfer, true);
BENCHMARK_CAPTURE(formatTransfer, BM_chrome_format_transfer_split, false);

} // namespace

BENCHMARK_MAIN();
