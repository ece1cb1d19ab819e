#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Wake-ups per second of an idle agent's threads (all but the main one): one agent with a
LIBFABRIC backend and the progress thread, no peer, no transfer.

    PYTHONPATH=build/src/bindings/python NIXL_PLUGIN_DIR=build/src/plugins FI_TCP_IFACE=lo \\
        python3 benchmark/backend_bench/idle_wakeups.py ['tcp;ofi_rxm'|auto|shm] [seconds]

A wake-up is a context switch (voluntary or not) counted in /proc/self/task/*/status.
"""
import glob
import os
import sys
import time

from nixl._api import nixl_agent, nixl_agent_config


def switches(skip_tid):
    total = 0
    for task in glob.glob("/proc/self/task/*"):
        if int(os.path.basename(task)) == skip_tid:
            continue
        with open(task + "/status") as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
    return total


def main():
    provider = sys.argv[1] if len(sys.argv) > 1 else "tcp;ofi_rxm"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    agent = nixl_agent("idle", nixl_agent_config(enable_prog_thread=True, backends=[]))
    agent.create_backend("LIBFABRIC", {"provider": provider})
    main_tid = os.getpid()
    time.sleep(0.5)  # past the backend's start-up
    s0, t0 = switches(main_tid), time.monotonic()
    time.sleep(seconds)
    s1, t1 = switches(main_tid), time.monotonic()
    print(f"provider={provider}: {(s1 - s0) / (t1 - t0):.0f} wake-ups/s of the agent's threads")


if __name__ == "__main__":
    main()
