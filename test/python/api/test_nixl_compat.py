# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""What NIXL's own Python tests and examples expect of the package beyond nixl._api's calls
(issue 43, item 7): the top-level names of ``nixl``, ``nixl_thread_sync_t``'s members and
values, ``nixl._utils``, and a two-peer flow written as NIXL's basic example is.

The two-peer test re-runs this file as the initiator (``--initiator PORT``): the parent is the
target, listening for metadata on 127.0.0.1, as in NIXL's examples/python/basic_two_peers.py
with nixl._utils buffers in place of torch tensors."""

import ctypes
import mmap
import os
import subprocess
import sys
import threading
import unittest

# As NIXL's basic example starts.
from nixl import nixl_agent, nixl_agent_config

import nixl._utils as nixl_utils

from nixl_test_util import DEADLINE_S, plugin_present, poll, unique

NIXL_ALL = ["DEFAULT_COMM_PORT", "nixl_agent", "nixl_agent_config", "nixl_backend_handle",
            "nixl_prepped_dlist_handle", "nixl_thread_sync_t", "nixl_xfer_handle"]
SYNC_NAMES = ["NIXL_THREAD_SYNC_NONE", "NIXL_THREAD_SYNC_STRICT", "NIXL_THREAD_SYNC_RW"]


def run_py(code):
    """Runs code in a fresh interpreter (same environment); returns its last stdout line."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=DEADLINE_S)
    if out.returncode != 0:
        raise AssertionError(f"child failed ({out.returncode}): {out.stderr}")
    return out.stdout.strip().splitlines()[-1]


class TopLevelTest(unittest.TestCase):
    def test_all_is_nixls(self):
        import nixl
        import nixl._api as api
        self.assertEqual(sorted(nixl.__all__), sorted(NIXL_ALL))
        for n in NIXL_ALL:
            self.assertIs(getattr(nixl, n), getattr(api, n), n)
            self.assertIn(n, dir(nixl))
        self.assertIs(nixl_agent, api.nixl_agent)
        self.assertIs(nixl_agent_config, api.nixl_agent_config)
        self.assertEqual(nixl.DEFAULT_COMM_PORT, 8888)
        self.assertFalse(hasattr(nixl, "__version__"))

    def test_submodules_and_helpers(self):
        import nixl
        import nixl._bindings
        import nixl.logging
        self.assertIs(nixl._utils, nixl_utils)
        self.assertIs(nixl._bindings, sys.modules["nixl._bindings"])
        self.assertIs(nixl.logging, sys.modules["nixl.logging"])
        for n in ("malloc_passthru", "free_passthru", "ba_buf", "verify_transfer"):
            self.assertIs(getattr(nixl, n), getattr(nixl_utils, n), n)
        self.assertIs(nixl.get_logger, nixl.logging.get_logger)
        with self.assertRaises(AttributeError):
            nixl.no_such_name  # noqa: B018
        with self.assertRaises(ImportError):
            exec("from nixl import no_such_name", {})

    def test_star_import(self):
        ns = {}
        exec("from nixl import *", ns)
        self.assertEqual(sorted(k for k in ns if not k.startswith("__")), sorted(NIXL_ALL))

    def test_import_nixl_loads_nothing(self):
        probe = ("import sys, nixl; print(sorted(m for m in ('numpy', 'nixl._api', "
                 "'nixl._bindings', 'nixl._utils') if m in sys.modules))")
        self.assertEqual(run_py(probe), "[]")
        # nixl._utils needs neither libnixl nor numpy.
        probe = ("import sys, nixl._utils; print(sorted(m for m in ('numpy', 'nixl._api', "
                 "'nixl._bindings') if m in sys.modules))")
        self.assertEqual(run_py(probe), "[]")
        # The first line of NIXL's basic example loads the API, and still no backend plugin.
        probe = ("import sys, nixl; from nixl import nixl_agent; "
                 "print('nixl._api' in sys.modules, any('libplugin_' in l for l in "
                 "open('/proc/self/maps')))")
        self.assertEqual(run_py(probe), "True False")


class SyncModeTest(unittest.TestCase):
    def setUp(self):
        import nixl._bindings as nb
        self.nb = nb
        from nixl import nixl_thread_sync_t
        self.S = nixl_thread_sync_t

    def test_members_are_nixls(self):
        S, nb = self.S, self.nb
        self.assertEqual([m.name for m in S], SYNC_NAMES)
        self.assertEqual(list(S.__members__), SYNC_NAMES + ["NIXL_THREAD_SYNC_DEFAULT"])
        self.assertIs(S.NIXL_THREAD_SYNC_DEFAULT, S.NIXL_THREAD_SYNC_NONE)
        for name in SYNC_NAMES:
            m = S[name]
            # .value is the bindings' member, as in NIXL (not an int).
            self.assertIsInstance(m.value, nb.nixl_thread_sync_t)
            self.assertEqual(m.value, getattr(nb, name))
            self.assertIs(S(getattr(nb, name)), m)

    def test_short_names_are_aliases_only(self):
        S = self.S
        for short in ("NONE", "STRICT", "RW", "DEFAULT"):
            self.assertIs(getattr(S, short), getattr(S, "NIXL_THREAD_SYNC_" + short))
            self.assertNotIn(short, S.__members__)
            with self.assertRaises(KeyError):
                S[short]  # noqa: B018

    def test_value_to_bindings_config(self):
        S, nb = self.S, self.nb
        for m in S:
            cfg = nb.nixlAgentConfig(True, False, 0, m.value)
            self.assertEqual(cfg.syncMode, m.value)
            cfg = nb.nixlAgentConfig()
            cfg.syncMode = m.value
            self.assertEqual(cfg.syncMode, m.value)
        # The call from the issue, and an agent made from it.
        cfg = nb.nixlAgentConfig(True, False, 0, S.NIXL_THREAD_SYNC_RW.value)
        ag = nb.nixlAgent(unique("cfg"), cfg)
        self.assertEqual(ag.getEffectiveSyncMode(), nb.NIXL_THREAD_SYNC_RW)

    def test_member_to_agent_config(self):
        S, nb = self.S, self.nb
        for m, want in ((S.NIXL_THREAD_SYNC_RW, nb.NIXL_THREAD_SYNC_RW),
                        (S.NIXL_THREAD_SYNC_STRICT, nb.NIXL_THREAD_SYNC_STRICT)):
            conf = nixl_agent_config(True, False, 0, sync_mode=m, backends=[])
            self.assertIs(conf.sync_mode, m)
            self.assertEqual(nixl_agent(unique("m"), conf).agent.getEffectiveSyncMode(), want)
        # As NIXL: nixl_agent_config takes the Enum member, not the bindings' value.
        with self.assertRaises(TypeError):
            nixl_agent_config(sync_mode=S.NIXL_THREAD_SYNC_RW.value)


PROT_NONE, PROT_READ, PROT_RW = 0, mmap.PROT_READ, mmap.PROT_READ | mmap.PROT_WRITE


class Pages:
    """Anonymous pages mapped with mmap, unmapped by close()."""

    def __init__(self, count, prot):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.mmap.restype = ctypes.c_void_p
        self.libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_int, ctypes.c_long]
        self.libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.size = count * mmap.PAGESIZE
        self.addr = self.libc.mmap(None, self.size, prot,
                                   mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if self.addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")

    def protect(self, page, prot):
        if self.libc.mprotect(self.addr + page * mmap.PAGESIZE, mmap.PAGESIZE, prot) != 0:
            raise OSError(ctypes.get_errno(), "mprotect")

    def close(self):
        self.libc.munmap(self.addr, self.size)


class UtilsTest(unittest.TestCase):
    def setUp(self):
        self.live = []

    def tearDown(self):
        for a in self.live:
            nixl_utils.free_passthru(a)

    def alloc(self, size):
        a = nixl_utils.malloc_passthru(size)
        self.live.append(a)
        return a

    def test_malloc_aligned_and_distinct(self):
        addrs = [self.alloc(n) for n in (0, 1, 256, 4096, 4097, 3 << 20)]
        for a in addrs:
            self.assertIsInstance(a, int)
            self.assertNotEqual(a, 0)
            self.assertEqual(a % 4096, 0)
        self.assertEqual(len(set(addrs)), len(addrs))

    def test_ba_buf_fills_exactly_the_range(self):
        a = self.alloc(4096)
        ctypes.memset(a, 0x11, 4096)
        nixl_utils.ba_buf(a + 100, 1000)
        self.assertEqual(ctypes.string_at(a + 100, 1000), b"\xba" * 1000)
        self.assertEqual(ctypes.string_at(a, 100), b"\x11" * 100)
        self.assertEqual(ctypes.string_at(a + 1100, 4096 - 1100), b"\x11" * (4096 - 1100))
        nixl_utils.ba_buf(a, 0)  # nothing to do
        self.assertEqual(ctypes.string_at(a, 1), b"\x11")

    def test_ba_buf_larger_than_one_chunk(self):
        n = (2 << 20) + 123
        a = self.alloc(n + 1)
        ctypes.memset(a, 0, n + 1)
        nixl_utils.ba_buf(a, n)
        self.assertEqual(ctypes.string_at(a, n), b"\xba" * n)
        self.assertEqual(ctypes.string_at(a + n, 1), b"\x00")

    def test_verify_transfer(self):
        n = (2 << 20) + 5
        a, b = self.alloc(n), self.alloc(n)
        nixl_utils.ba_buf(a, n)
        nixl_utils.ba_buf(b, n)
        self.assertIs(nixl_utils.verify_transfer(a, b, n), True)
        self.assertIs(nixl_utils.verify_transfer(a, b, 0), True)
        # A difference in the second chunk: False, and one ERROR line naming the offset.
        ctypes.memset(b + (1 << 20) + 7, 0x01, 1)
        with self.assertLogs("nixl", level="ERROR") as cm:
            self.assertIs(nixl_utils.verify_transfer(a, b, n), False)
        self.assertEqual(len(cm.output), 1)
        self.assertIn(f"byte {(1 << 20) + 7} of {n}", cm.output[0])
        # The ranges before the difference still match.
        self.assertIs(nixl_utils.verify_transfer(a, b, (1 << 20) + 7), True)

    def test_free(self):
        a = nixl_utils.malloc_passthru(64)
        nixl_utils.free_passthru(a)
        with self.assertRaises(ValueError):
            nixl_utils.free_passthru(a)           # twice
        with self.assertRaises(ValueError):
            nixl_utils.free_passthru(self.alloc(64) + 8)   # not what malloc_passthru gave
        nixl_utils.free_passthru(0)               # free(NULL)

    def test_bad_arguments_raise(self):
        a = self.alloc(64)
        for call in (lambda: nixl_utils.malloc_passthru("64"),
                     lambda: nixl_utils.malloc_passthru(1.5),
                     lambda: nixl_utils.free_passthru(None),
                     lambda: nixl_utils.ba_buf(a, "8"),
                     lambda: nixl_utils.verify_transfer(a, str(a), 8)):
            with self.assertRaises(TypeError):
                call()
        for call in (lambda: nixl_utils.malloc_passthru(-1),
                     lambda: nixl_utils.ba_buf(a, -1),
                     lambda: nixl_utils.ba_buf(-4096, 8),
                     lambda: nixl_utils.ba_buf(0, 8),
                     lambda: nixl_utils.ba_buf((1 << 64) - 4, 8),
                     lambda: nixl_utils.verify_transfer(a, a, -1)):
            with self.assertRaises(ValueError):
                call()
        with self.assertRaises(MemoryError):
            nixl_utils.malloc_passthru(1 << 62)

    def test_inaccessible_memory_raises_instead_of_crashing(self):
        a = self.alloc(64)
        none, ro, edge = Pages(1, PROT_NONE), Pages(1, PROT_READ), Pages(2, PROT_RW)
        self.addCleanup(none.close)
        self.addCleanup(ro.close)
        self.addCleanup(edge.close)
        edge.protect(1, PROT_NONE)      # a range that runs off its first page into nothing
        for call in (lambda: nixl_utils.ba_buf(none.addr, 8),
                     lambda: nixl_utils.ba_buf(ro.addr, 8),
                     lambda: nixl_utils.ba_buf(edge.addr + mmap.PAGESIZE - 8, 16),
                     lambda: nixl_utils.verify_transfer(a, none.addr, 8),
                     lambda: nixl_utils.verify_transfer(none.addr, a, 8),
                     lambda: nixl_utils.verify_transfer(edge.addr, edge.addr, mmap.PAGESIZE + 1),
                     lambda: nixl_utils.ba_buf(16, 8)):
            with self.assertRaises(ValueError):
                call()
        # Readable memory compares (fresh anonymous pages are zero); the accessible part of a
        # range is usable.
        z = self.alloc(64)
        ctypes.memset(z, 0, 64)
        self.assertIs(nixl_utils.verify_transfer(ro.addr, z, 64), True)
        nixl_utils.ba_buf(edge.addr, mmap.PAGESIZE)
        self.assertEqual(ctypes.string_at(edge.addr + mmap.PAGESIZE - 4, 4), b"\xba" * 4)

    def test_threads(self):
        # The allocation table is shared: threads allocating, filling, comparing and freeing at
        # once lose no allocation and free none twice.
        errors = []

        def work():
            try:
                for i in range(200):
                    n = 1 + (i * 977) % 20000
                    a, b = nixl_utils.malloc_passthru(n), nixl_utils.malloc_passthru(n)
                    nixl_utils.ba_buf(a, n)
                    nixl_utils.ba_buf(b, n)
                    if not nixl_utils.verify_transfer(a, b, n):
                        errors.append(f"{n} bytes differ")
                    nixl_utils.free_passthru(b)
                    nixl_utils.free_passthru(a)
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(DEADLINE_S)
        self.assertFalse(any(t.is_alive() for t in threads))
        self.assertEqual(errors, [])

    def test_plain_copies_when_the_kernel_refuses(self):
        # Where process_vm_* is refused (seccomp), the helpers fall back to plain copies.
        saved = nixl_utils._vm_usable
        nixl_utils._vm_usable = False
        try:
            a, b = self.alloc(5000), self.alloc(5000)
            nixl_utils.ba_buf(a, 5000)
            ctypes.memset(b, 0, 5000)
            self.assertFalse(nixl_utils.verify_transfer(a, b, 5000))
            nixl_utils.ba_buf(b, 5000)
            self.assertTrue(nixl_utils.verify_transfer(a, b, 5000))
            self.assertEqual(ctypes.string_at(b, 5000), b"\xba" * 5000)
        finally:
            nixl_utils._vm_usable = saved


# ---- two peers, as NIXL's examples/python/basic_two_peers.py -------------------------------

IP = "127.0.0.1"
ROWS, ROW = 10, 64          # NIXL's example moves 10 rows of 16 float32
SIZE = ROWS * ROW


def initiator(port):
    """The initiator of NIXL's basic example: listener on a port the OS picks, fetches the
    target's metadata, sends its own, READs the rows the target described, says Done_reading."""
    config = nixl_agent_config(True, True, 0)
    agent = nixl_agent("initiator", config)
    addr = nixl_utils.malloc_passthru(SIZE)
    ref = nixl_utils.malloc_passthru(SIZE)
    ctypes.memset(addr, 0, SIZE)
    nixl_utils.ba_buf(ref, SIZE)             # what the target's buffer holds
    reg_descs = agent.register_memory([(addr, SIZE, 0, "")], "DRAM")
    if not reg_descs:
        return "registration failed"
    if nixl_utils.verify_transfer(addr, ref, SIZE):
        return "buffers equal before the transfer"

    agent.fetch_remote_metadata("target", IP, port)
    agent.send_local_metadata(IP, port)
    notifs = poll(lambda: agent.get_new_notifs(), "the target's descriptors")
    target_descs = agent.deserialize_descs(notifs["target"][0])
    initiator_descs = agent.get_xfer_descs([(addr + i * ROW, ROW, 0) for i in range(ROWS)],
                                           "DRAM")
    poll(lambda: agent.check_remote_metadata("target"), "the target's metadata")

    xfer_handle = agent.initialize_xfer("READ", initiator_descs, target_descs, "target",
                                        "Done_reading")
    if agent.transfer(xfer_handle) == "ERR":
        return "posting failed"
    poll(lambda: agent.check_xfer_state(xfer_handle) == "DONE", "the READ")
    ok = nixl_utils.verify_transfer(addr, ref, SIZE)

    agent.remove_remote_agent("target")
    agent.release_xfer_handle(xfer_handle)
    agent.invalidate_local_metadata(IP, port)
    agent.deregister_memory(reg_descs)
    nixl_utils.free_passthru(addr)
    nixl_utils.free_passthru(ref)
    return "VERIFIED" if ok else "data differs after the READ"


def listening_target():
    """The target's agent with its listener on a free port (retried if taken meanwhile)."""
    import socket
    for _ in range(5):
        with socket.socket() as s:
            s.bind((IP, 0))
            port = s.getsockname()[1]
        try:
            return nixl_agent("target", nixl_agent_config(True, True, port)), port
        except Exception as e:  # noqa: BLE001 (the port was taken meanwhile: pick another)
            last = e
    raise AssertionError(f"no free port for the target's listener: {last}")


@unittest.skipUnless(plugin_present("UCX"), "needs the UCX plugin (NIXL's default backend)")
class TwoPeersTest(unittest.TestCase):
    def test_basic_two_peers(self):
        agent, port = listening_target()
        addr = nixl_utils.malloc_passthru(SIZE)
        nixl_utils.ba_buf(addr, SIZE)
        reg_descs = agent.register_memory([(addr, SIZE, 0, "")], "DRAM")
        target_descs = agent.get_xfer_descs([(addr + i * ROW, ROW, 0) for i in range(ROWS)],
                                            "DRAM")
        child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--initiator",
                                  str(port)], stdout=subprocess.PIPE, text=True)
        try:
            def alive(cond):
                def f():
                    if child.poll() is not None:
                        raise AssertionError(f"the initiator exited early ({child.returncode})")
                    return cond()
                return f
            poll(alive(lambda: agent.check_remote_metadata("initiator")),
                 "the initiator's metadata")
            agent.send_notif("initiator", agent.get_serialized_descs(target_descs))
            poll(alive(lambda: agent.check_remote_xfer_done("initiator", b"Done_reading")),
                 "Done_reading")
            out, _ = child.communicate(timeout=DEADLINE_S)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        self.assertEqual(child.returncode, 0)
        self.assertEqual(out.strip().splitlines()[-1], "initiator: VERIFIED")
        # A READ leaves the target's rows as they were.
        ref = nixl_utils.malloc_passthru(SIZE)
        nixl_utils.ba_buf(ref, SIZE)
        self.assertTrue(nixl_utils.verify_transfer(addr, ref, SIZE))
        agent.deregister_memory(reg_descs)
        nixl_utils.free_passthru(ref)
        nixl_utils.free_passthru(addr)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--initiator":
        result = initiator(int(sys.argv[2]))
        print(f"initiator: {result}", flush=True)
        sys.exit(0 if result == "VERIFIED" else 1)
    unittest.main()
