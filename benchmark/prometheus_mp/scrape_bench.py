#!/usr/bin/python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Scrape benchmark: libnixl's prometheus_mp exporter vs Python prometheus_client multiprocess.

For each process count N (--procs, default 1,8,64) it starts, at the same time:
  ours    N nixl_exporter_driver processes with the prometheus_mp plugin, one shared
          NIXL_TELEMETRY_MULTIPROC_DIR, one port (the elected rank serves /metrics);
  python  N py_rank.py processes in prometheus_client multiprocess mode (PROMETHEUS_MULTIPROC_DIR),
          rank 0 serving /metrics through a MultiProcessCollector;
both holding the same workload in the same metric families (see py_rank.py). Once both endpoints
return every series, it scrapes them alternately (--scrapes times each, after a warm-up), each
scrape a fresh HTTP/1.1 connection without compression, timed from connect to the last body
byte, and reports median / p99 latency, response bytes and the python/ours ratio.

It also measures the writer side: the cost per event of export_events through the plugin's C
ops (nixl_exporter_driver, one instance, --export-events events in 4096-event flushes) and of
the equivalent prometheus_client calls.

--json prints, instead of the summary's JSON line, one JSON object per process count on stdout
(benchmark/plot.py's input: "block" is the process count, our scrape latency as "p50_us" and
"p99_us", prometheus_client's under "peers"); the table then goes to stderr.

--quick is the smoke mode registered as a meson test: N = 1 and 3, a few scrapes, and it fails
unless both sides return all series. Exit codes: 0 ok, 1 failure, 77 skip (the prometheus_mp
plugin was not built, or python3-prometheus-client is missing).
"""

import argparse
import builtins
import functools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
STATUS_COUNT = 12
BUCKETS_PLUS_INF = 19

# Samples every side must serve for N processes, as (sample name, count per process).
EXPECTED_SAMPLES = [
    ("agent_tx_bytes_total", 1), ("agent_rx_bytes_total", 1),
    ("agent_tx_requests_total", 1), ("agent_rx_requests_total", 1),
    ("agent_memory_registered_bytes_total", 1), ("agent_memory_deregistered_bytes_total", 1),
    ("agent_telemetry_events_dropped_total", 1), ("agent_trace_phases_dropped_total", 1),
    ("agent_errors_total", STATUS_COUNT),
    ("agent_tx_last_bytes", 1), ("agent_rx_last_bytes", 1),
    ("agent_memory_registered_last_bytes", 1), ("agent_memory_deregistered_last_bytes", 1),
    ("agent_xfer_time_last_seconds", 1), ("agent_xfer_post_time_last_seconds", 1),
    ("agent_xfer_time_seconds_bucket", BUCKETS_PLUS_INF), ("agent_xfer_time_seconds_count", 1),
    ("agent_xfer_time_seconds_sum", 1),
    ("agent_xfer_post_time_seconds_bucket", BUCKETS_PLUS_INF),
    ("agent_xfer_post_time_seconds_count", 1), ("agent_xfer_post_time_seconds_sum", 1),
]
SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s")


class BenchFailure(Exception):
    pass


def log(msg):
    print(f"[scrape_bench] {msg}", file=sys.stderr, flush=True)


def free_ports(n):
    """n distinct ports the kernel just handed out on loopback. All n sockets stay bound until
    the last is taken, so two calls cannot return the same port; then they are closed so the
    children can bind them."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port():
    return free_ports(1)[0]


def scrape(port, timeout=30.0):
    """One scrape on a fresh connection; returns (seconds, body bytes)."""
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        chunks = []
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            chunks.append(b)
    elapsed = time.perf_counter() - t0
    raw = b"".join(chunks)
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"HTTP/1.") or b" 200 " not in head.split(b"\r\n")[0]:
        raise BenchFailure(f"bad response from port {port}: {raw[:200]!r}")
    if b"transfer-encoding: chunked" in head.lower():
        body = dechunk(body)
    return elapsed, body


def dechunk(body):
    out = bytearray()
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return bytes(out)


def sample_counts(body):
    counts = {}
    for line in body.decode("utf-8", errors="replace").splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def own_scrape_ms(body):
    """prometheus_mp's own nixl_mp_scrape_duration_seconds from a scrape, in ms, or None."""
    for line in body.decode("utf-8", errors="replace").splitlines():
        m = SAMPLE_RE.match(line)
        if m and m.group(1) == "nixl_mp_scrape_duration_seconds":
            try:
                return 1e3 * float(line.rsplit(None, 1)[1])
            except ValueError:
                return None
    return None


def missing_series(body, n):
    """What the scrape lacks for n processes ('' when it has every expected series)."""
    counts = sample_counts(body)
    problems = [f"{name}: {counts.get(name, 0)}/{per * n}" for name, per in EXPECTED_SAMPLES
                if counts.get(name, 0) != per * n]
    return ", ".join(problems)


class Group:
    """N processes of one side, each with a pipe on stdin (closing it stops them)."""

    def __init__(self, name, workdir):
        self.name = name
        self.workdir = workdir
        self.procs = []
        self.ready = []

    def spawn(self, argv, env, ready):
        idx = len(self.procs)
        err = open(os.path.join(self.workdir, f"{self.name}.{idx}.err"), "wb")
        out = open(os.path.join(self.workdir, f"{self.name}.{idx}.out"), "wb")
        p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=out, stderr=err)
        err.close()
        out.close()
        self.procs.append(p)
        self.ready.append(ready)

    def check_alive(self):
        for i, p in enumerate(self.procs):
            if p.poll() is not None:
                path = os.path.join(self.workdir, f"{self.name}.{i}.err")
                with open(path, errors="replace") as f:
                    raise BenchFailure(f"{self.name} process {i} exited with {p.returncode}: "
                                       f"{f.read()[-2000:]}")

    def all_ready(self):
        return all(os.path.exists(r) for r in self.ready)

    def stop(self):
        """Closes every stdin and waits (SIGKILL after 30 s); returns the failed exit codes."""
        for p in self.procs:
            try:
                p.stdin.close()
            except OSError:
                pass
        deadline = time.monotonic() + 30
        bad = []
        for i, p in enumerate(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait()
            if p.returncode != 0:
                bad.append((i, p.returncode))
        return bad


def wait_for(what, deadline_s, probe, groups):
    end = time.monotonic() + deadline_s
    delay = 0.05
    reason = ""
    while True:
        ok, reason = probe()
        if ok:
            return
        for g in groups:
            g.check_alive()
        if time.monotonic() > end:
            raise BenchFailure(f"timed out after {deadline_s}s waiting for {what}: {reason}")
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


def percentile(sorted_vals, q):
    if not sorted_vals:
        return float("nan")
    idx = max(0, min(len(sorted_vals) - 1, int(-(-q * len(sorted_vals) // 1)) - 1))
    return sorted_vals[idx]


def endpoint_probe(port, n):
    def probe():
        try:
            _, body = scrape(port, timeout=10)
        except (OSError, BenchFailure) as e:
            return False, str(e)
        problem = missing_series(body, n)
        return not problem, problem
    return probe


def bench_n(args, n, tmp):
    """Runs both sides with n processes; returns a result row."""
    work = os.path.join(tmp, f"n{n}")
    os.makedirs(work)
    ours = Group("ours", work)
    py = Group("python", work)
    ours_port, py_port = free_ports(2)
    try:
        env = dict(os.environ)
        env.update({
            "NIXL_TELEMETRY_MULTIPROC_DIR": os.path.join(work, "nixl-mp"),
            "NIXL_TELEMETRY_PROMETHEUS_PORT": str(ours_port),
            "NIXL_TELEMETRY_PROMETHEUS_LOCAL": "true",
        })
        py_dir = os.path.join(work, "py-mp")
        os.makedirs(py_dir)
        py_env = dict(os.environ)
        py_env["PROMETHEUS_MULTIPROC_DIR"] = py_dir
        for r in range(n):
            rank_env = dict(env)
            rank_env["LOCAL_RANK"] = str(r)
            ready = os.path.join(work, f"ours.ready.{r}")
            ours.spawn([args.driver, "--plugin-dir", args.plugin_dir, "--exporter",
                        "prometheus_mp", "--agent-name", f"rank{r}",
                        "--events", str(args.events), "--dropped", "1",
                        "--ready-file", ready, "--until-stdin-eof"], rank_env, ready)
            ready = os.path.join(work, f"python.ready.{r}")
            argv = [args.python, os.path.join(HERE, "py_rank.py"), "--rank", str(r),
                    "--agent-name", f"rank{r}", "--events", str(args.events),
                    "--ready-file", ready]
            if r == 0:
                argv += ["--serve-port", str(py_port)]
            py.spawn(argv, py_env, ready)
        wait_for(f"{n} ready processes per side", args.deadline,
                 lambda: (ours.all_ready() and py.all_ready(), "not all ready"), [ours, py])
        wait_for("ours to serve every series", args.deadline, endpoint_probe(ours_port, n),
                 [ours])
        wait_for("python to serve every series", args.deadline, endpoint_probe(py_port, n),
                 [py])

        lat = {"ours": [], "python": []}
        size = {}
        for i in range(args.warmup + args.scrapes):
            for side, port in (("ours", ours_port), ("python", py_port)):
                t, body = scrape(port)
                if i >= args.warmup:
                    lat[side].append(t)
                size[side] = len(body)
        own_ms = None
        for side, port in (("ours", ours_port), ("python", py_port)):
            _, body = scrape(port)
            problem = missing_series(body, n)
            if problem:
                raise BenchFailure(f"{side} with {n} processes lost series: {problem}")
            if side == "ours":
                own_ms = own_scrape_ms(body)
        row = {"procs": n, "scrapes": args.scrapes, "ours_collect_ms": own_ms}
        for side in ("ours", "python"):
            s = sorted(lat[side])
            row[side] = {"median_ms": 1e3 * percentile(s, 0.5),
                         "p99_ms": 1e3 * percentile(s, 0.99), "bytes": size[side]}
        row["ratio_median"] = row["python"]["median_ms"] / row["ours"]["median_ms"]
        row["ratio_p99"] = row["python"]["p99_ms"] / row["ours"]["p99_ms"]
        # Every process shuts down cleanly (a sanitizer report also shows up here).
        for group in (ours, py):
            bad = group.stop()
            if bad:
                first = os.path.join(work, f"{group.name}.{bad[0][0]}.err")
                with open(first, errors="replace") as f:
                    err = f.read()[-2000:]
                raise BenchFailure(f"{group.name} processes exited non-zero on stdin EOF "
                                   f"(index, code): {bad}; stderr of the first:\n{err}")
        return row
    finally:
        ours.stop()
        py.stop()


def export_cost(args, tmp):
    """ns per event on the writer: the plugin's export_events vs prometheus_client calls."""
    work = os.path.join(tmp, "export")
    os.makedirs(work)
    env = dict(os.environ)
    env.update({"NIXL_TELEMETRY_MULTIPROC_DIR": os.path.join(work, "nixl-mp"),
                "NIXL_TELEMETRY_PROMETHEUS_PORT": str(free_port()),
                "NIXL_TELEMETRY_PROMETHEUS_LOCAL": "true"})
    res = {}
    # The single-process exporter too, for reference, when it was built.
    exporters = [("ours", "prometheus_mp")]
    if os.path.exists(os.path.join(args.plugin_dir, "libtelemetry_exporter_prometheus.so")):
        exporters.append(("ours_single", "prometheus"))
    for key, exporter in exporters:
        env["NIXL_TELEMETRY_PROMETHEUS_PORT"] = str(free_port())
        out = subprocess.run([args.driver, "--plugin-dir", args.plugin_dir, "--exporter",
                              exporter, "--agent-name", "export-bench", "--dropped", "1",
                              "--events", str(args.export_events), "--hold-seconds", "0"],
                             env=env, capture_output=True, text=True, timeout=600, check=False)
        if out.returncode != 0:
            raise BenchFailure(f"driver export run with {exporter} failed ({out.returncode}): "
                               f"{out.stderr[-2000:]}")
        res[key] = json.loads(out.stdout.strip().splitlines()[-1])
    py_env = dict(os.environ)
    py_env["PROMETHEUS_MULTIPROC_DIR"] = os.path.join(work, "py-mp")
    os.makedirs(py_env["PROMETHEUS_MULTIPROC_DIR"])
    out = subprocess.run([args.python, os.path.join(HERE, "py_rank.py"), "--rank", "0",
                          "--agent-name", "export-bench", "--events",
                          str(args.export_events), "--measure"],
                         env=py_env, capture_output=True, text=True, timeout=600, check=False)
    if out.returncode != 0:
        raise BenchFailure(f"py_rank --measure failed ({out.returncode}): {out.stderr[-2000:]}")
    res["python"] = json.loads(out.stdout.strip().splitlines()[-1])
    return res


def json_points(rows):
    """One plot.py point per process count: ours, with prometheus_client as the peer."""
    points = []
    for r in rows:
        def figures(side):
            return {"p50_us": round(1e3 * r[side]["median_ms"], 1),
                    "p99_us": round(1e3 * r[side]["p99_ms"], 1), "bytes": r[side]["bytes"]}
        point = {"bench": "prometheus_mp_scrape", "op": "GET /metrics, fresh connection",
                 "block": r["procs"], "xlabel": "processes per side", "scrapes": r["scrapes"],
                 "path": "ours (prometheus_mp)"}
        point.update(figures("ours"))
        point["peers"] = [dict(name="prometheus_client multiprocess", **figures("python"))]
        points.append(point)
    return points


def print_report(rows, export, args, out=sys.stdout):
    print = functools.partial(builtins.print, file=out)  # noqa: A001 (stdout or stderr)
    print(f"# scrape latency, {args.scrapes} scrapes per side after {args.warmup} warm-up, "
          f"{args.events} writes+reads per process")
    print(f"{'procs':>5} | {'ours med ms':>11} {'p99 ms':>8} {'bytes':>8} | "
          f"{'python med ms':>13} {'p99 ms':>8} {'bytes':>8} | {'python/ours med':>15} "
          f"{'p99':>6}")
    for r in rows:
        o, p = r["ours"], r["python"]
        print(f"{r['procs']:>5} | {o['median_ms']:>11.3f} {o['p99_ms']:>8.3f} {o['bytes']:>8} | "
              f"{p['median_ms']:>13.3f} {p['p99_ms']:>8.3f} {p['bytes']:>8} | "
              f"{r['ratio_median']:>14.1f}x {r['ratio_p99']:>5.1f}x")
    own = [f"{r['procs']}: {r['ours_collect_ms']:.3f} ms" for r in rows
           if r.get("ours_collect_ms") is not None]
    if own:
        print("# ours, one scrape's nixl_mp_scrape_duration_seconds (the exporter's own "
              "timing): " + ", ".join(own))
    if export:
        o, p = export["ours"], export["python"]
        print(f"# writer cost per event ({args.export_events} writes+reads, one process)")
        print(f"ours   export_events (C ops, 4096-event flushes): {o['ns_per_event']:.1f} ns/event "
              f"over {o['events_exported']} events")
        print(f"python prometheus_client calls:                  {p['ns_per_event']:.1f} ns/event "
              f"over {p['events']} events")
        if "ours_single" in export:
            s = export["ours_single"]
            print(f"(single-process prometheus exporter, same driver: {s['ns_per_event']:.1f} "
                  f"ns/event)")
    if not args.json:
        print(json.dumps({"rows": rows, "export": export}))
    else:
        for point in json_points(rows):
            builtins.print(json.dumps(point, separators=(",", ":")), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driver", required=True, help="nixl_exporter_driver binary")
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="interpreter with prometheus_client (Debian python3-prometheus-client)")
    ap.add_argument("--procs", default="1,8,64")
    ap.add_argument("--scrapes", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--events", type=int, default=1000, help="writes and reads per process")
    ap.add_argument("--export-events", type=int, default=100000)
    ap.add_argument("--deadline", type=float, default=300)
    ap.add_argument("--quick", action="store_true", help="smoke mode: checks, no measurement")
    ap.add_argument("--json", action="store_true",
                    help="plot.py's points on stdout (one per process count), the table on stderr")
    args = ap.parse_args()
    if args.quick:
        args.procs, args.scrapes, args.warmup = "1,3", 3, 1
        args.events, args.export_events = 20, 1000
        # Each awaited condition fails with its reason well before meson's 300 s timeout.
        args.deadline = min(args.deadline, 40)

    plugin = os.path.join(args.plugin_dir, "libtelemetry_exporter_prometheus_mp.so")
    if not os.path.exists(plugin):
        print(f"SKIP: {plugin} was not built (prometheus_mp needs prometheus-cpp)")
        return SKIP
    probe = subprocess.run([args.python, "-c", "import prometheus_client"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        print(f"SKIP: {args.python} has no prometheus_client (apt install "
              f"python3-prometheus-client)")
        return SKIP

    procs = [int(x) for x in args.procs.split(",") if x]
    tmp = tempfile.mkdtemp(prefix="nixl-scrape-bench-")
    try:
        with open("/proc/loadavg") as f:
            log(f"load average before: {f.read().strip()}")
        rows = []
        for n in procs:
            log(f"{n} process(es) per side")
            rows.append(bench_n(args, n, tmp))
        export = export_cost(args, tmp)
        with open("/proc/loadavg") as f:
            log(f"load average after: {f.read().strip()}")
        print_report(rows, export, args, sys.stderr if args.json else sys.stdout)
    except (BenchFailure, OSError, subprocess.TimeoutExpired) as e:
        log(f"FAIL: {e}")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
