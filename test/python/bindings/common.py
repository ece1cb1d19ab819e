# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the nixl._bindings tests: byte buffers with stable addresses and a pair
of agents over UCX in this process."""

import ctypes

import nixl._bindings as b


class Buffer:
    """n bytes that stay at one address while the object lives."""

    def __init__(self, n, fill=0):
        self.n = n
        self.raw = (ctypes.c_char * n)()
        ctypes.memset(self.raw, fill, n)
        self.addr = ctypes.addressof(self.raw)

    def bytes(self, off=0, n=None):
        n = self.n - off if n is None else n
        return ctypes.string_at(self.addr + off, n)

    def fill(self, value, off=0, n=None):
        n = self.n - off if n is None else n
        ctypes.memset(self.addr + off, value, n)


def make_agent(name, capture_telemetry=False, sync_mode=None, prog_thread=False):
    """An agent with a UCX backend. A target that does not poll needs prog_thread: without
    one, UCX's software RMA (tcp, large messages) waits for the target to progress."""
    cfg = b.nixlAgentConfig()
    cfg.useProgThread = prog_thread
    cfg.captureTelemetry = capture_telemetry
    if sync_mode is not None:
        cfg.syncMode = sync_mode
    agent = b.nixlAgent(name, cfg)
    backend = agent.createBackend("UCX", {})
    return agent, backend


def connect(initiator, target):
    """Loads the target's metadata into the initiator (and back); returns the target's name."""
    name = initiator.loadRemoteMD(target.getLocalMD())
    target.loadRemoteMD(initiator.getLocalMD())
    return name


def wait_done(agent, req):
    st = agent.getXferStatus(req)
    while st == b.NIXL_IN_PROG:
        st = agent.getXferStatus(req)
    return st


def wait_notifs(agent, count):
    """Polls until count messages arrived in total; returns {name: [bytes]}."""
    got = {}
    while sum(len(v) for v in got.values()) < count:
        got = agent.getNotifs(got)
    return got
