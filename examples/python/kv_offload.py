#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""KV-cache blocks offloaded to a file and loaded back with nixl._api and the POSIX backend.

One agent with the POSIX backend:
  1. registers the KV blocks' memory, the memory they are loaded back into, and a file in path
     mode (meta "rw,create:<path>"; the backend opens it, the device id is only a key);
  2. WRITEs block i to file offset i * BLOCK (the remote agent of a file transfer is the agent
     itself);
  3. READs the blocks back into the other memory, last block first;
  4. checks every byte, deregisters, removes the file.
Exit status 0 when the data came back intact ("verified N bytes"); 77 when this build has no
POSIX plugin.

Run from the build tree:
    PYTHONPATH=build/src/bindings/python NIXL_PLUGIN_DIR=build/src/plugins \
        /usr/bin/python3 examples/python/kv_offload.py [--blocks N] [--block-size BYTES]
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

from nixl._api import nixl_agent, nixl_agent_config

TIMEOUT_S = 60.0
FILE_KEY = 1


def run(agent, op, mem, fil):
    handle = agent.initialize_xfer(op, mem, fil, agent.name)
    state = agent.transfer(handle)
    deadline = time.monotonic() + TIMEOUT_S
    while state == "PROC" and time.monotonic() < deadline:
        state = agent.check_xfer_state(handle)
    agent.release_xfer_handle(handle)
    if state != "DONE":
        sys.exit(f"kv_offload: {op} ended in state {state}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=256)
    ap.add_argument("--block-size", type=int, default=64 * 1024)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    n, block = args.blocks, args.block_size

    agent = nixl_agent("kv-node", nixl_agent_config(backends=[]))
    if "POSIX" not in agent.plugin_list:
        print("kv_offload: this build has no POSIX plugin", file=sys.stderr)
        sys.exit(77)
    agent.create_backend("POSIX")

    kv = np.random.default_rng(1).integers(0, 255, (n, block), dtype=np.uint8)
    loaded = np.zeros_like(kv)
    mem_reg = agent.register_memory(
        [(kv.ctypes.data, kv.nbytes, 0, ""), (loaded.ctypes.data, loaded.nbytes, 0, "")], "DRAM")
    fd, path = tempfile.mkstemp(prefix="nixl-kv-offload-", suffix=".bin", dir=args.dir)
    os.close(fd)
    try:
        file_reg = agent.register_memory([(0, kv.nbytes, FILE_KEY, "rw:" + path)], "FILE")

        src = agent.get_xfer_descs([(kv.ctypes.data + i * block, block, 0) for i in range(n)],
                                   "DRAM")
        dst = agent.get_xfer_descs([(i * block, block, FILE_KEY) for i in range(n)], "FILE")
        run(agent, "WRITE", src, dst)

        order = range(n - 1, -1, -1)
        back = agent.get_xfer_descs([(loaded.ctypes.data + i * block, block, 0) for i in order],
                                    "DRAM")
        frm = agent.get_xfer_descs([(i * block, block, FILE_KEY) for i in order], "FILE")
        run(agent, "READ", back, frm)

        agent.deregister_memory(file_reg)
        agent.deregister_memory(mem_reg)
    finally:
        os.unlink(path)
    bad = np.nonzero((kv != loaded).any(axis=1))[0]
    if bad.size:
        sys.exit(f"kv_offload: block {bad[0]} differs after the round trip")
    print(f"offloaded {n} blocks of {block} bytes to a file and loaded them back")
    print(f"verified {kv.nbytes} bytes")


if __name__ == "__main__":
    main()
