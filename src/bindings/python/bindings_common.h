/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file bindings_common.h
 * @brief Shared pieces of the nixl._bindings module: the exception per error status, the
 *        status check every wrapper ends with, and the str-or-bytes argument conversion.
 *        Internal to src/bindings/python.
 */
#ifndef NIXL_BINDINGS_PYTHON_BINDINGS_COMMON_H
#define NIXL_BINDINGS_PYTHON_BINDINGS_COMMON_H

#include <cstring>
#include <stdexcept>
#include <string>

#include <pybind11/pybind11.h>

#include "nixl_types.h"

namespace nixl_py {

namespace py = pybind11;

/** One C++ exception type per NIXL error status; each is translated to the Python exception
 *  class of the same name (register_exception, so they derive from Exception). */
#define NIXL_PY_ERROR_CLASS(name)                                 \
    class name : public std::runtime_error {                     \
    public:                                                       \
        using std::runtime_error::runtime_error;                  \
    };
NIXL_PY_ERROR_CLASS(nixlNotPostedError)
NIXL_PY_ERROR_CLASS(nixlInvalidParamError)
NIXL_PY_ERROR_CLASS(nixlBackendError)
NIXL_PY_ERROR_CLASS(nixlNotFoundError)
NIXL_PY_ERROR_CLASS(nixlMismatchError)
NIXL_PY_ERROR_CLASS(nixlNotAllowedError)
NIXL_PY_ERROR_CLASS(nixlRepostActiveError)
NIXL_PY_ERROR_CLASS(nixlUnknownError)
NIXL_PY_ERROR_CLASS(nixlNotSupportedError)
NIXL_PY_ERROR_CLASS(nixlRemoteDisconnectError)
NIXL_PY_ERROR_CLASS(nixlCancelledError)
NIXL_PY_ERROR_CLASS(nixlNoTelemetryError)
#undef NIXL_PY_ERROR_CLASS

/**
 * Releases the GIL for the lifetime of the object (a C++ call that needs no Python).
 *
 * Used instead of py::gil_scoped_release for one reason: a daemon thread that takes the GIL back
 * while the interpreter finalises is ended by CPython with pthread_exit, which unwinds the
 * thread's stack from inside this destructor. py::gil_scoped_release's destructor is noexcept,
 * so the unwind calls std::terminate and the process aborts at exit (a Python thread polling a
 * transfer in a loop is exactly such a thread); this one lets the unwind pass.
 */
class nixlPyNoGil {
public:
    nixlPyNoGil() : state_(PyEval_SaveThread()) {}
    ~nixlPyNoGil() noexcept(false) {
        PyEval_RestoreThread(state_);
    }
    nixlPyNoGil(const nixlPyNoGil &) = delete;
    nixlPyNoGil &
    operator=(const nixlPyNoGil &) = delete;

private:
    PyThreadState *state_;
};

/**
 * The start of one of the module's static C types (_handle, _agent_base, _fast_method): zeroed,
 * one reference (static storage, never freed), its name, size, flags and doc; the caller sets
 * its slots and PyType_Ready()s it.
 */
inline PyTypeObject
staticPyType(const char *name, Py_ssize_t basicsize, unsigned long flags, const char *doc) {
    PyTypeObject t;
    std::memset(&t, 0, sizeof(t));
    Py_SET_REFCNT(reinterpret_cast<PyObject *>(&t), 1);
    t.tp_name = name;
    t.tp_basicsize = basicsize;
    t.tp_flags = flags;
    t.tp_doc = doc;
    return t;
}

/** Throws the exception of an error status (message: the status name); returns the status
 *  unchanged for NIXL_SUCCESS and NIXL_IN_PROG. An unknown value gives
 *  std::runtime_error("BAD_STATUS"). */
nixl_status_t
throwOnError(nixl_status_t status);

/** Throws the exception of an error status with a message of its own. */
[[noreturn]] void
throwStatus(nixl_status_t status, const std::string &msg);

/** A str (UTF-8) or bytes argument as a C++ string; anything else raises TypeError. Must be
 *  called with the GIL held. */
std::string
toStdString(const py::handle &obj, const char *what);

/** Registers the enums, exceptions and module constants. */
void
bindTypes(py::module_ &m);
/** Registers nixlXferTelemetry, nixlXferDList, nixlRemoteDList and nixlRegDList. */
void
bindDescriptors(py::module_ &m);
/** Registers nixlAgentConfig and nixlAgent. */
void
bindAgent(py::module_ &m);
/** Adds makeXferReq, postXferReq, getXferStatus and releaseXferReq to the nixlAgent class
 *  (bindings_fast.cpp: entry points of their own, not pybind11's dispatcher), and the module's
 *  _handle type (the base of nixl._api's handle classes). */
void
bindAgentTransferPath(py::module_ &m, py::object &agent_class);

} // namespace nixl_py

#endif // NIXL_BINDINGS_PYTHON_BINDINGS_COMMON_H
