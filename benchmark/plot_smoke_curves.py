#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""plot_smoke_curves: a tiny --json run of one benchmark with a peer measured in the same run,
drawn by plot.py. The points must carry our figures and the peer's, plot.py's series must hold
both curves in every panel, and every PNG it names must exist and be non-empty.

    plot_smoke_curves.py ring PLOT_PY RING_BENCH
    plot_smoke_curves.py prometheus PLOT_PY SCRAPE_BENCH_PY DRIVER PLUGIN_DIR
    plot_smoke_curves.py ucx_perftest PLOT_PY UCX_BENCH_SH BUILD_DIR

Skipped (exit 77, one line) when matplotlib is missing, or ucx_perftest for the last form;
scrape_bench.py's own skip (no prometheus_mp plugin, no prometheus_client) is passed on.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def run_json(argv, out_path, env=None):
    """Runs argv with stdout into out_path; returns its exit code (stderr is passed through)."""
    with open(out_path, "w", encoding="utf-8") as f:
        return subprocess.run(argv, stdout=f, env=env, timeout=240, check=False).returncode


def read_points(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check_figures(fig, keys, what):
    for key in keys:
        assert isinstance(fig.get(key), (int, float)) and fig[key] > 0, (what, key, fig)


def ring(plot_py, tmp, bench):
    out = os.path.join(tmp, "run.json")
    rc = run_json([bench, "--quick", "--json", "--batches", "1,16"], out)
    assert rc == 0, f"ring_bench exited {rc}"
    points = read_points(out)
    assert [p["block"] for p in points] == [1, 16], [p["block"] for p in points]
    for p in points:
        assert p["path"] == "ours" and p["intact"], p
        check_figures(p, ("rate", "p50_us", "p99_us"), "ours")
        assert p["p50_us"] <= p["p99_us"], p
        names = [peer["name"] for peer in p["peers"]]
        assert names == ["naive", "boost"], names
        for peer in p["peers"]:
            assert peer["intact"], peer
            check_figures(peer, ("rate", "p50_us", "p99_us"), peer["name"])
    return out, {"ours", "naive"}, ("ring_bench_throughput.png", "ring_bench_latency.png")


def prometheus(plot_py, tmp, scrape_py, driver, plugin_dir):
    out = os.path.join(tmp, "run.json")
    rc = run_json([sys.executable, scrape_py, "--driver", driver, "--plugin-dir", plugin_dir,
                   "--quick", "--json"], out)
    if rc == SKIP:
        sys.exit(SKIP)  # scrape_bench.py printed the reason
    assert rc == 0, f"scrape_bench.py exited {rc}"
    points = read_points(out)
    assert [p["block"] for p in points] == [1, 3], [p["block"] for p in points]
    for p in points:
        check_figures(p, ("p50_us", "p99_us", "bytes"), "ours")
        assert [peer["name"] for peer in p["peers"]] == ["prometheus_client multiprocess"], p
        check_figures(p["peers"][0], ("p50_us", "p99_us", "bytes"), "prometheus_client")
    return (out, {"ours (prometheus_mp)", "prometheus_client multiprocess"},
            ("prometheus_mp_scrape_latency.png",))


def ucx_perftest(plot_py, tmp, script, build):
    if shutil.which("ucx_perftest") is None:
        print("SKIP: ucx_perftest is missing (apt install ucx-utils)")
        sys.exit(SKIP)
    out = os.path.join(tmp, "run.json")
    env = dict(os.environ, RATIOS_ONLY="1", BLOCKS="4096 65536")
    with open(os.path.join(tmp, "table.txt"), "w", encoding="utf-8") as table:
        rc = subprocess.run(["bash", script, "--json", out, build, "--min-ms", "5"], env=env,
                            stdout=table, timeout=240, check=False).returncode
    assert rc == 0, f"ucx_bench.sh exited {rc}"
    points = read_points(out)
    assert [p["block"] for p in points] == [4096, 65536], [p["block"] for p in points]
    for p in points:
        check_figures(p, ("GBps", "p50_us", "p99_us"), "ours")
        perf = [peer for peer in p["peers"] if peer["name"] == "ucx_perftest put_bw cma"]
        assert len(perf) == 1, p["peers"]
        check_figures(perf[0], ("GBps", "p50_us"), "ucx_perftest")
        lat = [peer for peer in p["peers"] if peer["name"] == "ucx_perftest ucp_put_lat"]
        assert len(lat) == 1, p["peers"]
        check_figures(lat[0], ("p50_us", "avg_us"), "ucp_put_lat")
    return (out, {"nixl UCX", "ucx_perftest put_bw cma", "ucx_perftest ucp_put_lat"},
            ("ucx_bench_bandwidth.png", "ucx_bench_latency.png"))


def main():
    mode, plot_py, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        import matplotlib  # noqa: F401  (only whether plot.py can run)
    except ImportError:
        print("SKIP: matplotlib is missing (apt install python3-matplotlib)")
        return SKIP
    modes = {"ring": ring, "prometheus": prometheus, "ucx_perftest": ucx_perftest}
    with tempfile.TemporaryDirectory(prefix="plot_smoke_curves.") as tmp:
        run, labels, pngs = modes[mode](plot_py, tmp, *rest)
        # plot.py's own grouping: both curves in every panel.
        spec = importlib.util.spec_from_file_location("plot", plot_py)
        plot = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(plot)
        by_op = plot.series(plot.load_points(run))
        assert by_op, "no panel"
        for op, curves in by_op.items():
            assert labels <= set(curves), (op, sorted(curves))
            for label in labels:
                assert len(curves[label]) >= 2, (op, label, curves[label])
        out = os.path.join(tmp, "plots")
        r = subprocess.run([sys.executable, plot_py, "--in", run, "--out", out],
                           capture_output=True, text=True, timeout=240, check=False)
        assert r.returncode == 0, (r.returncode, r.stderr)
        for name in pngs:
            path = os.path.join(out, name)
            assert path in r.stdout.split(), (path, r.stdout)
            assert os.path.isfile(path) and os.path.getsize(path) > 0, f"{path} missing or empty"
    print(f"plot_smoke_curves {mode}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
