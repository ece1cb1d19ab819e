# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Two nixl._bindings agents in one process over UCX: verified WRITE and READ through prepared
lists and through createXferReq, notifications (bytes with NUL), telemetry, cost, metadata
calls."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nixl._bindings as b  # noqa: E402
from common import Buffer, connect, make_agent, wait_done, wait_notifs  # noqa: E402

N = 64 * 1024
BLOCKS = 16
BLK = N // BLOCKS


class TwoAgentsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.ba = make_agent("initiator", capture_telemetry=True, prog_thread=True)
        cls.t, cls.bt = make_agent(b"target", prog_thread=True)
        cls.src = Buffer(N)
        cls.dst = Buffer(N)
        cls.a_reg = b.nixlRegDList(b.DRAM_SEG, [(cls.src.addr, N, 0, "")])
        cls.t_reg = b.nixlRegDList(b.DRAM_SEG, [(cls.dst.addr, N, 0, b"")])
        cls.assertEqual = unittest.TestCase.assertEqual
        assert cls.a.registerMem(cls.a_reg, [cls.ba]) == b.NIXL_SUCCESS
        assert cls.t.registerMem(cls.t_reg) == b.NIXL_SUCCESS
        cls.peer = connect(cls.a, cls.t)

    @classmethod
    def tearDownClass(cls):
        cls.a.deregisterMem(cls.a_reg, [cls.ba])
        cls.t.deregisterMem(cls.t_reg)
        cls.a.invalidateRemoteMD(cls.peer)
        del cls.a, cls.t

    def test_names_and_plugins(self):
        self.assertEqual(self.peer, b"target")
        self.assertIn("UCX", self.a.getAvailPlugins())
        params, mems = self.a.getPluginParams("UCX")
        self.assertIsInstance(params, dict)
        self.assertIn("DRAM_SEG", mems)
        params, mems = self.a.getBackendParams(self.ba)
        self.assertIn("DRAM_SEG", mems)
        self.assertEqual(self.a.getEffectiveSyncMode(), b.NIXL_THREAD_SYNC_RW)

    def test_prepped_write_by_index_with_notification(self):
        self.src.fill(0x5A)
        self.dst.fill(0)
        local = b.nixlXferDList(b.DRAM_SEG,
                                [(self.src.addr + i * BLK, BLK, 0) for i in range(BLOCKS)])
        remote = b.nixlXferDList(b.DRAM_SEG,
                                 [(self.dst.addr + i * BLK, BLK, 0) for i in range(BLOCKS)])
        lh = self.a.prepXferDlist(b.NIXL_INIT_AGENT, local, [self.ba])
        rh = self.a.prepXferDlist(self.peer, remote)
        msg = b"req:1\x00tail"
        req = self.a.makeXferReq(b.NIXL_WRITE, lh, [1, 3, 5], rh, [2, 4, 6], msg,
                                 skip_desc_merg=True)
        self.assertIn(self.a.postXferReq(req), (b.NIXL_SUCCESS, b.NIXL_IN_PROG))
        self.assertEqual(wait_done(self.a, req), b.NIXL_SUCCESS)
        self.assertEqual(self.a.getXferStatus(req), b.NIXL_SUCCESS)  # DONE stays DONE
        # Statuses are returned as shared enum objects; they are still the enum, by value.
        st = self.a.getXferStatus(req)
        self.assertIsInstance(st, b.nixl_status_t)
        self.assertEqual(int(st), 0)
        self.assertEqual(st.name, "NIXL_SUCCESS")
        for i in range(BLOCKS):
            want = b"\x5a" * BLK if i in (2, 4, 6) else b"\x00" * BLK
            self.assertEqual(self.dst.bytes(i * BLK, BLK), want, "block %d" % i)
        notifs = wait_notifs(self.t, 1)
        self.assertEqual(notifs, {"initiator": [msg]})
        tel = self.a.getXferTelemetry(req)
        self.assertEqual(tel.totalBytes, 3 * BLK)
        self.assertEqual(tel.descCount, 3)
        self.assertGreaterEqual(tel.xferDuration, 0)
        us, margin, method = self.a.estimateXferCost(req)
        self.assertIsInstance(us, int)
        self.assertEqual(method, int(b.NIXL_COST_ANALYTICAL_BACKEND))
        self.assertEqual(self.a.queryXferBackend(req), self.ba)
        # Reposting a finished request with a new message: the new message is sent.
        self.src.fill(0x11)
        self.a.postXferReq(req, "second")
        self.assertEqual(wait_done(self.a, req), b.NIXL_SUCCESS)
        self.assertEqual(self.dst.bytes(2 * BLK, BLK), b"\x11" * BLK)
        self.assertEqual(wait_notifs(self.t, 1), {"initiator": [b"second"]})
        self.assertEqual(self.a.releaseXferReq(req), b.NIXL_SUCCESS)
        self.assertEqual(self.a.releasedDlistH(lh), b.NIXL_SUCCESS)
        self.assertEqual(self.a.releasedDlistH(rh), b.NIXL_SUCCESS)

    def test_indices_from_arrays(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy not importable")
        self.src.fill(0x33)
        self.dst.fill(0)
        rows = np.array([[self.src.addr + i * BLK, BLK, 0] for i in range(BLOCKS)], np.uint64)
        lh = self.a.prepXferDlist(b.nixlXferDList(b.DRAM_SEG, rows))
        rows = np.array([[self.dst.addr + i * BLK, BLK, 0] for i in range(BLOCKS)], np.int64)
        rh = self.a.prepXferDlist(self.peer, b.nixlXferDList(b.DRAM_SEG, rows))
        for dt in (np.int64, np.int32, np.uint32):
            idx = np.arange(0, BLOCKS, 2, dtype=dt)
            req = self.a.makeXferReq(b.NIXL_WRITE, lh, idx, rh, idx[::-1][::-1])
            self.a.postXferReq(req)
            self.assertEqual(wait_done(self.a, req), b.NIXL_SUCCESS)
            self.a.releaseXferReq(req)
        for i in range(BLOCKS):
            want = b"\x33" * BLK if i % 2 == 0 else b"\x00" * BLK
            self.assertEqual(self.dst.bytes(i * BLK, BLK), want, "block %d" % i)
        self.a.releasedDlistH(lh)
        self.a.releasedDlistH(rh)

    def test_create_xfer_read(self):
        self.src.fill(0)
        self.dst.fill(0x77)
        local = b.nixlXferDList(b.DRAM_SEG, [(self.src.addr, N, 0)])
        remote = b.nixlXferDList(b.DRAM_SEG, [(self.dst.addr, N, 0)])
        self.assertEqual(self.a.checkRemoteMD(self.peer, remote), b.NIXL_SUCCESS)
        req = self.a.createXferReq(b.NIXL_READ, local, remote, self.peer, "read-done")
        self.a.postXferReq(req)
        self.assertEqual(wait_done(self.a, req), b.NIXL_SUCCESS)
        self.assertEqual(self.src.bytes(), b"\x77" * N)
        self.assertEqual(wait_notifs(self.t, 1)["initiator"], [b"read-done"])
        self.a.releaseXferReq(req)

    def test_gen_notif_and_accumulating_map(self):
        self.a.genNotif(self.peer, b"\x00one")
        self.a.genNotif("target", "two", [self.ba])
        got = wait_notifs(self.t, 2)
        self.assertEqual(sorted(got["initiator"]), [b"\x00one", b"two"])
        base = {"x": [b"kept"]}
        self.a.genNotif(self.peer, b"three")
        got = {}
        while "initiator" not in got:
            got = self.t.getNotifs(base)
        self.assertEqual(base, {"x": [b"kept"]})  # the argument is not changed
        self.assertEqual(got["x"], [b"kept"])
        self.assertEqual(got["initiator"], [b"three"])
        self.assertEqual(self.t.getNotifs(), {})

    def test_metadata_calls(self):
        md = self.a.getLocalMD()
        self.assertIsInstance(md, bytes)
        part = self.a.getLocalPartialMD(self.a_reg, True, [self.ba])
        self.assertIsInstance(part, bytes)
        self.assertIsInstance(self.a.getLocalPartialMD(b.nixlRegDList(b.DRAM_SEG)), bytes)
        self.assertEqual(self.a.makeConnection(self.peer), b.NIXL_SUCCESS)
        self.assertEqual(self.a.invalidateRemoteMD("nobody"), b.NIXL_ERR_NOT_FOUND)
        far = b.nixlXferDList(b.DRAM_SEG, [(self.dst.addr + N, 8, 0)])
        self.assertEqual(self.a.checkRemoteMD(self.peer, far), b.NIXL_ERR_NOT_FOUND)
        self.assertEqual(self.a.checkRemoteMD("nobody", far), b.NIXL_ERR_NOT_FOUND)

    def test_partial_metadata(self):
        # A third agent learns the initiator from partial metadata (connection info plus one
        # registration) and sees exactly that registration.
        third, _ = make_agent("third")
        part = self.a.getLocalPartialMD(self.a_reg, True, [self.ba])
        self.assertEqual(third.loadRemoteMD(part), b"initiator")
        inside = b.nixlXferDList(b.DRAM_SEG, [(self.src.addr, N, 0)])
        self.assertEqual(third.checkRemoteMD("initiator", inside), b.NIXL_SUCCESS)
        elsewhere = b.nixlXferDList(b.DRAM_SEG, [(self.src.addr + N, 8, 0)])
        self.assertEqual(third.checkRemoteMD("initiator", elsewhere), b.NIXL_ERR_NOT_FOUND)
        self.assertEqual(third.invalidateRemoteMD(b"initiator"), b.NIXL_SUCCESS)
        self.assertEqual(third.checkRemoteMD("initiator", inside), b.NIXL_ERR_NOT_FOUND)

    def test_no_telemetry_without_capture(self):
        local = b.nixlXferDList(b.DRAM_SEG, [(self.dst.addr, 8, 0)])
        remote = b.nixlXferDList(b.DRAM_SEG, [(self.src.addr, 8, 0)])
        peer = connect(self.t, self.a)
        req = self.t.createXferReq(b.NIXL_READ, local, remote, peer)
        self.t.postXferReq(req)
        self.assertEqual(wait_done(self.t, req), b.NIXL_SUCCESS)
        if os.environ.get("NIXL_TELEMETRY_ENABLE", "").lower() not in ("y", "yes", "1", "on"):
            with self.assertRaises(b.nixlNoTelemetryError):
                self.t.getXferTelemetry(req)
        self.t.releaseXferReq(req)

    def test_telemetry_enabled_by_environment(self):
        # The C++ library reads NIXL_TELEMETRY_ENABLE when an agent is created, from Python
        # as from C++: no captureTelemetry needed.
        old = os.environ.get("NIXL_TELEMETRY_ENABLE")
        os.environ["NIXL_TELEMETRY_ENABLE"] = "y"
        try:
            agent, _ = make_agent("env-telemetry", prog_thread=True)
        finally:
            if old is None:
                del os.environ["NIXL_TELEMETRY_ENABLE"]
            else:
                os.environ["NIXL_TELEMETRY_ENABLE"] = old
        buf = Buffer(256, fill=0x42)
        reg = b.nixlRegDList(b.DRAM_SEG, [(buf.addr, 256, 0, "")])
        agent.registerMem(reg)
        peer = connect(agent, self.t)
        req = agent.createXferReq(b.NIXL_READ, b.nixlXferDList(b.DRAM_SEG, [(buf.addr, 256, 0)]),
                                  b.nixlXferDList(b.DRAM_SEG, [(self.dst.addr, 256, 0)]), peer)
        agent.postXferReq(req)
        self.assertEqual(wait_done(agent, req), b.NIXL_SUCCESS)
        self.assertEqual(buf.bytes(), self.dst.bytes(0, 256))
        tel = agent.getXferTelemetry(req)
        self.assertEqual((tel.totalBytes, tel.descCount), (256, 1))
        agent.releaseXferReq(req)
        agent.deregisterMem(reg)
        self.t.invalidateRemoteMD("env-telemetry")


if __name__ == "__main__":
    unittest.main()
