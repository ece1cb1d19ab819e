# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""The surface of nixl._bindings: module constants, enums, exceptions, descriptor lists,
nixlAgentConfig and the presence of every nixlAgent method."""

import datetime
import pickle
import unittest

import nixl._bindings as b

try:
    import numpy as np
except ImportError:  # the module itself does not need numpy
    np = None

STATUS_ERRORS = [
    "NotPosted", "InvalidParam", "Backend", "NotFound", "Mismatch", "NotAllowed",
    "RepostActive", "Unknown", "NotSupported", "RemoteDisconnect", "Cancelled", "NoTelemetry",
]

AGENT_METHODS = [
    "getAvailPlugins", "getPluginParams", "getBackendParams", "createBackend", "registerMem",
    "deregisterMem", "queryMem", "makeConnection", "prepXferDlist", "makeXferReq",
    "createXferReq", "estimateXferCost", "postXferReq", "getXferStatus", "getXferTelemetry",
    "queryXferBackend", "releaseXferReq", "releasedDlistH", "getNotifs", "genNotif",
    "getLocalMD", "getLocalPartialMD", "loadRemoteMD", "invalidateRemoteMD", "sendLocalMD",
    "sendLocalPartialMD", "fetchRemoteMD", "invalidateLocalMD", "checkRemoteMD", "prepMemView",
    "releaseMemView",
]


class ModuleTest(unittest.TestCase):
    def test_constants(self):
        self.assertEqual(b.NIXL_INIT_AGENT, "")
        self.assertEqual(b.DEFAULT_COMM_PORT, 8888)
        self.assertIs(b.HAVE_UCX_GPU_DEVICE_API, False)

    def test_enums_exported_at_module_level(self):
        names = ["DRAM_SEG", "VRAM_SEG", "BLK_SEG", "OBJ_SEG", "FILE_SEG"]
        for name in names:
            self.assertIs(getattr(b, name), getattr(b.nixl_mem_t, name))
        self.assertEqual([int(getattr(b, n)) for n in names], [0, 1, 2, 3, 4])
        self.assertEqual(int(b.NIXL_READ), 0)
        self.assertEqual(int(b.NIXL_WRITE), 1)
        self.assertIs(b.NIXL_WRITE, b.nixl_xfer_op_t.NIXL_WRITE)
        self.assertEqual(int(b.NIXL_THREAD_SYNC_DEFAULT), int(b.NIXL_THREAD_SYNC_NONE))
        self.assertEqual(int(b.NIXL_THREAD_SYNC_STRICT), 1)
        self.assertEqual(int(b.NIXL_THREAD_SYNC_RW), 2)
        self.assertEqual(int(b.NIXL_COST_ANALYTICAL_BACKEND), 0)
        self.assertEqual(int(b.NIXL_IN_PROG), 1)
        self.assertEqual(int(b.NIXL_SUCCESS), 0)
        self.assertEqual([int(getattr(b, "NIXL_ERR_" + n)) for n in [
            "NOT_POSTED", "INVALID_PARAM", "BACKEND", "NOT_FOUND", "MISMATCH", "NOT_ALLOWED",
            "REPOST_ACTIVE", "UNKNOWN", "NOT_SUPPORTED"]], list(range(-1, -10, -1)))
        for absent in ["NIXL_ERR_REMOTE_DISCONNECT", "NIXL_ERR_CANCELED", "NIXL_ERR_NO_TELEMETRY"]:
            self.assertFalse(hasattr(b.nixl_status_t, absent))

    def test_exceptions(self):
        for x in STATUS_ERRORS:
            cls = getattr(b, "nixl%sError" % x)
            self.assertTrue(issubclass(cls, Exception))
            self.assertFalse(issubclass(cls, RuntimeError))
            self.assertEqual(cls.__name__, "nixl%sError" % x)


class XferDListTest(unittest.TestCase):
    def test_list_constructor_and_access(self):
        d = b.nixlXferDList(b.DRAM_SEG, [(1, 2, 3), (4, 5, 6)])
        self.assertEqual(d.getType(), b.DRAM_SEG)
        self.assertEqual(d.descCount(), 2)
        self.assertFalse(d.isEmpty())
        self.assertEqual(d[0], (1, 2, 3))
        self.assertEqual(d[-1], (4, 5, 6))
        self.assertFalse(hasattr(d, "__len__"))
        d[1] = (7, 8, 9)
        self.assertEqual(d[1], (7, 8, 9))
        d.addDesc((10, 11, 12))
        d.append((13, 14, 15))
        self.assertEqual(d.descCount(), 4)
        self.assertEqual(d.index((10, 11, 12)), 2)
        with self.assertRaises(b.nixlNotFoundError):
            d.index((99, 99, 99))
        d.remDesc(0)
        self.assertEqual(d[0], (7, 8, 9))
        with self.assertRaises(IndexError):
            d.remDesc(10)
        with self.assertRaises(IndexError):
            d[3]
        with self.assertRaises(IndexError):
            d[3] = (1, 1, 1)
        self.assertEqual(list(d), [(7, 8, 9), (10, 11, 12), (13, 14, 15)])
        d.clear()
        self.assertTrue(d.isEmpty())

    def test_init_size_and_equality(self):
        d = b.nixlXferDList(b.VRAM_SEG, 3)
        self.assertEqual(d.descCount(), 3)
        self.assertEqual(d[2], (0, 0, 0))
        e = b.nixlXferDList(b.VRAM_SEG, init_size=3)
        self.assertTrue(d == e)
        self.assertFalse(d == b.nixlXferDList(b.DRAM_SEG, 3))
        self.assertFalse(d == b.nixlXferDList(b.VRAM_SEG))
        self.assertTrue(b.nixlXferDList(b.DRAM_SEG).isEmpty())

    def test_pickle(self):
        d = b.nixlXferDList(b.FILE_SEG, [(1, 2, 3), (2**64 - 1, 5, 6)])
        e = pickle.loads(pickle.dumps(d))
        self.assertTrue(d == e)
        self.assertEqual(e[1], (2**64 - 1, 5, 6))
        self.assertEqual(e.getType(), b.FILE_SEG)

    def test_type_must_be_the_enum(self):
        with self.assertRaises(TypeError):
            b.nixlXferDList(0, [(1, 2, 3)])
        with self.assertRaises(TypeError):
            b.nixlXferDList("DRAM", [(1, 2, 3)])

    def test_bad_descriptors(self):
        with self.assertRaises(TypeError):
            b.nixlXferDList(b.DRAM_SEG, ((1, 2, 3),))    # a tuple, not a list
        with self.assertRaises(TypeError):
            b.nixlXferDList(b.DRAM_SEG, [[1, 2, 3]])     # rows must be tuples
        with self.assertRaises(ValueError):
            b.nixlXferDList(b.DRAM_SEG, [(1, 2)])
        with self.assertRaises(TypeError):
            b.nixlXferDList(b.DRAM_SEG, [(1.5, 2, 3)])
        with self.assertRaises(OverflowError):
            b.nixlXferDList(b.DRAM_SEG, [(-1, 2, 3)])
        d = b.nixlXferDList(b.DRAM_SEG)
        with self.assertRaises(ValueError):
            d.addDesc((1, 2, 3, ""))
        with self.assertRaises(TypeError):
            d.append("abc")

    @unittest.skipIf(np is None, "numpy not importable")
    def test_ndarray(self):
        for dt in (np.uint64, np.int64):
            a = np.array([[1, 2, 3], [4, 5, 6]], dtype=dt)
            d = b.nixlXferDList(b.DRAM_SEG, a)
            self.assertEqual(d.descCount(), 2)
            self.assertEqual(d[1], (4, 5, 6))
            r = b.nixlRegDList(b.VRAM_SEG, a)
            self.assertEqual(r[0], (1, 2, 3, b""))
        self.assertTrue(b.nixlXferDList(b.DRAM_SEG, np.zeros((0, 3), np.uint64)).isEmpty())
        with self.assertRaises(ValueError):
            b.nixlXferDList(b.DRAM_SEG, np.zeros((2, 3), np.int32))
        with self.assertRaises(ValueError):
            b.nixlXferDList(b.DRAM_SEG, np.zeros((2, 4), np.uint64))
        with self.assertRaises(ValueError):
            b.nixlXferDList(b.DRAM_SEG, np.zeros((6,), np.uint64))
        with self.assertRaises(ValueError):
            b.nixlXferDList(b.DRAM_SEG, np.zeros((3, 6), np.uint64)[:, ::2])
        big = np.arange(300000, dtype=np.uint64).reshape(-1, 3)
        self.assertEqual(b.nixlXferDList(b.DRAM_SEG, big)[99999], (299997, 299998, 299999))


class RegAndRemoteDListTest(unittest.TestCase):
    def test_reg(self):
        r = b.nixlRegDList(b.DRAM_SEG, [(1, 2, 3, "m"), (4, 5, 6, b"\x00x")])
        self.assertEqual(r[0], (1, 2, 3, b"m"))
        self.assertEqual(r[1], (4, 5, 6, b"\x00x"))
        self.assertEqual(r.index((4, 5, 6, "")), 1)
        t = r.trim()
        self.assertIsInstance(t, b.nixlXferDList)
        self.assertEqual(t[1], (4, 5, 6))
        e = pickle.loads(pickle.dumps(r))
        self.assertTrue(e == r)
        self.assertEqual(e[1][3], b"\x00x")
        with self.assertRaises(ValueError):
            b.nixlRegDList(b.DRAM_SEG, ((1, 2, 3, ""),))
        with self.assertRaises(ValueError):
            b.nixlRegDList(b.DRAM_SEG, [(1, 2, 3)])
        with self.assertRaises(TypeError):
            b.nixlRegDList(b.DRAM_SEG, [(1, 2, 3, 4)])

    def test_remote(self):
        r = b.nixlRemoteDList(b.DRAM_SEG, [(1, 2, 3, "peer")])
        self.assertEqual(r[0], (1, 2, 3, "peer"))
        r.append((4, 5, 6, b"other"))
        self.assertEqual(r[1][3], "other")
        self.assertFalse(hasattr(r, "index"))
        with self.assertRaises(TypeError):
            pickle.dumps(r)

    def test_print(self):
        # Goes to sys.stdout; must not raise.
        b.nixlXferDList(b.DRAM_SEG, [(1, 2, 3)]).print()
        self.assertIn("DRAM", repr(b.nixlXferDList(b.DRAM_SEG, [(1, 2, 3)])))


class ConfigTest(unittest.TestCase):
    def test_fields(self):
        c = b.nixlAgentConfig()
        self.assertFalse(c.useProgThread)
        self.assertFalse(c.useListenThread)
        self.assertEqual(c.listenPort, 8888)
        self.assertEqual(c.syncMode, b.NIXL_THREAD_SYNC_NONE)
        self.assertFalse(c.captureTelemetry)
        self.assertEqual(c.pthrDelay, 0)
        self.assertEqual(c.lthrDelay, 100000)
        self.assertEqual(c.etcdWatchTimeout, datetime.timedelta(seconds=5))
        c.useProgThread = True
        c.listenPort = 0
        c.syncMode = b.NIXL_THREAD_SYNC_STRICT
        c.captureTelemetry = True
        c.pthrDelay = 7
        c.etcdWatchTimeout = datetime.timedelta(milliseconds=250)
        self.assertEqual((c.useProgThread, c.listenPort, c.syncMode, c.captureTelemetry,
                          c.pthrDelay, c.etcdWatchTimeout),
                         (True, 0, b.NIXL_THREAD_SYNC_STRICT, True, 7,
                          datetime.timedelta(milliseconds=250)))
        with self.assertRaises(TypeError):
            c.listenPort = 70000
        with self.assertRaises(TypeError):
            c.syncMode = 2

    def test_legacy_positional(self):
        c = b.nixlAgentConfig(True, True, 1234, b.NIXL_THREAD_SYNC_RW, 1, 5, 6, True)
        self.assertEqual((c.useProgThread, c.useListenThread, c.listenPort, c.syncMode,
                          c.pthrDelay, c.lthrDelay, c.captureTelemetry),
                         (True, True, 1234, b.NIXL_THREAD_SYNC_RW, 5, 6, True))
        c = b.nixlAgentConfig(True)
        self.assertTrue(c.useProgThread)
        self.assertEqual(c.lthrDelay, 100000)


class AgentSurfaceTest(unittest.TestCase):
    def test_methods(self):
        for name in AGENT_METHODS:
            self.assertTrue(callable(getattr(b.nixlAgent, name, None)), name)

    def test_xfer_telemetry_type(self):
        t = b.nixlXferTelemetry()
        for f in ["startTime", "postDuration", "xferDuration", "totalBytes", "descCount"]:
            self.assertIsInstance(getattr(t, f), int)


if __name__ == "__main__":
    unittest.main()
