# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""One agent used from several Python threads at once (as vLLM and SGLang do): each thread
posts and polls its own prepared READs while others send and drain notifications; every
block arrives intact and nothing raises."""

import threading
import unittest

import numpy as np

from nixl._api import nixl_thread_sync_t

from nixl_test_util import agent_pair, exchange, poll, wait_done

THREADS, ROUNDS, BLOCK = 4, 300, 8192


class Threads(unittest.TestCase):
    def run_mode(self, **conf):
        a, b = agent_pair(**conf)
        src = np.random.default_rng(3).integers(0, 256, THREADS * BLOCK, dtype=np.uint8)
        dst = np.zeros_like(src)
        ra = a.register_memory([(dst.ctypes.data, dst.nbytes, 0, "")], "DRAM")
        rb = b.register_memory([(src.ctypes.data, src.nbytes, 0, "")], "DRAM")
        nbn, nan = exchange(a, b)
        lh = a.prep_xfer_dlist("", [(dst.ctypes.data + i * BLOCK, BLOCK, 0)
                                    for i in range(THREADS)], "DRAM")
        rh = a.prep_xfer_dlist(nbn, [(src.ctypes.data + i * BLOCK, BLOCK, 0)
                                     for i in range(THREADS)], "DRAM")
        errors = []
        notes = []

        def reader(t):
            try:
                for r in range(ROUNDS):
                    h = a.make_prepped_xfer("READ", lh, [t], rh, [t],
                                            notif_msg=f"t{t}:{r}".encode())
                    a.transfer(h)
                    wait_done(a, h)
                    a.release_xfer_handle(h)
            except Exception as e:  # noqa: BLE001 (reported by the main thread)
                errors.append(e)

        def chatter():
            try:
                for r in range(ROUNDS):
                    a.send_notif(nbn, f"c{r}".encode())
                    a.get_new_notifs()
                    a.check_remote_metadata(nbn)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=reader, args=(t,)) for t in range(THREADS)]
        threads.append(threading.Thread(target=chatter))
        for th in threads:
            th.start()

        def drain():
            for msgs in b.get_new_notifs().values():
                notes.extend(msgs)
            return len(notes) >= THREADS * ROUNDS + ROUNDS
        poll(drain, "every notification at the target")
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(notes), THREADS * ROUNDS + ROUNDS)
        self.assertEqual(len(set(notes)), len(notes))
        np.testing.assert_array_equal(dst, src)
        lh.release()
        rh.release()
        a.remove_remote_agent(nbn)
        b.remove_remote_agent(nan)
        a.deregister_memory(ra)
        b.deregister_memory(rb)

    def test_default_sync_mode(self):
        self.run_mode()

    def test_rw_sync_mode(self):
        self.run_mode(sync_mode=nixl_thread_sync_t.NIXL_THREAD_SYNC_RW)

    def test_strict_sync_mode(self):
        self.run_mode(sync_mode=nixl_thread_sync_t.NIXL_THREAD_SYNC_STRICT)


if __name__ == "__main__":
    unittest.main()
