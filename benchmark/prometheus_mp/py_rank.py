#!/usr/bin/python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""One rank of the Python prometheus_client multiprocess baseline for scrape_bench.py.

It records the same workload nixl_exporter_driver exports (see test/e2e/nixl_exporter_driver.cpp)
into the same metric families, with one label set per process, so a scrape returns as many
series as libnixl's prometheus_mp does for the same number of processes:
  counters   agent_{tx,rx}_bytes_total, agent_{tx,rx}_requests_total,
             agent_memory_{registered,deregistered}_bytes_total,
             agent_telemetry_events_dropped_total, agent_trace_phases_dropped_total,
             agent_errors_total{status} (12 statuses)
  gauges     agent_{tx,rx}_last_bytes, agent_memory_{registered,deregistered}_last_bytes,
             agent_xfer_time_last_seconds, agent_xfer_post_time_last_seconds
  histograms agent_xfer_time_seconds, agent_xfer_post_time_seconds, NIXL's 18 bounds
Counters and histograms carry hostname, agent_name, agent_instance and local_rank, which differ
per process, so prometheus_client's summing across pids keeps one series per process; gauges use
multiprocess_mode='all', which adds the pid label itself.

PROMETHEUS_MULTIPROC_DIR must be set in the environment (prometheus_client reads it at import).
With --serve-port the rank also serves /metrics from a MultiProcessCollector, as an application
using multiprocess mode would. It writes --ready-file after the workload, then waits for end of
standard input. --measure prints the recording cost per event as JSON and exits.
"""

import argparse
import json
import os
import socket
import sys
import time

STATUSES = ["not_posted", "invalid_param", "backend", "not_found", "mismatch", "not_allowed",
            "repost_active", "unknown", "not_supported", "remote_disconnect", "canceled",
            "no_telemetry"]
BOUNDS_US = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000,
             500000, 1000000, 5000000, 10000000]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--agent-name", required=True)
    ap.add_argument("--events", type=int, default=100)
    ap.add_argument("--bytes", type=int, default=4096)
    ap.add_argument("--errors", type=int, default=1)
    ap.add_argument("--dropped", type=int, default=1)
    ap.add_argument("--serve-port", type=int, default=0)
    ap.add_argument("--ready-file")
    ap.add_argument("--measure", action="store_true")
    args = ap.parse_args()

    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        print("py_rank: PROMETHEUS_MULTIPROC_DIR is not set", file=sys.stderr)
        return 2
    from prometheus_client import Counter, Gauge, Histogram  # after the variable is checked

    names = ["hostname", "agent_name", "agent_instance", "local_rank"]
    values = [socket.gethostname(), args.agent_name, "0", str(args.rank)]
    buckets = [b / 1e6 for b in BOUNDS_US]

    def counter(name, doc):
        return Counter(name, doc, names).labels(*values)

    def gauge(name, doc):
        return Gauge(name, doc, names, multiprocess_mode="all").labels(*values)

    def hist(name, doc):
        return Histogram(name, doc, names, buckets=buckets).labels(*values)

    tx_bytes = counter("agent_tx_bytes", "Bytes sent by completed writes")
    rx_bytes = counter("agent_rx_bytes", "Bytes received by completed reads")
    tx_req = counter("agent_tx_requests", "Completed write requests")
    rx_req = counter("agent_rx_requests", "Completed read requests")
    mem_reg = counter("agent_memory_registered_bytes", "Memory registered")
    mem_dereg = counter("agent_memory_deregistered_bytes", "Memory deregistered")
    dropped = counter("agent_telemetry_events_dropped", "Telemetry events lost")
    # A series of its own, like libnixl's (the driver exports no such events: it stays at 0).
    counter("agent_trace_phases_dropped", "Backend trace phases that could not be delivered")
    errors = Counter("agent_errors", "Errors returned by the agent, by status",
                     names + ["status"])
    tx_last = gauge("agent_tx_last_bytes", "Bytes of the last write")
    rx_last = gauge("agent_rx_last_bytes", "Bytes of the last read")
    reg_last = gauge("agent_memory_registered_last_bytes", "Last registration")
    dereg_last = gauge("agent_memory_deregistered_last_bytes", "Last deregistration")
    xfer_last = gauge("agent_xfer_time_last_seconds", "Last transfer time")
    post_last = gauge("agent_xfer_post_time_last_seconds", "Last post time")
    xfer_h = hist("agent_xfer_time_seconds", "Time from post to observed completion")
    post_h = hist("agent_xfer_post_time_seconds", "Time from post to the backend's post returning")

    def transfer(i, write):
        # Same values as nixl_exporter_driver's appendTransfer: 4 events per transfer.
        post = (1 + (i * 31) % 100) / 1e6
        xfer = (10 + (i * 7919) % 20000) / 1e6
        post_h.observe(post)
        post_last.set(post)
        xfer_h.observe(xfer)
        xfer_last.set(xfer)
        if write:
            tx_bytes.inc(args.bytes)
            tx_last.set(args.bytes)
            tx_req.inc()
        else:
            rx_bytes.inc(args.bytes)
            rx_last.set(args.bytes)
            rx_req.inc()

    t0 = time.perf_counter_ns()
    mem_reg.inc(1 << 20)
    reg_last.set(1 << 20)
    for i in range(args.events):
        transfer(i, True)
        transfer(i, False)
    for s in STATUSES:
        errors.labels(*values, s).inc(args.errors)
    dropped.inc(args.dropped)
    mem_dereg.inc(1 << 19)
    dereg_last.set(1 << 19)
    elapsed = time.perf_counter_ns() - t0
    n_events = 2 + 8 * args.events + len(STATUSES) * args.errors + 1

    if args.measure:
        print(json.dumps({"pid": os.getpid(), "events": n_events, "ns": elapsed,
                          "ns_per_event": elapsed / n_events}), flush=True)
        return 0

    if args.serve_port:
        from prometheus_client import CollectorRegistry, start_http_server
        from prometheus_client.multiprocess import MultiProcessCollector
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        start_http_server(args.serve_port, addr="127.0.0.1", registry=registry)

    if args.ready_file:
        tmp = f"{args.ready_file}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(json.dumps({"pid": os.getpid(), "events": n_events}) + "\n")
        os.rename(tmp, args.ready_file)

    sys.stdin.read()  # until the harness closes our stdin
    return 0


if __name__ == "__main__":
    sys.exit(main())
