/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file bindings_fast.h
 * @brief The per-transfer path shared by nixl._bindings.nixlAgent's own entry points
 *        (bindings_fast.cpp) and the C methods of nixl._api.nixl_agent's base
 *        (bindings_api_fast.cpp): argument parsing without pybind11, the four agent calls on
 *        handle ints. The handle object (bindings_handle.h) and the index arguments
 *        (bindings_indices.h) are included for them. Internal to src/bindings/python.
 *
 * Thread safety: the functions taking PyObject arguments need the GIL; the *Core functions
 * release it around the agent call and may be called from any number of threads at once.
 */
#ifndef NIXL_BINDINGS_PYTHON_BINDINGS_FAST_H
#define NIXL_BINDINGS_PYTHON_BINDINGS_FAST_H

#include <cxxabi.h>

#include <cstdint>
#include <vector>

#include "bindings_agent.h"
#include "bindings_common.h"
#include "bindings_handle.h"
#include "bindings_indices.h"

namespace nixl_py {

/** Signature of a METH_FASTCALL | METH_KEYWORDS function. */
using nixlPyFastFn = PyObject *(*)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);

template<nixlPyFastFn F>
constexpr PyCFunction
asCFunction() {
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(F));
}

/** nixl._bindings.nixlAgent's type object. */
PyTypeObject *
agentPyType();

/** The nixlPyAgent of a nixlAgent object (TypeError when __init__ did not run). */
nixlPyAgent &
agentOf(PyObject *self);

/** Why vectorcall arguments did not bind (bindVectorcall). */
enum class nixlPyBindError { NONE, TOO_MANY, UNKNOWN_KEYWORD, REPEATED, MISSING, LOOKUP_FAILED };

struct nixlPyBindResult {
    nixlPyBindError error = nixlPyBindError::NONE;
    Py_ssize_t index = 0; ///< REPEATED, MISSING: the argument's index
    PyObject *key = nullptr; ///< UNKNOWN_KEYWORD, REPEATED: the keyword (borrowed)
};

/**
 * Binds vectorcall arguments (self excluded) to out[0..n) (borrowed; nullptr where absent):
 * positions first, then each keyword at find(key), which returns the keyword's index, n when
 * it names no argument, or -1 when the lookup raised (the exception stays set). The first
 * leading `required` arguments must be present. Stops at the first failure, which the two
 * callers (parseArgs, and nixl._api's C path) report each in their own way.
 */
template<class Find>
nixlPyBindResult
bindVectorcall(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t n,
               Py_ssize_t required, PyObject **out, Find &&find) {
    if (nargs > n) {
        return {nixlPyBindError::TOO_MANY};
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        out[i] = i < nargs ? args[i] : nullptr;
    }
    if (kwnames != nullptr) {
        const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t k = 0; k < nkw; ++k) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            const Py_ssize_t i = find(key);
            if (i < 0) {
                return {nixlPyBindError::LOOKUP_FAILED, 0, key};
            }
            if (i >= n) {
                return {nixlPyBindError::UNKNOWN_KEYWORD, 0, key};
            }
            if (out[i] != nullptr) {
                return {nixlPyBindError::REPEATED, i, key};
            }
            out[i] = args[nargs + k];
        }
    }
    for (Py_ssize_t i = 0; i < required; ++i) {
        if (out[i] == nullptr) {
            return {nixlPyBindError::MISSING, i};
        }
    }
    return {};
}

/**
 * Fills out[0..n) from vectorcall arguments by position and keyword (borrowed references;
 * nullptr where an optional argument is absent). Raises TypeError as CPython's own functions
 * do for too many, unknown, repeated or missing arguments.
 */
void
parseArgs(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
          const char *const *names, Py_ssize_t n, Py_ssize_t required, PyObject **out);

/** A handle argument: an int (or an object with __index__) in [0, 2^64), else TypeError. */
uint64_t
handleArg(PyObject *obj, const char *fn, const char *arg);

/** The Python object for NIXL_SUCCESS and NIXL_IN_PROG (the enum's own members), or a new
 *  nixl_status_t instance for any other status. New reference. */
PyObject *
statusObject(nixl_status_t st);

/** makeXferReq on two live prepared-list handles; returns the new request's handle. Releases
 *  the GIL around the agent call. */
uint64_t
makeXferCore(nixlPyAgent &agent, nixl_xfer_op_t op, uint64_t lh, const std::vector<int> &li,
             uint64_t rh, const std::vector<int> &ri, const nixl_opt_args_t &extra);
/** postXferReq / getXferStatus / releaseXferReq of a live request handle (errors raise; GIL
 *  released around the agent call). */
nixl_status_t
postXferCore(nixlPyAgent &agent, uint64_t h, const nixl_opt_args_t *extra);
nixl_status_t
xferStatusCore(nixlPyAgent &agent, uint64_t h);
nixl_status_t
releaseXferCore(nixlPyAgent &agent, uint64_t h);

/** Runs f and turns a C++ exception into the Python one pybind11's translators give it. A
 *  forced unwind (a daemon thread ended by CPython's finalisation) passes through. */
template<class F>
PyObject *
guarded(F &&f) {
    try {
        return f();
    }
    catch (py::error_already_set &e) {
        e.restore();
        return nullptr;
    }
    catch (abi::__forced_unwind &) {
        throw;
    }
    catch (...) {
        if (py::detail::apply_exception_translators(
                py::detail::get_local_internals().registered_exception_translators) ||
            py::detail::apply_exception_translators(
                py::detail::get_internals().registered_exception_translators)) {
            return nullptr;
        }
        PyErr_SetString(PyExc_SystemError, "nixl._bindings: untranslated C++ exception");
        return nullptr;
    }
}

/** Adds nixl._bindings._agent_base, the C base of nixl._api.nixl_agent with its per-transfer
 *  methods, and _register_api_types (bindings_api_fast.cpp). */
void
bindApiFastPath(py::module_ &m);

} // namespace nixl_py

#endif // NIXL_BINDINGS_PYTHON_BINDINGS_FAST_H
