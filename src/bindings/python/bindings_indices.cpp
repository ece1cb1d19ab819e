/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// makeXferReq's indices: a sequence of ints, or a 1-D array read through numpy's object layout
// (when nixl._api registered numpy.ndarray and the probe read back right) or through the buffer
// protocol. Shared by nixl._bindings.nixlAgent.makeXferReq and nixl._api's C path.

#include "bindings_indices.h"

#include <climits>
#include <cstring>

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
        push(v);
    }
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

} // namespace nixl_py
