#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""The KV-cache connector flow of an inference server (vLLM's NixlConnector), with nixl._api.

A "prefill" agent owns a KV cache of LAYERS tensors of BLOCKS blocks of BLOCK_BYTES; a "decode"
agent pulls the blocks of a request from it:
  1. both register their caches (get_reg_descs + register_memory) and publish metadata;
  2. decode loads prefill's metadata (add_remote_agent returns the name as bytes, reused after);
  3. decode prepares both descriptor lists ONCE, one descriptor per (layer, block);
  4. per request it READs the request's blocks by index (make_prepped_xfer + transfer) with a
     notification, polls check_xfer_state, reads the transfer's telemetry, releases the handle;
  5. prefill sees the notifications (get_new_notifs) and knows the blocks can be freed;
  6. cleanup: release the prepared lists, remove the remote agent, deregister.
The two agents live in one process here; across processes only the metadata bytes travel (see
two_peers.py). Uses torch CPU tensors when torch is importable, numpy arrays otherwise.

Run from the build tree:
    PYTHONPATH=build/src/bindings/python NIXL_PLUGIN_DIR=build/src/plugins \
        /usr/bin/python3 examples/python/connector_flow.py
"""

import sys
import time

import numpy as np

from nixl._api import nixl_agent, nixl_agent_config

LAYERS, BLOCKS, BLOCK_BYTES = 8, 64, 16 * 1024
REQUESTS = {"req-0": [0, 1, 2, 3], "req-1": [10, 11], "req-2": list(range(32, 48))}

try:
    import torch
except ImportError:
    torch = None


def make_cache(fill):
    if torch is not None:
        g = torch.Generator().manual_seed(7)
        return [torch.randint(0, 256, (BLOCKS, BLOCK_BYTES), dtype=torch.uint8, generator=g)
                if fill else torch.zeros((BLOCKS, BLOCK_BYTES), dtype=torch.uint8)
                for _ in range(LAYERS)]
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, (BLOCKS, BLOCK_BYTES), dtype=np.uint8) if fill
            else np.zeros((BLOCKS, BLOCK_BYTES), dtype=np.uint8) for _ in range(LAYERS)]


def addr(t):
    return t.data_ptr() if torch is not None else t.ctypes.data


def block_rows(cache):
    return np.array([(addr(t) + b * BLOCK_BYTES, BLOCK_BYTES, 0)
                     for t in cache for b in range(BLOCKS)], dtype=np.uint64)


def worker(name, fill):
    agent = nixl_agent(name, nixl_agent_config(backends=["UCX"], capture_telemetry=True))
    cache = make_cache(fill)
    descs = agent.get_reg_descs([(addr(t), BLOCKS * BLOCK_BYTES, 0, "") for t in cache], "DRAM")
    agent.register_memory(descs, backends=["UCX"])
    return agent, cache, descs


def main():
    prefill, p_cache, p_reg = worker("prefill", True)
    decode, d_cache, d_reg = worker("decode", False)

    remote = decode.add_remote_agent(prefill.get_agent_metadata())
    local_h = decode.prep_xfer_dlist("NIXL_INIT_AGENT", block_rows(d_cache), "DRAM")
    remote_h = decode.prep_xfer_dlist(remote, block_rows(p_cache), "DRAM")

    for req, blocks in REQUESTS.items():
        idx = np.array([layer * BLOCKS + b for layer in range(LAYERS) for b in blocks], np.int64)
        h = decode.make_prepped_xfer("READ", local_h, idx, remote_h, idx, notif_msg=req.encode())
        state = decode.transfer(h)
        deadline = time.monotonic() + 30
        while state == "PROC":
            if time.monotonic() > deadline:
                sys.exit(f"{req}: READ did not complete")
            state = decode.check_xfer_state(h)
        if state != "DONE":
            sys.exit(f"{req}: READ failed ({state})")
        tel = decode.get_xfer_telemetry(h)
        decode.release_xfer_handle(h)
        print(f"{req}: {len(blocks)} blocks x {LAYERS} layers, {tel.totalBytes} bytes in "
              f"{tel.descCount} descriptors, {tel.xferDuration} us")

    seen = []
    deadline = time.monotonic() + 30
    while len(seen) < len(REQUESTS) and time.monotonic() < deadline:
        for msgs in prefill.get_new_notifs().values():
            seen.extend(m.decode() for m in msgs)
        time.sleep(0.0005)
    if sorted(seen) != sorted(REQUESTS):
        sys.exit(f"prefill saw notifications {seen}")

    wanted = {b for blocks in REQUESTS.values() for b in blocks}
    for layer in range(LAYERS):
        for b in range(BLOCKS):
            same = bool((d_cache[layer][b] == p_cache[layer][b]).all())
            if same != (b in wanted):
                sys.exit(f"layer {layer} block {b}: {'copied' if same else 'missing'}")

    decode.release_dlist_handle(local_h)
    decode.release_dlist_handle(remote_h)
    decode.remove_remote_agent(remote)
    decode.deregister_memory(d_reg)
    prefill.deregister_memory(p_reg)
    print(f"verified {len(wanted)} blocks x {LAYERS} layers "
          f"({'torch' if torch is not None else 'numpy'}); prefill notified of {sorted(seen)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
