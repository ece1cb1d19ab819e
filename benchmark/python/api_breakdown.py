#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Where nixl._api's own per-transfer cost goes (docs/python.md §7): the connector loop of
connector_bench.py (1 block of 16 KiB, two agents of one process over UCX) through nixl._api
with an int64 array and with a list (the C path of its _fast_method wrappers), through the
Python bodies those wrap (__wrapped__, what every call ran before), and through nixl._bindings
alone: bare, with a plain Python handle object, and with nixl_xfer_handle (slots and
release-on-collection in its C base). Median per-thread CPU time of 9 alternating rounds, us
per transfer.

    PYTHONPATH=build/src/bindings/python NIXL_PLUGIN_DIR=build/src/plugins UCX_MEM_EVENTS=no \
        UCX_NET_DEVICES=lo /usr/bin/python3 benchmark/python/api_breakdown.py
"""
import statistics
import time

import numpy as np

from nixl._api import nixl_agent, nixl_agent_config
import nixl._api as api
import nixl._bindings as nb
BLOCK=16384
cfg = nixl_agent_config(backends=["UCX"])
init, target = nixl_agent("pi", cfg), nixl_agent("pt", cfg)
src = np.full(4*BLOCK, 0x5A, dtype=np.uint8); dst = np.zeros_like(src)
target.register_memory([(src.ctypes.data, src.nbytes, 0, "")], "DRAM")
init.register_memory([(dst.ctypes.data, dst.nbytes, 0, "")], "DRAM")
name = init.add_remote_agent(target.get_agent_metadata())
rows = lambda buf: np.array([(buf.ctypes.data + b * BLOCK, BLOCK, 0) for b in range(4)], dtype=np.uint64)
lh = init.prep_xfer_dlist("NIXL_INIT_AGENT", rows(dst), "DRAM")
rh = init.prep_xfer_dlist(name, rows(src), "DRAM")
idx = np.array([0], dtype=np.int64); lst=[0]
A = init.agent; L=lh._handle; R=rh._handle; RD=nb.NIXL_READ
def full(i):
    h = init.make_prepped_xfer("READ", lh, i, rh, i)
    s = init.transfer(h)
    while s == "PROC": s = init.check_xfer_state(h)
    init.release_xfer_handle(h)
PY = {n: getattr(nixl_agent, n).__wrapped__ for n in
      ("make_prepped_xfer", "transfer", "check_xfer_state", "release_xfer_handle")}
def py_bodies(i):
    h = PY["make_prepped_xfer"](init, "READ", lh, i, rh, i)
    s = PY["transfer"](init, h)
    while s == "PROC": s = PY["check_xfer_state"](init, h)
    PY["release_xfer_handle"](init, h)
def raw(i):
    h = A.makeXferReq(RD, L, i, R, i, b"", [], False)
    s = int(A.postXferReq(h, b""))
    while s == 1: s = int(A.getXferStatus(h))
    A.releaseXferReq(h)
class NoDel:
    __slots__=("_handle","_agent","_released")
def raw_obj(i):
    h = A.makeXferReq(RD, L, i, R, i, b"", [], False)
    x = object.__new__(NoDel); x._handle=h; x._agent=A; x._released=False
    s = int(A.postXferReq(x._handle, b""))
    while s == 1: s = int(A.getXferStatus(x._handle))
    A.releaseXferReq(x._handle); x._released=True
def raw_delobj(i):
    h = A.makeXferReq(RD, L, i, R, i, b"", [], False)
    x = api.nixl_xfer_handle(A, h)
    s = int(A.postXferReq(x._handle, b""))
    while s == 1: s = int(A.getXferStatus(x._handle))
    A.releaseXferReq(x._handle); x._released=True
variants=[("api ndarray",full,idx),("api list",full,lst),("py bodies ndarray",py_bodies,idx),
          ("py bodies list",py_bodies,lst),("raw list",raw,lst),("raw ndarray",raw,idx),("raw+obj",raw_obj,lst),("raw+delobj",raw_delobj,lst)]
res={v[0]:[] for v in variants}
N=10000
for r in range(9):
    for name_,f,i in variants:
        t0=time.thread_time_ns()
        for _ in range(N): f(i)
        res[name_].append((time.thread_time_ns()-t0)/N/1000)
for k, v in res.items():
    print(f"{k:18s} {statistics.median(v):.3f}")
