# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Two agents of one process over UCX: WRITE and READ with verified data and notifications,
numpy arrays and torch CPU tensors, initialize_xfer and prepared lists, handle objects."""

import unittest

import numpy as np

import nixl._bindings as nb
from nixl._api import nixl_prepped_dlist_handle, nixl_xfer_handle

from nixl_test_util import agent_pair, exchange, poll, torch_or_none, wait_done, wait_notif

torch = torch_or_none()
N = 1 << 16


class TwoAgentsNumpy(unittest.TestCase):
    def setUp(self):
        self.a, self.b = agent_pair()
        self.src = np.random.default_rng(1).integers(0, 255, N, dtype=np.uint8)
        self.dst = np.zeros(N, dtype=np.uint8)
        self.ra = self.a.register_memory([(self.src.ctypes.data, N, 0, "")], "DRAM")
        self.rb = self.b.register_memory([(self.dst.ctypes.data, N, 0, "")], "DRAM",
                                         backends=["UCX"])
        self.nb_, self.na_ = exchange(self.a, self.b)

    def tearDown(self):
        self.a.remove_remote_agent(self.nb_)
        self.b.remove_remote_agent(self.na_)
        self.a.deregister_memory(self.ra)
        self.b.deregister_memory(self.rb, backends=["UCX"])

    def test_names_are_bytes_and_metadata_known(self):
        self.assertEqual(self.nb_, self.b.name.encode())
        self.assertIsInstance(self.na_, bytes)
        self.assertTrue(self.a.check_remote_metadata(self.b.name))
        self.assertTrue(self.a.check_remote_metadata(self.nb_))
        x = self.a.get_xfer_descs([(self.dst.ctypes.data, N, 0)], "DRAM")
        self.assertTrue(self.a.check_remote_metadata(self.nb_, x))
        self.assertFalse(self.a.check_remote_metadata("nobody"))

    def test_initialize_xfer_write_with_notif(self):
        local = self.a.get_xfer_descs([(self.src.ctypes.data, N, 0)], "DRAM")
        remote = self.a.get_xfer_descs([(self.dst.ctypes.data, N, 0)], "DRAM")
        h = self.a.initialize_xfer("WRITE", local, remote, self.nb_, b"w:1")
        self.assertIsInstance(h, nixl_xfer_handle)
        self.assertIn(self.a.transfer(h), ("DONE", "PROC"))
        wait_done(self.a, h)
        self.assertEqual(self.a.check_xfer_state(h), "DONE")   # DONE stays DONE
        self.assertEqual(self.a.query_xfer_backend(h), "UCX")
        us, margin, method = self.a.estimate_xfer_cost(h)
        self.assertIsInstance(us, int)
        self.assertIn(method, ("ANALYTICAL_BACKEND", "UNKNOWN"))
        wait_notif(self.b, self.a.name, b"w:1")
        np.testing.assert_array_equal(self.dst, self.src)
        self.a.release_xfer_handle(h)
        self.a.release_xfer_handle(h)      # idempotent

    def test_prepped_read_by_index_and_notif_override(self):
        blk = N // 16
        lh = self.b.prep_xfer_dlist("NIXL_INIT_AGENT",
                                    [(self.dst.ctypes.data + i * blk, blk, 0) for i in range(16)],
                                    "DRAM")
        rows = np.array([[self.src.ctypes.data + i * blk, blk, 0] for i in range(16)],
                        dtype=np.uint64)
        rh = self.b.prep_xfer_dlist(self.na_, rows, "DRAM", backends=["UCX"])
        self.assertIsInstance(lh, nixl_prepped_dlist_handle)
        idx = np.array([3, 0, 15], dtype=np.int64)
        h = self.b.make_prepped_xfer("READ", lh, idx, rh, idx, notif_msg="first")
        self.b.transfer(h, notif_msg=b"second")
        wait_done(self.b, h)
        for i in (0, 3, 15):
            np.testing.assert_array_equal(self.dst[i * blk:(i + 1) * blk],
                                          self.src[i * blk:(i + 1) * blk])
        self.assertFalse(self.dst[blk:2 * blk].any())
        got = poll(lambda: self.a.get_new_notifs(), "read notification")
        self.assertEqual(got, {self.b.name: [b"second"]})
        # the same request is reposted once done
        self.dst[:] = 0
        self.b.transfer(h)
        wait_done(self.b, h)
        np.testing.assert_array_equal(self.dst[:blk], self.src[:blk])
        self.b.release_xfer_handle(h)
        h2 = self.b.make_prepped_xfer("READ", lh, [1, 2], rh, range(1, 3), skip_desc_merge=True)
        wait_done(self.b, h2) if self.b.transfer(h2) == "PROC" else None
        np.testing.assert_array_equal(self.dst[blk:3 * blk], self.src[blk:3 * blk])
        h2.release()
        self.b.release_dlist_handle(lh)
        rh.release()
        rh.release()

    def test_loopback_with_own_name(self):
        other = np.zeros(N, dtype=np.uint8)
        reg = self.a.register_memory([(other.ctypes.data, N, 0, "")], "DRAM")
        lh = self.a.prep_xfer_dlist("", [(self.src.ctypes.data, N, 0)], "DRAM")
        rh = self.a.prep_xfer_dlist(self.a.name, [(other.ctypes.data, N, 0)], "DRAM")
        h = self.a.make_prepped_xfer("WRITE", lh, [0], rh, [0])
        self.a.transfer(h)
        wait_done(self.a, h)
        np.testing.assert_array_equal(other, self.src)
        del h, lh, rh   # finalisers release
        self.a.deregister_memory(reg)

    def test_send_notif_and_notif_bookkeeping(self):
        self.a.send_notif(self.nb_, b"hello\x00world")
        self.a.send_notif(self.b.name, "text", backend="UCX")
        self.a.send_notif(self.b.name, b"tag:7", backend=["UCX"])
        with self.assertRaises(KeyError):
            self.a.send_notif(self.b.name, b"x", backend="NOPE")
        poll(lambda: sum(len(v) for v in self.b.update_notifs().values()) >= 3, "3 notifs")
        self.assertIs(self.b.update_notifs(), self.b.notifs)
        self.assertEqual(sorted(self.b.notifs[self.a.name]), [b"hello\x00world", b"tag:7", b"text"])
        self.assertFalse(self.b.check_remote_xfer_done(self.a.name, b":7"))   # not a prefix
        self.assertTrue(self.b.check_remote_xfer_done(self.na_, b"tag"))
        self.assertFalse(self.b.check_remote_xfer_done(self.na_, b"tag"))   # consumed
        self.assertTrue(self.b.check_remote_xfer_done(self.a.name, b"ex", tag_is_prefix=False))
        self.assertFalse(self.b.check_remote_xfer_done(self.a.name, b"ex", tag_is_prefix=False))
        self.assertTrue(self.b.check_remote_xfer_done(self.a.name, lookup_tag=b"\x00w",
                                                      backends=["UCX"], tag_is_prefix=False))
        self.assertEqual(self.b.notifs[self.a.name], [])
        first, second = self.b.get_new_notifs(), self.b.get_new_notifs()
        self.assertIsNot(first, second)

    def test_repost_and_release_while_active(self):
        big = 32 << 20
        src = np.ones(big, dtype=np.uint8)
        dst = np.zeros(big, dtype=np.uint8)
        ra = self.a.register_memory([(src.ctypes.data, big, 0, "")], "DRAM")
        rb = self.b.register_memory([(dst.ctypes.data, big, 0, "")], "DRAM")
        nbn = self.a.add_remote_agent(self.b.get_agent_metadata())
        local = self.a.get_xfer_descs([(src.ctypes.data, big, 0)], "DRAM")
        remote = self.a.get_xfer_descs([(dst.ctypes.data, big, 0)], "DRAM")
        for _ in range(3):
            h = self.a.initialize_xfer("WRITE", local, remote, nbn)
            if self.a.transfer(h) == "PROC":
                # Still active: a repost is refused (nixlRepostActiveError) unless it finished
                # in between, when a repost is allowed; nothing else may happen.
                try:
                    self.a.transfer(h)
                except nb.nixlRepostActiveError:
                    pass
            try:
                self.a.release_xfer_handle(h)     # cancels an active transfer ...
                self.assertTrue(h._released)
            except nb.nixlRepostActiveError:    # ... or refuses and stays live
                self.assertFalse(h._released)
                wait_done(self.a, h)
                self.a.release_xfer_handle(h)
                self.assertTrue(h._released)
        h = self.a.initialize_xfer("WRITE", local, remote, nbn)
        self.a.transfer(h)
        wait_done(self.a, h)
        self.assertTrue((dst == 1).all())
        h.release()
        self.a.deregister_memory(ra)
        self.b.deregister_memory(rb)

    def test_handles_identity_semantics(self):
        lh = self.a.prep_xfer_dlist("", [(self.src.ctypes.data, N, 0)], "DRAM")
        for cls in (nixl_prepped_dlist_handle, nixl_xfer_handle):
            # Exactly three slots, held by the C base nixl._bindings._handle.
            self.assertEqual(cls.__slots__, ())
            self.assertTrue(issubclass(cls, nb._handle))
            self.assertEqual(sorted(n for n, v in vars(nb._handle).items()
                                    if type(v).__name__ == "member_descriptor"),
                             ["_agent", "_handle", "_released"])
            for dunder in ("__eq__", "__len__", "__bool__"):
                self.assertNotIn(dunder, cls.__dict__)
        self.assertFalse(hasattr(lh, "__dict__"))
        self.assertTrue(lh)
        self.assertIsInstance(lh._agent, nb.nixlAgent)
        s = {lh}
        self.assertIn(lh, s)
        lh.release()
        self.assertTrue(lh._released)
        self.assertTrue(lh)


@unittest.skipIf(torch is None, "torch is not importable")
class TwoAgentsTorch(unittest.TestCase):
    def test_tensor_write_and_read(self):
        a, b = agent_pair()
        src = torch.arange(4096, dtype=torch.int32)
        dst = torch.zeros(4096, dtype=torch.int32)
        ra = a.register_memory(src)
        rb = b.register_memory([dst])
        nbn, nan = exchange(a, b)
        h = a.initialize_xfer("WRITE", a.get_xfer_descs(src), a.get_xfer_descs([dst]), nbn, b"t")
        a.transfer(h)
        wait_done(a, h)
        wait_notif(b, a.name, b"t")
        self.assertTrue(torch.equal(src, dst))
        back = torch.arange(4096, dtype=torch.int32) * 7 + 1
        rback = b.register_memory(back)
        na2 = a.add_remote_agent(b.get_agent_metadata())
        self.assertEqual(na2, nbn)
        h2 = a.initialize_xfer("READ", a.get_xfer_descs(src[:1024]),
                               a.get_xfer_descs(back[:1024]), nbn)
        src[:1024] = 0
        a.transfer(h2)
        wait_done(a, h2)
        self.assertTrue(torch.equal(src[:1024], back[:1024]))
        h.release()
        h2.release()
        a.remove_remote_agent(nbn)
        b.remove_remote_agent(nan)
        for ag, r in ((a, ra), (b, rb), (b, rback)):
            ag.deregister_memory(r)


if __name__ == "__main__":
    unittest.main()
