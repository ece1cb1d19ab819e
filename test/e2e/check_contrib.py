#!/usr/bin/python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Validates contrib/prometheus and contrib/grafana.

- contrib/prometheus/prometheus.yml passes `promtool check config` (which also checks the rule
  file it names), and nixl-rules.yml passes `promtool check rules`;
- contrib/grafana/nixl-dashboard.json passes `python3 -m json.tool`;
- every PromQL expression of the dashboard (panel targets and variable queries), with Grafana's
  variables substituted, parses (promtool checks it as a recording rule), and every metric it
  names is one libnixl's exporters or Prometheus itself produce, so a renamed metric cannot
  leave a silently empty panel.
Exit codes: 0 pass, 1 fail, 77 skip (no promtool).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Series the prometheus / prometheus_mp exporters serve (src/plugins/telemetry/common/
# prom_schema.h and the plugins' own metrics), plus Prometheus's per-target series.
KNOWN_METRICS = {
    "agent_tx_bytes_total", "agent_rx_bytes_total", "agent_tx_last_bytes", "agent_rx_last_bytes",
    "agent_tx_requests_total", "agent_rx_requests_total",
    "agent_memory_registered_bytes_total", "agent_memory_deregistered_bytes_total",
    "agent_memory_registered_last_bytes", "agent_memory_deregistered_last_bytes",
    "agent_xfer_time_seconds_bucket", "agent_xfer_time_seconds_sum",
    "agent_xfer_time_seconds_count", "agent_xfer_time_last_seconds",
    "agent_xfer_post_time_seconds_bucket", "agent_xfer_post_time_seconds_sum",
    "agent_xfer_post_time_seconds_count", "agent_xfer_post_time_last_seconds",
    "agent_errors_total", "agent_telemetry_events_dropped_total",
    "agent_trace_phases_dropped_total",
    # per data path (issue 34), in both naming styles
    "agent_path_tx_bytes_total", "agent_path_rx_bytes_total", "agent_path_tx_requests_total",
    "agent_path_rx_requests_total", "agent_path_fallbacks_total",
    # NIXL_TELEMETRY_PROMETHEUS_NAMES=nixl: NIXL 1.4's names (docs/telemetry-prometheus.md).
    "agent_tx_requests_num_total", "agent_rx_requests_num_total",
    "agent_memory_registered_total", "agent_memory_deregistered_total",
    "agent_xfer_time_us_bucket", "agent_xfer_time_us_sum", "agent_xfer_time_us_count",
    "agent_xfer_time_total", "agent_xfer_time",
    "agent_xfer_post_time_us_bucket", "agent_xfer_post_time_us_sum",
    "agent_xfer_post_time_us_count", "agent_xfer_post_time_total", "agent_xfer_post_time",
    "nixl_mp_stores", "nixl_mp_stores_reaped_total", "nixl_mp_stores_refused_total",
    "nixl_mp_scrape_duration_seconds", "nixl_mp_owner_pid",
    "exposer_scrapes_total", "exposer_transferred_bytes_total",
    "up", "scrape_duration_seconds", "scrape_samples_scraped",
}

# Words in PromQL that look like metric names but are not.
PROMQL_WORDS = {
    "sum", "by", "without", "rate", "increase", "irate", "histogram_quantile", "max", "min",
    "avg", "count", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
    "le", "offset", "bool", "topk", "bottomk", "label_values", "delta", "abs", "clamp_min",
}

GRAFANA_VARS = [("$__rate_interval", "1m"), ("$__interval", "1m"), ("$__range", "1h"),
                ("$job", ".*"), ("$hostname", ".*"), ("$agent", ".*")]


def substitute(expr):
    for var, value in GRAFANA_VARS:
        expr = expr.replace(var, value)
    return expr


def dashboard_queries(dashboard):
    """(title, expr) for every panel target and every query variable, variables substituted.

    label_values(metric{...}, label) variable queries become their series selector.
    """
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((p.get("title", "?"), substitute(t["expr"])))
            walk(p.get("panels", []))

    walk(dashboard.get("panels", []))
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r"\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\)\s*", q or "")
        if m:
            out.append((f"variable {v['name']}", substitute(m.group(1))))
    return out


def metric_names(expr):
    """Identifiers in expr that are used as metric names (labels and functions stripped)."""
    stripped = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    stripped = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", stripped)
    stripped = re.sub(r"\[[^\]]*\]", "", stripped)  # range selectors
    stripped = re.sub(r"\b\d+(\.\d*)?([eE][+-]?\d+)?\b", "", stripped)  # 1e6 is no name
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", stripped):
        word = m.group(0)
        after = stripped[m.end():].lstrip()
        if word in PROMQL_WORDS or after.startswith("("):
            continue
        names.add(word)
    return names


def run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    print(f"[check_contrib] {what}: ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--promtool", default="/usr/bin/promtool")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if not os.access(args.promtool, os.X_OK):
        print(f"SKIP: no promtool at {args.promtool} (apt install prometheus)")
        return 77
    prom_dir = os.path.join(args.source_root, "contrib", "prometheus")
    dash_path = os.path.join(args.source_root, "contrib", "grafana", "nixl-dashboard.json")
    try:
        run([args.promtool, "check", "config", os.path.join(prom_dir, "prometheus.yml")],
            "promtool check config contrib/prometheus/prometheus.yml")
        run([args.promtool, "check", "rules", os.path.join(prom_dir, "nixl-rules.yml")],
            "promtool check rules contrib/prometheus/nixl-rules.yml")
        run([args.python, "-m", "json.tool", dash_path], "python3 -m json.tool nixl-dashboard.json")

        with open(dash_path) as f:
            dashboard = json.load(f)
        queries = dashboard_queries(dashboard)
        if len(queries) < 10:
            raise RuntimeError(f"the dashboard has only {len(queries)} queries")
        unknown = {}
        for title, expr in queries:
            bad = metric_names(expr) - KNOWN_METRICS
            if bad:
                unknown[title] = sorted(bad)
        if unknown:
            raise RuntimeError(f"dashboard queries name metrics no exporter serves: {unknown}")
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            f.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, (_, expr) in enumerate(queries):
                f.write(f"      - record: dashboard_query_{i}\n        expr: {json.dumps(expr)}\n")
            rules = f.name
        try:
            run([args.promtool, "check", "rules", rules],
                f"promtool parses all {len(queries)} dashboard queries")
        finally:
            os.unlink(rules)
    except (RuntimeError, OSError, ValueError) as e:
        print(f"[check_contrib] FAIL: {e}")
        return 1
    print("[check_contrib] PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
