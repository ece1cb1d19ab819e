# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Two processes over UCX (and LIBFABRIC when its plugin is built): metadata over the child's
stdin/stdout, a READ and a WRITE with notifications, both sides verify the data.

The test re-runs this file as the peer (``--peer BACKEND``). The peer registers a buffer with a
known pattern, prints its metadata and address, loads ours, waits for our "wrote" notification,
checks the bytes we wrote and answers "verified" (or "mismatch ...") by notification."""

import base64
import json
import os
import subprocess
import sys
import unittest

import numpy as np

from nixl_test_util import DEADLINE_S, plugin_present, poll, unique, wait_done

N = 1 << 20


def pattern(seed):
    return np.random.default_rng(seed).integers(0, 256, N, dtype=np.uint8)


def peer(backend):
    from nixl._api import nixl_agent, nixl_agent_config
    agent = nixl_agent(unique("peer"), nixl_agent_config(backends=[backend]))
    buf = pattern(1)
    reg = agent.register_memory([(buf.ctypes.data, N, 0, "")], "DRAM")
    print("HELLO " + json.dumps({"md": base64.b64encode(agent.get_agent_metadata()).decode(),
                      "addr": buf.ctypes.data}), flush=True)
    parent = agent.add_remote_agent(base64.b64decode(sys.stdin.readline()))
    print("READY", flush=True)
    poll(lambda: agent.check_remote_xfer_done(parent, b"read"), "read notification")
    poll(lambda: agent.check_remote_xfer_done(parent, b"wrote"), "wrote notification")
    want = pattern(2)
    if np.array_equal(buf, want):
        agent.send_notif(parent, b"verified")
    else:
        bad = int(np.flatnonzero(buf != want)[0])
        agent.send_notif(parent, f"mismatch at {bad}".encode())
    sys.stdin.read()          # the parent closes stdin once it has our answer
    agent.remove_remote_agent(parent)
    agent.deregister_memory(reg)
    return 0


class TwoProcess(unittest.TestCase):
    def read_marker(self, child, marker):
        # The peer's stdout also carries the nixl logger's lines: find ours.
        while True:
            line = child.stdout.readline()
            if not line:
                self.fail(f"the peer exited before printing {marker!r}")
            if line.startswith(marker):
                return line

    def run_pair(self, backend):
        from nixl._api import nixl_agent, nixl_agent_config
        child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--peer", backend],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            agent = nixl_agent(unique("init"), nixl_agent_config(backends=[backend]))
            mine = np.zeros(N, dtype=np.uint8)
            reg = agent.register_memory([(mine.ctypes.data, N, 0, "")], "DRAM")
            hello = json.loads(self.read_marker(child, "HELLO ")[len("HELLO "):])
            name = agent.add_remote_agent(base64.b64decode(hello["md"]))
            child.stdin.write(base64.b64encode(agent.get_agent_metadata()).decode() + "\n")
            child.stdin.flush()
            self.read_marker(child, "READY")    # the peer knows us: notifications have a home
            local = agent.get_xfer_descs([(mine.ctypes.data, N, 0)], "DRAM")
            remote = agent.get_xfer_descs([(hello["addr"], N, 0)], "DRAM")
            h = agent.initialize_xfer("READ", local, remote, name, b"read")
            agent.transfer(h)
            wait_done(agent, h, "READ")
            np.testing.assert_array_equal(mine, pattern(1))
            mine[:] = pattern(2)
            h2 = agent.initialize_xfer("WRITE", local, remote, name, b"wrote")
            agent.transfer(h2)
            wait_done(agent, h2, "WRITE")
            answer = poll(lambda: agent.get_new_notifs().get(name.decode()), "peer's answer")
            self.assertEqual(answer, [b"verified"])
            h.release()
            h2.release()
            agent.remove_remote_agent(name)
            agent.deregister_memory(reg)
        finally:
            child.stdin.close()
            rc = child.wait(timeout=DEADLINE_S)
        self.assertEqual(rc, 0)

    def test_ucx(self):
        self.run_pair("UCX")

    @unittest.skipUnless(plugin_present("LIBFABRIC"), "the LIBFABRIC plugin is not built")
    def test_libfabric(self):
        self.run_pair("LIBFABRIC")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--peer":
        sys.exit(peer(sys.argv[2]))
    unittest.main()
