# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""nixl: libnixl's Python package, source-compatible with NIXL's.

``nixl._api`` holds the high-level API (``nixl_agent``, ``nixl_agent_config``), ``nixl._bindings``
the compiled module it calls, ``nixl.logging`` the package logger. Importing ``nixl`` alone loads
nothing else, so ``import nixl._bindings`` does not pay for numpy. As in NIXL there is no
``__version__``: use ``importlib.metadata.version("nixl")`` where the package is installed with
metadata, or the libnixl version the build reports.
"""
