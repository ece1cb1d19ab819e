#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Python vs C++ cost of the connector-shaped flow: a prepared READ of k blocks of 16 KiB
(make_prepped_xfer + transfer + check_xfer_state until DONE + release_xfer_handle), between two
agents of one process over UCX, through nixl._api; the same calls from C++ in the same process
(module _connector_bench_cpp: two more agents, the loop of connector_bench_cpp.h) and, for
reference, from a C++ process of its own (connector_bench_peer). Rounds alternate (Python round,
C++ round, ...) so all see the same machine load; the table gives medians, the Python - C++
difference per transfer and the ratio against the in-process C++ loop, both as a ratio of
medians and as the median of each round's ratio to the C++ round next to it (paired). A last
Python pass per size times every transfer on its own and prints p50, p99, p99.9 and max.

Targets (issue 16): Python adds <= 2 us per transfer at 1 block and <= 10 % at 64 blocks.

Usage (build tree, -Dbuild_benchmarks=true):
    PYTHONPATH=build/src/bindings/python NIXL_PLUGIN_DIR=build/src/plugins UCX_MEM_EVENTS=no \
    UCX_NET_DEVICES=lo python3 benchmark/python/connector_bench.py \
        --peer build/benchmark/python/connector_bench_peer [--blocks 1,64] [--rounds 7] \
        [--iters 20000] [--prog-thread 1] [--cpp-module-dir DIR] [--check]
--cpp-module-dir: where _connector_bench_cpp*.so is (default: the directory of --peer, which is
where meson builds both).
--check: a short run that only verifies both sides move data (the smoke test).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import nixl._bindings as nb
from nixl._api import nixl_agent, nixl_agent_config

BLOCK = 16 * 1024


def python_side(blocks, prog_thread):
    max_k = max(blocks)
    cfg = nixl_agent_config(enable_prog_thread=prog_thread, backends=["UCX"])
    init, target = nixl_agent("bench-py-init", cfg), nixl_agent("bench-py-target", cfg)
    nblocks = 2 * max_k
    src = np.full(nblocks * BLOCK, 0x5A, dtype=np.uint8)
    dst = np.zeros_like(src)
    target.register_memory([(src.ctypes.data, src.nbytes, 0, "")], "DRAM")
    init.register_memory([(dst.ctypes.data, dst.nbytes, 0, "")], "DRAM")
    name = init.add_remote_agent(target.get_agent_metadata())
    rows = lambda buf: np.array([(buf.ctypes.data + b * BLOCK, BLOCK, 0) for b in range(nblocks)],
                                dtype=np.uint64)
    lh = init.prep_xfer_dlist("NIXL_INIT_AGENT", rows(dst), "DRAM")
    rh = init.prep_xfer_dlist(name, rows(src), "DRAM")
    keep = (target, src, dst)

    def run(k, iters):
        # vLLM builds int64 index arrays per request; so do we (every other block, unmerged).
        idx = np.arange(0, 2 * k, 2, dtype=np.int64)
        make, post, state, release = (init.make_prepped_xfer, init.transfer,
                                      init.check_xfer_state, init.release_xfer_handle)
        c0 = time.thread_time_ns()
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            h = make("READ", lh, idx, rh, idx)
            s = post(h)
            while s == "PROC":
                s = state(h)
            if s != "DONE":
                raise RuntimeError(f"transfer state {s}")
            release(h)
        wall = (time.perf_counter_ns() - t0) / iters
        return wall, (time.thread_time_ns() - c0) / iters

    def run_raw(k, iters):
        # The same transfer through nixl._bindings alone (what the bindings cost without the
        # nixl._api layer): handle ints, list indices; a status that is not the module's
        # NIXL_SUCCESS object itself is read with int() (older builds return other objects).
        agent, lraw, rraw, rd, done = init.agent, lh._handle, rh._handle, nb.NIXL_READ, nb.NIXL_SUCCESS
        idx = list(range(0, 2 * k, 2))
        make, post, status, release = (agent.makeXferReq, agent.postXferReq,
                                       agent.getXferStatus, agent.releaseXferReq)
        c0 = time.thread_time_ns()
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            h = make(rd, lraw, idx, rraw, idx, b"", [], False)
            s = post(h, b"")
            while s is not done and int(s) == 1:
                s = status(h)
            release(h)
        wall = (time.perf_counter_ns() - t0) / iters
        return wall, (time.thread_time_ns() - c0) / iters

    def run_tails(k, iters):
        # Each transfer timed on its own (two perf_counter_ns reads more per transfer than
        # run): the tails a short run shows, which the per-round medians above hide.
        idx = np.arange(0, 2 * k, 2, dtype=np.int64)
        make, post, state, release = (init.make_prepped_xfer, init.transfer,
                                      init.check_xfer_state, init.release_xfer_handle)
        clock = time.perf_counter_ns
        lat = []
        for _ in range(iters):
            t0 = clock()
            h = make("READ", lh, idx, rh, idx)
            s = post(h)
            while s == "PROC":
                s = state(h)
            if s != "DONE":
                raise RuntimeError(f"transfer state {s}")
            release(h)
            lat.append(clock() - t0)
        return lat

    def verify():
        return bool((dst[:BLOCK] == 0x5A).all())
    run.tails = run_tails
    return run, run_raw, verify, keep


def cpp_round(peer, k, iters, warmup, prog_thread, sync):
    out = subprocess.run([peer, "--blocks", str(k), "--iters", str(iters), "--rounds", "1",
                          "--warmup", str(warmup), "--prog-thread", "1" if prog_thread else "0",
                          "--sync", sync],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"connector_bench_peer failed ({out.returncode}): {out.stderr.strip()}")
    _tag, _k, wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peer", required=True)
    ap.add_argument("--blocks", default="1,64")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=2000)
    ap.add_argument("--prog-thread", type=int, default=1)
    ap.add_argument("--cpp-module-dir", default=None)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check:
        a.rounds, a.iters, a.warmup = 1, 200, 20
    blocks = [int(x) for x in a.blocks.split(",")]
    sys.path.insert(0, a.cpp_module_dir or os.path.dirname(os.path.abspath(a.peer)))
    import _connector_bench_cpp as cb  # pylint: disable=import-outside-toplevel
    run, run_raw, verify, _keep = python_side(blocks, bool(a.prog_thread))
    # The C++ loop in this process: NONE (the baseline) and RW (the mode the bindings run).
    inproc = {sync: cb.Bench(f"bench-inproc-{sync}", max(blocks), BLOCK, bool(a.prog_thread), sync)
              for sync in ("none", "rw")}
    rows = []
    for k in blocks:
        run(k, a.warmup)
        for b in inproc.values():
            b.round(k, a.warmup)
        py, cpp, rw, raw, peer = [], [], [], [], []
        for _ in range(a.rounds):
            py.append(run(k, a.iters))
            cpp.append(inproc["none"].round(k, a.iters))
            raw.append(run_raw(k, a.iters))
            rw.append(inproc["rw"].round(k, a.iters))
            peer.append(cpp_round(a.peer, k, a.iters, a.warmup, bool(a.prog_thread), "none"))
        rows.append((k, py, cpp, rw, raw, peer))
    # One more Python pass per size with every transfer timed: p50, p99, p99.9 and max.
    tails = {k: sorted(run.tails(k, a.iters)) for k in blocks}
    if not verify():
        sys.exit("python side: data mismatch")
    for sync, b in inproc.items():
        if not b.verify():
            sys.exit(f"in-process C++ side ({sync}): data mismatch")
    med = lambda xs, i: statistics.median(x[i] for x in xs) / 1000
    paired = lambda xs, ys, i: statistics.median(x[i] / y[i] for x, y in zip(xs, ys))
    print(f"# {a.rounds} alternating rounds x {a.iters} transfers, blocks of {BLOCK} bytes, "
          f"progress thread {a.prog_thread}; medians in us per transfer; CPU = the calling "
          f"thread's CPU time (excludes waiting for a core); C++ = the same loop in this "
          f"process (NONE; RW = the bindings' mode); C++ peer = connector_bench_peer's process")
    print("| blocks | C++ wall | Python wall | wall Python - C++ | wall ratio "
          "| C++ CPU | C++ RW CPU | C++ peer CPU | _bindings CPU | Python CPU "
          "| CPU Python - C++ | CPU ratio | paired CPU ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k, py, cpp, rw, raw, peer in rows:
        cw, pw, cc, pc, rc = med(cpp, 0), med(py, 0), med(cpp, 1), med(py, 1), med(rw, 1)
        bc, ec = med(raw, 1), med(peer, 1)
        print(f"| {k} | {cw:.2f} | {pw:.2f} | {pw - cw:+.2f} | {pw / cw:.3f} "
              f"| {cc:.2f} | {rc:.2f} | {ec:.2f} | {bc:.2f} | {pc:.2f} | {pc - cc:+.2f} "
              f"| {pc / cc:.3f} | {paired(py, cpp, 1):.3f} |")
    q = lambda xs, f: xs[min(len(xs) - 1, int(len(xs) * f))] / 1000
    print(f"\n# Python, each of {a.iters} transfers timed on its own (us): make_prepped_xfer + "
          f"transfer + check_xfer_state until DONE + release_xfer_handle")
    print("| blocks | p50 | p99 | p99.9 | max |")
    print("|---|---|---|---|---|")
    for k in blocks:
        xs = tails[k]
        print(f"| {k} | {q(xs, 0.5):.2f} | {q(xs, 0.99):.2f} | {q(xs, 0.999):.2f} "
              f"| {xs[-1] / 1000:.2f} |")
    for k, py, cpp, rw, raw, peer in rows:
        for name, xs in (("python", py), ("_bindings", raw), ("c++", cpp), ("c++ rw", rw),
                         ("c++ peer", peer)):
            print(f"# k={k} {name} rounds wall/cpu (us): "
                  + " ".join(f"{w / 1000:.2f}/{c / 1000:.2f}" for w, c in xs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
