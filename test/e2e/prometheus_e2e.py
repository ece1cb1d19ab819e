#!/usr/bin/python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""End-to-end test: a real Prometheus server scrapes libnixl's exporter plugins.

prometheus_mp: --ranks writer processes (nixl_exporter_driver, LOCAL_RANK=i) share one
NIXL_TELEMETRY_MULTIPROC_DIR and one port; whichever rank is elected serves /metrics. Prometheus
scrapes that endpoint every second, and the test waits until its HTTP API returns, for each
rank, exactly one series with the values that rank exported.

prometheus: one process with --ranks agents (one exporter instance each) behind the
single-process exporter's endpoint; same checks, one series per agent.

--names picks the series names (NIXL_TELEMETRY_PROMETHEUS_NAMES): libnixl's (the default) or
NIXL 1.4's; the checks below query whichever names the exporter then serves.

Also: the endpoint's text passes `promtool check metrics` (with NIXL 1.4's names, exactly the two
remarks docs/telemetry-prometheus.md lists); with --dashboard every query of the Grafana
dashboard returns data from the live data (it must work in both name modes), and with --rules
every recording rule of contrib/prometheus/nixl-rules.yml records data (Prometheus loads a copy
whose group interval is 1 s, not the file's 30 s); with --failover (prometheus_mp) the serving
rank is SIGKILLed and Prometheus must again scrape every survivor from the rank that took over,
the dead rank's series and store file gone; with --collision (prometheus) a second process on
the taken port is declined and the first keeps serving. Every exporter process must exit 0
when its stdin closes.

Everything listens on 127.0.0.1 with free ports, in a temporary directory removed at the end.
Exit codes: 0 pass, 1 fail, 77 skip (no Prometheus binary or the plugin was not built).
Standard library only.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77


class TestFailure(Exception):
    pass


def log(msg):
    print(f"[prometheus_e2e] {msg}", flush=True)


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



def wait_until(what, deadline_s, probe, procs=()):
    """Polls probe() until it returns a true value; fails with the last reason at the deadline.

    probe returns (value, reason). A process of procs that exits ends the wait early: nothing
    it was meant to serve can appear any more.
    """
    end = time.monotonic() + deadline_s
    reason = "not tried"
    delay = 0.05
    while True:
        value, reason = probe()
        if value:
            return value
        for p in procs:
            if p.proc.poll() is not None:
                raise TestFailure(f"{p.name} exited with {p.proc.returncode} while waiting for "
                                  f"{what}; its stderr:\n{p.stderr_text()}")
        if time.monotonic() > end:
            raise TestFailure(f"timed out after {deadline_s}s waiting for {what}: {reason}")
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


class Child:
    """A child process whose stdout/stderr go to files in the test directory."""

    def __init__(self, name, argv, env, workdir, stdin_pipe=False):
        self.name = name
        self.out_path = os.path.join(workdir, f"{name}.out")
        self.err_path = os.path.join(workdir, f"{name}.err")
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                argv, env=env, stdout=out, stderr=err,
                stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL)

    def stderr_text(self):
        try:
            with open(self.err_path, "r", errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return "(no stderr)"

    def stop(self, timeout=20):
        """Asks the child to stop (stdin EOF, then SIGTERM, then SIGKILL); returns its code."""
        if self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        first = (None,) if self.proc.stdin is not None else ()
        for sig in first + (signal.SIGTERM, signal.SIGKILL):
            if sig is not None and self.proc.poll() is None:
                self.proc.send_signal(sig)
            try:
                return self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                continue
        return self.proc.wait()


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode("utf-8", errors="replace")


def prom_query(prom_port, query):
    """Instant query; returns the result vector or raises on transport/API errors."""
    url = (f"http://127.0.0.1:{prom_port}/api/v1/query?"
           + urllib.parse.urlencode({"query": query}))
    body = json.loads(http_get(url))
    if body.get("status") != "success":
        raise TestFailure(f"query {query!r} failed: {body}")
    return body["data"]["result"]


def write_fast_rules(rules, tmp):
    """A copy of the rule file whose groups evaluate every second, like the global
    evaluation_interval below: the shipped file says `interval: 30s`, so its first recorded
    values could take up to 30 s to appear. Only the interval lines differ from the original;
    the records and their expressions are the ones checked."""
    with open(rules) as f:
        text = f.read()
    fast, n = re.subn(r"^(\s*)interval:\s*\S+[ \t]*$", r"\1interval: 1s", text,
                      flags=re.MULTILINE)
    path = os.path.join(tmp, "nixl-rules-1s.yml")
    with open(path, "w") as f:
        f.write(fast)
    log(f"rules {rules}: {n} group interval(s) set to 1s in {path}")
    return path


def write_prometheus_config(path, target_port, rules=None):
    rule_files = f"rule_files:\n  - '{os.path.abspath(rules)}'\n" if rules else ""
    with open(path, "w") as f:
        f.write(f"""# generated by prometheus_e2e.py
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: nixl
    static_configs:
      - targets: ['127.0.0.1:{target_port}']
{rule_files}""")


# Series the checks query, per NIXL_TELEMETRY_PROMETHEUS_NAMES mode (docs/telemetry-prometheus.md).
SERIES = {
    "libnixl": {"tx_requests": "agent_tx_requests_total",
                "xfer_count": "agent_xfer_time_seconds_count",
                "xfer_p99": "histogram_quantile(0.99, sum by (agent_name, le) "
                            "(agent_xfer_time_seconds_bucket))"},
    # NIXL 1.4's histogram is in microseconds; the p99 is converted so one bound checks both.
    "nixl": {"tx_requests": "agent_tx_requests_num_total",
             "xfer_count": "agent_xfer_time_us_count",
             "xfer_p99": "histogram_quantile(0.99, sum by (agent_name, le) "
                         "(agent_xfer_time_us_bucket)) / 1e6"},
}

# `promtool check metrics` on a scrape with NIXL 1.4's names: NIXL's own `_us` names, kept on
# purpose. Anything else (or these in libnixl mode) fails the test.
NIXL_NAMES_PROMTOOL_REMARKS = {
    "agent_xfer_post_time_us metric names should not contain abbreviated units",
    "agent_xfer_time_us metric names should not contain abbreviated units",
}


def check_promtool_lint(args, text):
    """The exposition passes Prometheus's own linter (names, units, HELP, histogram shape)."""
    lint = subprocess.run([args.promtool, "check", "metrics"], input=text,
                          capture_output=True, text=True, timeout=60, check=False)
    if args.names == "nixl":
        remarks = {line.strip() for line in (lint.stdout + lint.stderr).splitlines()
                   if line.strip()}
        if remarks != NIXL_NAMES_PROMTOOL_REMARKS:
            raise TestFailure(f"promtool check metrics with NIXL 1.4 names (exit "
                              f"{lint.returncode}) gave {sorted(remarks)}, want exactly "
                              f"{sorted(NIXL_NAMES_PROMTOOL_REMARKS)}\n--- scrape ---\n"
                              f"{text[:3000]}")
        log("promtool check metrics: only the two documented NIXL 1.4 name remarks")
        return
    if lint.returncode != 0:
        raise TestFailure(f"promtool check metrics failed on the scrape:\n"
                          f"{lint.stdout}{lint.stderr}\n--- scrape ---\n{text[:3000]}")
    log("promtool check metrics: scrape is clean")


def expected_per_rank(args, rank):
    """What the driver exports for one rank (see the workload in nixl_exporter_driver.cpp)."""
    events = args.events * (rank + 1)
    return {
        "events": events,
        "errors": rank + 1,
        "tx_bytes": events * args.bytes,
        # --paths: even writes on UCX direct_memcpy, odd on ucp, reads on LIBFABRIC tcp, and one
        # UCX fallback (disabled_by_config) per agent.
        "direct_bytes": (events + 1) // 2 * args.bytes,
        "ucp_bytes": events // 2 * args.bytes,
        "fallbacks": 1,
    }


def check_series(prom_port, query, want_by_agent, what, extra_check=None):
    """Probe: query returns exactly one series per agent, each with the wanted value."""

    def probe():
        try:
            result = prom_query(prom_port, query)
        except (OSError, urllib.error.URLError, ValueError) as e:
            return None, f"Prometheus API not answering: {e}"
        got = {}
        for s in result:
            agent = s["metric"].get("agent_name")
            if agent in got:
                return None, f"two series for agent {agent}: {result}"
            got[agent] = (float(s["value"][1]), s["metric"])
        if set(got) != set(want_by_agent):
            return None, f"{what}: series for {sorted(a for a in got if a)}, want " \
                         f"{sorted(want_by_agent)}"
        for agent, want in want_by_agent.items():
            value, labels = got[agent]
            if not math.isclose(value, want, rel_tol=1e-9, abs_tol=1e-9):
                return None, f"{what}: agent {agent} has {value}, want {want}"
            if extra_check is not None:
                problem = extra_check(agent, labels)
                if problem:
                    return None, problem
        return got, "ok"

    return probe


def run(args, tmp):
    exporter_port, prom_port = free_ports(2)
    env = dict(os.environ)
    env["NIXL_TELEMETRY_EXPORTER"] = args.exporter
    env["NIXL_TELEMETRY_PROMETHEUS_PORT"] = str(exporter_port)
    env["NIXL_TELEMETRY_PROMETHEUS_LOCAL"] = "true"
    env["NIXL_TELEMETRY_PROMETHEUS_NAMES"] = args.names
    names = SERIES[args.names]
    children = []
    ranks = []
    prometheus = None
    want_agents = {}
    try:
        if args.exporter == "prometheus_mp":
            args.mp_dir = os.path.join(tmp, "mp")
            env["NIXL_TELEMETRY_MULTIPROC_DIR"] = args.mp_dir
            # A killed rank's store is published this long after its last update (failover).
            env["NIXL_TELEMETRY_MP_STALE_TTL"] = "1"
            for rank in range(args.ranks):
                exp = expected_per_rank(args, rank)
                agent = f"rank{rank}"
                want_agents[agent] = (rank, exp)
                rank_env = dict(env)
                rank_env["LOCAL_RANK"] = str(rank)
                argv = [args.driver, "--plugin-dir", args.plugin_dir,
                        "--exporter", args.exporter, "--agent-name", agent,
                        "--events", str(exp["events"]), "--errors", str(exp["errors"]),
                        "--bytes", str(args.bytes), "--paths",
                        "--ready-file", os.path.join(tmp, f"ready.{rank}"),
                        "--until-stdin-eof"]
                c = Child(f"rank{rank}", argv, rank_env, tmp, stdin_pipe=True)
                children.append(c)
                ranks.append(c)
        else:
            # One process, one exporter instance per agent: the driver names them agent-<k>.
            exp = expected_per_rank(args, 0)
            for k in range(args.ranks):
                want_agents[f"agent-{k}"] = (k, exp)
            argv = [args.driver, "--plugin-dir", args.plugin_dir, "--exporter", args.exporter,
                    "--agent-name", "agent", "--agents", str(args.ranks),
                    "--events", str(exp["events"]), "--errors", str(exp["errors"]),
                    "--bytes", str(args.bytes), "--paths",
                    "--ready-file", os.path.join(tmp, "ready.0"), "--until-stdin-eof"]
            c = Child("process", argv, env, tmp, stdin_pipe=True)
            children.append(c)
            ranks.append(c)

        ready_files = [os.path.join(tmp, f"ready.{i}") for i in range(len(ranks))]
        wait_until("every rank's ready file", args.deadline,
                   lambda: (all(os.path.exists(p) for p in ready_files),
                            f"{sum(os.path.exists(p) for p in ready_files)}/{len(ready_files)} "
                            f"ready"), ranks)
        log(f"{len(ranks)} exporter process(es) ready; endpoint 127.0.0.1:{exporter_port}")

        # The endpoint itself first: a failure here is the exporter's, not Prometheus's.
        def scrape_probe():
            try:
                text = http_get(f"http://127.0.0.1:{exporter_port}/metrics")
            except (OSError, urllib.error.URLError) as e:
                return None, f"scrape failed: {e}"
            n = sum(1 for line in text.splitlines() if line.startswith("agent_tx_bytes_total{"))
            if n != len(want_agents):
                return None, f"{n} agent_tx_bytes_total series in the scrape, want " \
                             f"{len(want_agents)}"
            return text, "ok"

        text = wait_until("the exporter endpoint to list every agent", args.deadline,
                          scrape_probe, ranks)
        if os.access(args.promtool, os.X_OK):
            check_promtool_lint(args, text)
        else:
            log(f"no {args.promtool}: exposition lint skipped")

        config = os.path.join(tmp, "prometheus.yml")
        write_prometheus_config(config, exporter_port,
                                write_fast_rules(args.rules, tmp) if args.rules else None)
        prom_argv = [args.prometheus, f"--config.file={config}",
                     f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
                     f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"]
        prometheus = Child("prometheus", prom_argv, dict(os.environ), tmp)
        children.append(prometheus)
        log(f"Prometheus started on 127.0.0.1:{prom_port}")

        everyone = ranks + [prometheus]
        wait_until("Prometheus to report the target up", args.deadline,
                   check_series(prom_port, 'up{job="nixl"}', {None: 1}, "up"), everyone)

        def rank_label_check(agent, labels):
            if args.exporter != "prometheus_mp":
                return None
            rank = want_agents[agent][0]
            if labels.get("local_rank") != str(rank):
                return f"agent {agent}: local_rank label {labels.get('local_rank')!r}, " \
                       f"want '{rank}' (labels {labels})"
            if not labels.get("pid"):
                return f"agent {agent}: no pid label (labels {labels})"
            return None

        checks = [
            ("agent_tx_bytes_total", "tx_bytes", rank_label_check),
            ("agent_rx_bytes_total", "tx_bytes", None),
            (names["tx_requests"], "events", None),
            ('agent_errors_total{status="backend"}', "errors", None),
            ('agent_errors_total{status="no_telemetry"}', "errors", None),
            (names["xfer_count"], "xfer_count", None),
            # Per-path series (issue 34), named alike in both modes.
            ('agent_path_tx_bytes_total{backend="UCX", path="direct_memcpy"}', "direct_bytes",
             None),
            ('agent_path_tx_bytes_total{backend="UCX", path="ucp"}', "ucp_bytes", None),
            ('agent_path_rx_bytes_total{backend="LIBFABRIC", path="tcp"}', "tx_bytes", None),
            ('agent_path_fallbacks_total{backend="UCX", reason="disabled_by_config"}',
             "fallbacks", None),
        ]
        for query, key, extra in checks:
            want = {}
            for agent, (_, exp) in want_agents.items():
                want[agent] = 2 * exp["events"] if key == "xfer_count" else exp[key]
            got = wait_until(f"Prometheus to return {query} for every agent", args.deadline,
                             check_series(prom_port, query, want, query, extra), everyone)
            log(f"{query}: " + ", ".join(f"{a}={v[0]:g}" for a, v in sorted(got.items())))

        if args.exporter == "prometheus_mp":
            pids = wait_until("distinct pid labels", args.deadline,
                              lambda: _distinct_pids(prom_port, len(want_agents)), everyone)
            log(f"one pid per rank: {sorted(pids)}")

        # The histogram is usable as dashboards use it: one finite p99 per agent.
        q99 = names["xfer_p99"]

        def p99_probe():
            result = prom_query(prom_port, q99)
            vals = {s["metric"].get("agent_name"): float(s["value"][1]) for s in result}
            if set(vals) != set(want_agents):
                return None, f"p99 for {sorted(vals)}"
            bad = {a: v for a, v in vals.items() if not (0 < v <= 0.025)}
            if bad:
                return None, f"p99 outside (0, 25 ms]: {bad}"
            return vals, "ok"

        got = wait_until("a p99 transfer time per agent", args.deadline, p99_probe, everyone)
        log("p99 xfer time (s): " + ", ".join(f"{a}={v:.6f}" for a, v in sorted(got.items())))

        if args.dashboard:
            check_dashboard(args, prom_port, everyone)

        if args.rules:
            check_recording_rules(args, prom_port, everyone)

        if args.collision and args.exporter == "prometheus":
            check_collision(args, env, tmp, exporter_port, prom_port, want_agents,
                            ranks + [prometheus])

        if args.failover and args.exporter == "prometheus_mp":
            ranks = check_failover(args, prom_port, ranks, prometheus, want_agents)

        # Clean shutdown: every exporter process destroys its instances and exits 0.
        for c in ranks:
            rc = c.stop()
            if rc != 0:
                raise TestFailure(f"{c.name} exited with {rc} on stdin EOF; stderr:\n"
                                  f"{c.stderr_text()}")
        log("exporter processes stopped cleanly")
    finally:
        for c in children:
            if c.proc.poll() is None:
                c.stop()
            if c.proc.stdin is not None:
                c.proc.stdin.close()


def check_dashboard(args, prom_port, procs):
    """Every Grafana panel query returns data from the live series, in either name mode: those
    over the agent_* series, Prometheus's own per-target series, and the exporter's own series
    when this exporter serves them (nixl_mp_* for prometheus_mp, exposer_* for prometheus); the
    other exporter's own series only have to evaluate without error. Panels in seconds over
    agent_* series must show seconds: the driver's times are 1 us .. 20 ms, so a value of 1 or
    more is a microsecond series that was not converted."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    import check_contrib  # pylint: disable=import-outside-toplevel

    with open(args.dashboard) as f:
        dashboard = json.load(f)
    queries = check_contrib.dashboard_queries(dashboard)
    units = {}

    def collect_units(panels):
        for p in panels:
            units[p.get("title", "?")] = p.get("fieldConfig", {}).get("defaults", {}).get("unit")
            collect_units(p.get("panels", []))

    collect_units(dashboard.get("panels", []))
    generic = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
    own_prefix = {"prometheus_mp": "nixl_mp_", "prometheus": "exposer_"}[args.exporter]
    empty_ok = []
    for title, expr in queries:
        names = check_contrib.metric_names(expr)
        must_have_data = all(n.startswith("agent_") or n.startswith(own_prefix) or n in generic
                             for n in names)
        in_seconds = units.get(title) == "s" and any(n.startswith("agent_") for n in names)

        def probe(expr=expr, must=must_have_data, in_seconds=in_seconds):
            try:
                result = prom_query(prom_port, expr)
            except (OSError, urllib.error.URLError, ValueError) as e:
                return None, f"API error: {e}"
            if must and not result:
                return None, "no series"
            if in_seconds:
                values = [float(s["value"][1]) for s in result]
                big = [v for v in values if math.isfinite(v) and not 0 <= v < 1]
                if big:
                    return None, f"values {big} in a panel in seconds (a series in us?)"
            return True, "ok"

        wait_until(f"dashboard panel {title!r} query {expr!r}", args.deadline, probe, procs)
        if not must_have_data and not prom_query(prom_port, expr):
            empty_ok.append(title)
    log(f"all {len(queries)} dashboard queries return data ({args.names} names)"
        + (f"; the other exporter's, empty here: {sorted(set(empty_ok))}" if empty_ok else ""))


def check_recording_rules(args, prom_port, procs):
    """Every recording rule of --rules records one series per agent, in either name mode, and the
    transfer-time quantiles are in seconds (below 1 s: the driver's times are at most 20 ms).
    Prometheus loads the 1 s copy of write_fast_rules; the record names come from the original."""
    with open(args.rules) as f:
        records = re.findall(r"^\s*-?\s*record:\s*(\S+)\s*$", f.read(), re.MULTILINE)
    if not records:
        raise TestFailure(f"no recording rule in {args.rules}")
    for record in records:
        in_seconds = record.endswith(tuple(f":{q}_1m" for q in ("p50", "p99"))) \
            and "_seconds:" in record

        def probe(record=record, in_seconds=in_seconds):
            try:
                result = prom_query(prom_port, record)
            except (OSError, urllib.error.URLError, ValueError) as e:
                return None, f"API error: {e}"
            if not result:
                return None, "no series"
            if in_seconds:
                big = [v for v in (float(s["value"][1]) for s in result)
                       if math.isfinite(v) and not 0 <= v < 1]
                if big:
                    return None, f"values {big} in seconds (a series in us?)"
            return True, "ok"

        wait_until(f"recording rule {record}", args.deadline, probe, procs)
    log(f"all {len(records)} recording rules record data ({args.names} names)")


def check_collision(args, env, tmp, exporter_port, prom_port, want_agents, procs):
    """A second process whose single-process exporter finds the port taken (the TP=8 case of
    NIXL issue 1838) must run on without export: create declines (driver exit 3) with a warning
    naming the port, and the first process's endpoint keeps serving exactly its own agents."""
    argv = [args.driver, "--plugin-dir", args.plugin_dir, "--exporter", args.exporter,
            "--agent-name", "intruder", "--events", "1", "--hold-seconds", "0"]
    intruder = Child("intruder", argv, env, tmp)
    try:
        rc = intruder.proc.wait(timeout=args.deadline)
    except subprocess.TimeoutExpired as e:
        raise TestFailure("the second process on a taken port did not finish") from e
    err = intruder.stderr_text()
    if rc != 3 or str(exporter_port) not in err:
        raise TestFailure(f"second process on taken port {exporter_port}: exit {rc} (want 3, "
                          f"declined) and a warning naming the port; stderr:\n{err}")
    want = {a: exp["tx_bytes"] for a, (_, exp) in want_agents.items()}
    wait_until("the first process to keep serving its agents only", args.deadline,
               check_series(prom_port, "agent_tx_bytes_total", want, "after the collision"),
               procs)
    log(f"a second process on port {exporter_port} was declined (exit 3) and the endpoint "
        f"still serves its {len(want)} agents")


def check_failover(args, prom_port, ranks, prometheus, want_agents):
    """SIGKILLs the rank serving the endpoint; another rank must take the endpoint over and
    Prometheus must again scrape every survivor's series, the dead rank's store reaped (the
    ranks run with a 1 s NIXL_TELEMETRY_MP_STALE_TTL). Returns the surviving ranks."""
    by_pid = {str(c.proc.pid): c for c in ranks}

    def owner_probe():
        result = prom_query(prom_port, "nixl_mp_owner_pid")
        pids = {str(int(float(s["value"][1]))) for s in result}
        if len(pids) != 1 or not pids <= set(by_pid):
            return None, f"nixl_mp_owner_pid {pids}, rank pids {sorted(by_pid)}"
        return pids.pop(), "ok"

    owner_pid = wait_until("the owner's pid in Prometheus", args.deadline, owner_probe,
                           ranks + [prometheus])
    victim = by_pid[owner_pid]
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait()
    survivors = [c for c in ranks if c is not victim]
    log(f"killed the serving rank {victim.name} (pid {owner_pid})")

    want = {a: exp["tx_bytes"] for a, (_, exp) in want_agents.items() if a != victim.name}

    def new_owner_probe():
        pid, reason = owner_probe()
        if pid is None or pid == owner_pid:
            return None, f"owner still {pid or reason}"
        return pid, "ok"

    new_owner = wait_until("another rank to serve the endpoint", args.deadline,
                           new_owner_probe, survivors + [prometheus])
    wait_until("Prometheus to scrape every survivor and no dead rank", args.deadline,
               check_series(prom_port, "agent_tx_bytes_total", want, "after failover"),
               survivors + [prometheus])

    def reaped_probe():
        left = [f for f in os.listdir(args.mp_dir) if f.startswith(f"nixl.{owner_pid}.")]
        return (not left, f"store files of the killed rank still in {args.mp_dir}: {left}")

    wait_until("the killed rank's store file to be reaped", args.deadline, reaped_probe,
               survivors + [prometheus])
    log(f"failover: {by_pid[new_owner].name} (pid {new_owner}) serves; "
        f"{len(want)} survivors scraped, {victim.name}'s series and store file gone")
    return survivors


def _distinct_pids(prom_port, n):
    result = prom_query(prom_port, "agent_tx_bytes_total")
    pids = {s["metric"].get("pid") for s in result}
    if len(pids) != n or None in pids:
        return None, f"pid labels {pids}, want {n} distinct"
    return pids, "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driver", required=True, help="nixl_exporter_driver binary")
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--exporter", default="prometheus_mp", choices=["prometheus_mp", "prometheus"])
    ap.add_argument("--names", default="libnixl", choices=["libnixl", "nixl"],
                    help="NIXL_TELEMETRY_PROMETHEUS_NAMES for the exporters")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--events", type=int, default=10, help="rank r exports (r+1)*events writes")
    ap.add_argument("--bytes", type=int, default=4096)
    ap.add_argument("--prometheus", default="/usr/bin/prometheus")
    ap.add_argument("--promtool", default="/usr/bin/promtool")
    ap.add_argument("--deadline", type=float, default=120, help="seconds per awaited condition")
    ap.add_argument("--dashboard", help="Grafana dashboard JSON whose queries must evaluate")
    ap.add_argument("--rules", help="Prometheus rule file whose recording rules must record data")
    ap.add_argument("--collision", action="store_true",
                    help="prometheus: a second process on the same port must be declined")
    ap.add_argument("--failover", action="store_true",
                    help="prometheus_mp: also kill the serving rank and check the takeover")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()

    if not os.access(args.prometheus, os.X_OK):
        print(f"SKIP: no Prometheus server at {args.prometheus} (apt install prometheus)")
        return SKIP
    plugin = os.path.join(args.plugin_dir, f"libtelemetry_exporter_{args.exporter}.so")
    if not os.path.exists(plugin):
        print(f"SKIP: {plugin} was not built (the {args.exporter} exporter needs prometheus-cpp)")
        return SKIP

    tmp = tempfile.mkdtemp(prefix=f"nixl-e2e-{args.exporter}-{args.names}-")
    ok = False
    try:
        run(args, tmp)
        ok = True
    except TestFailure as e:
        log(f"FAIL: {e}")
        for name in sorted(os.listdir(tmp)):
            if name.endswith(".err") or name.endswith(".out"):
                with open(os.path.join(tmp, name), errors="replace") as f:
                    text = f.read()[-3000:]
                if text.strip():
                    log(f"--- {name} ---\n{text}")
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if ok:
        log("PASS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
