# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Telemetry and tracing from Python, through the same variables as C++: capture_telemetry /
NIXL_TELEMETRY_ENABLE give get_xfer_telemetry its fields (=no overrides capture_telemetry);
NIXL_TRACE_BACKENDS=chrome with NIXL_TRACE_DIR writes a valid JSON trace. Each case runs in a
child interpreter, since the variables are read by the library in that process."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from nixl_test_util import DEADLINE_S, plugin_present

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from nixl_test_util import agent_pair, exchange, wait_done
import nixl._bindings as nb
capture = sys.argv[2] == "1"
a, b = agent_pair(capture_telemetry=capture)
src = np.full(1 << 16, 3, dtype=np.uint8); dst = np.zeros_like(src)
a.register_memory([(src.ctypes.data, src.nbytes, 0, "")], "DRAM")
b.register_memory([(dst.ctypes.data, dst.nbytes, 0, "")], "DRAM")
nbn, _ = exchange(a, b)
before = time.monotonic() * 1e6
h = a.initialize_xfer("WRITE", a.get_xfer_descs([(src.ctypes.data, 4096, 0),
                                                  (src.ctypes.data + 8192, 4096, 0)], "DRAM"),
                      a.get_xfer_descs([(dst.ctypes.data, 4096, 0),
                                        (dst.ctypes.data + 8192, 4096, 0)], "DRAM"), nbn)
a.transfer(h)
wait_done(a, h)
out = {"ok": bool((dst[:4096] == 3).all())}
try:
    t = a.get_xfer_telemetry(h)
    out.update(startTime=t.startTime, postDuration=t.postDuration, xferDuration=t.xferDuration,
               totalBytes=t.totalBytes, descCount=t.descCount, before=before,
               after=time.monotonic() * 1e6)
except nb.nixlNoTelemetryError:
    out["no_telemetry"] = True
h.release()
del h, a, b
print(json.dumps(out))
"""


def run(env_extra, capture):
    env = dict(os.environ)
    for k in ("NIXL_TELEMETRY_ENABLE", "NIXL_TRACE_BACKENDS", "NIXL_TRACE_DIR"):
        env.pop(k, None)
    env.update(env_extra)
    p = subprocess.run([sys.executable, "-c", SCRIPT, HERE, "1" if capture else "0"], env=env,
                       capture_output=True, text=True, timeout=DEADLINE_S)
    if p.returncode != 0:
        raise AssertionError(f"child failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


class Telemetry(unittest.TestCase):
    def check_fields(self, out):
        self.assertTrue(out["ok"])
        self.assertNotIn("no_telemetry", out)
        self.assertEqual(out["totalBytes"], 8192)
        self.assertEqual(out["descCount"], 2)
        self.assertGreaterEqual(out["postDuration"], 0)
        self.assertGreaterEqual(out["xferDuration"], out["postDuration"])
        # startTime is the steady clock's microseconds (CLOCK_MONOTONIC, as time.monotonic())
        self.assertGreaterEqual(out["startTime"], int(out["before"]) - 1_000_000)
        self.assertLessEqual(out["startTime"], int(out["after"]) + 1_000_000)

    def test_capture_telemetry(self):
        self.check_fields(run({}, capture=True))

    def test_env_enables(self):
        self.check_fields(run({"NIXL_TELEMETRY_ENABLE": "y"}, capture=False))

    def test_off(self):
        self.assertTrue(run({}, capture=False).get("no_telemetry"))
        self.assertTrue(run({"NIXL_TELEMETRY_ENABLE": "no"}, capture=True).get("no_telemetry"))


@unittest.skipUnless(plugin_present("UCX") and os.path.exists(
    os.path.join(os.environ.get("NIXL_PLUGIN_DIR", ""), "libtrace_backend_chrome.so")),
    "the chrome trace plugin is not built")
class Trace(unittest.TestCase):
    def test_chrome_trace(self):
        with tempfile.TemporaryDirectory() as d:
            tdir = os.path.join(d, "traces")
            out = run({"NIXL_TRACE_BACKENDS": "chrome", "NIXL_TRACE_DIR": tdir}, capture=False)
            self.assertTrue(out["ok"])
            files = [f for f in os.listdir(tdir) if f.startswith("nixl-trace-")]
            self.assertEqual(len(files), 1, files)
            with open(os.path.join(tdir, files[0])) as f:
                doc = json.load(f)
            events = doc["traceEvents"] if isinstance(doc, dict) else doc
            names = {e.get("name") for e in events}
            self.assertTrue(any(n and n.startswith("nixl::postXferReq") for n in names), names)
            self.assertTrue(any(e.get("ph") == "X" for e in events))


if __name__ == "__main__":
    unittest.main()
