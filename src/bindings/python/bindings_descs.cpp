/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixl._bindings: nixlXferTelemetry and the descriptor lists nixlXferDList (3-tuples),
// nixlRemoteDList ((addr, len, dev, agent)) and nixlRegDList ((addr, len, dev, meta)).
//
// Differences from NIXL's binding, all in the direction of not crashing: [i] and [i]= check
// the index (IndexError; NIXL's read past the end), and element fields that are not integers
// raise TypeError instead of RuntimeError. The Nx3 constructor reads the buffer protocol, so
// numpy is needed only by callers that pass arrays, not to import the module.

#include <cstring>

#include <pybind11/chrono.h>
#include <pybind11/stl.h>

#include "bindings_common.h"

#include "nixl.h"
#include "serdes/serdes.h"

namespace nixl_py {

namespace {

uint64_t
toU64(const py::handle &obj, const char *what) {
    // Python ints and anything with __index__ (numpy integers); floats and str are refused.
    PyObject *idx = PyNumber_Index(obj.ptr());
    if (idx == nullptr) {
        PyErr_Clear();
        throw py::type_error(std::string(what) + " must be an integer, not " +
                             std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
    }
    py::object owned = py::reinterpret_steal<py::object>(idx);
    const unsigned long long v = PyLong_AsUnsignedLongLong(owned.ptr());
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
        throw py::error_already_set(); // OverflowError: negative or wider than 64 bits
    }
    return static_cast<uint64_t>(v);
}

py::tuple
asTuple(const py::handle &obj, size_t arity, const char *shape) {
    if (!py::isinstance<py::tuple>(obj)) {
        throw py::type_error(std::string("each descriptor must be a tuple ") + shape);
    }
    auto t = py::reinterpret_borrow<py::tuple>(obj);
    if (t.size() != arity) {
        throw py::value_error(std::string("each descriptor must be a tuple ") + shape + ", got " +
                              std::to_string(t.size()) + " elements");
    }
    return t;
}

/** A descriptor of shape (addr, len, dev_id, <field>): the three numbers and one string. */
template<class D>
D
withStringFromPy(const py::handle &obj, const char *shape, const char *field) {
    py::tuple t = asTuple(obj, 4, shape);
    return D(static_cast<uintptr_t>(toU64(t[0], "addr")),
             static_cast<size_t>(toU64(t[1], "len")),
             toU64(t[2], "dev_id"),
             toStdString(t[3], field));
}

// Element conversion per descriptor kind.
template<class D> struct DescTraits;

template<> struct DescTraits<nixlBasicDesc> {
    static constexpr const char *shape = "(addr, len, dev_id)";

    static nixlBasicDesc
    fromPy(const py::handle &obj) {
        py::tuple t = asTuple(obj, 3, shape);
        return nixlBasicDesc(static_cast<uintptr_t>(toU64(t[0], "addr")),
                             static_cast<size_t>(toU64(t[1], "len")),
                             toU64(t[2], "dev_id"));
    }

    static py::tuple
    toPy(const nixlBasicDesc &d) {
        return py::make_tuple(d.addr, d.len, d.devId);
    }
};

template<> struct DescTraits<nixlBlobDesc> {
    static constexpr const char *shape = "(addr, len, dev_id, meta)";

    static nixlBlobDesc
    fromPy(const py::handle &obj) {
        return withStringFromPy<nixlBlobDesc>(obj, shape, "meta");
    }

    static py::tuple
    toPy(const nixlBlobDesc &d) {
        return py::make_tuple(d.addr, d.len, d.devId, py::bytes(d.metaInfo));
    }
};

template<> struct DescTraits<nixlRemoteDesc> {
    static constexpr const char *shape = "(addr, len, dev_id, agent_name)";

    static nixlRemoteDesc
    fromPy(const py::handle &obj) {
        return withStringFromPy<nixlRemoteDesc>(obj, shape, "agent_name");
    }

    static py::tuple
    toPy(const nixlRemoteDesc &d) {
        return py::make_tuple(d.addr, d.len, d.devId, d.remoteAgent);
    }
};

template<class D>
nixlDescList<D>
listFromPy(nixl_mem_t mem, const py::list &descs) {
    nixlDescList<D> out(mem);
    out.reserve(descs.size());
    for (const py::handle &item : descs) {
        out.addDesc(DescTraits<D>::fromPy(item));
    }
    return out;
}

size_t
checkedIndex(Py_ssize_t i, int count) {
    const Py_ssize_t n = count;
    if (i < 0) {
        i += n;
    }
    if (i < 0 || i >= n) {
        throw py::index_error("descriptor index " + std::to_string(i) + " outside a list of " +
                              std::to_string(n));
    }
    return static_cast<size_t>(i);
}

// An Nx3 C-contiguous uint64/int64 array (numpy, or anything with the buffer protocol) as rows
// of (addr, len, dev_id). The rows have nixlBasicDesc's layout, so they are copied as a block.
template<class D>
nixlDescList<D>
listFromBuffer(nixl_mem_t mem, const py::buffer &buf) {
    static_assert(sizeof(nixlBasicDesc) == 3 * sizeof(uint64_t));
    py::buffer_info info = buf.request();
    if (info.ndim != 2 || info.shape[1] != 3) {
        throw py::value_error("descs must be an Nx3 array");
    }
    std::string fmt = info.format;
    if (!fmt.empty() && (fmt[0] == '<' || fmt[0] == '=' || fmt[0] == '@')) {
        fmt.erase(0, 1);
    }
    if (info.itemsize != 8 || (fmt != "q" && fmt != "Q" && fmt != "l" && fmt != "L")) {
        throw py::value_error("descs must be an Nx3 array of uint64 or int64, got format '" +
                              info.format + "'");
    }
    const size_t n = static_cast<size_t>(info.shape[0]);
    if (n > 1 && (info.strides[0] != 24 || info.strides[1] != 8)) {
        throw py::value_error("descs must be a C-contiguous array");
    }
    nixlDescList<D> out(mem, static_cast<int>(n));
    const auto *rows = static_cast<const nixlBasicDesc *>(info.ptr);
    if constexpr (std::is_same_v<D, nixlBasicDesc>) {
        if (n > 0) {
            std::memcpy(static_cast<void *>(&out[0]), rows, n * sizeof(nixlBasicDesc));
        }
    } else {
        for (size_t i = 0; i < n; ++i) {
            static_cast<nixlBasicDesc &>(out[i]) = rows[i];
        }
    }
    return out;
}

template<class D>
py::bytes
pickleList(const nixlDescList<D> &l) {
    nixlSerDes sd;
    throwOnError(l.serialize(&sd));
    return py::bytes(sd.exportStr());
}

template<class D>
nixlDescList<D>
unpickleList(const py::bytes &state) {
    nixlSerDes sd;
    if (sd.importStr(std::string(state)) != NIXL_SUCCESS) {
        throw py::value_error("not a pickled descriptor list");
    }
    return nixlDescList<D>(&sd);
}

// The methods every list kind shares.
template<class D>
py::class_<nixlDescList<D>>
bindList(py::module_ &m, const char *name) {
    using L = nixlDescList<D>;
    py::class_<L> c(m, name);
    // The C++ list leaves init_size descriptors uninitialised; here they read as zeros.
    c.def(py::init([](nixl_mem_t mem, int init_size) {
              L l(mem, init_size);
              for (auto &d : l) {
                  static_cast<nixlBasicDesc &>(d) = nixlBasicDesc(0, 0, 0);
              }
              return l;
          }),
          py::arg("type"),
          py::arg("init_size") = 0)
        .def(py::init([](nixl_mem_t mem, const py::list &descs) {
                 return listFromPy<D>(mem, descs);
             }),
             py::arg("type"),
             py::arg("descs").noconvert())
        .def("getType", &L::getType)
        .def("descCount", &L::descCount)
        .def("isEmpty", &L::isEmpty)
        .def(
            "__eq__", [](const L &a, const L &b) { return a == b; }, py::is_operator())
        .def("__getitem__",
             [](const L &l, Py_ssize_t i) {
                 return DescTraits<D>::toPy(l[checkedIndex(i, l.descCount())]);
             })
        .def("__setitem__",
             [](L &l, Py_ssize_t i, const py::handle &desc) {
                 l[checkedIndex(i, l.descCount())] = DescTraits<D>::fromPy(desc);
             })
        .def("addDesc", [](L &l, const py::handle &desc) { l.addDesc(DescTraits<D>::fromPy(desc)); })
        .def("append", [](L &l, const py::handle &desc) { l.addDesc(DescTraits<D>::fromPy(desc)); })
        .def("remDesc", &L::remDesc, py::arg("index"))
        .def("clear", &L::clear)
        .def("print", [](const L &l) { py::print(l.to_string()); })
        .def("__repr__", [](const L &l) { return l.to_string(true); });
    return c;
}

template<class D>
void
addIndexAndPickle(py::class_<nixlDescList<D>> &c) {
    using L = nixlDescList<D>;
    c.def("index",
          [](const L &l, const py::handle &desc) {
              const int idx = l.getIndex(DescTraits<D>::fromPy(desc));
              if (idx < 0) {
                  throwOnError(static_cast<nixl_status_t>(idx));
              }
              return idx;
          })
        .def(py::pickle([](const L &l) { return pickleList<D>(l); },
                        [](const py::bytes &state) { return unpickleList<D>(state); }));
}

} // namespace

void
bindDescriptors(py::module_ &m) {
    py::class_<nixl_xfer_telem_t>(m, "nixlXferTelemetry")
        .def(py::init<>())
        .def_property_readonly("startTime",
                               [](const nixl_xfer_telem_t &t) {
                                   return std::chrono::duration_cast<std::chrono::microseconds>(
                                              t.startTime.time_since_epoch())
                                       .count();
                               })
        .def_property_readonly("postDuration",
                               [](const nixl_xfer_telem_t &t) { return t.postDuration.count(); })
        .def_property_readonly("xferDuration",
                               [](const nixl_xfer_telem_t &t) { return t.xferDuration.count(); })
        .def_readonly("totalBytes", &nixl_xfer_telem_t::totalBytes)
        .def_readonly("descCount", &nixl_xfer_telem_t::descCount);

    auto xfer = bindList<nixlBasicDesc>(m, "nixlXferDList");
    xfer.def(py::init([](nixl_mem_t mem, const py::buffer &descs) {
                 return listFromBuffer<nixlBasicDesc>(mem, descs);
             }),
             py::arg("type"),
             py::arg("descs").noconvert());
    addIndexAndPickle(xfer);

    bindList<nixlRemoteDesc>(m, "nixlRemoteDList");

    auto reg = bindList<nixlBlobDesc>(m, "nixlRegDList");
    reg.def(py::init([](nixl_mem_t mem, const py::buffer &descs) {
                return listFromBuffer<nixlBlobDesc>(mem, descs);
            }),
            py::arg("type"),
            py::arg("descs").noconvert())
        // NIXL's binding converts a tuple of descriptors to an array, whose shape then fails
        // its check: a tuple gives ValueError here as well.
        .def(py::init([](nixl_mem_t, const py::tuple &) -> nixl_reg_dlist_t {
                 throw py::value_error("descs must be a list of (addr, len, dev_id, meta) tuples "
                                       "or an Nx3 array, not a tuple");
             }),
             py::arg("type"),
             py::arg("descs").noconvert())
        .def("trim", &nixl_reg_dlist_t::trim);
    addIndexAndPickle(reg);
}

} // namespace nixl_py
