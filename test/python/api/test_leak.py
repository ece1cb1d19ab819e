# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""10,000 prepared transfers (with notifications) through nixl._api: reference counts of the
objects passed in stay where they were, Python allocations and RSS stay bounded."""

import gc
import sys
import tracemalloc
import unittest

import numpy as np

from nixl_test_util import agent_pair, exchange, wait_done

ROUNDS = 10_000
BLOCK = 4096
BLOCKS = 8


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


class Leak(unittest.TestCase):
    def test_ten_thousand_transfers(self):
        a, b = agent_pair()
        src = np.arange(BLOCK * BLOCKS, dtype=np.uint32).view(np.uint8)[: BLOCK * BLOCKS].copy()
        dst = np.zeros_like(src)
        ra = a.register_memory([(src.ctypes.data, src.nbytes, 0, "")], "DRAM")
        rb = b.register_memory([(dst.ctypes.data, dst.nbytes, 0, "")], "DRAM")
        nbn, _ = exchange(a, b)
        rows = lambda buf: [(buf.ctypes.data + i * BLOCK, BLOCK, 0) for i in range(BLOCKS)]
        lh = a.prep_xfer_dlist("NIXL_INIT_AGENT", rows(src), "DRAM")
        rh = a.prep_xfer_dlist(nbn, rows(dst), "DRAM")
        idx = np.arange(BLOCKS, dtype=np.int64)
        msg = b"leak"

        def one(i):
            h = a.make_prepped_xfer("WRITE", lh, idx, rh, idx,
                                    notif_msg=msg if i % 10 == 0 else b"")
            a.transfer(h)
            wait_done(a, h)
            a.release_xfer_handle(h)
            if i % 10 == 0:
                b.get_new_notifs()

        for i in range(500):          # warm-up: caches, allocator pools, UCX endpoints
            one(i)
        gc.collect()
        refs = [sys.getrefcount(o) for o in (lh, rh, idx, msg, a, a.agent)]
        tracemalloc.start()
        snap0 = tracemalloc.take_snapshot()
        rss0 = rss_bytes()
        for i in range(ROUNDS):
            one(i)
        gc.collect()
        snap1 = tracemalloc.take_snapshot()
        rss1 = rss_bytes()
        tracemalloc.stop()
        self.assertEqual([sys.getrefcount(o) for o in (lh, rh, idx, msg, a, a.agent)], refs)
        growth = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
        self.assertLess(growth, 256 * 1024, f"Python allocations grew by {growth} bytes")
        self.assertLess(rss1 - rss0, 16 << 20, f"RSS grew by {rss1 - rss0} bytes")
        np.testing.assert_array_equal(dst, src)
        lh.release()
        rh.release()
        a.deregister_memory(ra)
        b.deregister_memory(rb)


if __name__ == "__main__":
    unittest.main()
