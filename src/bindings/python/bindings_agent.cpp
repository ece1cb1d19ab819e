/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixl._bindings: nixlAgentConfig and nixlAgent (one camelCase method per nixlAgent call;
// handles are pointer ints).
//
// GIL: every call that can block or take more than a few microseconds converts its Python
// arguments to C++ values first (descriptor lists are copied, so another thread changing the
// Python list cannot race the call), then releases the GIL for the C++ call, and builds Python
// results after taking it back. No C++ call made here calls back into Python.
//
// Threads: vLLM and SGLang call one agent from many Python threads. NIXL's default sync mode
// NONE takes no lock in the agent (src/core/agent/agent_data.h, nixlAgentLock), so concurrent
// calls would race on its maps. An agent created here with syncMode NONE gets RW instead: the
// transfer path (prepXferDlist, makeXferReq, post, status, release, genNotif, getNotifs) shares
// a reader lock, so threads posting and polling different transfers do not wait on each other,
// while registerMem, loadRemoteMD, invalidateRemoteMD, createBackend take the writer lock. An
// uncontended shared lock costs tens of nanoseconds, below the cost of crossing into Python.
// RW alone still leaves two threads on the SAME request racing (getXferStatus writes the
// request's state under the reader lock), and a released handle int reaching the agent is a
// use-after-free. The handle tables (bindings_agent.h) close both: each call on a request holds
// that request's stripe exclusively, prepared lists are held shared, and an int that is not a
// live handle of this agent raises nixlInvalidParamError instead of crashing.

#include <climits>
#include <cstring>

#include <pybind11/chrono.h>
#include <pybind11/stl.h>

#include "bindings_agent.h"
#include "bindings_common.h"

namespace nixl_py {

nixlPyAgent::nixlPyAgent(const std::string &name, nixlAgentConfig cfg) {
    if (cfg.syncMode == nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE) {
        cfg.syncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_RW;
    }
    mode_ = cfg.syncMode;
    agent_ = std::make_unique<nixlAgent>(name, cfg);
}

nixlPyAgent::~nixlPyAgent() {
    // Tearing down backends can wait on their threads: let other Python threads run meanwhile
    // (not during interpreter finalisation, when the GIL must stay where it is).
    if (PyGILState_Check() && !_Py_IsFinalizing()) {
        py::gil_scoped_release release;
        agent_.reset();
    } else {
        agent_.reset();
    }
}

std::vector<nixlBackendH *>
nixlPyAgent::checkBackends(const std::vector<uintptr_t> &handles) {
    std::vector<nixlBackendH *> out;
    if (handles.empty()) {
        return out;
    }
    std::lock_guard lock(backendsMutex_);
    for (uintptr_t h : handles) {
        if (backends_.count(h) == 0) {
            throw nixlInvalidParamError("not a backend handle of this agent: " +
                                        std::to_string(h));
        }
        out.push_back(reinterpret_cast<nixlBackendH *>(h));
    }
    return out;
}

void
nixlPyAgent::addBackend(nixlBackendH *b) {
    std::lock_guard lock(backendsMutex_);
    backends_.insert(reinterpret_cast<uintptr_t>(b));
}

namespace {

using BackendList = std::vector<uintptr_t>;

[[noreturn]] void
unknownHandle(const char *kind, uintptr_t h) {
    throw nixlInvalidParamError(std::string("not a live ") + kind + " handle of this agent: " +
                                std::to_string(h));
}

// Runs f() holding h's stripe (exclusive or shared) after checking h is live. Called with the
// GIL released: a stripe is never waited for while holding the GIL.
template<bool Exclusive, class F>
auto
withHandle(nixlPyHandleTable &table, uintptr_t h, const char *kind, F &&f) {
    auto &s = table.stripeOf(h);
    if constexpr (Exclusive) {
        std::unique_lock lock(s.mutex);
        if (s.live.count(h) == 0) {
            unknownHandle(kind, h);
        }
        return f();
    } else {
        std::shared_lock lock(s.mutex);
        if (s.live.count(h) == 0) {
            unknownHandle(kind, h);
        }
        return f();
    }
}

// Releases h through f(); forgets it when f succeeds.
template<class F>
nixl_status_t
releaseHandle(nixlPyHandleTable &table, uintptr_t h, const char *kind, F &&f) {
    auto &s = table.stripeOf(h);
    std::unique_lock lock(s.mutex);
    if (s.live.count(h) == 0) {
        unknownHandle(kind, h);
    }
    const nixl_status_t st = f();
    if (st == NIXL_SUCCESS) {
        s.live.erase(h);
    }
    return throwOnError(st);
}

// makeXferReq indices: a sequence of ints, or a 1-D array of any integer or float dtype whose
// values are cast to uint32 (as NIXL's binding forces the dtype to uint32).
template<class T>
void
castColumn(const py::buffer_info &info, std::vector<int> &out) {
    const char *p = static_cast<const char *>(info.ptr);
    for (py::ssize_t i = 0; i < info.shape[0]; ++i) {
        T v;
        std::memcpy(&v, p + i * info.strides[0], sizeof(T));
        out.push_back(static_cast<int>(static_cast<uint32_t>(v)));
    }
}

std::vector<int>
toIndices(const py::handle &obj, const char *what) {
    std::vector<int> out;
    if (PyObject_CheckBuffer(obj.ptr()) && !PyBytes_Check(obj.ptr()) &&
        !PyByteArray_Check(obj.ptr())) {
        py::buffer_info info = py::reinterpret_borrow<py::buffer>(obj).request();
        if (info.ndim != 1) {
            throw py::value_error(std::string(what) + " must be a 1-D array");
        }
        std::string fmt = info.format;
        if (!fmt.empty() && (fmt[0] == '<' || fmt[0] == '=' || fmt[0] == '@')) {
            fmt.erase(0, 1);
        }
        out.reserve(static_cast<size_t>(info.shape[0]));
        const char f = fmt.size() == 1 ? fmt[0] : '\0';
        if ((f == 'l' || f == 'L') && info.itemsize != static_cast<py::ssize_t>(sizeof(int64_t))) {
            throw py::type_error(std::string(what) + ": unsupported array format");
        }
        switch (f) {
        case 'b': castColumn<int8_t>(info, out); break;
        case 'B': castColumn<uint8_t>(info, out); break;
        case 'h': castColumn<int16_t>(info, out); break;
        case 'H': castColumn<uint16_t>(info, out); break;
        case 'i': castColumn<int32_t>(info, out); break;
        case 'I': castColumn<uint32_t>(info, out); break;
        case 'l':
        case 'q': castColumn<int64_t>(info, out); break;
        case 'L':
        case 'Q': castColumn<uint64_t>(info, out); break;
        case 'f': castColumn<float>(info, out); break;
        case 'd': castColumn<double>(info, out); break;
        default:
            throw py::type_error(std::string(what) + ": unsupported array format '" +
                                 info.format + "'");
        }
        return out;
    }
    if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) {
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
    if (PyList_CheckExact(obj.ptr())) {
        const Py_ssize_t n = PyList_GET_SIZE(obj.ptr());
        out.reserve(static_cast<size_t>(n));
        Py_ssize_t i = 0;
        for (; i < n; ++i) {
            PyObject *item = PyList_GET_ITEM(obj.ptr(), i);
            if (!PyLong_CheckExact(item)) {
                break;
            }
            push(PyLong_AsLongLong(item));
        }
        if (i == n) {
            return out;
        }
        out.clear(); // an element of another type: take the general path below
    }
    py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
    out.reserve(seq.size());
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
    return out;
}

nixl_opt_args_t
optArgs(nixlPyAgent &a, const BackendList &backends) {
    nixl_opt_args_t extra;
    extra.backends = a.checkBackends(backends);
    return extra;
}

py::dict
notifsToDict(const nixl_notifs_t &notifs, const py::object &base) {
    py::dict out;
    if (!base.is_none()) {
        for (auto item : py::reinterpret_borrow<py::dict>(base)) {
            out[item.first] = py::list(py::reinterpret_borrow<py::object>(item.second));
        }
    }
    for (const auto &[name, msgs] : notifs) {
        py::object key = py::reinterpret_steal<py::object>(
            PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()),
                                 "surrogateescape"));
        if (!key) {
            throw py::error_already_set();
        }
        py::list l = out.contains(key) ? py::list(out[key]) : py::list();
        for (const auto &msg : msgs) {
            l.append(py::bytes(msg));
        }
        out[key] = l;
    }
    return out;
}

std::pair<nixl_b_params_t, std::vector<std::string>>
paramsAndMems(const nixl_b_params_t &params, const nixl_mem_list_t &mems) {
    std::vector<std::string> names;
    for (nixl_mem_t m : mems) {
        names.push_back(nixlEnumStrings::memTypeStr(m));
    }
    return {params, names};
}

// The Python object of a status the transfer path returns (post, status, release). pybind11
// casts an enum result by allocating a new instance each time; the two non-error statuses are
// built once (at bindAgent, after bindTypes registered the enum) and returned by reference
// instead, which saves an allocation per call (docs/python.md, Speed). Intentionally leaked:
// they must outlive every module-level destructor that may still run at interpreter exit.
py::object *gStatusSuccess = nullptr;
py::object *gStatusInProg = nullptr;

py::object
statusObject(nixl_status_t st) {
    if (st == NIXL_SUCCESS && gStatusSuccess != nullptr) {
        return *gStatusSuccess;
    }
    if (st == NIXL_IN_PROG && gStatusInProg != nullptr) {
        return *gStatusInProg;
    }
    return py::cast(st);
}

[[noreturn]] void
noMemViews() {
    throw nixlNotSupportedError(
        "NIXL_ERR_NOT_SUPPORTED: memory views need UCX's GPU device API, which libnixl does not "
        "have (nixl._bindings.HAVE_UCX_GPU_DEVICE_API is False)");
}

} // namespace

void
bindAgent(py::module_ &m) {
    py::class_<nixlAgentConfig>(m, "nixlAgentConfig")
        .def(py::init<>())
        // NIXL's positional form: (use_prog_thread, use_listen_thread, port, sync_mode,
        // num_workers, pthr_delay_us, lthr_delay_us, capture_telemetry).
        .def(py::init([](bool prog, bool listen, uint16_t port, nixl_thread_sync_t sync,
                         unsigned int workers, uint64_t pthr, uint64_t lthr, bool telem) {
                 return nixlAgentConfig(prog, listen, port, sync, workers, pthr, lthr, telem);
             }),
             py::arg("use_prog_thread"),
             py::arg("use_listen_thread") = nixlAgentConfig::kDefaultUseListenThread,
             py::arg("port") = nixlAgentConfig::kDefaultListenPort,
             py::arg("sync_mode") = nixlAgentConfig::kDefaultSyncMode,
             py::arg("num_workers") = 1,
             py::arg("pthr_delay_us") = nixlAgentConfig::kDefaultPthrDelayUs,
             py::arg("lthr_delay_us") = nixlAgentConfig::kDefaultLthrDelayUs,
             py::arg("capture_telemetry") = nixlAgentConfig::kDefaultCaptureTelemetry)
        .def_readwrite("useProgThread", &nixlAgentConfig::useProgThread)
        .def_readwrite("useListenThread", &nixlAgentConfig::useListenThread)
        .def_readwrite("listenPort", &nixlAgentConfig::listenPort)
        .def_readwrite("syncMode", &nixlAgentConfig::syncMode)
        .def_readwrite("captureTelemetry", &nixlAgentConfig::captureTelemetry)
        .def_readwrite("pthrDelay", &nixlAgentConfig::pthrDelay)
        .def_readwrite("lthrDelay", &nixlAgentConfig::lthrDelay)
        .def_readwrite("etcdWatchTimeout", &nixlAgentConfig::etcdWatchTimeout);

    using A = nixlPyAgent;
    using R = nixlPyNoGil;
    if (gStatusSuccess == nullptr) {
        gStatusSuccess = new py::object(py::cast(NIXL_SUCCESS));
        gStatusInProg = new py::object(py::cast(NIXL_IN_PROG));
    }
    py::class_<A>(m, "nixlAgent")
        .def(py::init([](const std::string &name, const nixlAgentConfig &cfg) {
                 R release;
                 return std::make_unique<A>(name, cfg);
             }),
             py::arg("name"),
             py::arg("cfg"))
        .def("getEffectiveSyncMode", &A::syncMode)
        .def("getAvailPlugins",
             [](A &a) {
                 std::vector<nixl_backend_t> plugins;
                 {
                     R release;
                     throwOnError(a.agent().getAvailPlugins(plugins));
                 }
                 return plugins;
             })
        .def(
            "getPluginParams",
            [](A &a, const std::string &type) {
                nixl_b_params_t params;
                nixl_mem_list_t mems;
                {
                    R release;
                    throwOnError(a.agent().getPluginParams(type, mems, params));
                }
                return paramsAndMems(params, mems);
            },
            py::arg("type"))
        .def(
            "getBackendParams",
            [](A &a, uintptr_t backend) {
                auto b = a.checkBackends({backend});
                nixl_b_params_t params;
                nixl_mem_list_t mems;
                throwOnError(a.agent().getBackendParams(b[0], mems, params));
                return paramsAndMems(params, mems);
            },
            py::arg("backend"))
        .def(
            "createBackend",
            [](A &a, const std::string &type, const nixl_b_params_t &params) {
                nixlBackendH *b = nullptr;
                {
                    R release;
                    throwOnError(a.agent().createBackend(type, params, b));
                    a.addBackend(b);
                }
                return reinterpret_cast<uintptr_t>(b);
            },
            py::arg("type"),
            py::arg("initParams") = nixl_b_params_t())
        .def(
            "registerMem",
            [](A &a, nixl_reg_dlist_t descs, const BackendList &backends) {
                nixl_opt_args_t extra = optArgs(a, backends);
                R release;
                return throwOnError(a.agent().registerMem(descs, &extra));
            },
            py::arg("descs"),
            py::arg("backends") = BackendList())
        .def(
            "deregisterMem",
            [](A &a, nixl_reg_dlist_t descs, const BackendList &backends) {
                nixl_opt_args_t extra = optArgs(a, backends);
                R release;
                return throwOnError(a.agent().deregisterMem(descs, &extra));
            },
            py::arg("descs"),
            py::arg("backends") = BackendList())
        .def(
            "queryMem",
            [](A &a, nixl_reg_dlist_t descs, uintptr_t backend) {
                nixl_opt_args_t extra = optArgs(a, {backend});
                std::vector<nixl_query_resp_t> resp;
                {
                    R release;
                    throwOnError(a.agent().queryMem(descs, resp, &extra));
                }
                return resp;
            },
            py::arg("descs"),
            py::arg("backend"))
        .def(
            "makeConnection",
            [](A &a, const std::string &remote, const BackendList &backends) {
                nixl_opt_args_t extra = optArgs(a, backends);
                R release;
                return throwOnError(a.agent().makeConnection(remote, &extra));
            },
            py::arg("remote_agent"),
            py::arg("backends") = BackendList())
        .def(
            "prepXferDlist",
            [](A &a, const std::string &name, nixl_xfer_dlist_t descs, const BackendList &bs) {
                nixl_opt_args_t extra = optArgs(a, bs);
                R release;
                nixlDlistH *h = nullptr;
                throwOnError(a.agent().prepXferDlist(name, descs, h, &extra));
                a.dlists.add(reinterpret_cast<uintptr_t>(h));
                return reinterpret_cast<uintptr_t>(h);
            },
            py::arg("agent_name"),
            py::arg("descs"),
            py::arg("backend") = BackendList())
        .def(
            "prepXferDlist",
            [](A &a, nixl_xfer_dlist_t descs, const BackendList &bs) {
                nixl_opt_args_t extra = optArgs(a, bs);
                R release;
                nixlDlistH *h = nullptr;
                throwOnError(a.agent().prepXferDlist(NIXL_INIT_AGENT, descs, h, &extra));
                a.dlists.add(reinterpret_cast<uintptr_t>(h));
                return reinterpret_cast<uintptr_t>(h);
            },
            py::arg("descs"),
            py::arg("backend") = BackendList())
        .def(
            "makeXferReq",
            [](A &a, nixl_xfer_op_t op, uintptr_t lh, const py::object &lidx, uintptr_t rh,
               const py::object &ridx, const std::string &notif, const BackendList &bs,
               bool skip_merge) {
                std::vector<int> li = toIndices(lidx, "local_indices");
                std::vector<int> ri = toIndices(ridx, "remote_indices");
                nixl_opt_args_t extra = optArgs(a, bs);
                if (!notif.empty()) {
                    extra.notif = notif;
                }
                extra.skipDescMerge = skip_merge;
                R release;
                nixlXferReqH *req = nullptr;
                // Both lists stay prepared for the whole call; another thread may use them too.
                // Stripes in address order, so no two threads take a pair in opposite orders.
                auto &ls = a.dlists.stripeOf(lh);
                auto &rs = a.dlists.stripeOf(rh);
                auto *first = &ls < &rs ? &ls : &rs;
                auto *second = &ls < &rs ? &rs : &ls;
                std::shared_lock l1(first->mutex);
                std::shared_lock<std::shared_mutex> l2;
                if (second != first) {
                    l2 = std::shared_lock(second->mutex);
                }
                if (ls.live.count(lh) == 0) {
                    unknownHandle("prepared list", lh);
                }
                if (rs.live.count(rh) == 0) {
                    unknownHandle("prepared list", rh);
                }
                throwOnError(a.agent().makeXferReq(op,
                                                   reinterpret_cast<nixlDlistH *>(lh),
                                                   li,
                                                   reinterpret_cast<nixlDlistH *>(rh),
                                                   ri,
                                                   req,
                                                   &extra));
                a.xfers.add(reinterpret_cast<uintptr_t>(req));
                return reinterpret_cast<uintptr_t>(req);
            },
            py::arg("operation"),
            py::arg("local_side"),
            py::arg("local_indices"),
            py::arg("remote_side"),
            py::arg("remote_indices"),
            py::arg("notif_msg") = std::string(),
            py::arg("backend") = BackendList(),
            py::arg("skip_desc_merg") = false)
        .def(
            "createXferReq",
            [](A &a, nixl_xfer_op_t op, nixl_xfer_dlist_t local, nixl_xfer_dlist_t remote,
               const std::string &remote_agent, const std::string &notif, const BackendList &bs) {
                nixl_opt_args_t extra = optArgs(a, bs);
                if (!notif.empty()) {
                    extra.notif = notif;
                }
                R release;
                nixlXferReqH *req = nullptr;
                throwOnError(a.agent().createXferReq(op, local, remote, remote_agent, req, &extra));
                a.xfers.add(reinterpret_cast<uintptr_t>(req));
                return reinterpret_cast<uintptr_t>(req);
            },
            py::arg("operation"),
            py::arg("local_descs"),
            py::arg("remote_descs"),
            py::arg("remote_agent"),
            py::arg("notif_msg") = std::string(),
            py::arg("backend") = BackendList())
        .def(
            "estimateXferCost",
            [](A &a, uintptr_t reqh) {
                std::chrono::microseconds dur{0}, margin{0};
                nixl_cost_t method = nixl_cost_t::ANALYTICAL_BACKEND;
                R release;
                withHandle<true>(a.xfers, reqh, "transfer request", [&] {
                    return throwOnError(a.agent().estimateXferCost(
                        reinterpret_cast<nixlXferReqH *>(reqh), dur, margin, method));
                });
                return std::make_tuple(static_cast<int64_t>(dur.count()),
                                       static_cast<int64_t>(margin.count()),
                                       static_cast<int>(method));
            },
            py::arg("req_handle"))
        .def(
            "postXferReq",
            [](A &a, uintptr_t reqh, const std::string &notif) {
                nixl_opt_args_t extra;
                const bool override_notif = !notif.empty();
                if (override_notif) {
                    extra.notif = notif;
                }
                nixl_status_t st;
                {
                    R release;
                    st = withHandle<true>(a.xfers, reqh, "transfer request", [&] {
                        return throwOnError(a.agent().postXferReq(
                            reinterpret_cast<nixlXferReqH *>(reqh),
                            override_notif ? &extra : nullptr));
                    });
                }
                return statusObject(st);
            },
            py::arg("reqh"),
            py::arg("notif_msg") = std::string())
        .def(
            "getXferStatus",
            [](A &a, uintptr_t reqh) {
                nixl_status_t st;
                {
                    R release;
                    st = withHandle<true>(a.xfers, reqh, "transfer request", [&] {
                        return throwOnError(
                            a.agent().getXferStatus(reinterpret_cast<nixlXferReqH *>(reqh)));
                    });
                }
                return statusObject(st);
            },
            py::arg("reqh"))
        .def(
            "getXferTelemetry",
            [](A &a, uintptr_t reqh) {
                nixl_xfer_telem_t t{};
                R release;
                withHandle<true>(a.xfers, reqh, "transfer request", [&] {
                    return throwOnError(
                        a.agent().getXferTelemetry(reinterpret_cast<nixlXferReqH *>(reqh), t));
                });
                return t;
            },
            py::arg("reqh"))
        .def(
            "queryXferBackend",
            [](A &a, uintptr_t reqh) {
                nixlBackendH *b = nullptr;
                R release;
                withHandle<true>(a.xfers, reqh, "transfer request", [&] {
                    return throwOnError(
                        a.agent().queryXferBackend(reinterpret_cast<nixlXferReqH *>(reqh), b));
                });
                return reinterpret_cast<uintptr_t>(b);
            },
            py::arg("reqh"))
        .def(
            "releaseXferReq",
            [](A &a, uintptr_t reqh) {
                nixl_status_t st;
                {
                    R release;
                    st = releaseHandle(a.xfers, reqh, "transfer request", [&] {
                        return a.agent().releaseXferReq(reinterpret_cast<nixlXferReqH *>(reqh));
                    });
                }
                return statusObject(st);
            },
            py::arg("reqh"))
        .def(
            "releasedDlistH",
            [](A &a, uintptr_t h) {
                R release;
                return releaseHandle(a.dlists, h, "prepared list", [&] {
                    return a.agent().releasedDlistH(reinterpret_cast<nixlDlistH *>(h));
                });
            },
            py::arg("handle"))
        .def(
            "getNotifs",
            [](A &a, const py::object &notif_map, const BackendList &bs) {
                if (!notif_map.is_none() && !py::isinstance<py::dict>(notif_map)) {
                    throw py::type_error("notif_map must be a dict or None");
                }
                nixl_opt_args_t extra = optArgs(a, bs);
                nixl_notifs_t notifs;
                {
                    R release;
                    throwOnError(a.agent().getNotifs(notifs, &extra));
                }
                return notifsToDict(notifs, notif_map);
            },
            py::arg("notif_map") = py::none(),
            py::arg("backends") = BackendList())
        .def(
            "genNotif",
            [](A &a, const std::string &remote, const std::string &msg, const BackendList &bs) {
                nixl_opt_args_t extra = optArgs(a, bs);
                R release;
                return throwOnError(a.agent().genNotif(remote, msg, &extra));
            },
            py::arg("remote_agent"),
            py::arg("msg"),
            py::arg("backends") = BackendList())
        .def("getLocalMD",
             [](A &a) {
                 std::string md;
                 {
                     R release;
                     throwOnError(a.agent().getLocalMD(md));
                 }
                 return py::bytes(md);
             })
        .def(
            "getLocalPartialMD",
            [](A &a, nixl_reg_dlist_t descs, bool inc_conn_info, const BackendList &bs) {
                nixl_opt_args_t extra = optArgs(a, bs);
                extra.includeConnInfo = inc_conn_info;
                std::string md;
                {
                    R release;
                    throwOnError(a.agent().getLocalPartialMD(descs, md, &extra));
                }
                return py::bytes(md);
            },
            py::arg("descs"),
            py::arg("inc_conn_info") = false,
            py::arg("backends") = BackendList())
        .def(
            "loadRemoteMD",
            [](A &a, const std::string &md) {
                std::string name;
                {
                    R release;
                    throwOnError(a.agent().loadRemoteMD(md, name));
                }
                return py::bytes(name);
            },
            py::arg("remote_metadata"))
        .def(
            "invalidateRemoteMD",
            [](A &a, const std::string &remote) {
                R release;
                return a.agent().invalidateRemoteMD(remote);
            },
            py::arg("remote_agent"))
        .def(
            "checkRemoteMD",
            [](A &a, const std::string &remote, nixl_xfer_dlist_t descs) {
                R release;
                return a.agent().checkRemoteMD(remote, descs);
            },
            py::arg("remote_name"),
            py::arg("descs"))
        .def(
            "sendLocalMD",
            [](A &a, const std::string &ip, int port) {
                nixl_opt_args_t extra;
                extra.ipAddr = ip;
                extra.port = port;
                R release;
                throwOnError(a.agent().sendLocalMD(&extra));
            },
            py::arg("ip_addr") = std::string(),
            py::arg("port") = 0)
        .def(
            "sendLocalPartialMD",
            [](A &a, nixl_reg_dlist_t descs, bool inc_conn_info, const BackendList &bs,
               const std::string &ip, int port, const std::string &label) {
                nixl_opt_args_t extra = optArgs(a, bs);
                extra.includeConnInfo = inc_conn_info;
                extra.ipAddr = ip;
                extra.port = port;
                extra.metadataLabel = label;
                R release;
                throwOnError(a.agent().sendLocalPartialMD(descs, &extra));
            },
            py::arg("descs"),
            py::arg("inc_conn_info") = false,
            py::arg("backends") = BackendList(),
            py::arg("ip_addr") = std::string(),
            py::arg("port") = 0,
            py::arg("label") = std::string())
        .def(
            "fetchRemoteMD",
            [](A &a, const std::string &remote, const std::string &ip, int port,
               const std::string &label) {
                nixl_opt_args_t extra;
                extra.ipAddr = ip;
                extra.port = port;
                extra.metadataLabel = label;
                R release;
                throwOnError(a.agent().fetchRemoteMD(remote, &extra));
            },
            py::arg("remote_agent"),
            py::arg("ip_addr") = std::string(),
            py::arg("port") = 0,
            py::arg("label") = std::string())
        .def(
            "invalidateLocalMD",
            [](A &a, const std::string &ip, int port) {
                nixl_opt_args_t extra;
                extra.ipAddr = ip;
                extra.port = port;
                R release;
                throwOnError(a.agent().invalidateLocalMD(&extra));
            },
            py::arg("ip_addr") = std::string(),
            py::arg("port") = 0)
        .def(
            "prepMemView",
            [](A &, const nixl_xfer_dlist_t &, const BackendList &) -> uintptr_t { noMemViews(); },
            py::arg("dlist"),
            py::arg("backends") = BackendList())
        .def(
            "prepMemView",
            [](A &, const nixl_remote_dlist_t &, const BackendList &) -> uintptr_t {
                noMemViews();
            },
            py::arg("dlist"),
            py::arg("backends") = BackendList())
        .def(
            "releaseMemView", [](A &, uintptr_t) { noMemViews(); }, py::arg("mvh"));
}

} // namespace nixl_py
