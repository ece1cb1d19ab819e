# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""nixl.logging: the ``nixl`` logger of the Python package.

Importing ``nixl._api`` calls :func:`configure` once: the ``nixl`` logger gets one handler that
writes to stdout, does not propagate to the root logger, and its level comes from
``NIXL_LOG_LEVEL`` (the variable the C++ library reads too; default INFO on the Python side).
``NIXL_DEBUG_LOGGING``, when set, sets the global ``logging.raiseExceptions`` (true values:
y/yes/on/1/true/enable, as every NIXL boolean).

Thread safety: configure() takes a module lock; loggers are thread-safe (standard library).
"""

import logging as _logging
import os
import sys
import threading

LOGGER_NAME = "nixl"

# NIXL_LOG_LEVEL words (C++ side) mapped to Python levels; TRACE has no Python level, so it is
# DEBUG here, and FATAL is CRITICAL.
_LEVELS = {
    "TRACE": _logging.DEBUG,
    "DEBUG": _logging.DEBUG,
    "INFO": _logging.INFO,
    "WARN": _logging.WARNING,
    "WARNING": _logging.WARNING,
    "ERROR": _logging.ERROR,
    "FATAL": _logging.CRITICAL,
    "CRITICAL": _logging.CRITICAL,
}
_TRUE = {"y", "yes", "on", "1", "true", "enable"}

_lock = threading.Lock()
_configured = False


def level_from_env(default=_logging.INFO):
    """The Python level NIXL_LOG_LEVEL names (any case); ``default`` when unset or unknown."""
    word = os.environ.get("NIXL_LOG_LEVEL", "").strip().upper()
    return _LEVELS.get(word, default)


def configure():
    """Configure the ``nixl`` logger (idempotent) and return it."""
    global _configured
    logger = _logging.getLogger(LOGGER_NAME)
    with _lock:
        if _configured:
            return logger
        handler = _logging.StreamHandler(sys.stdout)
        handler.setFormatter(
            _logging.Formatter("%(asctime)s %(levelname)s nixl %(filename)s:%(lineno)d] %(message)s")
        )
        logger.addHandler(handler)
        logger.setLevel(level_from_env())
        logger.propagate = False
        debug = os.environ.get("NIXL_DEBUG_LOGGING")
        # Only when set: an unset variable leaves the application's own choice alone.
        if debug is not None:
            _logging.raiseExceptions = debug.strip().lower() in _TRUE
        _configured = True
    return logger


def get_logger(name=None):
    """The ``nixl`` logger, or its child ``nixl.<name>``."""
    logger = configure()
    return logger.getChild(name) if name else logger
