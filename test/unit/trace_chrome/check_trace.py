#!/usr/bin/python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Checks a libnixl chrome trace file (Trace Event Format, JSON array form).

Always asserted:
  - the file is a JSON array (strict JSON when closed normally; with --killed, after the
    documented reading rule of nixl_trace_repair.py);
  - each event has the fields its phase needs: X (name, cat, pid, tid, ts, dur >= 0,
    args.agent), i (thread scope "s":"t", name, cat, pid, tid, ts, args.agent), M (process_name
    / thread_name / process_labels with their arg), C (nixl.dropped_events, args.dropped),
    s / f (flow: id, name, cat, pid, tid, ts; a start binds to the enclosing slice, "bp":"e");
  - a process_name event for every pid and a thread_name event for every (pid, tid) that has
    spans or marks;
  - spans on one thread nest properly (any two are disjoint or one contains the other), and a
    span or mark whose parent_span_id is in the file lies inside that parent, on its thread;
  - span ids are unique;
  - every flow start lies inside a nixl::postXferReq.* span on its thread with the flow's id as
    correlation_id; every flow end is followed by the nixl::xfer.complete mark it binds to (the
    next slice: same thread, time and correlation id); every end has a start before it (and, closed normally with no drops, every start
    an end);
  - closed normally: the last event is the nixl.dropped_events counter.
Prints one summary line; exits 1 with the reason on the first failure.
"""
import argparse
import decimal
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.environ.get("NIXL_TRACE_REPAIR_DIR", os.path.dirname(__file__)))
import nixl_trace_repair  # noqa: E402


class Bad(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Bad(msg)


def to_ns(v):
    need(isinstance(v, (int, decimal.Decimal)) and v >= 0, f"bad time value {v!r}")
    return int(decimal.Decimal(v) * 1000)


def check_fields(e):
    ph = e.get("ph")
    need(ph in ("X", "i", "M", "C", "s", "f"), f"unknown phase in {e}")
    if ph in ("X", "i", "s", "f", "C"):
        need(isinstance(e.get("name"), str), f"no name in {e}")
        to_ns(e.get("ts", -1))
    need(isinstance(e.get("pid"), int), f"no pid in {e}")
    if ph in ("X", "i", "s", "f"):
        need(isinstance(e.get("tid"), int), f"no tid in {e}")
        need(isinstance(e.get("cat"), str), f"no cat in {e}")
    if ph in ("X", "i"):
        need(isinstance(e.get("args"), dict) and isinstance(e["args"].get("agent"), str),
             f"no args.agent in {e}")
    if ph == "X":
        to_ns(e.get("dur", -1))
        need(isinstance(e["args"].get("span_id"), int) and e["args"]["span_id"] > 0,
             f"no span_id in {e}")
    if ph == "i":
        need(e.get("s") == "t", f"instant without thread scope: {e}")
    if ph == "M":
        need(e.get("name") in ("process_name", "thread_name", "process_labels"), f"bad M {e}")
        key = "labels" if e["name"] == "process_labels" else "name"
        need(isinstance(e.get("args", {}).get(key), str), f"M without args.{key}: {e}")
        if e["name"] == "thread_name":
            need(isinstance(e.get("tid"), int), f"thread_name without tid: {e}")
    if ph == "C":
        need(e.get("name") == "nixl.dropped_events", f"unknown counter {e}")
        need(isinstance(e.get("args", {}).get("dropped"), int), f"counter without value {e}")
    if ph in ("s", "f"):
        need(isinstance(e.get("id"), str) and e["id"].startswith("0x"), f"flow without id {e}")
        # Starts bind to their enclosing slice (the post span), ends to the next slice (the
        # completion mark, written right after the end).
        need(e.get("bp") == ("e" if ph == "s" else None), f"flow with a wrong binding: {e}")


def check(events, killed):
    need(isinstance(events, list), "not a JSON array")
    for e in events:
        need(isinstance(e, dict), f"not an object: {e!r}")
        check_fields(e)
    by_ph = defaultdict(list)
    for e in events:
        by_ph[e["ph"]].append(e)
    pids = {e["pid"] for e in events if e["ph"] in ("X", "i", "s", "f")}
    named_pids = {e["pid"] for e in by_ph["M"] if e["name"] == "process_name"}
    need(pids <= named_pids, f"pids without process_name: {pids - named_pids}")
    threads = {(e["pid"], e["tid"]) for e in by_ph["X"] + by_ph["i"]}
    named = {(e["pid"], e["tid"]) for e in by_ph["M"] if e["name"] == "thread_name"}
    need(threads <= named, f"threads without thread_name: {threads - named}")

    spans = by_ph["X"]
    by_id = {}
    for s in spans:
        sid = s["args"]["span_id"]
        need(sid not in by_id, f"span id {sid} twice")
        by_id[sid] = s
    per_thread = defaultdict(list)
    for s in spans:
        b = to_ns(s["ts"])
        per_thread[(s["pid"], s["tid"])].append((b, b + to_ns(s["dur"]), s))
    nested = 0
    for key, lst in per_thread.items():
        lst.sort(key=lambda t: (t[0], -t[1]))
        stack = []
        for b, en, s in lst:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack:
                need(en <= stack[-1][1], f"spans overlap without nesting on {key}: "
                                         f"{stack[-1][2]} and {s}")
            stack.append((b, en, s))
    for s in spans + by_ph["i"]:
        p = by_id.get(s["args"].get("parent_span_id", 0))
        if p is None:
            continue
        need((p["pid"], p["tid"]) == (s["pid"], s["tid"]), f"child on another thread: {s}")
        pb, cb = to_ns(p["ts"]), to_ns(s["ts"])
        need(pb <= cb and cb + to_ns(s.get("dur", 0)) <= pb + to_ns(p["dur"]),
             f"child {s} outside its parent {p}")
        nested += 1

    posts = defaultdict(list)  # (pid, tid, correlation id) -> [(begin, end)]
    for s in spans:
        if s["name"].startswith("nixl::postXferReq.") and "correlation_id" in s["args"]:
            b = to_ns(s["ts"])
            posts[(s["pid"], s["tid"], s["args"]["correlation_id"])].append(
                (b, b + to_ns(s["dur"])))
    starts = defaultdict(list)
    for f in by_ph["s"]:
        t = to_ns(f["ts"])
        need(any(b <= t <= en for b, en in posts[(f["pid"], f["tid"], f["id"])]),
             f"flow start {f} is not inside a post span with its correlation id")
        starts[f["id"]].append(t)
    dropped = by_ph["C"][-1]["args"]["dropped"] if by_ph["C"] else 0
    marks = by_ph["i"]
    ends = 0
    for i, f in enumerate(events):
        if f["ph"] != "f" or (killed and i + 1 == len(events)):
            continue  # a file cut short may end between a flow end and its mark
        t = to_ns(f["ts"])
        m = events[i + 1] if i + 1 < len(events) else {}
        need(m.get("ph") == "i" and m["name"] == "nixl::xfer.complete"
             and (m["pid"], m["tid"]) == (f["pid"], f["tid"]) and to_ns(m["ts"]) == t
             and m["args"].get("correlation_id") == f["id"],
             f"flow end {f} is not followed by its xfer.complete mark (same thread, time, id)")
        # A dropped post span leaves its flow without a start.
        need(dropped > 0 or any(st <= t for st in starts.get(f["id"], [])),
             f"flow end {f} without a start, nothing dropped")
        ends += 1
    if not killed:
        need(events and events[-1]["ph"] == "C", "a closed file ends with the drop counter")
        # A dropped completion mark leaves its flow open; without drops every start has an end.
        need(dropped > 0 or ends == len(by_ph["s"]),
             f"{len(by_ph['s'])} flow starts but {ends} ends, nothing dropped")
    return {"spans": spans, "marks": marks, "flows": ends, "dropped": dropped,
            "nested": nested, "threads": threads, "meta": by_ph["M"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--killed", action="store_true", help="apply the reading rule first")
    ap.add_argument("--every-cut", action="store_true",
                    help="also: the file cut at every byte reads as a prefix of its events")
    ap.add_argument("--expect-agent", action="append", default=[],
                    help="a name, or a JSON string")
    ap.add_argument("--expect-span", action="append", default=[], help="a span name present")
    ap.add_argument("--expect-mark", action="append", default=[])
    ap.add_argument("--expect-flows", type=int)
    ap.add_argument("--expect-min-nested", type=int, default=0)
    ap.add_argument("--expect-threads", type=int, help="threads with spans or marks")
    ap.add_argument("--expect-dropped", help="an integer, or 'positive'")
    ap.add_argument("--expect-emitted", type=int,
                    help="spans + marks in the file + dropped must equal this")
    ap.add_argument("--extra-dropped", type=int, default=0,
                    help="drops known from elsewhere (the log) when the file could not hold "
                         "its counter")
    ap.add_argument("--expect-min-spans", type=int, default=0)
    ap.add_argument("--expect-arg", nargs=3, action="append", default=[],
                    metavar=("SPAN", "KEY", "JSON"), help="SPAN has args.KEY == JSON")
    ap.add_argument("--expect-parent", nargs=2, action="append", default=[],
                    metavar=("CHILD", "PARENT"), help="a CHILD span or mark in a PARENT span")
    a = ap.parse_args()
    try:
        with open(a.file, "rb") as f:
            data = f.read()
        if a.killed:
            text = nixl_trace_repair.repaired_text(data)
        else:
            need(data.endswith(b"\n]\n"), "a closed file ends with ']' on its own line")
            text = data.decode("utf-8")
        events = json.loads(text, parse_float=decimal.Decimal)
        r = check(events, a.killed)
        if a.every_cut:
            for k in range(2, len(data)):
                cut = json.loads(nixl_trace_repair.repaired_text(data[:k]),
                                 parse_float=decimal.Decimal)
                need(cut == events[:len(cut)], f"cut at byte {k} is not a prefix of the events")
                check(cut, True)
        spans, marks = r["spans"], r["marks"]
        agents = {e["args"]["agent"] for e in spans + marks}
        labels = [m["args"]["labels"] for m in r["meta"] if m["name"] == "process_labels"]
        for ag in agents:
            need(any(ag in lb for lb in labels), f"agent {ag!r} of an event not in the labels")
        # A label line precedes the first event of its agent: a reader that stops early (a
        # capped or cut file) still has the labels of every event it read.
        seen = []
        for e in events:
            if e["ph"] == "M" and e["name"] == "process_labels":
                seen.append(e["args"]["labels"])
            elif e["ph"] in ("X", "i") and "agent" in e.get("args", {}):
                ag = e["args"]["agent"]
                need(any(ag in lb for lb in seen),
                     f"an event of agent {ag!r} comes before its label line")
        for ag in a.expect_agent:
            if ag.startswith('"'):
                ag = json.loads(ag)  # the name as a JSON string, for arbitrary bytes
            need(any(ag in lb for lb in labels), f"agent {ag!r} not in the process labels")
        names = {s["name"] for s in spans}
        for n in a.expect_span:
            need(n in names, f"no span {n!r} (have {sorted(names)})")
        mnames = {m["name"] for m in marks}
        for n in a.expect_mark:
            need(n in mnames, f"no mark {n!r}")
        if a.expect_flows is not None:
            need(r["flows"] == a.expect_flows, f"{r['flows']} flows, expected {a.expect_flows}")
        need(r["nested"] >= a.expect_min_nested,
             f"{r['nested']} nested spans, expected >= {a.expect_min_nested}")
        if a.expect_threads is not None:
            need(len(r["threads"]) == a.expect_threads,
                 f"{len(r['threads'])} threads, expected {a.expect_threads}")
        if a.expect_dropped == "positive":
            need(r["dropped"] > 0, "no drops counted")
        elif a.expect_dropped is not None:
            need(r["dropped"] == int(a.expect_dropped), f"dropped {r['dropped']}")
        if a.expect_emitted is not None:
            dropped = r["dropped"] + a.extra_dropped
            got = len(spans) + len(marks) + dropped
            need(got == a.expect_emitted, f"{len(spans)} spans + {len(marks)} marks + "
                                          f"{dropped} dropped != {a.expect_emitted}")
        need(len(spans) >= a.expect_min_spans, f"{len(spans)} spans < {a.expect_min_spans}")
        for name, key, val in a.expect_arg:
            want = json.loads(val, parse_float=decimal.Decimal)
            have = [s["args"].get(key) for s in spans + marks if s["name"] == name]
            need(want in have, f"{name}.{key}: {have!r}, expected {want!r}")
        for child, parent in a.expect_parent:
            ok = any(s["name"] == child and any(
                p["name"] == parent and p["args"]["span_id"] == s["args"]["parent_span_id"]
                for p in spans) for s in spans + marks)
            need(ok, f"no {child} inside a {parent}")
    except (Bad, ValueError, KeyError, TypeError) as e:
        print(f"FAIL {a.file}: {e}")
        return 1
    print(f"ok {a.file}: {len(r['spans'])} spans, {len(r['marks'])} marks, {r['flows']} flows, "
          f"{r['nested']} nested, {len(r['threads'])} threads, dropped {r['dropped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
