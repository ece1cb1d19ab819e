#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Draw a benchmark's --json output: bandwidth, IOPS and p50/p99 latency against block size.

    python3 benchmark/plot.py --in run.json --out dir/ [--title TEXT]

The input is what `ucx_bench --json`, `backend_bench --json` (or backend_bench.sh --json)
and `posix_bench --json` print: one JSON object per line (a JSON array of the same objects is
read too). Each object is one point: "bench", "op", "block" (bytes), "batch", "path" (our
side), "GBps", optionally "iops", "p50_us", "p99_us" or "avg_us", and "peers", a list of
objects with a "name" and the same figures, measured in the same run. Every peer becomes a
second curve. A curve with p50 and p99 is drawn with both; one with only p50 or only an
average (fi_pingpong's usec/xfer) as a single curve; one with neither (posix_bench's own side:
its requests complete as a whole) is left out of the latency figure.

Writes DIR/<bench>_bandwidth.png, DIR/<bench>_latency.png when any curve has a latency and
DIR/<bench>_iops.png when any has "iops", one panel per operation, and prints their paths. Exit 1 with one line on stderr when the input cannot be drawn; exit 2
when matplotlib is missing (Debian: python3-matplotlib).
"""

import argparse
import json
import os
import sys
from collections import defaultdict


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
        for key in ("op", "block", "GBps"):
            if key not in p:
                fail(f"{path}: point {n} has no '{key}'")
    if not points:
        fail(f"{path}: no points")
    return points


def series(points):
    """{op: {curve label: [(block, figures), ...]}} with ours first, then the peers."""
    batches = {p.get("batch", 1) for p in points}
    out = defaultdict(lambda: defaultdict(list))
    for p in points:
        suffix = f", batch {p.get('batch', 1)}" if len(batches) > 1 else ""
        out[p["op"]][p.get("path", "ours") + suffix].append((p["block"], p))
        for peer in p.get("peers", []):
            if isinstance(peer, dict) and "name" in peer and "GBps" in peer:
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


def size_label(b):
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

    def figure(ylabel, draw, name):
        fig, axes = plt.subplots(1, len(ops), figsize=(5.5 * len(ops), 4), squeeze=False)
        for ax, op in zip(axes[0], ops):
            draw(ax, by_op[op])
            ax.set_xscale("log", base=2)
            ax.set_xticks(blocks)
            ax.set_xticklabels([size_label(b) for b in blocks], fontsize=8)
            ax.set_xlabel("block size (bytes)")
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

    def bandwidth(ax, curves):
        for label, pts in curves.items():
            ax.plot([b for b, _ in pts], [f["GBps"] for _, f in pts], marker="o", label=label)

    def iops(ax, curves):
        for label, pts in curves.items():
            xy = [(b, f["iops"]) for b, f in pts if "iops" in f]
            if xy:
                ax.plot([b for b, _ in xy], [v for _, v in xy], marker="o", label=label)
        ax.set_yscale("log")

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
    figure("GB/s (10^9 bytes/s)", bandwidth, "bandwidth")
    if any(latency_kind(pts) is not None for pts in all_curves):
        figure("latency (us)", latency, "latency")
    if any("iops" in f for pts in all_curves for _, f in pts):
        figure("I/O per second", iops, "iops")


if __name__ == "__main__":
    main()
