# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the nixl._api tests: bounded polling, agent pairs, plugin presence."""

import os
import time
import uuid

DEADLINE_S = float(os.environ.get("NIXL_PY_TEST_DEADLINE", "60"))


def poll(cond, what, timeout=DEADLINE_S):
    """Call cond() until it returns a true value (returned); AssertionError after timeout.
    The short sleep only yields the core (2-core CI); the condition is what synchronises."""
    deadline = time.monotonic() + timeout
    while True:
        r = cond()
        if r:
            return r
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.0002)


def wait_done(agent, handle, what="transfer"):
    """Poll check_xfer_state until DONE; "ERR" fails at once."""
    def cond():
        s = agent.check_xfer_state(handle)
        if s == "ERR":
            raise AssertionError(f"{what}: state ERR")
        return s == "DONE"
    poll(cond, what)


def wait_notif(agent, peer, tag):
    """Poll check_remote_xfer_done(peer, tag) until it consumes a match."""
    poll(lambda: agent.check_remote_xfer_done(peer, tag), f"notification {tag!r} from {peer}")


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def plugin_present(name):
    d = os.environ.get("NIXL_PLUGIN_DIR", "")
    return bool(d) and os.path.exists(os.path.join(d, f"libplugin_{name}.so"))


def torch_or_none():
    try:
        import torch  # noqa: F401
        return torch
    except Exception:  # noqa: BLE001 (any import failure means: no torch here)
        return None


def agent_pair(backend="UCX", **conf):
    """Two agents of this process that know each other's metadata."""
    from nixl._api import nixl_agent, nixl_agent_config
    a = nixl_agent(unique("A"), nixl_agent_config(backends=[backend], **conf))
    b = nixl_agent(unique("B"), nixl_agent_config(backends=[backend], **conf))
    return a, b


def exchange(a, b):
    """Load each agent's current metadata into the other; returns the names as bytes."""
    nb = a.add_remote_agent(b.get_agent_metadata())
    na = b.add_remote_agent(a.get_agent_metadata())
    return nb, na
