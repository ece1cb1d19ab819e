/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The chrome trace plugin's two halves, timed apart (see benchmark/README.md): what the calling
 * thread pays to queue an event's record (nixlChromeEnqueue), and what the writer thread pays
 * to turn it into JSON (nixlChromeRecord::format). Events are those of one traced transfer on
 * the prepped path: the post span (two attributes) and its completion mark.
 */
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "chrome_record.h"
#include "chrome_session.h"

namespace {

struct transfer {
    nixl_trace_attr_t attrs[2];
    nixl_trace_event_t span{};
    nixl_trace_event_t mark{};

    transfer() {
        static const char remote[] = "target";
        attrs[0] = nixl_trace_attr_t{};
        attrs[0].key = "remote_agent";
        attrs[0].type = NIXL_TRACE_ATTR_STRING;
        attrs[0].value.str.data = remote;
        attrs[0].value.str.len = sizeof(remote) - 1;
        attrs[1] = nixl_trace_attr_t{};
        attrs[1].key = "bytes";
        attrs[1].type = NIXL_TRACE_ATTR_INT64;
        attrs[1].value.i64 = 4096;
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
        span.attr_count = 2;
        mark.name_id = 1; // the completion mark
        mark.parent_span_id = 42;
        mark.kind = NIXL_TRACE_KIND_METADATA;
    }
};

// Calling thread: both records of a transfer into a 1 MiB ring, drained at once (no writer,
// so nothing is dropped and the ring's pages stay warm).
void
BM_chrome_enqueue_transfer(benchmark::State &state) {
    nixlChromeRing ring(1u << 20);
    transfer t;
    for (auto _ : state) {
        benchmark::DoNotOptimize(nixlChromeEnqueue(ring, t.span, true, 0, true));
        benchmark::DoNotOptimize(nixlChromeEnqueue(ring, t.mark, false, 0, true));
        ring.consume(ring.used());
    }
}
BENCHMARK(BM_chrome_enqueue_transfer);

// Writer thread: the JSON lines of both records (post span + flow start, flow end + mark).
void
BM_chrome_format_transfer(benchmark::State &state) {
    transfer t;
    nixlChromeAgent agent;
    agent.escaped = "initiator";
    agent.names.resize(2);
    agent.names[0].escaped = std::string(nixlChromeRecord::kPostWrite);
    agent.names[0].flowStart = true;
    agent.names[1].escaped = std::string(nixlChromeRecord::kComplete);
    agent.names[1].flowEnd = true;
    std::vector<char> recs[2];
    const nixl_trace_event_t *evs[2] = {&t.span, &t.mark};
    for (int i = 0; i < 2; ++i) {
        const size_t n = nixlChromeRecord::size(*evs[i], true);
        recs[i].resize(n);
        nixlChromeRecord::encode(
            [&](size_t at, const void *p, size_t len) { std::memcpy(recs[i].data() + at, p, len); },
            *evs[i], i == 0, 0, true, n);
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
BENCHMARK(BM_chrome_format_transfer);

} // namespace

BENCHMARK_MAIN();
