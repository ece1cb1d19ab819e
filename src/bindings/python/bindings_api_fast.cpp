/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixl._api.nixl_agent's per-transfer methods in C: make_prepped_xfer, transfer,
// check_xfer_state and release_xfer_handle, and the C base holding its `agent` attribute.
//
// Why: as Python methods these cost a Python frame each plus the argument tests, a dict lookup
// for the operation and the handle object's construction through its class: about 1 us per
// 1-block transfer over the bindings' own entry points (docs/python.md §7).
//
// How: nixl._api wraps each of the four Python methods in a nixl._bindings._fast_method, a
// method descriptor (vectorcall, bound like a Python function) whose C implementation takes the
// common argument shapes straight to the agent: operation "READ"/"WRITE", handles of nixl._api's
// own classes (or plain handle ints), index lists as exact lists of ints or 1-D integer numpy
// arrays (converted once, once for both sides when they are the same object), notif_msg as
// bytes, no backends, skip_desc_merge as a bool. Any other shape, or arguments that do not bind,
// goes to the wrapped Python method, so every type it accepts and every exception it raises
// stays as it was; the fast path raises only what that method raises for the same values (the
// index-length check, and the bindings' errors for stale handles and failed calls). The wrapper
// reports the Python method's name, docstring and signature (__wrapped__).
//
// `agent` is a slot of the C base nixl._bindings._agent_base, read without a dict lookup.
//
// GIL and threads: as the bindings' own methods (the GIL is released around each agent call,
// bindings_fast.cpp); a reference to the agent object is held across it, so another thread
// replacing `agent` cannot free it under the call.

#include "bindings_fast.h"

#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include <structmember.h>

namespace nixl_py {

namespace {

struct nixlPyApiAgentObject {
    PyObject_HEAD
    PyObject *agent; // `self.agent`: the nixl._bindings.nixlAgent
};

/** The fast paths; each returns nullptr with no exception set to ask for the Python method. */
using nixlPyFastImpl = PyObject *(*)(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames);

struct nixlPyFastMethodObject {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    nixlPyFastImpl impl;
    PyObject *func; // the Python method: the fallback, and __wrapped__
};

// Registered by nixl._api at import (_register_api_types); strong references, kept for the life
// of the process like the status objects of bindings_fast.cpp.
PyTypeObject *gXferType = nullptr; // nixl._api.nixl_xfer_handle
PyTypeObject *gPreppedType = nullptr; // nixl._api.nixl_prepped_dlist_handle

// Interned strings: the operations, the states returned and the keyword names (CPython passes
// interned keyword names, so most matches are pointer compares).
PyObject *gRead = nullptr;
PyObject *gWrite = nullptr;
PyObject *gDone = nullptr;
PyObject *gProc = nullptr;
PyObject *gErr = nullptr;

const char *const kMakeNames[] = {"operation",        "local_xfer_side", "local_indices",
                                  "remote_xfer_side", "remote_indices",  "notif_msg",
                                  "backends",         "skip_desc_merge"};
const char *const kTransferNames[] = {"handle", "notif_msg"};
const char *const kHandleNames[] = {"handle"};
PyObject *gMakeNames[std::size(kMakeNames)] = {};
PyObject *gTransferNames[std::size(kTransferNames)] = {};
PyObject *gHandleNames[std::size(kHandleNames)] = {};

/**
 * Binds vectorcall arguments (self excluded) to out[0..n) by position and keyword; false, with
 * no exception set, when they do not bind (too many, unknown or repeated keywords, a required
 * one missing), so that the Python method raises CPython's own TypeError for them.
 */
bool
bindArgs(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject *const *names,
         Py_ssize_t n, Py_ssize_t required, PyObject **out) {
    const nixlPyBindResult r =
        bindVectorcall(args, nargs, kwnames, n, required, out, [&](PyObject *key) -> Py_ssize_t {
            Py_ssize_t i = 0;
            while (i < n && key != names[i]) {
                ++i;
            }
            if (i == n) { // not interned (a ** dict built at run time): compare the text
                i = 0;
                while (i < n && PyUnicode_Compare(key, names[i]) != 0) {
                    ++i;
                }
                if (PyErr_Occurred()) {
                    return -1;
                }
            }
            return i;
        });
    if (r.error == nixlPyBindError::LOOKUP_FAILED) {
        PyErr_Clear();
    }
    return r.error == nixlPyBindError::NONE;
}

/** Owns a reference for the duration of a call. */
struct nixlPyRef {
    PyObject *obj;
    ~nixlPyRef() {
        Py_XDECREF(obj);
    }
};

/** The bindings agent of self (an _agent_base whose agent is a nixlAgent; new reference),
 *  else nullptr. */
PyObject *
bindingsAgent(PyObject *self) {
    PyObject *agent = reinterpret_cast<nixlPyApiAgentObject *>(self)->agent;
    if (agent == nullptr || Py_TYPE(agent) != agentPyType()) {
        return nullptr;
    }
    Py_INCREF(agent);
    return agent;
}

/** An exact int in [0, 2^64) into *out; false (no exception set) otherwise. */
bool
exactHandleInt(PyObject *obj, uint64_t *out) {
    if (obj == nullptr || !PyLong_CheckExact(obj)) {
        return false;
    }
    static_assert(sizeof(unsigned long) == sizeof(uint64_t));
    const unsigned long v = PyLong_AsUnsignedLong(obj);
    if (v == static_cast<unsigned long>(-1) && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
    }
    *out = v;
    return true;
}

/** A handle argument of the fast shapes: an object of exactly type (its _handle an exact int)
 *  or an exact int. */
bool
handleOf(PyObject *obj, PyTypeObject *type, uint64_t *out) {
    if (Py_TYPE(obj) == type) {
        return exactHandleInt(reinterpret_cast<nixlPyHandleObject *>(obj)->handle, out);
    }
    return exactHandleInt(obj, out);
}

/** notif_msg of the fast shapes: absent or exact bytes. */
bool
notifOf(PyObject *obj) {
    return obj == nullptr || PyBytes_CheckExact(obj);
}

std::string
notifText(PyObject *obj) {
    return std::string(PyBytes_AS_STRING(obj), static_cast<size_t>(PyBytes_GET_SIZE(obj)));
}

PyObject *
stateString(nixl_status_t st) {
    PyObject *s = st == NIXL_SUCCESS ? gDone : st == NIXL_IN_PROG ? gProc : gErr;
    Py_INCREF(s);
    return s;
}

PyObject *
makePreppedXfer(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[std::size(kMakeNames)];
    if (!bindArgs(args, nargs, kwnames, gMakeNames, std::size(a), 5, a)) {
        return nullptr;
    }
    nixl_xfer_op_t op;
    if (a[0] == gRead) {
        op = NIXL_READ;
    } else if (a[0] == gWrite) {
        op = NIXL_WRITE;
    } else {
        return nullptr;
    }
    uint64_t lh;
    uint64_t rh;
    if (!handleOf(a[1], gPreppedType, &lh) || !handleOf(a[3], gPreppedType, &rh) ||
        !notifOf(a[5]) ||
        (a[6] != nullptr && !(PyList_CheckExact(a[6]) && PyList_GET_SIZE(a[6]) == 0)) ||
        (a[7] != nullptr && a[7] != Py_True && a[7] != Py_False)) {
        return nullptr;
    }
    nixlPyRef agentObj{bindingsAgent(self)};
    if (agentObj.obj == nullptr) {
        return nullptr;
    }
    std::vector<int> li;
    std::vector<int> ri;
    // The connector often passes one array for both sides: read it once.
    if (!fastIndices(a[2], li) || (a[4] != a[2] && !fastIndices(a[4], ri))) {
        return nullptr;
    }
    const std::vector<int> &rv = a[4] == a[2] ? li : ri;
    return guarded([&]() -> PyObject * {
        if (li.empty() || li.size() != rv.size()) {
            throw nixlInvalidParamError(
                "make_prepped_xfer: index lists must be non-empty and of equal length (" +
                std::to_string(li.size()) + " local, " + std::to_string(rv.size()) + " remote)");
        }
        nixl_opt_args_t extra;
        if (a[5] != nullptr && PyBytes_GET_SIZE(a[5]) != 0) {
            extra.notif = notifText(a[5]);
        }
        extra.skipDescMerge = a[7] == Py_True;
        nixlPyAgent &agent = agentOf(agentObj.obj);
        const uint64_t h = makeXferCore(agent, op, lh, li, rh, rv, extra);
        PyObject *hint = PyLong_FromUnsignedLongLong(h);
        PyObject *obj = hint != nullptr ? newHandleObject(gXferType, agentObj.obj, hint) : nullptr;
        Py_XDECREF(hint);
        if (obj == nullptr) {
            // No object to own the request (out of memory): release it, keep the error.
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            try {
                releaseXferCore(agent, h);
            }
            catch (const std::exception &) {
            }
            PyErr_Restore(type, value, tb);
        }
        return obj;
    });
}

PyObject *
transfer(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[std::size(kTransferNames)];
    uint64_t h;
    if (!bindArgs(args, nargs, kwnames, gTransferNames, std::size(a), 1, a) ||
        !handleOf(a[0], gXferType, &h) || !notifOf(a[1])) {
        return nullptr;
    }
    nixlPyRef agentObj{bindingsAgent(self)};
    if (agentObj.obj == nullptr) {
        return nullptr;
    }
    return guarded([&]() -> PyObject * {
        nixlPyAgent &agent = agentOf(agentObj.obj);
        // A non-empty message replaces the request's; an empty one keeps it (NIXL's rule).
        if (a[1] != nullptr && PyBytes_GET_SIZE(a[1]) != 0) {
            nixl_opt_args_t extra;
            extra.notif = notifText(a[1]);
            return stateString(postXferCore(agent, h, &extra));
        }
        return stateString(postXferCore(agent, h, nullptr));
    });
}

PyObject *
checkXferState(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[std::size(kHandleNames)];
    uint64_t h;
    if (!bindArgs(args, nargs, kwnames, gHandleNames, std::size(a), 1, a) ||
        !handleOf(a[0], gXferType, &h)) {
        return nullptr;
    }
    nixlPyRef agentObj{bindingsAgent(self)};
    if (agentObj.obj == nullptr) {
        return nullptr;
    }
    return guarded([&]() -> PyObject * {
        return stateString(xferStatusCore(agentOf(agentObj.obj), h));
    });
}

PyObject *
releaseXferHandle(PyObject *, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[std::size(kHandleNames)];
    if (!bindArgs(args, nargs, kwnames, gHandleNames, std::size(a), 1, a) ||
        Py_TYPE(a[0]) != gXferType) {
        return nullptr;
    }
    auto *hobj = reinterpret_cast<nixlPyHandleObject *>(a[0]);
    if (hobj->released) {
        Py_RETURN_NONE;
    }
    // The handle's own agent, as nixl_xfer_handle.release() uses.
    uint64_t h;
    if (hobj->agent == nullptr || Py_TYPE(hobj->agent) != agentPyType() ||
        !exactHandleInt(hobj->handle, &h)) {
        return nullptr;
    }
    nixlPyRef agentObj{hobj->agent};
    Py_INCREF(agentObj.obj);
    return guarded([&]() -> PyObject * {
        releaseXferCore(agentOf(agentObj.obj), h);
        // Only once released: an error (nixlRepostActiveError) leaves the handle live.
        hobj->released = 1;
        Py_RETURN_NONE;
    });
}

struct nixlPyFastEntry {
    const char *name;
    nixlPyFastImpl impl;
};
const nixlPyFastEntry kFastEntries[] = {
    {"make_prepped_xfer", makePreppedXfer},
    {"transfer", transfer},
    {"check_xfer_state", checkXferState},
    {"release_xfer_handle", releaseXferHandle},
};

// ---- nixl._bindings._agent_base -------------------------------------------------------------

PyObject *
agentBaseNew(PyTypeObject *type, PyObject *, PyObject *) {
    return type->tp_alloc(type, 0); // agent stays unset until __init__ assigns it
}

int
agentBaseTraverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(reinterpret_cast<nixlPyApiAgentObject *>(self)->agent);
    return 0;
}

int
agentBaseClear(PyObject *self) {
    Py_CLEAR(reinterpret_cast<nixlPyApiAgentObject *>(self)->agent);
    return 0;
}

void
agentBaseDealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    agentBaseClear(self);
    Py_TYPE(self)->tp_free(self);
}

PyMemberDef gAgentMembers[] = {
    {"agent", T_OBJECT_EX, offsetof(nixlPyApiAgentObject, agent), 0,
     "the nixl._bindings.nixlAgent"},
    {nullptr, 0, 0, 0, nullptr},
};

PyTypeObject gAgentBaseType = [] {
    PyTypeObject t = staticPyType("nixl._bindings._agent_base",
                                  sizeof(nixlPyApiAgentObject),
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                                  "Base of nixl._api.nixl_agent: its agent attribute as a slot.");
    t.tp_new = agentBaseNew;
    t.tp_dealloc = agentBaseDealloc;
    t.tp_traverse = agentBaseTraverse;
    t.tp_clear = agentBaseClear;
    t.tp_members = gAgentMembers;
    return t;
}();

// ---- nixl._bindings._fast_method ------------------------------------------------------------

PyObject *
fastMethodCall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    auto *m = reinterpret_cast<nixlPyFastMethodObject *>(callable);
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs >= 1 && PyObject_TypeCheck(args[0], &gAgentBaseType)) {
        PyObject *r = m->impl(args[0], args + 1, nargs - 1, kwnames);
        if (r != nullptr || PyErr_Occurred()) {
            return r;
        }
    }
    return PyObject_Vectorcall(m->func, args, nargsf, kwnames);
}

PyObject *
fastMethodNew(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *func = nullptr;
    static const char *kw[] = {"func", nullptr};
    if (!PyArg_ParseTupleAndKeywords(
            args, kwds, "O:_fast_method", const_cast<char **>(kw), &func)) {
        return nullptr;
    }
    PyObject *name = PyObject_GetAttrString(func, "__name__");
    if (name == nullptr) {
        return nullptr;
    }
    nixlPyFastImpl impl = nullptr;
    for (const nixlPyFastEntry &e : kFastEntries) {
        if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, e.name) == 0) {
            impl = e.impl;
        }
    }
    if (impl == nullptr) {
        PyErr_Format(PyExc_ValueError, "_fast_method: no C implementation of %R", name);
        Py_DECREF(name);
        return nullptr;
    }
    Py_DECREF(name);
    auto *self = reinterpret_cast<nixlPyFastMethodObject *>(type->tp_alloc(type, 0));
    if (self == nullptr) {
        return nullptr;
    }
    self->vectorcall = fastMethodCall;
    self->impl = impl;
    Py_INCREF(func);
    self->func = func;
    return reinterpret_cast<PyObject *>(self);
}

void
fastMethodDealloc(PyObject *obj) {
    PyObject_GC_UnTrack(obj);
    Py_CLEAR(reinterpret_cast<nixlPyFastMethodObject *>(obj)->func);
    Py_TYPE(obj)->tp_free(obj);
}

int
fastMethodTraverse(PyObject *obj, visitproc visit, void *arg) {
    Py_VISIT(reinterpret_cast<nixlPyFastMethodObject *>(obj)->func);
    return 0;
}

/** Bound like a Python function: instance.method is a bound method. */
PyObject *
fastMethodGet(PyObject *obj, PyObject *instance, PyObject *) {
    if (instance == nullptr || instance == Py_None) {
        Py_INCREF(obj);
        return obj;
    }
    return PyMethod_New(obj, instance);
}

/** __name__, __qualname__, __doc__, __module__, __annotations__ ...: the Python method's. */
PyObject *
fastMethodGetattr(PyObject *obj, PyObject *name) {
    PyObject *r = PyObject_GenericGetAttr(obj, name);
    if (r != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return r;
    }
    PyErr_Clear();
    return PyObject_GetAttr(reinterpret_cast<nixlPyFastMethodObject *>(obj)->func, name);
}

PyObject *
fastMethodRepr(PyObject *obj) {
    return PyUnicode_FromFormat("<nixl fast method wrapping %R>",
                                reinterpret_cast<nixlPyFastMethodObject *>(obj)->func);
}

PyMemberDef gFastMethodMembers[] = {
    {"__wrapped__", T_OBJECT_EX, offsetof(nixlPyFastMethodObject, func), READONLY,
     "the Python method: called for the argument shapes the C path leaves to it"},
    {nullptr, 0, 0, 0, nullptr},
};

// The type's own __doc__ and __module__ would shadow the Python method's.
PyObject *
fastMethodFuncAttr(PyObject *obj, void *name) {
    return PyObject_GetAttrString(reinterpret_cast<nixlPyFastMethodObject *>(obj)->func,
                                  static_cast<const char *>(name));
}

PyGetSetDef gFastMethodGetSet[] = {
    {"__doc__", fastMethodFuncAttr, nullptr, nullptr, const_cast<char *>("__doc__")},
    {"__module__", fastMethodFuncAttr, nullptr, nullptr, const_cast<char *>("__module__")},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject gFastMethodType = [] {
    // METHOD_DESCRIPTOR: obj.method(...) calls it with obj first, with no bound-method object
    // (as for a Python function).
    PyTypeObject t = staticPyType(
        "nixl._bindings._fast_method",
        sizeof(nixlPyFastMethodObject),
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
            Py_TPFLAGS_METHOD_DESCRIPTOR,
        "_fast_method(func): a method of nixl._api.nixl_agent with a C path for its "
        "common argument shapes; func (a method of the same name) handles the rest.");
    t.tp_new = fastMethodNew;
    t.tp_dealloc = fastMethodDealloc;
    t.tp_traverse = fastMethodTraverse;
    t.tp_call = PyVectorcall_Call;
    t.tp_vectorcall_offset = offsetof(nixlPyFastMethodObject, vectorcall);
    t.tp_descr_get = fastMethodGet;
    t.tp_getattro = fastMethodGetattr;
    t.tp_repr = fastMethodRepr;
    t.tp_members = gFastMethodMembers;
    t.tp_getset = gFastMethodGetSet;
    return t;
}();

// ---- nixl._bindings._register_api_types -----------------------------------------------------

PyObject *
registerApiTypes(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "_register_api_types(xfer_handle_type, prepped_handle_type, "
                        "ndarray_type_or_None, probe)");
        return nullptr;
    }
    for (int i = 0; i < 2; ++i) {
        if (!PyType_Check(args[i]) || !isHandleType(reinterpret_cast<PyTypeObject *>(args[i]))) {
            PyErr_SetString(PyExc_TypeError,
                            "_register_api_types: the handle types must derive from _handle");
            return nullptr;
        }
    }
    if (args[2] != Py_None && !PyType_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "_register_api_types: ndarray_type must be a type");
        return nullptr;
    }
    return guarded([&]() -> PyObject * {
        Py_INCREF(args[0]);
        Py_INCREF(args[1]);
        Py_XSETREF(gXferType, reinterpret_cast<PyTypeObject *>(args[0]));
        Py_XSETREF(gPreppedType, reinterpret_cast<PyTypeObject *>(args[1]));
        setNdarrayType(args[2], args[3]);
        Py_RETURN_NONE;
    });
}

PyMethodDef gRegisterDef = {
    "_register_api_types",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(registerApiTypes)),
    METH_FASTCALL,
    "_register_api_types(xfer_handle_type, prepped_handle_type, ndarray_type, probe)\n--\n\n"
    "Called once by nixl._api: the handle classes the fast methods build and recognise, and "
    "numpy.ndarray with a probe array (index arrays read in place)."};

PyObject *
intern(const char *s) {
    PyObject *o = PyUnicode_InternFromString(s);
    if (o == nullptr) {
        throw py::error_already_set();
    }
    return o;
}

} // namespace

void
bindApiFastPath(py::module_ &m) {
    if (gRead == nullptr) {
        gRead = intern("READ");
        gWrite = intern("WRITE");
        gDone = intern("DONE");
        gProc = intern("PROC");
        gErr = intern("ERR");
        for (size_t i = 0; i < std::size(kMakeNames); ++i) {
            gMakeNames[i] = intern(kMakeNames[i]);
        }
        for (size_t i = 0; i < std::size(kTransferNames); ++i) {
            gTransferNames[i] = intern(kTransferNames[i]);
        }
        gHandleNames[0] = intern(kHandleNames[0]);
    }
    for (PyTypeObject *t : {&gAgentBaseType, &gFastMethodType}) {
        if (PyType_Ready(t) < 0) {
            throw py::error_already_set();
        }
    }
    m.attr("_agent_base") = py::handle(reinterpret_cast<PyObject *>(&gAgentBaseType));
    m.attr("_fast_method") = py::handle(reinterpret_cast<PyObject *>(&gFastMethodType));
    PyObject *fn = PyCFunction_NewEx(&gRegisterDef, nullptr, m.attr("__name__").ptr());
    if (fn == nullptr) {
        throw py::error_already_set();
    }
    m.attr("_register_api_types") = py::reinterpret_steal<py::object>(fn);
}

} // namespace nixl_py
