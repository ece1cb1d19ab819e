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

#include <optional>

#include <pybind11/stl.h>

namespace nixl_py {

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
    const nixlPyBindResult r =
        bindVectorcall(args, nargs, kwnames, n, required, out, [&](PyObject *key) {
            Py_ssize_t i = 0;
            while (i < n && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) {
                ++i;
            }
            return i;
        });
    switch (r.error) {
    case nixlPyBindError::NONE:
        return;
    case nixlPyBindError::TOO_MANY:
        throw py::type_error(std::string(fn) + "() takes at most " + std::to_string(n) +
                             " arguments (" + std::to_string(nargs) + " given)");
    case nixlPyBindError::UNKNOWN_KEYWORD:
        throw py::type_error(std::string(fn) + "() got an unexpected keyword argument '" +
                             PyUnicode_AsUTF8(r.key) + "'");
    case nixlPyBindError::REPEATED:
        throw py::type_error(std::string(fn) + "() got multiple values for argument '" +
                             names[r.index] + "'");
    case nixlPyBindError::MISSING:
        throw py::type_error(std::string(fn) + "() missing required argument '" +
                             names[r.index] + "' (pos " + std::to_string(r.index + 1) + ")");
    case nixlPyBindError::LOOKUP_FAILED:
        break;
    }
    throw py::error_already_set();
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

/** A method whose one argument is a request handle (reqh), answered with Core's status. */
template<const char *Fn, nixl_status_t (*Core)(nixlPyAgent &, uint64_t)>
PyObject *
reqhMethod(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    return guarded([&]() -> PyObject * {
        static const char *const names[] = {"reqh"};
        PyObject *a[1];
        parseArgs(Fn, args, nargs, kwnames, names, 1, 1, a);
        nixlPyAgent &agent = agentOf(self);
        return statusObject(Core(agent, handleArg(a[0], Fn, "reqh")));
    });
}

constexpr char kGetXferStatus[] = "getXferStatus";
constexpr char kReleaseXferReq[] = "releaseXferReq";
constexpr auto getXferStatus = reqhMethod<kGetXferStatus, xferStatusCore>;
constexpr auto releaseXferReq = reqhMethod<kReleaseXferReq, releaseXferCore>;

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

} // namespace

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
    readyHandleType(m);
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
