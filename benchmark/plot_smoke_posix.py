#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""plot_smoke_posix: a tiny `posix_bench --json --blocks` run (fio as the peer) drawn by
plot.py: both sides carry per-I/O latency (p50, p99, p99.9, max; libnixl's from its latency
phase, fio's clat) in the JSON and as p50/p99 curves in plot.py's series, and the bandwidth, IOPS
and latency PNGs exist and are non-empty; and a peer with only an average (fi_pingpong, as backend_bench.sh --json writes it) is drawn as a single curve.

    plot_smoke_posix.py POSIX_BENCH PLOT_PY
    (skipped, exit 77, when matplotlib, fio or the POSIX plugin is missing)
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def skip(reason):
    print(f"SKIP: {reason}")
    return SKIP


def main():
    posix_bench, plot_py = sys.argv[1], sys.argv[2]
    try:
        import matplotlib  # noqa: F401  (only whether plot.py can run)
    except ImportError:
        return skip("matplotlib is missing (apt install python3-matplotlib)")
    if shutil.which("fio") is None:
        return skip("fio is missing (apt install fio): posix_bench's peer")
    plugin_dir = os.environ.get("NIXL_PLUGIN_DIR", "")
    if not os.path.isfile(os.path.join(plugin_dir, "libplugin_POSIX.so")):
        return skip(f"no libplugin_POSIX.so in NIXL_PLUGIN_DIR={plugin_dir!r}")

    with tempfile.TemporaryDirectory(prefix="plot_smoke_posix.") as tmp:
        run = os.path.join(tmp, "run.json")
        with open(run, "w", encoding="utf-8") as f:
            subprocess.run([posix_bench, "--dir", tmp, "--size", "4M", "--runtime-ms", "20",
                            "--engines", "uring", "--direct", "no", "--points",
                            "write,randread", "--blocks", "4K,64K", "--fio",
                            shutil.which("fio"), "--json"],
                           stdout=f, check=True, timeout=120)
        with open(run, encoding="utf-8") as f:
            points = [json.loads(line) for line in f if line.strip()]
        # write and randread at two sizes, page cache only, fio as the one peer.
        got = sorted((p["op"], p["block"]) for p in points)
        want = [("randread", 4096), ("randread", 65536), ("write", 4096), ("write", 65536)]
        assert got == want, got
        tail = ("p50_us", "p99_us", "p999_us", "max_us")
        for p in points:
            assert p["bench"] == "posix_bench" and p["GBps"] > 0 and p["iops"] > 0, p
            assert len(p["peers"]) == 1 and p["peers"][0]["name"].startswith("fio "), p
            fio = p["peers"][0]
            for key in ("GBps", "iops") + tail:
                assert fio[key] > 0 or key == "p50_us", (key, fio)  # a p50 may round to 0
            # Ours: nearest-rank percentiles of the I/Os timed, so ordered and at most the max.
            assert p["lat_ios"] > 0, p
            got_tail = [p[k] for k in tail]
            assert all(v >= 0 for v in got_tail) and got_tail == sorted(got_tail), p
            assert p["max_us"] > 0, p
        # plot.py draws both sides' p50/p99 in every panel of the latency figure.
        spec = importlib.util.spec_from_file_location("plot", plot_py)
        plot = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(plot)
        by_op = plot.series(points)
        assert sorted(by_op) == ["randread", "write"], sorted(by_op)
        for op, curves in by_op.items():
            ours = curves["libnixl POSIX uring page-cache"]
            theirs = curves["fio uring page-cache"]
            assert [b for b, _ in ours] == [4096, 65536], (op, ours)
            assert [b for b, _ in theirs] == [4096, 65536], (op, theirs)
            assert plot.latency_kind(ours) == "p50/p99", (op, ours)
            assert plot.latency_kind(theirs) == "p50/p99", (op, theirs)
        out = os.path.join(tmp, "plots")
        subprocess.run([sys.executable, plot_py, "--in", run, "--out", out], check=True,
                       timeout=300)
        for name in ("bandwidth", "iops", "latency"):
            path = os.path.join(out, f"posix_bench_{name}.png")
            assert os.path.isfile(path) and os.path.getsize(path) > 0, f"{path} missing or empty"

        # A peer with only an average (fi_pingpong) or only a p50 is a single latency curve.
        merged = [{"bench": "backend_bench", "op": "WRITE", "block": b, "batch": 1,
                   "path": "nixl lf-shm", "GBps": 1.0, "p50_us": 2.0, "p99_us": 3.0,
                   "peers": [{"name": "fi_pingpong shm", "GBps": 0.9, "avg_us": 2.5},
                             {"name": "p50 only", "GBps": 0.8, "p50_us": 2.2}]}
                  for b in (4096, 65536)]
        curves = plot.series(merged)["WRITE"]
        assert plot.latency_kind(curves["nixl lf-shm"]) == "p50/p99"
        assert plot.latency_kind(curves["fi_pingpong shm"]) == "avg"
        assert plot.latency_kind(curves["p50 only"]) == "p50"
        mpath = os.path.join(tmp, "merged.json")
        with open(mpath, "w", encoding="utf-8") as f:
            f.write("\n".join(json.dumps(p) for p in merged) + "\n")
        subprocess.run([sys.executable, plot_py, "--in", mpath, "--out", out], check=True,
                       timeout=300)
        path = os.path.join(out, "backend_bench_latency.png")
        assert os.path.isfile(path) and os.path.getsize(path) > 0, f"{path} missing or empty"
    print("plot_smoke_posix: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
