#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Two processes move data with nixl._api over UCX, meeting through the P2P metadata listener.

The parent is agent "initiator": it listens for metadata on 127.0.0.1 (enable_listen_thread) at
a free port and starts the child, agent "target", with that port. The target:
  1. fetch_remote_metadata("initiator", ip, port) and send_local_metadata(ip, port): both agents
     now know each other (check_remote_metadata polls for it);
  2. sends the initiator the descriptors of its 1 MiB buffer as a notification
     (get_serialized_descs: a pickled nixlXferDList);
  3. waits for the notification of the initiator's WRITE, checks every byte and answers
     "verified";
  4. invalidate_local_metadata makes the initiator forget it; it exits.
After "verified" the initiator READs the target's buffer into a second buffer and checks it
again, then says "bye". Exit status 0 when every byte arrived intact on both sides.

Run from the build tree:
    PYTHONPATH=build/src/bindings/python NIXL_PLUGIN_DIR=build/src/plugins \
        /usr/bin/python3 examples/python/two_peers.py
"""

import socket
import subprocess
import sys
import time

import numpy as np

from nixl._api import nixl_agent, nixl_agent_config

SIZE = 1 << 20
TIMEOUT_S = 60.0


def wait_for(cond, what):
    deadline = time.monotonic() + TIMEOUT_S
    while not (r := cond()):
        if time.monotonic() > deadline:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.0005)
    return r


def done(agent, h):
    return lambda: agent.check_xfer_state(h) == "DONE"


def free_port():
    # Someone may take the port before the agent binds it: the caller retries.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pattern():
    return (np.arange(SIZE, dtype=np.uint32) * 2654435761 >> 13).astype(np.uint8)


def target(port):
    agent = nixl_agent("target", nixl_agent_config(backends=["UCX"]))
    buf = np.zeros(SIZE, dtype=np.uint8)
    reg = agent.register_memory([(buf.ctypes.data, SIZE, 0, "")], "DRAM")
    agent.fetch_remote_metadata("initiator", "127.0.0.1", port)
    agent.send_local_metadata("127.0.0.1", port)
    wait_for(lambda: agent.check_remote_metadata("initiator"), "the initiator's metadata")
    descs = agent.get_xfer_descs([(buf.ctypes.data, SIZE, 0)], "DRAM")
    agent.send_notif("initiator", agent.get_serialized_descs(descs))
    wait_for(lambda: agent.check_remote_xfer_done("initiator", b"written"), "the WRITE")
    ok = np.array_equal(buf, pattern())
    agent.send_notif("initiator", b"verified" if ok else b"corrupt")
    wait_for(lambda: agent.check_remote_xfer_done("initiator", b"bye"), "the initiator's bye")
    agent.invalidate_local_metadata("127.0.0.1", port)
    agent.deregister_memory(reg)
    print(f"target: {'verified' if ok else 'CORRUPT'} {SIZE} bytes", flush=True)
    return 0 if ok else 1


def initiator():
    for _ in range(5):
        port = free_port()
        try:
            agent = nixl_agent("initiator", nixl_agent_config(True, True, port, backends=["UCX"]))
            break
        except Exception as e:  # noqa: BLE001 (the port was taken meanwhile: pick another)
            print(f"initiator: port {port}: {e}; retrying", flush=True)
    else:
        sys.exit("initiator: no free port")
    src, back = pattern(), np.zeros(SIZE, dtype=np.uint8)
    reg = agent.register_memory([(src.ctypes.data, SIZE, 0, ""), (back.ctypes.data, SIZE, 0, "")],
                                "DRAM")
    child = subprocess.Popen([sys.executable, __file__, "--target", str(port)])
    try:
        msgs = wait_for(lambda: agent.update_notifs().get("target"), "the target's descriptors")
        remote = agent.deserialize_descs(msgs.pop(0))
        # The target's send_local_metadata is asynchronous: its notification can arrive first.
        wait_for(lambda: agent.check_remote_metadata("target", remote), "the target's metadata")
        h = agent.initialize_xfer("WRITE", agent.get_xfer_descs([(src.ctypes.data, SIZE, 0)], "DRAM"),
                                  remote, "target", b"written")
        agent.transfer(h)
        wait_for(done(agent, h), "the WRITE to complete")
        wait_for(lambda: agent.update_notifs().get("target"), "the target's answer")
        answer = agent.notifs["target"].pop(0)
        h2 = agent.initialize_xfer("READ", agent.get_xfer_descs([(back.ctypes.data, SIZE, 0)], "DRAM"),
                                   remote, "target")
        agent.transfer(h2)
        wait_for(done(agent, h2), "the READ to complete")
        agent.send_notif("target", b"bye")
        h.release()
        h2.release()
        rc = child.wait(timeout=TIMEOUT_S)
    finally:
        if child.poll() is None:
            child.kill()
    ok = answer == b"verified" and np.array_equal(back, src) and rc == 0
    agent.deregister_memory(reg)
    print(f"initiator: WRITE {answer.decode()} by the target, READ back "
          f"{'verified' if np.array_equal(back, src) else 'CORRUPT'}, target exit {rc}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--target":
        sys.exit(target(int(sys.argv[2])))
    sys.exit(initiator())
