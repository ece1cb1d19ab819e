#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Soak of a long-lived prometheus_mp owner while writers are killed and restarted.

One nixl_exporter_driver process becomes the owner (it elects first and serves /metrics); in a
loop, --writers writer processes (agent names rank0..rankN-1, so every cycle is a crash-looping
rank replacing its departed store) export their workload, the owner is scraped, the writers are
SIGKILLed, and the owner is scraped again. The owner's VmRSS is sampled from /proc every
--sample-seconds and printed as it goes; at the end a summary compares the sample after the
warm-up (--warmup-seconds) with the last one.

    test/soak/prometheus_mp_soak.py --driver build/test/e2e/nixl_exporter_driver \\
        --plugin-dir build/src/plugins --seconds 600 [--writers 4] [--pause 0.1] [--ttl 1]
        [--random-kill] [--unique-names]

Exit status: 0 done (growth is reported, not judged), 1 the owner died or never served.
Standard library only.
"""

import argparse
import json
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(pid):
    """VmRSS and its anonymous part (heap, stacks), kB, from /proc/<pid>/status."""
    rss = anon = -1
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("RssAnon:"):
                anon = int(line.split()[1])
    return rss, anon


def scrape(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            return r.read().decode()
    except OSError:
        return None


def wait_for(path, proc, deadline):
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--driver", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--sample-seconds", type=float, default=10)
    ap.add_argument("--warmup-seconds", type=float, default=60)
    ap.add_argument("--ttl", default="1", help="NIXL_TELEMETRY_MP_STALE_TTL for the run")
    ap.add_argument("--random-kill", action="store_true",
                    help="kill each writer at a random moment (0-50 ms after start, often "
                         "while it creates its store) instead of after its workload")
    ap.add_argument("--unique-names", action="store_true",
                    help="a new agent name for every writer (departed stores age out by TTL "
                         "instead of being replaced by their successor)")
    ap.add_argument("--owner-prefix", default="",
                    help="command put in front of the owner, e.g. 'valgrind --leak-check=full "
                         "--log-file=owner.vg' (the samples then include the tool's memory)")
    ap.add_argument("--pause", type=float, default=0.1,
                    help="seconds between cycles (keeps the soak from taking every core)")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="nixl_mp_soak.")
    store_dir = os.path.join(work, "mp")
    port = free_port()
    env = dict(os.environ,
               NIXL_TELEMETRY_MULTIPROC_DIR=store_dir,
               NIXL_TELEMETRY_PROMETHEUS_PORT=str(port),
               NIXL_TELEMETRY_PROMETHEUS_LOCAL="1",
               NIXL_TELEMETRY_MP_STALE_TTL=args.ttl)
    base = [args.driver, "--plugin-dir", args.plugin_dir, "--exporter", "prometheus_mp",
            "--events", "200", "--flush-ms", "50"]

    ready = os.path.join(work, "owner.ready")
    owner = subprocess.Popen(shlex.split(args.owner_prefix) + base + ["--agent-name", "owner", "--ready-file", ready,
                                     "--hold-seconds", str(args.seconds + 3600)],
                             env=env, stdout=subprocess.DEVNULL)
    status = 0
    samples = []
    cycles = scrapes = failed_scrapes = 0
    try:
        if not wait_for(ready, owner, time.monotonic() + 60) or scrape(port) is None:
            print("owner did not start serving", file=sys.stderr)
            return 1
        start = time.monotonic()
        next_sample = start
        while True:
            now = time.monotonic()
            if now >= next_sample:
                if owner.poll() is not None:
                    print(f"owner exited with {owner.returncode}", file=sys.stderr)
                    status = 1
                    break
                rss, anon = rss_kb(owner.pid)
                s = {"t": round(now - start, 1), "rss_kb": rss, "anon_kb": anon,
                     "cycles": cycles, "scrapes": scrapes,
                     "files": len(os.listdir(store_dir))}
                samples.append(s)
                print(json.dumps(s), flush=True)
                next_sample += args.sample_seconds
                if now - start >= args.seconds:
                    break
            procs = []
            for i in range(args.writers):
                rf = os.path.join(work, f"w{cycles}.{i}.ready")
                procs.append((subprocess.Popen(
                    base + ["--agent-name",
                            f"w{cycles}.{i}" if args.unique_names else f"rank{i}",
                            "--ready-file", rf,
                            "--hold-seconds", "600"],
                    env=env, stdout=subprocess.DEVNULL), rf))
            if args.random_kill:
                time.sleep(random.uniform(0, 0.05))
            else:
                for p, rf in procs:
                    wait_for(rf, p, time.monotonic() + 60)
            for _ in range(2):
                scrapes += 1
                failed_scrapes += scrape(port) is None
            for p, rf in procs:
                p.send_signal(signal.SIGKILL)
                p.wait()
                if os.path.exists(rf):
                    os.unlink(rf)
            scrapes += 1
            failed_scrapes += scrape(port) is None
            cycles += 1
            time.sleep(args.pause)
    finally:
        owner.send_signal(signal.SIGTERM)
        try:
            owner.wait(timeout=30)
        except subprocess.TimeoutExpired:
            owner.kill()
            owner.wait()
        shutil.rmtree(work, ignore_errors=True)
    after = [s for s in samples if s["t"] >= args.warmup_seconds]
    if len(after) >= 2:
        first, last = after[0], after[-1]
        print(json.dumps({"summary": True, "seconds": last["t"], "cycles": cycles,
                          "scrapes": scrapes, "failed_scrapes": failed_scrapes,
                          "rss_kb_after_warmup": first["rss_kb"], "rss_kb_last": last["rss_kb"],
                          "growth_kb": last["rss_kb"] - first["rss_kb"],
                          "min_kb": min(s["rss_kb"] for s in after),
                          "max_kb": max(s["rss_kb"] for s in after),
                          "anon_kb_after_warmup": first["anon_kb"],
                          "anon_kb_last": last["anon_kb"]}), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
