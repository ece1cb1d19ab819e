/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file bindings_handle.h
 * @brief nixl._bindings._handle, the C base of nixl._api's handle classes: its object layout,
 *        construction and registration. Internal to src/bindings/python.
 *
 * Thread safety: every function needs the GIL (CPython objects); the type itself is
 * immutable once readyHandleType() ran.
 */
#ifndef NIXL_BINDINGS_PYTHON_BINDINGS_HANDLE_H
#define NIXL_BINDINGS_PYTHON_BINDINGS_HANDLE_H

#include "bindings_common.h"

namespace nixl_py {

/** Layout of nixl._bindings._handle (the base of nixl._api's handle classes). */
struct nixlPyHandleObject {
    PyObject_HEAD
    PyObject *handle; // the int the bindings gave out
    PyObject *agent; // the nixl._bindings.nixlAgent
    char released;
};

/** True when type is nixl._bindings._handle or derives from it. */
bool
isHandleType(PyTypeObject *type);

/** A new instance of type (nixl._bindings._handle or a subclass) holding agent and the handle
 *  int h (both borrowed; the object takes its own references); nullptr with an exception set on
 *  failure. */
PyObject *
newHandleObject(PyTypeObject *type, PyObject *agent, PyObject *h);

/** Readies the type and adds it to m as _handle. */
void
readyHandleType(py::module_ &m);

} // namespace nixl_py

#endif // NIXL_BINDINGS_PYTHON_BINDINGS_HANDLE_H
