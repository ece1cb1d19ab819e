# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Bad arguments raise the documented exception and never take the interpreter down: wrong
types, unregistered memory, unknown agents, bad metadata bytes, misuse of handles."""

import os
import unittest

import numpy as np

import nixl._bindings as nb
from nixl._api import nixl_agent, nixl_agent_config

from nixl_test_util import agent_pair, exchange, unique, wait_done

NIXL_ERRORS = tuple(getattr(nb, n) for n in dir(nb)
                    if n.startswith("nixl") and n.endswith("Error"))
N = 4096


class BadArgs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = agent_pair()
        cls.src = np.full(N, 7, dtype=np.uint8)
        cls.dst = np.zeros(N, dtype=np.uint8)
        cls.ra = cls.a.register_memory([(cls.src.ctypes.data, N, 0, "")], "DRAM")
        cls.rb = cls.b.register_memory([(cls.dst.ctypes.data, N, 0, "")], "DRAM")
        cls.nb_, cls.na_ = exchange(cls.a, cls.b)

    def test_exceptions_are_plain_exceptions(self):
        for e in (nb.nixlBackendError, nb.nixlCancelledError, nb.nixlRemoteDisconnectError,
                  nb.nixlNotFoundError, nb.nixlInvalidParamError, nb.nixlNoTelemetryError,
                  nb.nixlRepostActiveError, nb.nixlNotSupportedError):
            self.assertTrue(issubclass(e, Exception))

    def test_wrong_types(self):
        a = self.a
        with self.assertRaises(TypeError):
            a.register_memory(12345, "DRAM")
        with self.assertRaises(TypeError):
            a.register_memory([(self.src.ctypes.data, N, 0)], "DRAM")   # arity → None → TypeError
        with self.assertRaises(TypeError):
            a.register_memory([(self.src.ctypes.data, N, 0, "")])       # no mem_type
        with self.assertRaises(TypeError):
            a.prep_xfer_dlist("", object(), "DRAM")
        with self.assertRaises(TypeError):
            a.initialize_xfer("WRITE", [(1, 2, 0)], [(1, 2, 0)], self.nb_)
        with self.assertRaises(TypeError):
            a.make_prepped_xfer("READ", 0, "01", 0, "01")
        with self.assertRaises(TypeError):
            nixl_agent(42)
        with self.assertRaises(KeyError):
            a.register_memory([(self.src.ctypes.data, N, 0, "")], "DRAM", backends=["NOPE"])
        with self.assertRaises(ValueError):
            a.query_memory([(self.src.ctypes.data, N, 0, "")], "NOPE", "DRAM")

    def test_index_lists(self):
        a = self.a
        lh = a.prep_xfer_dlist("", [(self.src.ctypes.data, N, 0)], "DRAM")
        rh = a.prep_xfer_dlist(self.nb_, [(self.dst.ctypes.data, N, 0)], "DRAM")
        for li, ri in (([], []), ([0], []), ([0], [0, 0]), (np.array([], np.int64), [])):
            with self.assertRaises(nb.nixlInvalidParamError):
                a.make_prepped_xfer("WRITE", lh, li, rh, ri)
        with self.assertRaises(NIXL_ERRORS + (IndexError, ValueError)):
            a.make_prepped_xfer("WRITE", lh, [5], rh, [0])
        with self.assertRaises(ValueError):
            a.make_prepped_xfer("WRITE", lh, np.zeros((1, 1), np.int64), rh, [0])
        lh.release()
        rh.release()

    def test_unregistered_memory(self):
        other = np.zeros(N, dtype=np.uint8)
        with self.assertRaises(NIXL_ERRORS):
            self.a.prep_xfer_dlist("", [(other.ctypes.data, N, 0)], "DRAM")
        with self.assertRaises(NIXL_ERRORS):
            self.a.initialize_xfer("WRITE",
                                   self.a.get_xfer_descs([(other.ctypes.data, N, 0)], "DRAM"),
                                   self.a.get_xfer_descs([(self.dst.ctypes.data, N, 0)], "DRAM"),
                                   self.nb_)
        with self.assertRaises(NIXL_ERRORS):   # remote range the peer never registered
            self.a.prep_xfer_dlist(self.nb_, [(other.ctypes.data, N, 0)], "DRAM")
        with self.assertRaises(NIXL_ERRORS):
            self.a.deregister_memory(self.a.get_reg_descs([(other.ctypes.data, N, 0, "")], "DRAM"))

    def test_unknown_agent(self):
        a = self.a
        x = a.get_xfer_descs([(self.dst.ctypes.data, N, 0)], "DRAM")
        for name in ("nobody", b"nobody"):
            with self.assertRaises(NIXL_ERRORS):
                a.prep_xfer_dlist(name, x)
            with self.assertRaises(NIXL_ERRORS):
                a.initialize_xfer("WRITE", a.get_xfer_descs([(self.src.ctypes.data, N, 0)], "DRAM"),
                                  x, name)
            with self.assertRaises(NIXL_ERRORS):
                a.send_notif(name, b"x")
            with self.assertRaises(NIXL_ERRORS):
                a.make_connection(name)
            a.remove_remote_agent(name)           # never raises
            self.assertFalse(a.check_remote_metadata(name))
            self.assertFalse(a.check_remote_xfer_done(name, b"x"))

    def test_bad_metadata(self):
        good = self.b.get_agent_metadata()
        for md in (b"", b"garbage", os.urandom(512), good[: len(good) // 2],
                   b"\x00" + good[1:], b"\xff" * 64, good + b"trailing"):
            with self.assertRaises(NIXL_ERRORS + (ValueError,)):
                self.a.add_remote_agent(md)
        with self.assertRaises(TypeError):
            self.a.add_remote_agent(None)
        # the agent still works after all that
        h = self.a.initialize_xfer("WRITE",
                                   self.a.get_xfer_descs([(self.src.ctypes.data, N, 0)], "DRAM"),
                                   self.a.get_xfer_descs([(self.dst.ctypes.data, N, 0)], "DRAM"),
                                   self.nb_)
        self.a.transfer(h)
        wait_done(self.a, h)
        self.assertTrue((self.dst == 7).all())
        h.release()

    def test_exchange_without_peer_or_store(self):
        env = os.environ.get("NIXL_ETCD_ENDPOINTS")
        if env:
            self.skipTest("NIXL_ETCD_ENDPOINTS is set")
        with self.assertRaises(NIXL_ERRORS):
            self.a.send_local_metadata()
        with self.assertRaises(NIXL_ERRORS):
            self.a.fetch_remote_metadata("peer")
        with self.assertRaises(NIXL_ERRORS):
            self.a.send_local_metadata("not-an-ip", 1234)
        with self.assertRaises(NIXL_ERRORS):
            self.a.fetch_remote_metadata(self.a.name, "127.0.0.1", 1)

    def test_telemetry_off(self):
        if os.environ.get("NIXL_TELEMETRY_ENABLE"):
            self.skipTest("NIXL_TELEMETRY_ENABLE is set")
        h = self.a.initialize_xfer("WRITE",
                                   self.a.get_xfer_descs([(self.src.ctypes.data, N, 0)], "DRAM"),
                                   self.a.get_xfer_descs([(self.dst.ctypes.data, N, 0)], "DRAM"),
                                   self.nb_)
        self.a.transfer(h)
        wait_done(self.a, h)
        with self.assertRaises(nb.nixlNoTelemetryError):
            self.a.get_xfer_telemetry(h)
        h.release()

    def test_released_and_foreign_handles(self):
        lh = self.a.prep_xfer_dlist("", [(self.src.ctypes.data, N, 0)], "DRAM")
        rh = self.a.prep_xfer_dlist(self.nb_, [(self.dst.ctypes.data, N, 0)], "DRAM")
        h = self.a.make_prepped_xfer("WRITE", lh, [0], rh, [0])
        self.a.transfer(h)
        wait_done(self.a, h)
        # A handle used by another agent, or a stale pointer int: an exception, never a crash.
        with self.assertRaises(NIXL_ERRORS):
            self.b.check_xfer_state(h)
        with self.assertRaises(NIXL_ERRORS):
            self.b.make_prepped_xfer("WRITE", lh, [0], rh, [0])
        raw = h._handle
        h.release()
        h.release()
        self.a.release_xfer_handle(h)          # already released: nothing happens
        for call in (lambda: self.a.transfer(raw), lambda: self.a.check_xfer_state(raw),
                     lambda: self.a.get_xfer_telemetry(raw), lambda: self.a.release_xfer_handle(raw)):
            with self.assertRaises(NIXL_ERRORS):
                call()
        # Still once later requests reuse its slot (and likely the C++ request's address).
        for _ in range(100):
            self.a.make_prepped_xfer("WRITE", lh, [0], rh, [0]).release()
        later = [self.a.make_prepped_xfer("WRITE", lh, [0], rh, [0]) for _ in range(100)]
        self.assertNotIn(raw, [x._handle for x in later])
        for call in (lambda: self.a.transfer(raw), lambda: self.a.check_xfer_state(raw),
                     lambda: self.a.release_xfer_handle(raw)):
            with self.assertRaises(nb.nixlInvalidParamError):
                call()
        for x in later:
            self.a.release_xfer_handle(x)
        lh.release()
        lh.release()
        self.a.release_dlist_handle(lh)
        with self.assertRaises(NIXL_ERRORS):
            self.a.make_prepped_xfer("WRITE", lh, [0], rh, [0])
        rh.release()

    def test_create_agent_after_bad_config(self):
        with self.assertRaises(TypeError):
            nixl_agent(unique("x"), nixl_agent_config(sync_mode="RW"))


if __name__ == "__main__":
    unittest.main()
