# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""vLLM's NixlConnector call sequence (reference §5) with torch CPU tensors shaped like a KV
cache (layers x blocks x block bytes): the decode side READs blocks by index from the prefill
side with a notification, polls, reads telemetry, releases, and both sides clean up. Also
SGLang's sequence: WRITEs (initialize_xfer, and prepared lists with int32 index arrays), state
polled from several threads, notifications by items()."""

import os
import unittest

os.environ.setdefault("UCX_RCACHE_MAX_UNRELEASED", "1024")   # as vLLM sets before importing

from nixl_test_util import poll, torch_or_none, unique

torch = torch_or_none()

LAYERS, BLOCKS, BLOCK_BYTES = 4, 32, 16 * 1024


@unittest.skipIf(torch is None, "torch is not importable")
class VllmFlow(unittest.TestCase):
    def make_worker(self, role):
        from nixl._api import nixl_agent, nixl_agent_config
        from nixl._bindings import nixlXferTelemetry  # noqa: F401 (as vLLM imports it)
        cfg = nixl_agent_config(backends=["UCX"], capture_telemetry=True)
        agent = nixl_agent(unique(role), cfg)
        caches = [torch.zeros((BLOCKS, BLOCK_BYTES), dtype=torch.uint8) for _ in range(LAYERS)]
        regs = [(t.data_ptr(), t.numel() * t.element_size(), 0, "") for t in caches]
        descs = agent.get_reg_descs(regs, "DRAM")
        agent.register_memory(descs, backends=["UCX"])
        return agent, caches, descs

    @staticmethod
    def block_rows(caches):
        return [(t.data_ptr() + b * BLOCK_BYTES, BLOCK_BYTES, 0)
                for t in caches for b in range(BLOCKS)]

    def test_flow(self):
        prefill, p_caches, p_reg = self.make_worker("prefill")
        decode, d_caches, d_reg = self.make_worker("decode")
        g = torch.Generator().manual_seed(5)
        for t in p_caches:
            t.copy_(torch.randint(0, 256, t.shape, dtype=torch.uint8, generator=g))

        # Handshake: decode loads prefill's metadata; the bytes returned are the name from now on.
        remote = decode.add_remote_agent(prefill.get_agent_metadata())
        self.assertIsInstance(remote, bytes)
        prefill_knows = prefill.add_remote_agent(decode.get_agent_metadata())

        # Descriptor lists prepared once (vLLM passes Nx3 uint64 arrays for the remote side).
        import numpy as np
        local_descs = decode.get_xfer_descs(self.block_rows(d_caches), "DRAM")
        local_h = decode.prep_xfer_dlist("NIXL_INIT_AGENT", local_descs, backends=["UCX"])
        remote_rows = np.array(self.block_rows(p_caches), dtype=np.uint64)
        remote_h = decode.prep_xfer_dlist(remote, decode.get_xfer_descs(remote_rows, "DRAM"))

        handles = set()
        requests = {"req-1": [0, 5, 6, 7], "req-2": [31], "req-3": list(range(10, 26))}
        for req, block_ids in requests.items():
            idx = np.array([layer * BLOCKS + b for layer in range(LAYERS) for b in block_ids],
                           dtype=np.int64)
            h = decode.make_prepped_xfer("READ", local_h, idx, remote_h, idx,
                                         notif_msg=f"{req}:{LAYERS}".encode())
            self.assertIn(decode.transfer(h), ("DONE", "PROC"))
            handles.add(h)

        done = set()
        def poll_once():
            for h in list(handles - done):
                state = decode.check_xfer_state(h)
                if state == "DONE":
                    tel = decode.get_xfer_telemetry(h)
                    self.assertGreater(tel.totalBytes, 0)
                    self.assertGreaterEqual(tel.descCount, 1)
                    self.assertGreaterEqual(tel.xferDuration, 0)
                    decode.release_xfer_handle(h)
                    done.add(h)
                elif state != "PROC":
                    self.fail(f"transfer state {state}")
            return len(done) == len(handles)
        poll(poll_once, "all READs done")

        got = {}
        def collect():
            for msgs in prefill.get_new_notifs().values():
                for m in msgs:
                    got[m] = got.get(m, 0) + 1
            return len(got) == len(requests)
        poll(collect, "prefill notified of every READ")
        self.assertEqual(got, {f"{r}:{LAYERS}".encode(): 1 for r in requests})

        read = {b for ids in requests.values() for b in ids}
        for layer in range(LAYERS):
            for b in range(BLOCKS):
                if b in read:
                    self.assertTrue(torch.equal(d_caches[layer][b], p_caches[layer][b]),
                                    f"layer {layer} block {b}")
                else:
                    self.assertFalse(d_caches[layer][b].any(), f"layer {layer} block {b}")

        # Decode tells prefill it is finished with the blocks (vLLM's send_notif keyword).
        decode.send_notif(remote, notif_msg=b"free:req-1")
        poll(lambda: prefill.check_remote_xfer_done(decode.name, b"free:"), "free notification")

        decode.release_dlist_handle(local_h)
        decode.release_dlist_handle(remote_h)
        decode.remove_remote_agent(remote)
        prefill.remove_remote_agent(prefill_knows)
        decode.deregister_memory(d_reg)
        prefill.deregister_memory(p_reg)
        self.assertFalse(decode.check_remote_metadata(remote))


@unittest.skipIf(torch is None, "torch is not importable")
class SglangFlow(unittest.TestCase):
    def test_flow(self):
        import threading

        import numpy as np
        from nixl._api import nixl_agent, nixl_agent_config
        from nixl._bindings import (nixlBackendError, nixlCancelledError,  # noqa: F401
                                    nixlRemoteDisconnectError)
        agents = []
        for role in ("prefill", "decode"):
            a = nixl_agent(unique(role), nixl_agent_config(backends=[], num_threads=2))
            a.create_backend("UCX", {})
            self.assertIn("UCX", a.get_plugin_list())
            agents.append(a)
        prefill, decode = agents
        src = torch.randint(0, 256, (BLOCKS, BLOCK_BYTES), dtype=torch.uint8)
        dst = torch.zeros((BLOCKS, BLOCK_BYTES), dtype=torch.uint8)
        descs = prefill.register_memory([(src.data_ptr(), src.numel(), 0, "")], "DRAM")
        self.assertTrue(descs)                       # SGLang: `if not descs: fail`
        decode.register_memory([(dst.data_ptr(), dst.numel(), 0, "")], "DRAM")
        peer = prefill.add_remote_agent(decode.get_agent_metadata())
        decode.add_remote_agent(prefill.get_agent_metadata())

        # Old path: initialize_xfer of blocks 0..3, state checked for "ERR".
        rows = lambda t, ids: [(t.data_ptr() + b * BLOCK_BYTES, BLOCK_BYTES, 0) for b in ids]
        s = prefill.get_xfer_descs(rows(src, range(4)), "DRAM")
        d = prefill.get_xfer_descs(rows(dst, range(4)), "DRAM")
        h = prefill.initialize_xfer("WRITE", s, d, decode.name, b"old:0")
        self.assertNotEqual(prefill.transfer(h), "ERR")

        # New path: prepared lists from Nx3 arrays, int32 index arrays.
        sh = prefill.prep_xfer_dlist("", np.array(rows(src, range(BLOCKS)), np.uint64), "DRAM")
        dh = prefill.prep_xfer_dlist(peer, np.array(rows(dst, range(BLOCKS)), np.uint64), "DRAM")
        handles = [prefill.make_prepped_xfer("WRITE", sh, np.array(ids, np.int32), dh,
                                             np.array(ids, np.int32), f"new:{n}".encode())
                   for n, ids in enumerate(([4, 5], [8, 9, 10, 11, 12, 13, 14, 15, 16], [31]))]
        for x in handles:
            self.assertNotEqual(prefill.transfer(x), "ERR")
        states, errors = {}, []

        def watch(x):
            try:
                poll(lambda: prefill.check_xfer_state(x) == "DONE", "WRITE done")
                states[id(x)] = "DONE"
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)
        threads = [threading.Thread(target=watch, args=(x,)) for x in [h] + handles]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(states), 4)
        got = []
        def collect():
            for name, msgs in decode.get_new_notifs().items():
                self.assertEqual(name, prefill.name)
                got.extend(msgs)
            return len(got) == 4
        poll(collect, "four notifications")
        self.assertEqual(sorted(got), [b"new:0", b"new:1", b"new:2", b"old:0"])
        for b in list(range(6)) + list(range(8, 17)) + [31]:
            self.assertTrue(torch.equal(dst[b], src[b]), f"block {b}")
        self.assertFalse(dst[6].any() or dst[7].any() or dst[30].any())
        decode.send_notif(prefill.name, b"ack")
        poll(lambda: prefill.check_remote_xfer_done(decode.name, b"ack"), "ack")
        for x in [h] + handles:
            prefill.release_xfer_handle(x)


if __name__ == "__main__":
    unittest.main()
