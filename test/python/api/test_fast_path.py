# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""The C paths of make_prepped_xfer, transfer, check_xfer_state and release_xfer_handle
(nixl._bindings._fast_method) behave as the Python bodies they wrap: for each argument shape,
good or bad, the call through the agent and the call of the wrapped Python method give the same
result or raise the same exception with the same message. Also: the wrappers keep NIXL's
signatures and docstrings, the fast shapes move the right data, and a replaced or missing
`agent` falls back to Python."""

import inspect
import re
import unittest

import numpy as np

import nixl._bindings as nb
from nixl._api import (nixl_agent, nixl_agent_config, nixl_prepped_dlist_handle,
                       nixl_xfer_handle)

from nixl_test_util import agent_pair, exchange, torch_or_none, unique, wait_done

BLOCK = 256
NBLK = 8
FAST = ("make_prepped_xfer", "transfer", "check_xfer_state", "release_xfer_handle")


def outcome(call):
    """('ok', what) or ('err', type, message with handle ints masked)."""
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 (every exception is compared)
        return ("err", type(e), re.sub(r"\d{7,}|0x[0-9a-f]+", "N", str(e)))
    if isinstance(r, (nixl_xfer_handle, nixl_prepped_dlist_handle)):
        return ("ok", type(r), r._released, r._agent)
    if r in ("DONE", "PROC"):
        # Whether a post completes within the call is UCX's timing, not the path's.
        return ("ok", "DONE or PROC")
    return ("ok", r)


class FastPath(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = agent_pair()
        cls.src = np.arange(NBLK * BLOCK, dtype=np.uint32).view(np.uint8)[:NBLK * BLOCK].copy()
        cls.dst = np.zeros(NBLK * BLOCK, dtype=np.uint8)
        cls.a.register_memory([(cls.dst.ctypes.data, cls.dst.nbytes, 0, "")], "DRAM")
        cls.b.register_memory([(cls.src.ctypes.data, cls.src.nbytes, 0, "")], "DRAM")
        cls.peer, _ = exchange(cls.a, cls.b)
        rows = lambda buf: [(buf.ctypes.data + i * BLOCK, BLOCK, 0) for i in range(NBLK)]
        cls.lh = cls.a.prep_xfer_dlist("NIXL_INIT_AGENT", rows(cls.dst), "DRAM")
        cls.rh = cls.a.prep_xfer_dlist(cls.peer, rows(cls.src), "DRAM")

    def both(self, name, make_args):
        """Runs agent.<name>(*args, **kw) and the wrapped Python body with fresh arguments from
        make_args() each; asserts the outcomes are equal and returns it."""
        py = getattr(nixl_agent, name).__wrapped__
        args, kw = make_args()
        fast = outcome(lambda: getattr(self.a, name)(*args, **kw))
        self.cleanup(args, kw)
        args, kw = make_args()
        slow = outcome(lambda: py(self.a, *args, **kw))
        self.cleanup(args, kw)
        self.assertEqual(fast, slow, f"{name} {make_args.__doc__ or ''}")
        return fast

    def cleanup(self, args, kw):
        for x in list(args) + list(kw.values()):
            if type(x) is nixl_xfer_handle and not x._released:
                if self.a.check_xfer_state(x) == "PROC":
                    wait_done(self.a, x)
                x.release()

    def done_xfer(self):
        h = self.a.make_prepped_xfer("READ", self.lh, [0], self.rh, [0])
        if self.a.transfer(h) == "PROC":
            wait_done(self.a, h)
        return h

    def test_make_shapes(self):
        lh, rh = self.lh, self.rh
        i64 = np.array([1, 3], dtype=np.int64)
        torch = torch_or_none()
        shapes = [
            (("READ", lh, [0], rh, [0]), {}),
            (("WRITE", lh, [0, 2], rh, [1, 3]), {}),
            (("READ", lh, i64, rh, i64), {}),
            (("READ", lh, np.array([1], np.int32), rh, np.array([2], np.uint64)), {}),
            (("READ", lh, np.array([1], np.int8), rh, np.array([2], np.uint16)), {}),
            (("READ", lh, np.array([1, 9, 2], np.int64)[::2], rh, [0, 1]), {}),
            (("READ", lh, np.array([1], ">i8"), rh, [0]), {}),
            (("READ", lh, np.array([1.0]), rh, [0]), {}),
            (("READ", lh, (1, 2), rh, range(2)), {}),
            (("READ", lh, [np.int64(1)], rh, [True]), {}),
            (("READ", lh, [0], rh, [0]), {"notif_msg": b"tag"}),
            (("READ", lh, [0], rh, [0], "str-tag"), {}),
            (("READ", lh, [0], rh, [0], bytearray(b"ba")), {}),
            (("READ", lh, [0], rh, [0]), {"backends": ["UCX"], "skip_desc_merge": 1}),
            (("READ", lh, [0], rh, [0]), {"backends": "UCX", "skip_desc_merge": None}),
            (("READ", lh, [0], rh, [0], b"", [], True), {}),
            ((), {"operation": "READ", "local_xfer_side": lh, "local_indices": [0],
                  "remote_xfer_side": rh, "remote_indices": [0]}),
            (("READ", lh._handle, [0], rh._handle, [0]), {}),
            # errors
            (("read", lh, [0], rh, [0]), {}),
            ((b"READ", lh, [0], rh, [0]), {}),
            ((nb.NIXL_READ, lh, [0], rh, [0]), {}),
            (("READ", lh, [], rh, []), {}),
            (("READ", lh, [0], rh, [0, 1]), {}),
            (("READ", lh, np.array([], np.int64), rh, []), {}),
            (("READ", lh, [NBLK], rh, [0]), {}),
            (("READ", lh, [-1], rh, [0]), {}),
            (("READ", lh, [2 ** 40], rh, [0]), {}),
            (("READ", lh, [1.5], rh, [0]), {}),
            (("READ", lh, np.zeros((1, 1), np.int64), rh, [0]), {}),
            (("READ", lh, "01", rh, "01"), {}),
            (("READ", lh, None, rh, [0]), {}),
            (("READ", object(), [0], rh, [0]), {}),
            (("READ", lh, [0], 2 ** 70, [0]), {}),
            (("READ", rh, [0], lh, [0]), {}),
            (("READ", lh, [0], rh, [0]), {"backends": ["NOPE"]}),
            (("READ", lh, [0], rh, [0], 5), {}),
            (("READ", lh, [0], rh), {}),
            (("READ", lh, [0], rh, [0], b"", [], False, 9), {}),
            (("READ", lh, [0], rh, [0]), {"bogus": 1}),
            (("READ", lh, [0], rh, [0]), {"operation": "READ"}),
        ]
        if torch is not None:
            shapes.append((("READ", lh, torch.tensor([1, 2]), rh, torch.tensor([0, 1])), {}))
        for args, kw in shapes:
            self.both("make_prepped_xfer", lambda: (args, kw))

    def test_make_from_released_list(self):
        lh = self.a.prep_xfer_dlist("", [(self.dst.ctypes.data, BLOCK, 0)], "DRAM")
        lh.release()
        r = self.both("make_prepped_xfer", lambda: (("READ", lh, [0], self.rh, [0]), {}))
        self.assertEqual(r[:2], ("err", nb.nixlInvalidParamError))

    def test_transfer_and_state_shapes(self):
        mk = lambda: self.a.make_prepped_xfer("READ", self.lh, [1], self.rh, [1])
        for name, extra in (("transfer", [((), {}), ((b"m",), {}), (("s",), {}),
                                          ((bytearray(b"b"),), {}), ((), {"notif_msg": b"k"}),
                                          ((5,), {}), ((b"", 1), {}), ((), {"x": 1})]),
                            ("check_xfer_state", [((), {}), ((1,), {}), ((), {"y": 2})])):
            for tail, kw in extra:
                self.both(name, lambda: ((self.done_xfer(),) + tail, kw))
                self.both(name, lambda: ((), dict(kw, handle=self.done_xfer())))
            for bad in (None, "h", 2 ** 70, 1.0, self.lh):
                self.both(name, lambda: ((bad,), {}))
            self.both(name, lambda: ((), {}))
        h = self.done_xfer()
        raw = h._handle
        h.release()
        for name in ("transfer", "check_xfer_state"):
            r = self.both(name, lambda: ((h,), {}))
            self.assertEqual(r[:2], ("err", nb.nixlInvalidParamError))
            self.both(name, lambda: ((raw,), {}))
        self.assertEqual(mk().release(), None)

    def test_release_shapes(self):
        self.both("release_xfer_handle", lambda: ((self.done_xfer(),), {}))
        self.both("release_xfer_handle", lambda: ((), {"handle": self.done_xfer()}))
        done = self.done_xfer()
        done.release()
        self.both("release_xfer_handle", lambda: ((done,), {}))
        self.both("release_xfer_handle", lambda: ((self.done_xfer()._handle,), {}))
        for bad in ((None,), ("h",), (2 ** 70,), (), (1, 2)):
            self.both("release_xfer_handle", lambda: (bad, {}))

        def fresh_list():
            return ((self.a.prep_xfer_dlist("", [(self.dst.ctypes.data, BLOCK, 0)], "DRAM"),),
                    {})
        self.both("release_xfer_handle", fresh_list)
        # The flag is set only by a release that succeeded, and kept after.
        h = self.done_xfer()
        self.a.release_xfer_handle(h)
        self.assertTrue(h._released)
        self.a.release_xfer_handle(h)

    def test_data_through_fast_shapes(self):
        for idx in ([3, 5], np.array([3, 5], np.int64), np.array([3, 9, 5], np.int32)[::2],
                    np.array([3, 5], np.uint8)):
            self.dst[:] = 0
            h = self.a.make_prepped_xfer("READ", self.lh, idx, self.rh, idx, notif_msg=b"fp")
            s = self.a.transfer(h)
            while s == "PROC":
                s = self.a.check_xfer_state(h)
            self.assertEqual(s, "DONE")
            self.a.release_xfer_handle(h)
            for blk in range(NBLK):
                want = self.src[blk * BLOCK:(blk + 1) * BLOCK] if blk in (3, 5) else 0
                np.testing.assert_array_equal(self.dst[blk * BLOCK:(blk + 1) * BLOCK], want)

    def test_agent_attribute_replaced_or_missing(self):
        c = nixl_agent(unique("C"), nixl_agent_config(backends=["UCX"]))
        real = c.agent
        c.agent = object()  # the C path needs a nixlAgent: Python's body raises
        for name, args in (("transfer", (1,)), ("check_xfer_state", (1,)),
                           ("make_prepped_xfer", ("READ", 1, [0], 1, [0]))):
            with self.assertRaises(AttributeError):
                getattr(c, name)(*args)
        c.agent = real
        del c.agent
        with self.assertRaises(AttributeError):
            c.transfer(1)
        bare = nixl_agent.__new__(nixl_agent)
        with self.assertRaises(AttributeError):
            bare.check_xfer_state(1)
        with self.assertRaises(AttributeError):
            nixl_agent.check_xfer_state(object(), 1)

    def test_common_shapes_take_the_c_path(self):
        # Observable only by breaking what the Python bodies read: the operation table and the
        # status objects. The C path reads neither, so the connector's shapes still work.
        import nixl._api as api
        saved = (self.a.nixl_ops, api._SUCCESS, api._IN_PROG)
        try:
            self.a.nixl_ops = {}
            api._SUCCESS = api._IN_PROG = object()
            for idx in ([1], np.array([1], np.int64)):
                h = self.a.make_prepped_xfer("READ", self.lh, idx, self.rh, idx, b"n")
                s = self.a.transfer(h)
                while s == "PROC":
                    s = self.a.check_xfer_state(h)
                self.assertEqual(s, "DONE")
                self.assertEqual(self.a.check_xfer_state(h), "DONE")
                self.a.release_xfer_handle(h)
                self.assertTrue(h._released)
            with self.assertRaises(KeyError):  # a shape the C path leaves to Python
                self.a.make_prepped_xfer("READ", self.lh, (1,), self.rh, (1,))
        finally:
            self.a.nixl_ops, api._SUCCESS, api._IN_PROG = saved

    def test_wrappers_look_like_the_methods(self):
        for name in FAST:
            f = getattr(nixl_agent, name)
            self.assertIsInstance(f, nb._fast_method)
            self.assertEqual(f.__name__, name)
            self.assertEqual(f.__qualname__, f"nixl_agent.{name}")
            self.assertEqual(f.__module__, "nixl._api")
            self.assertEqual(f.__doc__, f.__wrapped__.__doc__)
            self.assertEqual(inspect.signature(f), inspect.signature(f.__wrapped__))
            bound = getattr(self.a, name)
            self.assertIs(bound.__self__, self.a)
            self.assertEqual(list(inspect.signature(bound).parameters),
                             list(inspect.signature(f.__wrapped__).parameters)[1:])
        with self.assertRaises(ValueError):
            nb._fast_method(lambda self: None)

    def test_subclass_override(self):
        class Mine(nixl_agent):
            def transfer(self, handle, notif_msg=b""):
                return "mine"
        m = Mine(unique("M"), nixl_agent_config(backends=["UCX"]))
        self.assertEqual(m.transfer(None), "mine")


if __name__ == "__main__":
    unittest.main()
