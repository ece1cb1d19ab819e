# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""nixl: libnixl's Python package, source-compatible with NIXL's.

``nixl._api`` holds the high-level API (``nixl_agent``, ``nixl_agent_config``), ``nixl._bindings``
the compiled module it calls, ``nixl._utils`` NIXL's memory helpers for tests and examples,
``nixl.logging`` the package logger.

As NIXL's package, ``nixl`` itself offers the API's names (``from nixl import nixl_agent``), the
``_utils`` helpers, ``get_logger`` and the four submodules as attributes. They are resolved on
first use (PEP 562), so ``import nixl`` alone loads nothing else: ``import nixl._bindings`` does
not pay for numpy, and no libnixl is loaded until a name that needs it is asked for. As in NIXL
there is no ``__version__``: use ``importlib.metadata.version("nixl")`` where the package is
installed with metadata, or the libnixl version the build reports.
"""

import importlib as _importlib

# NIXL's __all__: the names nixl._api defines (its own __all__ is this list).
__all__ = [
    "DEFAULT_COMM_PORT",
    "nixl_agent",
    "nixl_agent_config",
    "nixl_backend_handle",
    "nixl_prepped_dlist_handle",
    "nixl_thread_sync_t",
    "nixl_xfer_handle",
]

_SUBMODULES = ("_api", "_bindings", "_utils", "logging")

# Top-level name -> the submodule that defines it.
_LAZY = dict.fromkeys(__all__, "_api")
_LAZY.update(dict.fromkeys(
    ("malloc_passthru", "free_passthru", "ba_buf", "verify_transfer"), "_utils"))
_LAZY["get_logger"] = "logging"


def __getattr__(name):
    if name in _SUBMODULES:
        # Importing a submodule binds it as an attribute of this package.
        return _importlib.import_module(f"{__name__}.{name}")
    sub = _LAZY.get(name)
    if sub is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"{__name__}.{sub}"), name)
    # Bound once: later lookups are plain module attributes.
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))
