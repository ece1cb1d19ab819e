/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixl._bindings: nixlAgent's per-transfer methods (makeXferReq, postXferReq, getXferStatus,
// releaseXferReq) as entry points of their own.
//
// Why: a connector calls these three or four times per transfer, and through pybind11's generic
// dispatcher each call paid for an argument vector, a type-table lookup (hashing the C++ type
// name) for self and for the enum, std::string and std::vector casters even for b"" and [], and
// overload bookkeeping: together more than the C++ call itself (docs/python.md, Speed). Here each
// is a METH_FASTCALL|METH_KEYWORDS method descriptor set on the nixlAgent class: the arguments
// arrive as a C array, are parsed by hand with the same names and defaults, and the common
// values (exact ints, b"", [], the two op enum instances) are recognised without a conversion.
// Errors raise what the pybind11 versions raised: nixlInvalidParamError for a handle that is not
// live, TypeError for a value of the wrong type (the message names the argument instead of
// listing pybind11's signatures), IndexError/OverflowError/ValueError for bad indices, and the
// status exceptions of the agent's result, all through pybind11's registered translators.
//
// GIL and threads: as in bindings_agent.cpp (see docs/python.md §4 for the rule).

#include "bindings_fast.h"

#include <climits>
#include <cstring>
#include <optional>

#include <pybind11/stl.h>
#include <structmember.h>

#ifdef NIXL_PY_NUMPY_HEADERS
// Only the object layout (ndarraytypes.h, inline accessors): no numpy C-API table, so the module
// neither imports numpy nor needs it at run time. nixl._api registers numpy.ndarray.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>
#endif

namespace nixl_py {

namespace {

PyObject *gNdarrayType = nullptr; // numpy.ndarray once nixl._api registered it
bool gNdarrayLayoutOk = false; // the probe array read back right (setNdarrayType)

// makeXferReq indices: a sequence of ints, or a 1-D array of any integer or float dtype whose
// values are cast to uint32 (as NIXL's binding forces the dtype to uint32).
template<class T>
void
castColumn(const char *p, Py_ssize_t n, Py_ssize_t stride, std::vector<int> &out) {
    for (Py_ssize_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, p + i * stride, sizeof(T));
        out.push_back(static_cast<int>(static_cast<uint32_t>(v)));
    }
}

/**
 * Appends the indices of a 1-D numpy.ndarray of a native-order integer dtype, read through
 * numpy's object layout; false (out untouched) for any other object. Why: exporting a buffer
 * makes numpy build a format string per call (about 0.13 us per array on the development VM,
 * twice per makeXferReq). The fields
 * read (nd, data, dimensions, strides, descr's byteorder and type_num) sit where they are in
 * numpy 1.x and 2.x alike, and setNdarrayType checks them on a probe array.
 */
bool
readNdarray(PyObject *obj, std::vector<int> &out) {
#ifdef NIXL_PY_NUMPY_HEADERS
    if (obj == nullptr || reinterpret_cast<PyObject *>(Py_TYPE(obj)) != gNdarrayType) {
        return false;
    }
    auto *arr = reinterpret_cast<PyArrayObject *>(obj);
    if (PyArray_NDIM(arr) != 1 || PyArray_DESCR(arr)->byteorder == '>') {
        return false;
    }
    const char *p = static_cast<const char *>(PyArray_DATA(arr));
    const Py_ssize_t n = PyArray_DIMS(arr)[0];
    const Py_ssize_t stride = PyArray_STRIDES(arr)[0];
    const size_t start = out.size();
    out.reserve(start + static_cast<size_t>(n));
    switch (PyArray_DESCR(arr)->type_num) {
    case NPY_BYTE: castColumn<int8_t>(p, n, stride, out); return true;
    case NPY_UBYTE: castColumn<uint8_t>(p, n, stride, out); return true;
    case NPY_SHORT: castColumn<int16_t>(p, n, stride, out); return true;
    case NPY_USHORT: castColumn<uint16_t>(p, n, stride, out); return true;
    case NPY_INT: castColumn<int32_t>(p, n, stride, out); return true;
    case NPY_UINT: castColumn<uint32_t>(p, n, stride, out); return true;
    case NPY_LONG:
    case NPY_LONGLONG: castColumn<int64_t>(p, n, stride, out); return true;
    case NPY_ULONG:
    case NPY_ULONGLONG: castColumn<uint64_t>(p, n, stride, out); return true;
    default: return false;
    }
#else
    (void)obj;
    (void)out;
    return false;
#endif
}

/** A Py_buffer released on scope exit. */
struct nixlPyBufferView {
    Py_buffer view{};
    nixlPyBufferView(PyObject *obj) {
        // Strides and format, read-only: what pybind11's buffer::request() asked for. The
        // Py_buffer is read directly (no pybind11 buffer_info, which copies shape, strides and
        // format into vectors and a string per call).
        if (PyObject_GetBuffer(obj, &view, PyBUF_STRIDES | PyBUF_FORMAT) != 0) {
            throw py::error_already_set();
        }
    }
    ~nixlPyBufferView() {
        PyBuffer_Release(&view);
    }
    nixlPyBufferView(const nixlPyBufferView &) = delete;
    nixlPyBufferView &
    operator=(const nixlPyBufferView &) = delete;
};

} // namespace

void
toIndices(PyObject *obj, const char *what, std::vector<int> &out) {
    if (gNdarrayLayoutOk && readNdarray(obj, out)) {
        return;
    }
    if (PyObject_CheckBuffer(obj) && !PyBytes_Check(obj) && !PyByteArray_Check(obj)) {
        nixlPyBufferView buf(obj);
        const Py_buffer &view = buf.view;
        if (view.ndim != 1) {
            throw py::value_error(std::string(what) + " must be a 1-D array");
        }
        const char *fmt = view.format != nullptr ? view.format : "B";
        const char *f0 = fmt;
        if (*f0 == '<' || *f0 == '=' || *f0 == '@') {
            ++f0;
        }
        const char f = (f0[0] != '\0' && f0[1] == '\0') ? f0[0] : '\0';
        out.reserve(out.size() + static_cast<size_t>(view.shape[0]));
        const char *p = static_cast<const char *>(view.buf);
        if ((f == 'l' || f == 'L') && view.itemsize != static_cast<Py_ssize_t>(sizeof(int64_t))) {
            throw py::type_error(std::string(what) + ": unsupported array format");
        }
        switch (f) {
        case 'b': castColumn<int8_t>(p, view.shape[0], view.strides[0], out); break;
        case 'B': castColumn<uint8_t>(p, view.shape[0], view.strides[0], out); break;
        case 'h': castColumn<int16_t>(p, view.shape[0], view.strides[0], out); break;
        case 'H': castColumn<uint16_t>(p, view.shape[0], view.strides[0], out); break;
        case 'i': castColumn<int32_t>(p, view.shape[0], view.strides[0], out); break;
        case 'I': castColumn<uint32_t>(p, view.shape[0], view.strides[0], out); break;
        case 'l':
        case 'q': castColumn<int64_t>(p, view.shape[0], view.strides[0], out); break;
        case 'L':
        case 'Q': castColumn<uint64_t>(p, view.shape[0], view.strides[0], out); break;
        case 'f': castColumn<float>(p, view.shape[0], view.strides[0], out); break;
        case 'd': castColumn<double>(p, view.shape[0], view.strides[0], out); break;
        default:
            throw py::type_error(std::string(what) + ": unsupported array format '" + fmt +
                                 "'");
        }
        return;
    }
    if (!PySequence_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        throw py::type_error(std::string(what) + " must be a sequence of ints or a 1-D array");
    }
    auto push = [&](long long v) {
        if (v == -1 && PyErr_Occurred()) {
            throw py::error_already_set();
        }
        if (v < INT_MIN || v > INT_MAX) {
            throw py::index_error(std::string(what) + ": index " + std::to_string(v) +
                                  " out of range");
        }
        out.push_back(static_cast<int>(v));
    };
    // Fast path for what nixl._api passes (a list of ints): read the items in place, with no
    // iterator object and no __index__ call per element. The GIL is held and reading an exact
    // int runs no Python code, so the list cannot change under the loop.
    const size_t start = out.size();
    if (PyList_CheckExact(obj)) {
        const Py_ssize_t n = PyList_GET_SIZE(obj);
        out.reserve(start + static_cast<size_t>(n));
        Py_ssize_t i = 0;
        for (; i < n; ++i) {
            PyObject *item = PyList_GET_ITEM(obj, i);
            if (!PyLong_CheckExact(item)) {
                break;
            }
            push(PyLong_AsLongLong(item));
        }
        if (i == n) {
            return;
        }
        out.resize(start); // an element of another type: take the general path below
    }
    py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
    out.reserve(start + seq.size());
    for (const py::handle &item : seq) {
        PyObject *idx = PyNumber_Index(item.ptr());
        if (idx == nullptr) {
            PyErr_Clear();
            throw py::type_error(std::string(what) + " must hold ints");
        }
        const long long v = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (v == -1 && PyErr_Occurred()) {
            throw py::error_already_set();
        }
        if (v < INT_MIN || v > INT_MAX) {
            throw py::index_error(std::string(what) + ": index " + std::to_string(v) +
                                  " out of range");
        }
        out.push_back(static_cast<int>(v));
    }
}

namespace {

// The Python objects the four methods return for the two non-error statuses, and the two
// operation enum instances: built once by bindAgentTransferPath. pybind11 would allocate a new
// enum instance per returned status. Intentionally leaked: they must outlive every module-level
// destructor that may still run at interpreter exit.
PyObject *gStatusSuccess = nullptr;
PyObject *gStatusInProg = nullptr;
PyObject *gOpRead = nullptr;
PyObject *gOpWrite = nullptr;
const py::detail::type_info *gAgentType = nullptr;

[[noreturn]] void
badType(const char *fn, const char *arg, const char *want, PyObject *got) {
    throw py::type_error(std::string(fn) + "(): " + arg + " must be " + want + ", not " +
                         Py_TYPE(got)->tp_name);
}

} // namespace

PyTypeObject *
agentPyType() {
    return gAgentType->type;
}

bool
fastIndices(PyObject *obj, std::vector<int> &out) {
    if (PyList_CheckExact(obj)) {
        const Py_ssize_t n = PyList_GET_SIZE(obj);
        const size_t start = out.size();
        out.reserve(start + static_cast<size_t>(n));
        for (Py_ssize_t i = 0; i < n; ++i) {
            PyObject *item = PyList_GET_ITEM(obj, i);
            int overflow = 0;
            const long v = PyLong_CheckExact(item) ? PyLong_AsLongAndOverflow(item, &overflow) : 0;
            if (!PyLong_CheckExact(item) || overflow != 0 || v < INT_MIN || v > INT_MAX) {
                out.resize(start);
                return false;
            }
            out.push_back(static_cast<int>(v));
        }
        return true;
    }
    return gNdarrayLayoutOk && readNdarray(obj, out);
}

void
setNdarrayType(PyObject *type, PyObject *probe) {
    PyObject *t = type == Py_None ? nullptr : type;
    Py_XINCREF(t);
    Py_XSETREF(gNdarrayType, t);
    // The probe is numpy.array([7, -9, 11], dtype=int64)[::2] (strided): read it through the
    // layout and through the buffer protocol; any difference turns the layout path off.
    gNdarrayLayoutOk = true;
    std::vector<int> direct;
    std::vector<int> exported;
    if (t == nullptr || !readNdarray(probe, direct)) {
        gNdarrayLayoutOk = false;
        return;
    }
    gNdarrayLayoutOk = false;
    toIndices(probe, "probe", exported);
    gNdarrayLayoutOk = direct == exported && direct == std::vector<int>{7, 11};
}

PyObject *
statusObject(nixl_status_t st) {
    if (st == NIXL_SUCCESS) {
        Py_INCREF(gStatusSuccess);
        return gStatusSuccess;
    }
    if (st == NIXL_IN_PROG) {
        Py_INCREF(gStatusInProg);
        return gStatusInProg;
    }
    return py::cast(st).release().ptr();
}

void
parseArgs(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
          const char *const *names, Py_ssize_t n, Py_ssize_t required, PyObject **out) {
    if (nargs > n) {
        throw py::type_error(std::string(fn) + "() takes at most " + std::to_string(n) +
                             " arguments (" + std::to_string(nargs) + " given)");
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        out[i] = i < nargs ? args[i] : nullptr;
    }
    if (kwnames != nullptr) {
        const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t k = 0; k < nkw; ++k) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            Py_ssize_t i = 0;
            while (i < n && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) {
                ++i;
            }
            if (i == n) {
                throw py::type_error(std::string(fn) + "() got an unexpected keyword argument '" +
                                     PyUnicode_AsUTF8(key) + "'");
            }
            if (out[i] != nullptr) {
                throw py::type_error(std::string(fn) + "() got multiple values for argument '" +
                                     names[i] + "'");
            }
            out[i] = args[nargs + k];
        }
    }
    for (Py_ssize_t i = 0; i < required; ++i) {
        if (out[i] == nullptr) {
            throw py::type_error(std::string(fn) + "() missing required argument '" + names[i] +
                                 "' (pos " + std::to_string(i + 1) + ")");
        }
    }
}

nixlPyAgent &
agentOf(PyObject *self) {
    auto *inst = reinterpret_cast<py::detail::instance *>(self);
    auto vh = inst->get_value_and_holder(gAgentType, false);
    if (!vh || !vh.holder_constructed()) {
        throw py::type_error("nixlAgent: the object was not initialised (__init__ did not run)");
    }
    return *vh.value_ptr<nixlPyAgent>();
}

uint64_t
handleArg(PyObject *obj, const char *fn, const char *arg) {
    PyObject *num = obj;
    if (!PyLong_Check(obj)) {
        if (PyFloat_Check(obj) || !PyIndex_Check(obj)) {
            badType(fn, arg, "an int handle", obj);
        }
        num = PyNumber_Index(obj);
        if (num == nullptr) {
            throw py::error_already_set();
        }
    }
    // unsigned long is 64 bits here; CPython 3.11 reads it digit by digit, where
    // PyLong_AsUnsignedLongLong goes through _PyLong_AsByteArray (handles are 3-digit ints).
    static_assert(sizeof(unsigned long) == sizeof(uint64_t));
    const unsigned long v = PyLong_AsUnsignedLong(num);
    if (num != obj) {
        Py_DECREF(num);
    }
    if (v == static_cast<unsigned long>(-1) && PyErr_Occurred()) {
        PyErr_Clear();
        throw py::type_error(std::string(fn) + "(): " + arg +
                             " must be a handle int in [0, 2**64)");
    }
    return v;
}

namespace {

nixl_xfer_op_t
opArg(PyObject *obj, const char *fn) {
    if (obj == gOpRead) {
        return NIXL_READ;
    }
    if (obj == gOpWrite) {
        return NIXL_WRITE;
    }
    try {
        return py::cast<nixl_xfer_op_t>(py::handle(obj));
    } catch (const py::cast_error &) {
        badType(fn, "operation", "a nixl_xfer_op_t", obj);
    }
}

/** A notification argument as the pybind11 std::string caster took it: str (UTF-8), bytes or
 *  bytearray. */
std::string
notifArg(PyObject *obj, const char *fn) {
    if (PyBytes_Check(obj) || PyUnicode_Check(obj)) {
        return toStdString(py::handle(obj), "notif_msg");
    }
    if (PyByteArray_Check(obj)) {
        return std::string(PyByteArray_AS_STRING(obj),
                           static_cast<size_t>(PyByteArray_GET_SIZE(obj)));
    }
    badType(fn, "notif_msg", "bytes or str", obj);
}

bool
isEmptyBytes(PyObject *obj) {
    return PyBytes_CheckExact(obj) && PyBytes_GET_SIZE(obj) == 0;
}

std::vector<nixlBackendH *>
backendsArg(nixlPyAgent &a, PyObject *obj, const char *fn) {
    if (PyList_CheckExact(obj) && PyList_GET_SIZE(obj) == 0) {
        return {};
    }
    std::vector<uintptr_t> handles;
    try {
        handles = py::cast<std::vector<uintptr_t>>(py::handle(obj));
    } catch (const py::cast_error &) {
        badType(fn, "backend", "a list of backend handles", obj);
    }
    return a.checkBackends(handles);
}

bool
boolArg(PyObject *obj, const char *fn, const char *arg) {
    if (obj == Py_True) {
        return true;
    }
    if (obj == Py_False || obj == Py_None) {
        return false;
    }
    if (Py_TYPE(obj)->tp_as_number == nullptr || Py_TYPE(obj)->tp_as_number->nb_bool == nullptr) {
        badType(fn, arg, "a bool", obj);
    }
    const int r = PyObject_IsTrue(obj);
    if (r < 0) {
        throw py::error_already_set();
    }
    return r != 0;
}

} // namespace

uint64_t
makeXferCore(nixlPyAgent &agent, nixl_xfer_op_t op, uint64_t lh, const std::vector<int> &li,
             uint64_t rh, const std::vector<int> &ri, const nixl_opt_args_t &extra) {
    nixlPyNoGil release;
    nixlPySlotReservation slot(agent.xfers);
    // Both lists stay prepared for the whole call (shared: other threads may use them too).
    // Slots in address order, so no two threads take a pair in opposite orders.
    nixlPyHandleTable::Slot *ls = agent.dlists.find(lh);
    nixlPyHandleTable::Slot *rs = agent.dlists.find(rh);
    if (ls == nullptr) {
        unknownHandle("prepared list", lh);
    }
    if (rs == nullptr) {
        unknownHandle("prepared list", rh);
    }
    auto *first = ls < rs ? ls : rs;
    auto *second = ls < rs ? rs : ls;
    std::shared_lock l1(first->mutex);
    std::shared_lock<std::shared_mutex> l2;
    if (second != first) {
        l2 = std::shared_lock(second->mutex);
    }
    if (!nixlPyHandleTable::matches(*ls, lh)) {
        unknownHandle("prepared list", lh);
    }
    if (!nixlPyHandleTable::matches(*rs, rh)) {
        unknownHandle("prepared list", rh);
    }
    nixlXferReqH *req = nullptr;
    throwOnError(agent.agent().makeXferReq(op,
                                           reinterpret_cast<nixlDlistH *>(ls->ptr),
                                           li,
                                           reinterpret_cast<nixlDlistH *>(rs->ptr),
                                           ri,
                                           req,
                                           &extra));
    return slot.publish(reinterpret_cast<uintptr_t>(req));
}

nixl_status_t
postXferCore(nixlPyAgent &agent, uint64_t h, const nixl_opt_args_t *extra) {
    nixlPyNoGil release;
    return withHandle<true>(agent.xfers, h, "transfer request", [&](uintptr_t p) {
        return throwOnError(
            agent.agent().postXferReq(reinterpret_cast<nixlXferReqH *>(p), extra));
    });
}

nixl_status_t
xferStatusCore(nixlPyAgent &agent, uint64_t h) {
    nixlPyNoGil release;
    return withHandle<true>(agent.xfers, h, "transfer request", [&](uintptr_t p) {
        return throwOnError(agent.agent().getXferStatus(reinterpret_cast<nixlXferReqH *>(p)));
    });
}

nixl_status_t
releaseXferCore(nixlPyAgent &agent, uint64_t h) {
    nixl_status_t st;
    {
        nixlPyNoGil release;
        st = releaseHandle(agent.xfers, h, "transfer request", [&](uintptr_t p) {
            return agent.agent().releaseXferReq(reinterpret_cast<nixlXferReqH *>(p));
        });
    }
    return throwOnError(st);
}

namespace {

PyObject *
makeXferReq(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    return guarded([&]() -> PyObject * {
        static const char *const names[] = {"operation",      "local_side", "local_indices",
                                            "remote_side",    "remote_indices", "notif_msg",
                                            "backend",        "skip_desc_merg"};
        constexpr const char *fn = "makeXferReq";
        PyObject *a[8];
        parseArgs(fn, args, nargs, kwnames, names, 8, 5, a);
        nixlPyAgent &agent = agentOf(self);
        const nixl_xfer_op_t op = opArg(a[0], fn);
        const uint64_t lh = handleArg(a[1], fn, "local_side");
        const uint64_t rh = handleArg(a[3], fn, "remote_side");
        std::vector<int> li;
        std::vector<int> ri;
        toIndices(a[2], "local_indices", li);
        toIndices(a[4], "remote_indices", ri);
        nixl_opt_args_t extra;
        if (a[5] != nullptr && !isEmptyBytes(a[5])) {
            extra.notif = notifArg(a[5], fn);
        }
        if (a[6] != nullptr) {
            extra.backends = backendsArg(agent, a[6], fn);
        }
        extra.skipDescMerge = a[7] != nullptr && boolArg(a[7], fn, "skip_desc_merg");
        return PyLong_FromUnsignedLongLong(makeXferCore(agent, op, lh, li, rh, ri, extra));
    });
}

PyObject *
postXferReq(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    return guarded([&]() -> PyObject * {
        static const char *const names[] = {"reqh", "notif_msg"};
        constexpr const char *fn = "postXferReq";
        PyObject *a[2];
        parseArgs(fn, args, nargs, kwnames, names, 2, 1, a);
        nixlPyAgent &agent = agentOf(self);
        const uint64_t h = handleArg(a[0], fn, "reqh");
        // A non-empty message replaces the request's; an empty one keeps it (NIXL's rule).
        std::optional<nixl_opt_args_t> extra;
        if (a[1] != nullptr && !isEmptyBytes(a[1])) {
            std::string msg = notifArg(a[1], fn);
            if (!msg.empty()) {
                extra.emplace();
                extra->notif = std::move(msg);
            }
        }
        return statusObject(postXferCore(agent, h, extra ? &*extra : nullptr));
    });
}

PyObject *
getXferStatus(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    return guarded([&]() -> PyObject * {
        static const char *const names[] = {"reqh"};
        constexpr const char *fn = "getXferStatus";
        PyObject *a[1];
        parseArgs(fn, args, nargs, kwnames, names, 1, 1, a);
        nixlPyAgent &agent = agentOf(self);
        return statusObject(xferStatusCore(agent, handleArg(a[0], fn, "reqh")));
    });
}

PyObject *
releaseXferReq(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    return guarded([&]() -> PyObject * {
        static const char *const names[] = {"reqh"};
        constexpr const char *fn = "releaseXferReq";
        PyObject *a[1];
        parseArgs(fn, args, nargs, kwnames, names, 1, 1, a);
        nixlPyAgent &agent = agentOf(self);
        return statusObject(releaseXferCore(agent, handleArg(a[0], fn, "reqh")));
    });
}

// Static: a method descriptor keeps a pointer to its PyMethodDef. The text signatures let
// inspect.signature() read the arguments (pybind11 wrote them into its docstrings).
PyMethodDef gMethods[] = {
    {"makeXferReq",
     asCFunction<makeXferReq>(),
     METH_FASTCALL | METH_KEYWORDS,
     "makeXferReq($self, operation, local_side, local_indices, remote_side, remote_indices, "
     "notif_msg=b'', backend=[], skip_desc_merg=False)\n--\n\n"
     "A request from index selections of two prepared lists; returns its handle."},
    {"postXferReq",
     asCFunction<postXferReq>(),
     METH_FASTCALL | METH_KEYWORDS,
     "postXferReq($self, reqh, notif_msg=b'')\n--\n\n"
     "Posts a request; NIXL_SUCCESS or NIXL_IN_PROG, errors raise. A non-empty notif_msg "
     "replaces the request's."},
    {"getXferStatus",
     asCFunction<getXferStatus>(),
     METH_FASTCALL | METH_KEYWORDS,
     "getXferStatus($self, reqh)\n--\n\nNIXL_SUCCESS or NIXL_IN_PROG; errors raise."},
    {"releaseXferReq",
     asCFunction<releaseXferReq>(),
     METH_FASTCALL | METH_KEYWORDS,
     "releaseXferReq($self, reqh)\n--\n\n"
     "Releases a request (cancelling it when active, or raising nixlRepostActiveError, when "
     "the handle stays live)."},
};

// nixl._bindings._handle: the base of nixl._api's handle classes (nixl_xfer_handle,
// nixl_prepped_dlist_handle). A Python class with __slots__ and __del__ cost a Python frame per
// collected handle and three attribute stores per made one, once per transfer; this C base holds
// the same three slots and releases an unreleased handle when it is collected (tp_finalize:
// getattr(_agent, type(self)._release_call)(_handle); a failure calls self._release_failed()).
// Layout: nixlPyHandleObject (bindings_fast.h).

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
    PyTypeObject t;
    std::memset(&t, 0, sizeof(t));
    Py_SET_REFCNT(reinterpret_cast<PyObject *>(&t), 1);
    t.tp_name = "nixl._bindings._handle";
    t.tp_basicsize = sizeof(nixlPyHandleObject);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
    t.tp_doc = "Base of nixl._api's handle classes: _handle, _agent, _released; releases an "
               "unreleased handle when collected.";
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
bindAgentTransferPath(py::module_ &m, py::object &agent_class) {
    if (gStatusSuccess == nullptr) {
        // The enum's own members (also the module's NIXL_SUCCESS, ...): results compare `is`.
        py::object statuses = py::type::of<nixl_status_t>();
        gStatusSuccess = py::object(statuses.attr("NIXL_SUCCESS")).release().ptr();
        gStatusInProg = py::object(statuses.attr("NIXL_IN_PROG")).release().ptr();
        py::object ops = py::type::of<nixl_xfer_op_t>();
        gOpRead = py::object(ops.attr("NIXL_READ")).release().ptr();
        gOpWrite = py::object(ops.attr("NIXL_WRITE")).release().ptr();
        gAgentType = py::detail::get_type_info(typeid(nixlPyAgent));
    }
    if (PyType_Ready(&gHandleType) < 0) {
        throw py::error_already_set();
    }
    m.attr("_handle") = py::handle(reinterpret_cast<PyObject *>(&gHandleType));
    for (PyMethodDef &def : gMethods) {
        PyObject *descr =
            PyDescr_NewMethod(reinterpret_cast<PyTypeObject *>(agent_class.ptr()), &def);
        if (descr == nullptr) {
            throw py::error_already_set();
        }
        agent_class.attr(def.ml_name) = py::reinterpret_steal<py::object>(descr);
    }
    bindApiFastPath(m);
}

} // namespace nixl_py
