# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Files through nixl._api and the POSIX backend, as NIXL programs call it: FILE registrations
from (offset, length, fd, meta) tuples in fd mode and in path mode (meta "rw:<path>"), FILE
transfer lists from (offset, length, fd) tuples, the agent's own name as the remote agent;
write from memory, read back into other memory, every byte checked; query_memory on paths."""

import os
import tempfile
import unittest

import numpy as np

from nixl._api import nixl_agent, nixl_agent_config

from nixl_test_util import plugin_present, unique, wait_done

BLOCK = 4096
BLOCKS = 64
SIZE = BLOCK * BLOCKS


@unittest.skipUnless(plugin_present("POSIX"), "libplugin_POSIX.so is not in this build")
class PosixFile(unittest.TestCase):
    def setUp(self):
        # An agent with POSIX only, as NIXL's storage examples make it.
        self.agent = nixl_agent(unique("posix"), nixl_agent_config(backends=[]))
        self.agent.create_backend("POSIX")
        self.dir = tempfile.TemporaryDirectory(prefix="nixl-py-posix-")
        self.path = os.path.join(self.dir.name, "kv.bin")
        self.src = np.random.default_rng(7).integers(0, 255, SIZE, dtype=np.uint8)
        self.dst = np.zeros(SIZE, dtype=np.uint8)
        self.mem = self.agent.register_memory(
            [(self.src.ctypes.data, SIZE, 0, ""), (self.dst.ctypes.data, SIZE, 0, "")], "DRAM")

    def tearDown(self):
        self.agent.deregister_memory(self.mem)
        self.dir.cleanup()

    def _move(self, op, mem_base, dev):
        """One request of BLOCKS descriptors: memory block i <-> file offset of block
        BLOCKS-1-i (reversed, so a mix-up of elements shows)."""
        mem = self.agent.get_xfer_descs(
            [(mem_base + i * BLOCK, BLOCK, 0) for i in range(BLOCKS)], "DRAM")
        fil = self.agent.get_xfer_descs(
            [((BLOCKS - 1 - i) * BLOCK, BLOCK, dev) for i in range(BLOCKS)], "FILE")
        h = self.agent.initialize_xfer(op, mem, fil, self.agent.name)
        self.assertIn(self.agent.transfer(h), ("DONE", "PROC"))
        wait_done(self.agent, h, op)
        self.agent.release_xfer_handle(h)

    def _round_trip(self, dev, fd_to_check):
        self._move("WRITE", self.src.ctypes.data, dev)
        on_disk = np.frombuffer(os.pread(fd_to_check, SIZE, 0), dtype=np.uint8)
        want = self.src.reshape(BLOCKS, BLOCK)[::-1].reshape(SIZE)
        self.assertTrue(np.array_equal(on_disk, want), "the file after WRITE")
        self._move("READ", self.dst.ctypes.data, dev)
        self.assertTrue(np.array_equal(self.dst, self.src), "memory after READ")

    def test_fd_mode(self):
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            reg = self.agent.register_memory([(0, SIZE, fd, "")], "FILE")
            self._round_trip(fd, fd)
            self.agent.deregister_memory(reg)
        finally:
            os.close(fd)

    def test_path_mode(self):
        key = 1 << 20  # only the registration's key: transfer descriptors repeat it
        reg = self.agent.register_memory([(0, SIZE, key, "rw,create:" + self.path)], "FILE")
        fd = os.open(self.path, os.O_RDONLY)
        try:
            self._round_trip(key, fd)
        finally:
            os.close(fd)
        self.agent.deregister_memory(reg)
        # The backend closed its fd at deregistration; the file stays.
        self.assertEqual(os.path.getsize(self.path), SIZE)

    def test_query_memory(self):
        with open(self.path, "wb") as f:
            f.write(b"x" * 1000)
        missing = os.path.join(self.dir.name, "missing.bin")
        got = self.agent.query_memory(
            [(0, 0, 0, self.path), (0, 0, 0, missing)], "POSIX", "FILE")
        self.assertEqual(len(got), 2)
        self.assertIsNotNone(got[0])
        self.assertEqual(int(got[0]["size"]), 1000)
        self.assertIsNone(got[1])

    def test_bad_path_mode_raises(self):
        with self.assertRaises(Exception):
            self.agent.register_memory([(0, SIZE, 5, "rw,bogus:" + self.path)], "FILE")


if __name__ == "__main__":
    unittest.main()
