#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Runs a program with NIXL_ETCD_ENDPOINTS pointing at a private etcd: started here on
127.0.0.1 with free ports and a temporary data directory, awaited on /health, killed after.
Usage: run_with_etcd.py ETCD_BINARY PROGRAM [ARGS...]; exits with the program's status."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    etcd, prog = sys.argv[1], sys.argv[2:]
    tmp = tempfile.mkdtemp(prefix="nixl-etcd-example-")
    client, peer = free_port(), free_port()
    url = f"http://127.0.0.1:{client}"
    log = open(os.path.join(tmp, "etcd.log"), "w")
    proc = subprocess.Popen(
        [etcd, "--name", "example", "--data-dir", os.path.join(tmp, "data"),
         "--listen-client-urls", url, "--advertise-client-urls", url,
         "--listen-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-cluster", f"example=http://127.0.0.1:{peer}"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        healthy = False
        while not healthy and time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    healthy = json.load(r).get("health") == "true"
            except OSError:
                pass
            if not healthy:
                time.sleep(0.1)  # polling interval while etcd starts
        if not healthy:
            log.flush()
            sys.stderr.write(open(os.path.join(tmp, "etcd.log")).read()[-4000:])
            print("etcd did not become healthy", file=sys.stderr)
            return 1
        env = dict(os.environ, NIXL_ETCD_ENDPOINTS=url)
        return subprocess.call(prog, env=env)
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
