#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Draw a benchmark's --json output: bandwidth, IOPS and p50/p99 latency against block size.

    python3 benchmark/plot.py --in run.json --out dir/ [--title TEXT]

The input is what `ucx_bench --json` (or ucx_bench.sh --json), `backend_bench --json` (or
backend_bench.sh --json), `posix_bench --json`, `ring_bench --json` and `scrape_bench.py --json`
print: one JSON object per line (a JSON array of the same objects is read too). Each object is
one point: "bench", "op", "block" (the x value: bytes, unless "xlabel" names another quantity,
e.g. "events per batch" or "processes per side"), "batch", "path" (our side), and figures:
"GBps", or "rate" with its "rate_unit" (e.g. "M events/s"), optionally "iops", "p50_us",
"p99_us" or "avg_us"; and "peers", a list of objects with a "name" and the same figures,
measured in the same run. Every peer becomes a second curve. A curve with p50 and p99 is drawn
with both; one with only p50 or only an average (fi_pingpong's usec/xfer) as a single curve;
one with neither is left out of the latency figure. The tail keys "p999_us" and "max_us" some
benches add are data only (in the JSON, not drawn).

Writes DIR/<bench>_bandwidth.png when any curve has "GBps", DIR/<bench>_throughput.png when
any has "rate", DIR/<bench>_latency.png when any has a latency and DIR/<bench>_iops.png when
any has "iops", one panel per operation, and prints their paths. Exit 1 with one line on
stderr when the input cannot be drawn; exit 2 when matplotlib is missing (Debian:
python3-matplotlib).
"""

import argparse
import json
import os
import sys
from collections import defaultdict


# The keys that make an object a curve's point (at least one of them).
FIGURE_KEYS = ("GBps", "rate", "iops", "p50_us", "avg_us")


def fail(msg, code=1):
    print(f"plot.py: {msg}", file=sys.stderr)
    sys.exit(code)


def load_points(path):
    """The points of the file: JSON Lines, or one JSON array. Blank and '#' lines are skipped."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            points = json.loads(stripped)
        except json.JSONDecodeError as e:
            fail(f"{path}: not JSON ({e.msg} at line {e.lineno})")
    else:
        points = []
        for n, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                points.append(json.loads(line))
            except json.JSONDecodeError as e:
                fail(f"{path}:{n}: not JSON ({e.msg})")
    for n, p in enumerate(points, 1):
        if not isinstance(p, dict):
            fail(f"{path}: point {n} is not an object")
        for key in ("op", "block"):
            if key not in p:
                fail(f"{path}: point {n} has no '{key}'")
        if not isinstance(p["block"], (int, float)) or p["block"] <= 0:
            fail(f"{path}: point {n} has a 'block' that is not a positive number")
        if not any(k in p for k in FIGURE_KEYS):
            fail(f"{path}: point {n} has none of " + ", ".join(f"'{k}'" for k in FIGURE_KEYS))
    if not points:
        fail(f"{path}: no points")
    return points


def series(points):
    """{op: {curve label: [(block, figures), ...]}} with ours first, then the peers."""
    # One curve per batch when several batches share an x value (not when the batch is the x).
    xs = {p["block"] for p in points}
    split = len({(p["block"], p.get("batch", 1)) for p in points}) > len(xs)
    out = defaultdict(lambda: defaultdict(list))
    for p in points:
        suffix = f", batch {p.get('batch', 1)}" if split else ""
        out[p["op"]][p.get("path", "ours") + suffix].append((p["block"], p))
        for peer in p.get("peers", []):
            if isinstance(peer, dict) and "name" in peer and any(k in peer for k in FIGURE_KEYS):
                out[p["op"]][peer["name"] + suffix].append((p["block"], peer))
    for curves in out.values():
        for pts in curves.values():
            pts.sort(key=lambda bp: bp[0])
    return out


def latency_kind(pts):
    """How a curve's latency is drawn: "p50/p99", "p50", "avg" (every point has it) or None."""
    figs = [f for _, f in pts]
    if all("p50_us" in f and "p99_us" in f for f in figs):
        return "p50/p99"
    if all("p50_us" in f for f in figs):
        return "p50"
    if all("avg_us" in f for f in figs):
        return "avg"
    return None


def size_label(b, bytes_axis=True):
    if not bytes_axis:
        return f"{b:g}"
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in", dest="inp", required=True, help="a benchmark's --json output")
    ap.add_argument("--out", required=True, help="directory for the PNG files")
    ap.add_argument("--title", default="", help="added to each figure's title")
    args = ap.parse_args()

    points = load_points(args.inp)
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, no display
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing (apt install python3-matplotlib)", 2)

    os.makedirs(args.out, exist_ok=True)
    bench = points[0].get("bench", "bench")
    by_op = series(points)
    ops = sorted(by_op)
    blocks = sorted({p["block"] for p in points})
    title = bench + (f": {args.title}" if args.title else "")
    xlabel = points[0].get("xlabel")
    rate_unit = next((p["rate_unit"] for p in points if "rate_unit" in p), "per second")

    def figure(ylabel, draw, name):
        fig, axes = plt.subplots(1, len(ops), figsize=(5.5 * len(ops), 4), squeeze=False)
        for ax, op in zip(axes[0], ops):
            draw(ax, by_op[op])
            ax.set_xscale("log", base=2)
            ax.set_xticks(blocks)
            ax.set_xticklabels([size_label(b, xlabel is None) for b in blocks], fontsize=8)
            ax.set_xlabel(xlabel or "block size (bytes)")
            ax.set_ylabel(ylabel)
            ax.set_title(op)
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        path = os.path.join(args.out, f"{bench}_{name}.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        print(path)

    def per_point(key, log_y=False):
        def draw(ax, curves):
            for label, pts in curves.items():
                xy = [(b, f[key]) for b, f in pts if key in f]
                if xy:
                    ax.plot([b for b, _ in xy], [v for _, v in xy], marker="o", label=label)
            if log_y:
                ax.set_yscale("log")
        return draw

    def latency(ax, curves):
        # Colours follow the curve's place, as in the bandwidth figure.
        for i, (label, pts) in enumerate(curves.items()):
            kind = latency_kind(pts)
            if kind is None:
                continue
            color = f"C{i}"
            x = [b for b, _ in pts]
            if kind == "p50/p99":
                ax.plot(x, [f["p50_us"] for _, f in pts], marker="o", color=color,
                        label=f"{label} p50")
                ax.plot(x, [f["p99_us"] for _, f in pts], marker="^", linestyle="--",
                        color=color, label=f"{label} p99")
            else:
                key = "p50_us" if kind == "p50" else "avg_us"
                ax.plot(x, [f[key] for _, f in pts], marker="s", linestyle=":", color=color,
                        label=f"{label} {kind}")
        ax.set_yscale("log")

    all_curves = [pts for curves in by_op.values() for pts in curves.values()]
    def has(key):
        return any(key in f for pts in all_curves for _, f in pts)

    if has("GBps"):
        figure("GB/s (10^9 bytes/s)", per_point("GBps"), "bandwidth")
    if has("rate"):
        figure(rate_unit, per_point("rate"), "throughput")
    if any(latency_kind(pts) is not None for pts in all_curves):
        figure("latency (us)", latency, "latency")
    if has("iops"):
        figure("I/O per second", per_point("iops", log_y=True), "iops")


if __name__ == "__main__":
    main()
