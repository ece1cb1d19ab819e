# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Bad arguments to nixl._bindings raise the documented exception and never crash the
interpreter: wrong types, unknown or released handles, unregistered memory, unknown agents and
backends, bad metadata bytes, bad indices, calls libnixl does not support."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nixl._bindings as b  # noqa: E402
from common import Buffer, connect, make_agent  # noqa: E402

N = 4096


class BadArgumentsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.ba = make_agent("bad-a")
        cls.t, cls.bt = make_agent("bad-t", prog_thread=True)
        cls.src = Buffer(N)
        cls.dst = Buffer(N)
        cls.a.registerMem(b.nixlRegDList(b.DRAM_SEG, [(cls.src.addr, N, 0, "")]))
        cls.t.registerMem(b.nixlRegDList(b.DRAM_SEG, [(cls.dst.addr, N, 0, "")]))
        cls.peer = connect(cls.a, cls.t)
        cls.lh = cls.a.prepXferDlist(b.nixlXferDList(b.DRAM_SEG, [(cls.src.addr, N, 0)]))
        cls.rh = cls.a.prepXferDlist(cls.peer, b.nixlXferDList(b.DRAM_SEG, [(cls.dst.addr, N, 0)]))

    @classmethod
    def tearDownClass(cls):
        del cls.a, cls.t

    def test_agent_construction(self):
        with self.assertRaises(ValueError):
            b.nixlAgent("", b.nixlAgentConfig())
        with self.assertRaises(TypeError):
            b.nixlAgent(5, b.nixlAgentConfig())
        with self.assertRaises(TypeError):
            b.nixlAgent("x", None)

    def test_backends(self):
        with self.assertRaises(b.nixlNotFoundError):
            self.a.createBackend("NO_SUCH_PLUGIN", {})
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.createBackend("UCX", {})  # the same backend twice
        with self.assertRaises(b.nixlNotFoundError):
            self.a.getPluginParams("NO_SUCH_PLUGIN")
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.getBackendParams(12345)
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.registerMem(b.nixlRegDList(b.DRAM_SEG, [(self.src.addr, 8, 0, "")]), [self.bt])
        with self.assertRaises(TypeError):
            self.a.createBackend("UCX", {"num_workers": 1})

    def test_memory(self):
        far = b.nixlXferDList(b.DRAM_SEG, [(self.src.addr + N, 8, 0)])
        with self.assertRaises(b.nixlNotFoundError):
            self.a.prepXferDlist(far)
        with self.assertRaises(b.nixlNotFoundError):
            self.a.deregisterMem(b.nixlRegDList(b.DRAM_SEG, [(self.src.addr + N, 8, 0, "")]))
        with self.assertRaises(b.nixlNotFoundError):
            self.a.createXferReq(b.NIXL_WRITE, far,
                                 b.nixlXferDList(b.DRAM_SEG, [(self.dst.addr, 8, 0)]), self.peer)
        with self.assertRaises(TypeError):
            self.a.registerMem([(self.src.addr, 8, 0, "")])
        with self.assertRaises(TypeError):
            self.a.prepXferDlist(b.nixlRegDList(b.DRAM_SEG, [(self.src.addr, 8, 0, "")]))

    def test_unknown_agent_and_metadata(self):
        remote = b.nixlXferDList(b.DRAM_SEG, [(self.dst.addr, 8, 0)])
        with self.assertRaises(b.nixlNotFoundError):
            self.a.prepXferDlist("nobody", remote)
        with self.assertRaises(b.nixlNotFoundError):
            self.a.genNotif(b"nobody", b"x")
        with self.assertRaises(b.nixlNotFoundError):
            self.a.makeConnection("nobody")
        for md in [b"", b"garbage", b"\x00" * 100, self.a.getLocalMD()[:-7]]:
            with self.assertRaises((b.nixlMismatchError, b.nixlInvalidParamError,
                                    b.nixlNotAllowedError)):
                self.t.loadRemoteMD(md)
        self.assertEqual(self.a.invalidateRemoteMD("nobody"), b.NIXL_ERR_NOT_FOUND)
        self.assertEqual(self.a.checkRemoteMD("nobody", remote), b.NIXL_ERR_NOT_FOUND)
        with self.assertRaises(TypeError):
            self.a.loadRemoteMD(None)
        with self.assertRaises(TypeError):
            self.a.genNotif(5, b"x")

    def test_handles(self):
        for h in [0, 1, 0xDEADBEEF, 2**64 - 1]:
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.postXferReq(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.getXferStatus(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.releaseXferReq(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.getXferTelemetry(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.estimateXferCost(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.queryXferBackend(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.releasedDlistH(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.makeXferReq(b.NIXL_WRITE, h, [0], self.rh, [0])
        with self.assertRaises(TypeError):
            self.a.getXferStatus(-1)
        with self.assertRaises(TypeError):
            self.a.getXferStatus("1")
        # A request handle is not a list handle, and a handle of one agent is unknown to another.
        req = self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0], self.rh, [0])
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.releasedDlistH(req)
        with self.assertRaises(b.nixlInvalidParamError):
            self.t.getXferStatus(req)
        self.a.releaseXferReq(req)
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.postXferReq(req)
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.releaseXferReq(req)

    def test_stale_handles(self):
        # A released handle raises even once its slot, and the C++ allocator's address, are
        # reused by later requests and prepared lists (a pointer int could not tell them apart).
        released = []
        for _ in range(300):
            req = self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0], self.rh, [0])
            released.append(req)
            self.assertEqual(self.a.releaseXferReq(req), b.NIXL_SUCCESS)
        live = [self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0], self.rh, [0]) for _ in range(100)]
        slot = lambda h: h & (2**22 - 1)  # noqa: E731 (the handle layout, bindings_agent.h)
        self.assertTrue({slot(h) for h in live} & {slot(h) for h in released},
                        "no slot was reused: the test would not test reuse")
        self.assertFalse(set(live) & set(released))
        for h in released:
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.getXferStatus(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.releaseXferReq(h)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.postXferReq(h, b"x")
        for h in live:
            self.assertEqual(self.a.releaseXferReq(h), b.NIXL_SUCCESS)
        lists = []
        for _ in range(100):
            h = self.a.prepXferDlist(b.nixlXferDList(b.DRAM_SEG, [(self.src.addr, N, 0)]))
            self.a.releasedDlistH(h)
            lists.append(h)
        for h in lists:
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.makeXferReq(b.NIXL_WRITE, h, [0], self.rh, [0])
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.releasedDlistH(h)

    def test_fast_path_arguments(self):
        # makeXferReq, postXferReq, getXferStatus and releaseXferReq parse their arguments
        # themselves (bindings_fast.cpp): keywords, defaults and type errors as pybind11 had them.
        req = self.a.makeXferReq(operation=b.NIXL_WRITE, local_side=self.lh, local_indices=[0],
                                 remote_side=self.rh, remote_indices=[0], notif_msg="n",
                                 backend=[], skip_desc_merg=True)
        self.assertIn(self.a.postXferReq(reqh=req, notif_msg=bytearray(b"m")),
                      (b.NIXL_SUCCESS, b.NIXL_IN_PROG))
        st = self.a.getXferStatus(reqh=req)
        while st == b.NIXL_IN_PROG:
            st = self.a.getXferStatus(req)
        self.assertIs(st, b.NIXL_SUCCESS)
        for bad in [lambda: self.a.getXferStatus(),
                    lambda: self.a.getXferStatus(req, req),
                    lambda: self.a.getXferStatus(req, reqh=req),
                    lambda: self.a.getXferStatus(handle=req),
                    lambda: self.a.getXferStatus(1.0),
                    lambda: self.a.getXferStatus(2**64),
                    lambda: self.a.postXferReq(req, 5),
                    lambda: self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0], self.rh),
                    lambda: self.a.makeXferReq(b.nixl_mem_t.DRAM_SEG, self.lh, [0], self.rh, [0]),
                    lambda: self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0], self.rh, [0], b"",
                                               [0.5]),
                    lambda: self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0], self.rh, [0], b"",
                                               [], "yes"),
                    lambda: b.nixlAgent.getXferStatus(5, req)]:
            with self.assertRaises(TypeError):
                bad()
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0], self.rh, [0], b"", [12345])
        self.assertIs(self.a.releaseXferReq(req), b.NIXL_SUCCESS)

    def test_indices(self):
        for li, ri in [([], []), ([0], [0, 0]), ([5], [0]), ([-1], [0])]:
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.makeXferReq(b.NIXL_WRITE, self.lh, li, self.rh, ri)
        with self.assertRaises(TypeError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, "0", self.rh, [0])
        with self.assertRaises(TypeError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0.5], self.rh, [0])
        with self.assertRaises(TypeError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, b"\x00", self.rh, [0])
        with self.assertRaises(IndexError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, [2**40], self.rh, [0])
        # The exact-int list fast path: a huge int, a later non-int element, an int subclass
        # or an __index__ object in the list take the same checks as before.
        with self.assertRaises(IndexError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0, -2**40], self.rh, [0, 0])
        with self.assertRaises(OverflowError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, [2**70], self.rh, [0])
        with self.assertRaises(TypeError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0, 0.5], self.rh, [0, 0])

        class Idx:
            def __index__(self):
                return 0
        for li in ([False], [Idx()], (0,)):
            req = self.a.makeXferReq(b.NIXL_WRITE, self.lh, li, self.rh, [0] * len(li))
            self.assertEqual(self.a.releaseXferReq(req), b.NIXL_SUCCESS)
        with self.assertRaises(TypeError):
            self.a.makeXferReq(1, self.lh, [0], self.rh, [0])  # op must be the enum
        with self.assertRaises(TypeError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0], self.rh, [0], skip_desc_merge=True)
        try:
            import numpy as np
        except ImportError:
            return
        with self.assertRaises(ValueError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, np.zeros((1, 1), np.int64), self.rh, [0])
        with self.assertRaises(TypeError):
            self.a.makeXferReq(b.NIXL_WRITE, self.lh, np.zeros(1, np.complex64), self.rh, [0])

    def test_transfer_arguments(self):
        local = b.nixlXferDList(b.DRAM_SEG, [(self.src.addr, 8, 0)])
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.createXferReq(b.NIXL_WRITE, local,
                                 b.nixlXferDList(b.DRAM_SEG, [(self.dst.addr, 4, 0)]), self.peer)
        with self.assertRaises(TypeError):
            self.a.createXferReq(b.NIXL_WRITE, [(self.src.addr, 8, 0)], local, self.peer)
        with self.assertRaises(TypeError):
            self.a.getNotifs([])

    def test_not_supported_and_no_store(self):
        with self.assertRaises(b.nixlNotSupportedError) as cm:
            self.a.prepMemView(b.nixlXferDList(b.DRAM_SEG))
        self.assertIn("GPU device API", str(cm.exception))
        with self.assertRaises(b.nixlNotSupportedError):
            self.a.prepMemView(b.nixlRemoteDList(b.DRAM_SEG), backends=[self.ba])
        with self.assertRaises(b.nixlNotSupportedError):
            self.a.releaseMemView(0)
        if not os.environ.get("NIXL_ETCD_ENDPOINTS"):
            # No peer address and no central store: the exchange calls say so.
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.sendLocalMD()
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.fetchRemoteMD("bad-t")
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.invalidateLocalMD()
        with self.assertRaises(b.nixlInvalidParamError):
            self.a.sendLocalMD("127.0.0.1", 0)


if __name__ == "__main__":
    unittest.main()
