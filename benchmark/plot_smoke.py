#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""plot_smoke: a tiny `ucx_bench --json` run, drawn by plot.py; both PNGs must exist and be
non-empty, and input plot.py cannot draw must give exit 1 and one line.

    plot_smoke.py UCX_BENCH PLOT_PY    (skipped, exit 77, when matplotlib is missing)
"""

import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    ucx_bench, plot_py = sys.argv[1], sys.argv[2]
    try:
        import matplotlib  # noqa: F401  (only whether plot.py can run)
    except ImportError:
        print("SKIP: matplotlib is missing (apt install python3-matplotlib)")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="plot_smoke.") as tmp:
        run = os.path.join(tmp, "run.json")
        with open(run, "w", encoding="utf-8") as f:
            subprocess.run([ucx_bench, "--blocks", "4K,64K", "--batches", "1", "--min-ms", "5",
                            "--json"], stdout=f, check=True, timeout=120)
        with open(run, encoding="utf-8") as f:
            points = [json.loads(line) for line in f if line.strip()]
        # WRITE and READ at two sizes, each with memcpy and the system call as peers.
        assert len(points) == 4, f"{len(points)} points, expected 4"
        for p in points:
            names = [peer["name"] for peer in p["peers"]]
            assert names[0] == "memcpy" and len(names) == 2, names
            for fig in [p] + p["peers"]:
                for key in ("GBps", "p50_us", "p99_us", "p999_us", "max_us"):
                    assert fig[key] > 0, (key, fig)
        out = os.path.join(tmp, "plots")
        subprocess.run([sys.executable, plot_py, "--in", run, "--out", out], check=True,
                       timeout=300)
        for name in ("ucx_bench_bandwidth.png", "ucx_bench_latency.png"):
            path = os.path.join(out, name)
            assert os.path.isfile(path) and os.path.getsize(path) > 0, f"{path} missing or empty"
        # Bad input: exit 1, one line naming the cause, no traceback.
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w", encoding="utf-8") as f:
            f.write('{"op": "WRITE"}\n')
        r = subprocess.run([sys.executable, plot_py, "--in", bad, "--out", out],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, (r.returncode, r.stderr)
        assert "has no 'block'" in r.stderr, r.stderr
    print("plot_smoke: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
