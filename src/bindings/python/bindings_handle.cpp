/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixl._bindings._handle: the base of nixl._api's handle classes (nixl_xfer_handle,
// nixl_prepped_dlist_handle). A Python class with __slots__ and __del__ cost a Python frame per
// collected handle and three attribute stores per made one, once per transfer; this C base holds
// the same three slots and releases an unreleased handle when it is collected (tp_finalize:
// getattr(_agent, type(self)._release_call)(_handle); a failure calls self._release_failed()).
// Layout: nixlPyHandleObject (bindings_fast.h).

#include "bindings_handle.h"

#include <cstring>

#include <structmember.h>

namespace nixl_py {

namespace {


PyObject *
handleNew(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *agent = nullptr;
    PyObject *value = nullptr;
    // nixl._api makes one handle per transfer with two positional arguments: read them from the
    // tuple; keywords take the general parser.
    if (kwds == nullptr && PyTuple_GET_SIZE(args) == 2) {
        agent = PyTuple_GET_ITEM(args, 0);
        value = PyTuple_GET_ITEM(args, 1);
    } else {
        static const char *kw[] = {"agent", "value", nullptr};
        if (!PyArg_ParseTupleAndKeywords(
                args, kwds, "OO:_handle", const_cast<char **>(kw), &agent, &value)) {
            return nullptr;
        }
    }
    if (PyLong_CheckExact(value)) {
        return newHandleObject(type, agent, value);
    }
    PyObject *h = PyNumber_Long(value); // int(value), as the Python class did
    if (h == nullptr) {
        return nullptr;
    }
    PyObject *self = newHandleObject(type, agent, h);
    Py_DECREF(h);
    return self;
}

void
handleFinalize(PyObject *obj) {
    auto *self = reinterpret_cast<nixlPyHandleObject *>(obj);
    if (self->released || self->agent == nullptr || self->handle == nullptr) {
        return;
    }
    self->released = 1;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *name = PyObject_GetAttrString(reinterpret_cast<PyObject *>(Py_TYPE(obj)),
                                            "_release_call");
    PyObject *res = nullptr;
    if (name != nullptr) {
        PyObject *meth = PyObject_GetAttr(self->agent, name);
        if (meth != nullptr) {
            res = PyObject_CallOneArg(meth, self->handle);
            Py_DECREF(meth);
        }
        Py_DECREF(name);
    }
    if (res == nullptr) {
        // Best effort (interpreter shutdown, an active transfer): one WARNING, no exception.
        PyErr_Clear();
        PyObject *r = PyObject_CallMethod(obj, "_release_failed", nullptr);
        if (r == nullptr) {
            PyErr_Clear();
        }
        Py_XDECREF(r);
    }
    Py_XDECREF(res);
    PyErr_Restore(type, value, tb);
}

void
handleDealloc(PyObject *obj) {
    if (Py_TYPE(obj)->tp_finalize != nullptr && PyObject_CallFinalizerFromDealloc(obj) < 0) {
        return; // resurrected by the finaliser
    }
    auto *self = reinterpret_cast<nixlPyHandleObject *>(obj);
    Py_CLEAR(self->handle);
    Py_CLEAR(self->agent);
    Py_TYPE(obj)->tp_free(obj);
}

PyMemberDef gHandleMembers[] = {
    {"_handle", T_OBJECT_EX, offsetof(nixlPyHandleObject, handle), 0,
     "the handle int the bindings gave out"},
    {"_agent", T_OBJECT_EX, offsetof(nixlPyHandleObject, agent), 0,
     "the nixl._bindings.nixlAgent (a handle keeps its agent alive)"},
    {"_released", T_BOOL, offsetof(nixlPyHandleObject, released), 0,
     "True once released"},
    {nullptr, 0, 0, 0, nullptr},
};

PyTypeObject gHandleType = [] {
    PyTypeObject t = staticPyType("nixl._bindings._handle",
                                  sizeof(nixlPyHandleObject),
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                                  "Base of nixl._api's handle classes: _handle, _agent, "
                                  "_released; releases an unreleased handle when collected.");
    t.tp_new = handleNew;
    t.tp_dealloc = handleDealloc;
    t.tp_finalize = handleFinalize;
    t.tp_members = gHandleMembers;
    return t;
}();

} // namespace

bool
isHandleType(PyTypeObject *type) {
    return PyType_IsSubtype(type, &gHandleType) != 0;
}

PyObject *
newHandleObject(PyTypeObject *type, PyObject *agent, PyObject *h) {
    auto *self = reinterpret_cast<nixlPyHandleObject *>(type->tp_alloc(type, 0));
    if (self == nullptr) {
        return nullptr;
    }
    Py_INCREF(h);
    self->handle = h;
    Py_INCREF(agent);
    self->agent = agent;
    self->released = 0;
    return reinterpret_cast<PyObject *>(self);
}

void
readyHandleType(py::module_ &m) {
    if (PyType_Ready(&gHandleType) < 0) {
        throw py::error_already_set();
    }
    m.attr("_handle") = py::handle(reinterpret_cast<PyObject *>(&gHandleType));
}

} // namespace nixl_py
