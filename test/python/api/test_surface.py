# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""nixl._api surface: module contents, nixl_agent_config, nixl_agent construction, backends,
descriptor building (every accepted input and the documented None/exception cases)."""

import inspect
import logging
import os
import subprocess
import sys
import unittest

import numpy as np

import nixl
import nixl._api as api
import nixl._bindings as nb
from nixl._api import nixl_agent, nixl_agent_config, nixl_thread_sync_t
from nixl._bindings import nixlXferTelemetry  # noqa: F401 (vLLM's import must work)

from nixl_test_util import torch_or_none, unique

torch = torch_or_none()


class ModuleTest(unittest.TestCase):
    def test_all_and_constants(self):
        self.assertEqual(sorted(api.__all__), sorted([
            "DEFAULT_COMM_PORT", "nixl_agent", "nixl_agent_config", "nixl_backend_handle",
            "nixl_prepped_dlist_handle", "nixl_thread_sync_t", "nixl_xfer_handle"]))
        for n in api.__all__:
            self.assertTrue(hasattr(api, n), n)
        self.assertEqual(api.DEFAULT_COMM_PORT, 8888)
        self.assertIs(api.nixl_backend_handle, int)
        self.assertFalse(hasattr(nixl, "__version__"))
        self.assertFalse(hasattr(api, "__version__"))

    def test_api_does_not_import_torch(self):
        out = subprocess.run(
            [sys.executable, "-c", "import sys, nixl._api; print('torch' in sys.modules)"],
            capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.strip().splitlines()[-1], "False")
        out = subprocess.run(
            [sys.executable, "-c", "import sys, nixl; "
             "print('numpy' in sys.modules, 'nixl._bindings' in sys.modules)"],
            capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.strip(), "False False")

    def test_sync_enum(self):
        # NIXL's names; DEFAULT aliases NONE. test_nixl_compat.py checks the values.
        self.assertEqual([m.name for m in nixl_thread_sync_t], [
            "NIXL_THREAD_SYNC_NONE", "NIXL_THREAD_SYNC_STRICT", "NIXL_THREAD_SYNC_RW"])
        self.assertIs(nixl_thread_sync_t.NIXL_THREAD_SYNC_DEFAULT,
                      nixl_thread_sync_t.NIXL_THREAD_SYNC_NONE)

    def test_logger(self):
        lg = logging.getLogger("nixl")
        self.assertFalse(lg.propagate)
        self.assertTrue(any(getattr(h, "stream", None) is sys.stdout for h in lg.handlers))
        code = ("import logging, nixl._api; l = logging.getLogger('nixl'); "
                "print(l.level, logging.raiseExceptions)")
        for lvl, dbg, want in (("ERROR", "no", f"{logging.ERROR} False"),
                               ("DEBUG", "yes", f"{logging.DEBUG} True"),
                               ("", None, f"{logging.INFO} True")):
            env = dict(os.environ, NIXL_LOG_LEVEL=lvl)
            env.pop("NIXL_DEBUG_LOGGING", None)
            if dbg is not None:
                env["NIXL_DEBUG_LOGGING"] = dbg
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True)
            self.assertEqual(out.stdout.strip().splitlines()[-1], want)


# Every nixl_agent method with its argument names and defaults (keyword callers depend on them).
SIGNATURES = {
    "__init__": "(self, agent_name, nixl_conf=None, instantiate_all=False)",
    "get_plugin_list": "(self)",
    "get_plugin_mem_types": "(self, backend)",
    "get_plugin_params": "(self, backend)",
    "get_backend_mem_types": "(self, backend)",
    "get_backend_params": "(self, backend)",
    "create_backend": "(self, backend, initParams={})",
    "get_reg_descs": "(self, descs, mem_type=None)",
    "get_xfer_descs": "(self, descs, mem_type=None)",
    "get_remote_descs": "(self, descs, mem_type=None)",
    "register_memory": "(self, reg_list, mem_type=None, backends=[])",
    "deregister_memory": "(self, dereg_list, backends=[])",
    "query_memory": "(self, reg_list, backend, mem_type=None)",
    "get_agent_metadata": "(self)",
    "get_partial_agent_metadata": "(self, descs, inc_conn_info=False, backends=[])",
    "add_remote_agent": "(self, metadata)",
    "remove_remote_agent": "(self, agent)",
    "send_local_metadata": "(self, ip_addr='', port=8888)",
    "send_partial_agent_metadata": "(self, descs, inc_conn_info=False, backends=[], "
                                   "ip_addr='', port=8888, label='')",
    "fetch_remote_metadata": "(self, remote_agent, ip_addr='', port=8888, label='')",
    "invalidate_local_metadata": "(self, ip_addr='', port=8888)",
    "check_remote_metadata": "(self, agent, descs=None)",
    "make_connection": "(self, remote_agent, backends=[])",
    "prep_xfer_dlist": "(self, agent_name, xfer_list, mem_type=None, backends=[])",
    "make_prepped_xfer": "(self, operation, local_xfer_side, local_indices, remote_xfer_side, "
                         "remote_indices, notif_msg=b'', backends=[], skip_desc_merge=False)",
    "initialize_xfer": "(self, operation, local_descs, remote_descs, remote_agent, "
                       "notif_msg=b'', backends=[])",
    "transfer": "(self, handle, notif_msg=b'')",
    "check_xfer_state": "(self, handle)",
    "get_xfer_telemetry": "(self, handle)",
    "estimate_xfer_cost": "(self, req_handle)",
    "query_xfer_backend": "(self, handle)",
    "release_xfer_handle": "(self, handle)",
    "release_dlist_handle": "(self, handle)",
    "get_new_notifs": "(self, backends=[])",
    "update_notifs": "(self, backends=[])",
    "check_remote_xfer_done": "(self, remote_agent_name, lookup_tag, backends=[], "
                              "tag_is_prefix=True)",
    "send_notif": "(self, remote_agent_name, notif_msg, backend=None)",
    "get_serialized_descs": "(self, descs)",
    "deserialize_descs": "(self, serialized_descs)",
    "prep_mem_view": "(self, dlist, *, backends=None)",
    "release_mem_view": "(self, mvh)",
}


class SignatureTest(unittest.TestCase):
    @staticmethod
    def plain(fn):
        sig = inspect.signature(fn)
        return str(sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty)
                                           for p in sig.parameters.values()],
                               return_annotation=inspect.Signature.empty))

    def test_agent_methods(self):
        for name, want in SIGNATURES.items():
            self.assertEqual(self.plain(getattr(nixl_agent, name)), want, name)

    def test_config(self):
        self.assertEqual(self.plain(nixl_agent_config.__init__),
                         "(self, enable_prog_thread=True, enable_listen_thread=False, "
                         "listen_port=8888, capture_telemetry=False, num_threads=0, "
                         "backends=['UCX'], sync_mode=None)")


class ConfigTest(unittest.TestCase):
    def test_defaults(self):
        c = nixl_agent_config()
        self.assertEqual((c.enable_pthread, c.enable_listen, c.port, c.capture_telemetry,
                          c.num_threads, c.backends, c.sync_mode),
                         (True, False, 8888, False, 0, ["UCX"], None))

    def test_positional(self):
        rw = nixl_thread_sync_t.NIXL_THREAD_SYNC_RW
        c = nixl_agent_config(False, True, 0, True, 4, ["TEST"], rw)
        self.assertEqual((c.enable_pthread, c.enable_listen, c.port, c.capture_telemetry,
                          c.num_threads, c.backends, c.sync_mode),
                         (False, True, 0, True, 4, ["TEST"], rw))

    def test_sync_mode_type(self):
        for bad in ("STRICT", 1, nb.NIXL_THREAD_SYNC_STRICT):
            with self.assertRaises(TypeError):
                nixl_agent_config(sync_mode=bad)
        for m in nixl_thread_sync_t:
            self.assertIs(nixl_agent_config(sync_mode=m).sync_mode, m)


class AgentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a = nixl_agent(unique("surface"), nixl_agent_config(backends=["UCX"]))

    def test_attributes(self):
        a = self.a
        self.assertIsInstance(a.agent, nb.nixlAgent)
        self.assertEqual(list(a.backends), ["UCX"])
        self.assertIsInstance(a.backends["UCX"], int)
        self.assertEqual(a.notifs, {})
        self.assertIn("UCX", a.plugin_list)
        self.assertIs(a.get_plugin_list(), a.plugin_list)

    def test_name(self):
        with self.assertRaises(ValueError):
            nixl_agent("")
        self.assertEqual(self.a.name.split("-")[0], "surface")

    def test_no_plugins(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            code = ("import nixl._api as a\n"
                    "try:\n    a.nixl_agent('x')\nexcept RuntimeError as e:\n    print('RuntimeError')\n")
            out = subprocess.run([sys.executable, "-c", code],
                                 env=dict(os.environ, NIXL_PLUGIN_DIR=d),
                                 capture_output=True, text=True, check=True)
            self.assertEqual(out.stdout.strip().splitlines()[-1], "RuntimeError")

    def test_default_config_and_every_sync_mode(self):
        for m in list(nixl_thread_sync_t) + [None]:
            ag = nixl_agent(unique("sync"), nixl_agent_config(sync_mode=m))
            self.assertIn("UCX", ag.backends)
        self.assertIn("UCX", nixl_agent(unique("noconf")).backends)

    def test_effective_sync_mode(self):
        # None: NONE without a listener (run as RW by the bindings), STRICT with one.
        eff = lambda conf: nixl_agent(unique("eff"), conf).agent.getEffectiveSyncMode()
        self.assertEqual(eff(nixl_agent_config()), nb.NIXL_THREAD_SYNC_RW)
        S = nixl_thread_sync_t
        self.assertEqual(eff(nixl_agent_config(sync_mode=S.NIXL_THREAD_SYNC_NONE)),
                         nb.NIXL_THREAD_SYNC_RW)
        self.assertEqual(eff(nixl_agent_config(sync_mode=S.NIXL_THREAD_SYNC_RW)),
                         nb.NIXL_THREAD_SYNC_RW)
        self.assertEqual(eff(nixl_agent_config(sync_mode=S.NIXL_THREAD_SYNC_STRICT)),
                         nb.NIXL_THREAD_SYNC_STRICT)
        self.assertEqual(eff(nixl_agent_config(True, True, 0)), nb.NIXL_THREAD_SYNC_STRICT)

    def test_missing_plugin_is_skipped_with_warning(self):
        with self.assertLogs("nixl", level="WARNING") as cm:
            ag = nixl_agent(unique("skip"), nixl_agent_config(backends=["NO_SUCH", "UCX"]))
        self.assertEqual(list(ag.backends), ["UCX"])
        self.assertTrue(any("NO_SUCH" in m for m in cm.output))

    def test_instantiate_all(self):
        ag = nixl_agent(unique("all"), instantiate_all=True)
        self.assertEqual(sorted(ag.backends), sorted(ag.plugin_list))
        with self.assertLogs("nixl", level="WARNING"):
            ag2 = nixl_agent(unique("cfg"), nixl_agent_config(backends=[]), instantiate_all=True)
        self.assertEqual(ag2.backends, {})

    def test_num_threads_reaches_backend(self):
        ag = nixl_agent(unique("thr"), nixl_agent_config(num_threads=2))
        self.assertIn("UCX", ag.backends)
        params = ag.get_backend_params("UCX")
        self.assertIsInstance(params, dict)
        # The backend took it (UCX's posting pool), not only the agent's config.
        self.assertEqual(params.get("num_threads"), "2")

    def test_plugin_and_backend_queries(self):
        a = self.a
        mems = a.get_plugin_mem_types("UCX")
        self.assertIn("DRAM_SEG", mems)
        self.assertTrue(all(isinstance(p, str) and isinstance(v, str)
                            for p, v in a.get_plugin_params("UCX").items()))
        self.assertIn("DRAM_SEG", a.get_backend_mem_types("UCX"))
        self.assertIsInstance(a.get_backend_params("UCX"), dict)
        with self.assertLogs("nixl", level="WARNING"):
            self.assertEqual(a.get_plugin_mem_types("NOPE"), [])
        with self.assertLogs("nixl", level="WARNING"):
            self.assertEqual(a.get_plugin_params("NOPE"), {})
        with self.assertLogs("nixl", level="WARNING"):
            self.assertEqual(a.get_backend_mem_types("NOPE"), [])
        with self.assertLogs("nixl", level="WARNING"):
            self.assertEqual(a.get_backend_params("NOPE"), {})

    def test_create_backend_errors(self):
        ag = nixl_agent(unique("cb"), nixl_agent_config(backends=[]))
        with self.assertRaises(nb.nixlNotFoundError):
            ag.create_backend("NO_SUCH_PLUGIN")
        ag.create_backend("UCX", {})
        with self.assertRaises(nb.nixlInvalidParamError):
            ag.create_backend("UCX")

    def test_mem_and_op_names(self):
        buf = np.zeros(64, dtype=np.uint8)
        row = [(buf.ctypes.data, 64, 0, "")]
        for name in ("DRAM", "cpu"):
            self.assertEqual(self.a.get_reg_descs(row, name).getType(), nb.DRAM_SEG)
        for name, seg in (("VRAM", nb.VRAM_SEG), ("cuda", nb.VRAM_SEG), ("FILE", nb.FILE_SEG),
                          ("BLOCK", nb.BLK_SEG), ("OBJ", nb.OBJ_SEG)):
            self.assertEqual(self.a.get_xfer_descs([(1, 2, 0)], name).getType(), seg)
        with self.assertRaises(KeyError):
            self.a.get_reg_descs(row, "HBM")
        with self.assertRaises(KeyError):
            self.a.make_prepped_xfer("COPY", 0, [0], 0, [0])
        with self.assertRaises(KeyError):
            self.a.initialize_xfer("read", nb.nixlXferDList(nb.DRAM_SEG),
                                   nb.nixlXferDList(nb.DRAM_SEG), "x")

    def test_prep_mem_view_not_supported(self):
        for call in (lambda: self.a.prep_mem_view(None), lambda: self.a.prep_mem_view(None, backends=["UCX"]),
                     lambda: self.a.release_mem_view(0)):
            with self.assertRaises(nb.nixlNotSupportedError) as cm:
                call()
            self.assertIn("GPU device API", str(cm.exception))


class DescsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a = nixl_agent(unique("descs"), nixl_agent_config(backends=[]))
        cls.buf = np.arange(4096, dtype=np.uint8)
        cls.addr = cls.buf.ctypes.data

    def test_reg_inputs(self):
        a, addr = self.a, self.addr
        d = a.get_reg_descs([(addr, 16, 0, "m"), (addr + 16, 16, 0, b"x")], "DRAM")
        self.assertIsInstance(d, nb.nixlRegDList)
        self.assertEqual(d.descCount(), 2)
        self.assertIs(a.get_reg_descs(d), d)
        for dt in (np.uint64, np.int64):
            arr = np.array([[addr, 16, 0], [addr + 32, 8, 0]], dtype=dt)
            r = a.get_reg_descs(arr, "DRAM")
            self.assertEqual(r.descCount(), 2)
            self.assertEqual(tuple(r[1])[:3], (addr + 32, 8, 0))

    def test_reg_none_cases(self):
        a, addr = self.a, self.addr
        self.assertIsNone(a.get_reg_descs(nb.nixlXferDList(nb.DRAM_SEG)))
        self.assertIsNone(a.get_reg_descs([(addr, 16, 0)], "DRAM"))      # arity
        self.assertIsNone(a.get_reg_descs([(addr, 16, 0, "")]))          # no mem_type
        self.assertIsNone(a.get_reg_descs(np.array([[addr, 1, 0]], dtype=np.uint64)))

    def test_reg_errors(self):
        a, addr = self.a, self.addr
        with self.assertRaises(IndexError):
            a.get_reg_descs([], "DRAM")
        with self.assertRaises(ValueError):
            a.get_reg_descs(((addr, 16, 0, ""),), "DRAM")
        with self.assertRaises(ValueError):
            a.get_reg_descs(np.array([[addr, 1, 0]], dtype=np.float64), "DRAM")
        with self.assertRaises(ValueError):
            a.get_reg_descs(np.zeros((4, 3), dtype=np.uint64)[:, ::-1], "DRAM")   # layout
        self.assertIsNone(a.get_reg_descs(np.array([addr, 1, 0], dtype=np.uint64), "DRAM"))
        self.assertIsNone(a.get_reg_descs(np.zeros((2, 4), dtype=np.uint64), "DRAM"))
        self.assertIsNone(a.get_reg_descs("not descriptors", "DRAM"))
        self.assertIsNone(a.get_reg_descs([1, 2, 3], "DRAM"))

    def test_xfer_inputs_and_errors(self):
        a, addr = self.a, self.addr
        x = a.get_xfer_descs([(addr, 16, 0), (addr + 16, 16, 0)], "DRAM")
        self.assertIsInstance(x, nb.nixlXferDList)
        self.assertIs(a.get_xfer_descs(x), x)
        big = np.zeros((100000, 3), dtype=np.uint64)
        big[:, 0] = addr
        big[:, 1] = 1
        self.assertEqual(a.get_xfer_descs(big, "DRAM").descCount(), 100000)
        self.assertEqual(a.get_xfer_descs(big.astype(np.int64), "DRAM").descCount(), 100000)
        self.assertIsNone(a.get_xfer_descs(nb.nixlRegDList(nb.DRAM_SEG)))
        self.assertIsNone(a.get_xfer_descs([(addr, 16, 0, "")], "DRAM"))
        self.assertIsNone(a.get_xfer_descs([(addr, 16, 0)]))
        with self.assertRaises(IndexError):
            a.get_xfer_descs([], "DRAM")
        with self.assertRaises(TypeError):
            a.get_xfer_descs(((addr, 16, 0),), "DRAM")
        with self.assertRaises(ValueError):
            a.get_xfer_descs(np.zeros((2, 3), dtype=np.int32), "DRAM")

    def test_remote_descs(self):
        r = self.a.get_remote_descs([(self.addr, 16, 0, "peer"), (self.addr, 8, 0, b"peer")], "DRAM")
        self.assertIsInstance(r, nb.nixlRemoteDList)
        self.assertEqual(r.descCount(), 2)
        self.assertIsNone(self.a.get_remote_descs([(self.addr, 16, 0)], "DRAM"))
        with self.assertRaises(IndexError):
            self.a.get_remote_descs([], "DRAM")

    def test_serialized_descs(self):
        x = self.a.get_xfer_descs([(self.addr, 16, 0)], "DRAM")
        r = self.a.get_reg_descs([(self.addr, 16, 0, "meta")], "DRAM")
        for d in (x, r):
            s = self.a.get_serialized_descs(d)
            self.assertIsInstance(s, bytes)
            self.assertEqual(self.a.deserialize_descs(s), d)

    @unittest.skipIf(torch is None, "torch is not importable")
    def test_tensors(self):
        a = self.a
        t = torch.arange(256, dtype=torch.float32)
        d = a.get_reg_descs(t)
        self.assertEqual(d.getType(), nb.DRAM_SEG)
        self.assertEqual(tuple(d[0])[:3], (t.data_ptr(), 1024, 0))
        x = a.get_xfer_descs([t[:128], t[128:]])
        self.assertEqual(x.descCount(), 2)
        self.assertEqual(tuple(x[1]), (t.data_ptr() + 512, 512, 0))
        m = torch.zeros(8, 8)
        self.assertIsNone(a.get_reg_descs(m.t()))          # not contiguous
        self.assertIsNone(a.get_xfer_descs([m, m.t()]))


if __name__ == "__main__":
    unittest.main()
