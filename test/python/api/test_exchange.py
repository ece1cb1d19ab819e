# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Metadata calls beyond the full blob: partial metadata (by hand and over the P2P listener),
send/fetch/invalidate over P2P, query_memory, make_connection, and what registration keeps
alive (tensors until deregistration, nothing for addresses)."""

import gc
import socket
import unittest
import weakref

import numpy as np

import nixl._bindings as nb
from nixl._api import nixl_agent, nixl_agent_config

from nixl_test_util import poll, torch_or_none, unique, wait_done

torch = torch_or_none()
N = 8192


def listener_agent(prefix):
    """An agent listening on a free loopback port; retries if the port is taken meanwhile."""
    last = None
    for _ in range(5):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            return nixl_agent(unique(prefix), nixl_agent_config(True, True, port)), port
        except Exception as e:  # noqa: BLE001 (port raced away: try another)
            last = e
    raise AssertionError(f"no listener port: {last}")


class Exchange(unittest.TestCase):
    def test_partial_metadata_by_hand(self):
        a = nixl_agent(unique("pa"))
        b = nixl_agent(unique("pb"))
        buf = np.arange(N, dtype=np.uint8)
        reg = b.register_memory([(buf.ctypes.data, N, 0, "")], "DRAM")
        conn = b.get_partial_agent_metadata([], inc_conn_info=True)
        self.assertIsInstance(conn, bytes)
        self.assertEqual(a.add_remote_agent(conn), b.name.encode())
        x = a.get_xfer_descs([(buf.ctypes.data, N, 0)], "DRAM")
        self.assertFalse(a.check_remote_metadata(b.name, x))     # connection info only
        part = b.get_partial_agent_metadata(reg, inc_conn_info=False, backends=["UCX"])
        a.add_remote_agent(part)
        self.assertTrue(a.check_remote_metadata(b.name, x))
        a.make_connection(b.name)
        a.make_connection(b.name.encode(), backends=["UCX"])
        mine = np.zeros(N, dtype=np.uint8)
        ra = a.register_memory([(mine.ctypes.data, N, 0, "")], "DRAM")
        h = a.initialize_xfer("READ", a.get_xfer_descs([(mine.ctypes.data, N, 0)], "DRAM"), x,
                              b.name)
        a.transfer(h)
        wait_done(a, h)
        np.testing.assert_array_equal(mine, buf)
        h.release()
        a.remove_remote_agent(b.name)
        a.deregister_memory(ra)
        b.deregister_memory(reg)

    def test_query_memory(self):
        # The TEST backend answers queryMem (UCX does not: nixlNotSupportedError, as in NIXL).
        a = nixl_agent(unique("q"), nixl_agent_config(backends=["TEST", "UCX"]))
        buf = np.zeros(N, dtype=np.uint8)
        reg = a.register_memory([(buf.ctypes.data, N, 0, "")], "DRAM", backends=["TEST"])
        other = np.zeros(16, dtype=np.uint8)
        resp = a.query_memory([(buf.ctypes.data, N, 0, ""), (other.ctypes.data, 16, 0, "")],
                              "TEST", "DRAM")
        self.assertEqual(len(resp), 2)
        self.assertIsInstance(resp[0], dict)
        self.assertIsNone(resp[1])
        with self.assertRaises(nb.nixlNotSupportedError):
            a.query_memory(reg, "UCX")
        a.deregister_memory(reg, backends=["TEST"])

    def test_p2p_send_fetch_invalidate(self):
        a, port = listener_agent("listen")
        b = nixl_agent(unique("talk"))
        buf = np.zeros(N, dtype=np.uint8)
        reg = b.register_memory([(buf.ctypes.data, N, 0, "")], "DRAM")
        x = a.get_xfer_descs([(buf.ctypes.data, N, 0)], "DRAM")
        b.send_partial_agent_metadata(reg, True, ["UCX"], "127.0.0.1", port)
        poll(lambda: a.check_remote_metadata(b.name, x), "partial metadata at the listener")
        b.fetch_remote_metadata(a.name, "127.0.0.1", port)
        poll(lambda: b.check_remote_metadata(a.name), "the listener's metadata")
        b.invalidate_local_metadata("127.0.0.1", port)
        poll(lambda: not a.check_remote_metadata(b.name), "the listener forgetting us")
        b.send_local_metadata(ip_addr="127.0.0.1", port=port)
        poll(lambda: a.check_remote_metadata(b.name, x), "full metadata at the listener")
        b.deregister_memory(reg)


@unittest.skipIf(torch is None, "torch is not importable")
class Lifetime(unittest.TestCase):
    def test_registered_tensors_stay_alive_until_deregistered(self):
        a = nixl_agent(unique("life"))
        t1, t2 = torch.zeros(1024), torch.ones(2048)
        w1, w2 = weakref.ref(t1), weakref.ref(t2)
        r1 = a.register_memory(t1)
        r2 = a.register_memory([t2])
        del t1, t2
        gc.collect()
        self.assertIsNotNone(w1())
        self.assertIsNotNone(w2())
        a.deregister_memory(r1)
        gc.collect()
        self.assertIsNone(w1())
        self.assertIsNotNone(w2())
        a.deregister_memory(r2)
        gc.collect()
        self.assertIsNone(w2())
        t3 = torch.zeros(512)
        w3 = weakref.ref(t3)
        a.register_memory([t3])
        a.deregister_memory(t3)          # by the tensor itself
        del t3
        gc.collect()
        self.assertIsNone(w3())

    def test_addresses_keep_nothing(self):
        a = nixl_agent(unique("addr"))
        t = torch.zeros(1024)
        w = weakref.ref(t)
        reg = a.register_memory([(t.data_ptr(), 4096, 0, "")], "DRAM")
        keep = t  # the caller's job: keep it while registered
        del t
        gc.collect()
        self.assertIs(w(), keep)
        del keep
        gc.collect()
        self.assertIsNone(w())    # the registration did not hold it (the caller must)
        a.deregister_memory(reg)  # deregistration needs only the addresses


if __name__ == "__main__":
    unittest.main()
