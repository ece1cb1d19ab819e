# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""One nixl._bindings agent used from many Python threads at once (as vLLM and SGLang do):
8 threads make, post, poll and release transfers on shared prepared lists while other threads
register memory, read metadata and drain notifications; several threads poll one request; a
request released while others poll it. Data and notification counts are verified."""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nixl._bindings as b  # noqa: E402
from common import Buffer, connect, make_agent, wait_done  # noqa: E402

THREADS = 8
SLOTS = 4
BLK = 4096
ITER = 150


def run_threads(targets):
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # reported by the test, not lost in the thread
                errors.append(e)
        return run

    ts = [threading.Thread(target=wrap(fn)) for fn in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errors


class ManyThreadsOneAgentTest(unittest.TestCase):
    def setUp(self):
        # The initiator is left at the default sync mode: the binding must make it safe.
        self.a, self.ba = make_agent("initiator")
        self.t, _ = make_agent("target", prog_thread=True)
        n = THREADS * SLOTS * BLK
        self.src = Buffer(n)
        self.dst = Buffer(n)
        self.a_reg = b.nixlRegDList(b.DRAM_SEG, [(self.src.addr, n, 0, "")])
        self.t_reg = b.nixlRegDList(b.DRAM_SEG, [(self.dst.addr, n, 0, "")])
        self.a.registerMem(self.a_reg)
        self.t.registerMem(self.t_reg)
        self.peer = connect(self.a, self.t)
        blocks = range(THREADS * SLOTS)
        self.local = b.nixlXferDList(b.DRAM_SEG, [(self.src.addr + i * BLK, BLK, 0) for i in blocks])
        self.remote = b.nixlXferDList(b.DRAM_SEG, [(self.dst.addr + i * BLK, BLK, 0) for i in blocks])
        self.lh = self.a.prepXferDlist(self.local)
        self.rh = self.a.prepXferDlist(self.peer, self.remote)

    def tearDown(self):
        self.a.releasedDlistH(self.lh)
        self.a.releasedDlistH(self.rh)
        self.a.deregisterMem(self.a_reg)
        self.t.deregisterMem(self.t_reg)
        del self.a, self.t

    def test_post_and_poll_from_eight_threads(self):
        self.assertEqual(self.a.getEffectiveSyncMode(), b.NIXL_THREAD_SYNC_RW)
        done = threading.Event()
        received = {}

        def worker(i):
            def run():
                for k in range(ITER):
                    blk = i * SLOTS + k % SLOTS
                    value = (i * 31 + k) % 251 + 1
                    self.src.fill(value, blk * BLK, BLK)
                    msg = b"%d:%d" % (i, k)
                    if k % 10 == 0:
                        req = self.a.createXferReq(
                            b.NIXL_WRITE,
                            b.nixlXferDList(b.DRAM_SEG, [self.local[blk]]),
                            b.nixlXferDList(b.DRAM_SEG, [self.remote[blk]]),
                            self.peer, msg)
                    else:
                        req = self.a.makeXferReq(b.NIXL_WRITE, self.lh, [blk], self.rh, [blk], msg)
                    self.a.postXferReq(req)
                    if wait_done(self.a, req) != b.NIXL_SUCCESS:
                        raise AssertionError("transfer %d:%d failed" % (i, k))
                    got = self.dst.bytes(blk * BLK, BLK)
                    if got != bytes([value]) * BLK:
                        raise AssertionError("thread %d iteration %d: wrong data" % (i, k))
                    self.a.releaseXferReq(req)
            return run

        def drain():
            # Concurrently with the target's progress thread.
            total = 0
            while total < THREADS * ITER:
                got = self.t.getNotifs()
                for name, msgs in got.items():
                    received.setdefault(name, []).extend(msgs)
                    total += len(msgs)

        spare = Buffer(BLK)

        def churn():
            # Writer-lock calls and readers of agent state between the transfers.
            spare_reg = b.nixlRegDList(b.DRAM_SEG, [(spare.addr, BLK, 0, "")])
            while not done.is_set():
                self.a.registerMem(spare_reg)
                self.assertIsInstance(self.a.getLocalMD(), bytes)
                self.assertEqual(self.a.checkRemoteMD(self.peer, self.remote), b.NIXL_SUCCESS)
                self.a.deregisterMem(spare_reg)

        workers = [worker(i) for i in range(THREADS)]
        churner_errors = []
        churner = threading.Thread(
            target=lambda: churner_errors.extend(run_threads([churn])))
        churner.start()
        try:
            errors = run_threads(workers + [drain])
        finally:
            done.set()
            churner.join()
        self.assertEqual(errors + churner_errors, [])
        msgs = received.get("initiator", [])
        self.assertEqual(len(msgs), THREADS * ITER)
        self.assertEqual(sorted(msgs),
                         sorted(b"%d:%d" % (i, k) for i in range(THREADS) for k in range(ITER)))

    def test_many_threads_poll_one_request(self):
        for round_ in range(30):
            req = self.a.makeXferReq(b.NIXL_WRITE, self.lh, list(range(THREADS * SLOTS)),
                                     self.rh, list(range(THREADS * SLOTS)))
            self.a.postXferReq(req)
            seen = []
            errors = run_threads([lambda: seen.append(wait_done(self.a, req))] * THREADS)
            self.assertEqual(errors, [])
            self.assertEqual(seen, [b.NIXL_SUCCESS] * THREADS)
            self.a.releaseXferReq(req)

    def test_release_while_other_threads_poll(self):
        for round_ in range(30):
            req = self.a.makeXferReq(b.NIXL_WRITE, self.lh, [0, 1], self.rh, [2, 3])
            self.a.postXferReq(req)
            stop_reasons = []

            def poller():
                try:
                    while True:
                        self.a.getXferStatus(req)
                except b.nixlInvalidParamError:
                    stop_reasons.append("released")

            def releaser():
                self.assertEqual(wait_done(self.a, req), b.NIXL_SUCCESS)
                self.assertEqual(self.a.releaseXferReq(req), b.NIXL_SUCCESS)

            errors = run_threads([poller] * 4 + [releaser])
            self.assertEqual(errors, [])
            self.assertEqual(stop_reasons, ["released"] * 4)
            with self.assertRaises(b.nixlInvalidParamError):
                self.a.releaseXferReq(req)


if __name__ == "__main__":
    unittest.main()
