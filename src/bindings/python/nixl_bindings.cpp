/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixl._bindings: the enums, exceptions and module constants, and the module entry point.
// Descriptor lists are in bindings_descs.cpp, the agent in bindings_agent.cpp.

#include "bindings_common.h"

#include "nixl.h"

namespace nixl_py {

nixl_status_t
throwOnError(nixl_status_t status) {
    if (status == NIXL_SUCCESS || status == NIXL_IN_PROG) {
        return status;
    }
    throwStatus(status, nixlEnumStrings::statusStr(status));
}

void
throwStatus(nixl_status_t status, const std::string &msg) {
    switch (status) {
    case NIXL_ERR_NOT_POSTED:
        throw nixlNotPostedError(msg);
    case NIXL_ERR_INVALID_PARAM:
        throw nixlInvalidParamError(msg);
    case NIXL_ERR_BACKEND:
        throw nixlBackendError(msg);
    case NIXL_ERR_NOT_FOUND:
        throw nixlNotFoundError(msg);
    case NIXL_ERR_MISMATCH:
        throw nixlMismatchError(msg);
    case NIXL_ERR_NOT_ALLOWED:
        throw nixlNotAllowedError(msg);
    case NIXL_ERR_REPOST_ACTIVE:
        throw nixlRepostActiveError(msg);
    case NIXL_ERR_UNKNOWN:
        throw nixlUnknownError(msg);
    case NIXL_ERR_NOT_SUPPORTED:
        throw nixlNotSupportedError(msg);
    case NIXL_ERR_REMOTE_DISCONNECT:
        throw nixlRemoteDisconnectError(msg);
    case NIXL_ERR_CANCELED:
        throw nixlCancelledError(msg);
    case NIXL_ERR_NO_TELEMETRY:
        throw nixlNoTelemetryError(msg);
    default:
        throw std::runtime_error("BAD_STATUS");
    }
}

std::string
toStdString(const py::handle &obj, const char *what) {
    if (PyBytes_Check(obj.ptr())) {
        char *buf = nullptr;
        Py_ssize_t len = 0;
        PyBytes_AsStringAndSize(obj.ptr(), &buf, &len);
        return std::string(buf, static_cast<size_t>(len));
    }
    if (PyUnicode_Check(obj.ptr())) {
        Py_ssize_t len = 0;
        const char *buf = PyUnicode_AsUTF8AndSize(obj.ptr(), &len);
        if (buf == nullptr) {
            throw py::error_already_set();
        }
        return std::string(buf, static_cast<size_t>(len));
    }
    throw py::type_error(std::string(what) + " must be str or bytes, not " +
                         std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
}

void
bindTypes(py::module_ &m) {
    m.attr("NIXL_INIT_AGENT") = NIXL_INIT_AGENT;
    m.attr("DEFAULT_COMM_PORT") = static_cast<int>(default_comm_port);
    // libnixl has no UCX GPU device API (no CUDA device-side transfers); the mem-view calls
    // raise nixlNotSupportedError.
    m.attr("HAVE_UCX_GPU_DEVICE_API") = false;

    py::enum_<nixl_thread_sync_t>(m, "nixl_thread_sync_t")
        .value("NIXL_THREAD_SYNC_NONE", nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE)
        .value("NIXL_THREAD_SYNC_STRICT", nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT)
        .value("NIXL_THREAD_SYNC_RW", nixl_thread_sync_t::NIXL_THREAD_SYNC_RW)
        .value("NIXL_THREAD_SYNC_DEFAULT", nixl_thread_sync_t::NIXL_THREAD_SYNC_DEFAULT)
        .export_values();

    py::enum_<nixl_mem_t>(m, "nixl_mem_t")
        .value("DRAM_SEG", DRAM_SEG)
        .value("VRAM_SEG", VRAM_SEG)
        .value("BLK_SEG", BLK_SEG)
        .value("OBJ_SEG", OBJ_SEG)
        .value("FILE_SEG", FILE_SEG)
        .export_values();

    py::enum_<nixl_xfer_op_t>(m, "nixl_xfer_op_t")
        .value("NIXL_READ", NIXL_READ)
        .value("NIXL_WRITE", NIXL_WRITE)
        .export_values();

    py::enum_<nixl_cost_t>(m, "nixl_cost_t")
        .value("NIXL_COST_ANALYTICAL_BACKEND", nixl_cost_t::ANALYTICAL_BACKEND)
        .export_values();

    // As NIXL's binding: the statuses that have an exception of their own but no member here
    // (REMOTE_DISCONNECT, CANCELED, NO_TELEMETRY) only ever surface as exceptions.
    py::enum_<nixl_status_t>(m, "nixl_status_t")
        .value("NIXL_IN_PROG", NIXL_IN_PROG)
        .value("NIXL_SUCCESS", NIXL_SUCCESS)
        .value("NIXL_ERR_NOT_POSTED", NIXL_ERR_NOT_POSTED)
        .value("NIXL_ERR_INVALID_PARAM", NIXL_ERR_INVALID_PARAM)
        .value("NIXL_ERR_BACKEND", NIXL_ERR_BACKEND)
        .value("NIXL_ERR_NOT_FOUND", NIXL_ERR_NOT_FOUND)
        .value("NIXL_ERR_MISMATCH", NIXL_ERR_MISMATCH)
        .value("NIXL_ERR_NOT_ALLOWED", NIXL_ERR_NOT_ALLOWED)
        .value("NIXL_ERR_REPOST_ACTIVE", NIXL_ERR_REPOST_ACTIVE)
        .value("NIXL_ERR_UNKNOWN", NIXL_ERR_UNKNOWN)
        .value("NIXL_ERR_NOT_SUPPORTED", NIXL_ERR_NOT_SUPPORTED)
        .export_values();

    py::register_exception<nixlNotPostedError>(m, "nixlNotPostedError");
    py::register_exception<nixlInvalidParamError>(m, "nixlInvalidParamError");
    py::register_exception<nixlBackendError>(m, "nixlBackendError");
    py::register_exception<nixlNotFoundError>(m, "nixlNotFoundError");
    py::register_exception<nixlMismatchError>(m, "nixlMismatchError");
    py::register_exception<nixlNotAllowedError>(m, "nixlNotAllowedError");
    py::register_exception<nixlRepostActiveError>(m, "nixlRepostActiveError");
    py::register_exception<nixlUnknownError>(m, "nixlUnknownError");
    py::register_exception<nixlNotSupportedError>(m, "nixlNotSupportedError");
    py::register_exception<nixlRemoteDisconnectError>(m, "nixlRemoteDisconnectError");
    py::register_exception<nixlCancelledError>(m, "nixlCancelledError");
    py::register_exception<nixlNoTelemetryError>(m, "nixlNoTelemetryError");
}

} // namespace nixl_py

PYBIND11_MODULE(_bindings, m) {
    m.doc() = "libnixl's low-level binding: NIXL descriptor lists and the nixlAgent C++ API";
    nixl_py::bindTypes(m);
    nixl_py::bindDescriptors(m);
    nixl_py::bindAgent(m);
}
