# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Metadata labels over etcd from Python (issue 43 item 2): send_partial_agent_metadata(...,
label=L) then fetch_remote_metadata(name, label=L) loads the partial metadata; a partial send
without a label is refused. Run by meson through examples/cpp/run_with_etcd.py, which starts a
private etcd on 127.0.0.1 and sets NIXL_ETCD_ENDPOINTS."""

import os
import unittest

import numpy as np

import nixl._bindings as nb
from nixl._api import nixl_agent, nixl_agent_config

from nixl_test_util import poll, unique

N = 4096


def make_agent(prefix):
    return nixl_agent(unique(prefix), nixl_agent_config(backends=["TEST"]))


@unittest.skipUnless(os.environ.get("NIXL_ETCD_ENDPOINTS"), "needs NIXL_ETCD_ENDPOINTS")
class EtcdLabel(unittest.TestCase):
    def test_partial_metadata_under_a_label_is_fetched_under_that_label(self):
        src = make_agent("src")
        dst = make_agent("dst")
        buf = np.arange(N, dtype=np.uint8)
        reg = src.register_memory([(buf.ctypes.data, N, 0, "")], "DRAM")
        src.send_partial_agent_metadata(reg, inc_conn_info=True, label="conn_info")
        dst.fetch_remote_metadata(src.name, label="conn_info")
        x = dst.get_xfer_descs([(buf.ctypes.data, N, 0)], "DRAM")
        poll(lambda: dst.check_remote_metadata(src.name, x), "src's metadata under conn_info")
        # invalidate_local_metadata removes every label: dst drops src.
        src.invalidate_local_metadata()
        poll(lambda: not dst.check_remote_metadata(src.name), "src dropped after invalidation")
        src.deregister_memory(reg)

    def test_a_partial_send_without_a_label_is_refused(self):
        src = make_agent("src")
        with self.assertRaises(nb.nixlInvalidParamError):
            src.send_partial_agent_metadata([], inc_conn_info=True)


if __name__ == "__main__":
    unittest.main()
