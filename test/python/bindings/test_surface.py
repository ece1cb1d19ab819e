# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""The surface of nixl._bindings: module constants, enums and exceptions."""

import unittest

import nixl._bindings as b

STATUS_ERRORS = [
    "NotPosted", "InvalidParam", "Backend", "NotFound", "Mismatch", "NotAllowed",
    "RepostActive", "Unknown", "NotSupported", "RemoteDisconnect", "Cancelled", "NoTelemetry",
]


class ModuleTest(unittest.TestCase):
    def test_constants(self):
        self.assertEqual(b.NIXL_INIT_AGENT, "")
        self.assertEqual(b.DEFAULT_COMM_PORT, 8888)
        self.assertIs(b.HAVE_UCX_GPU_DEVICE_API, False)

    def test_enums_exported_at_module_level(self):
        for name in ["DRAM_SEG", "VRAM_SEG", "BLK_SEG", "OBJ_SEG", "FILE_SEG"]:
            self.assertIs(getattr(b, name), getattr(b.nixl_mem_t, name))
        self.assertEqual([int(getattr(b, n)) for n in
                          ["DRAM_SEG", "VRAM_SEG", "BLK_SEG", "OBJ_SEG", "FILE_SEG"]],
                         [0, 1, 2, 3, 4])
        self.assertEqual(int(b.NIXL_READ), 0)
        self.assertEqual(int(b.NIXL_WRITE), 1)
        self.assertIs(b.NIXL_WRITE, b.nixl_xfer_op_t.NIXL_WRITE)
        self.assertEqual(int(b.NIXL_THREAD_SYNC_DEFAULT), int(b.NIXL_THREAD_SYNC_NONE))
        self.assertEqual(int(b.NIXL_THREAD_SYNC_RW), 2)
        self.assertEqual(int(b.NIXL_COST_ANALYTICAL_BACKEND), 0)
        self.assertEqual(int(b.NIXL_IN_PROG), 1)
        self.assertEqual(int(b.NIXL_SUCCESS), 0)
        self.assertEqual(int(b.NIXL_ERR_NOT_SUPPORTED), -9)
        self.assertFalse(hasattr(b.nixl_status_t, "NIXL_ERR_REMOTE_DISCONNECT"))

    def test_exceptions(self):
        for x in STATUS_ERRORS:
            cls = getattr(b, "nixl%sError" % x)
            self.assertTrue(issubclass(cls, Exception))
            self.assertFalse(issubclass(cls, RuntimeError))


if __name__ == "__main__":
    unittest.main()
