/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixl._bindings: nixlAgentConfig and nixlAgent (one camelCase method per nixlAgent call;
// handles are the ints of nixlPyHandleTable, bindings_handle_table.h). The per-transfer
// methods are in bindings_fast.cpp.
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
// use-after-free. The handle tables (bindings_handle_table.h) close both: each call on a
// request holds that request's slot exclusively, prepared lists are held shared, and an int
// that is not a live handle of this agent (never made, released, of another agent) raises
// nixlInvalidParamError instead of crashing.

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
    py::class_<A> agent_class(m, "nixlAgent");
    agent_class
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
                nixlPySlotReservation slot(a.dlists);
                nixlDlistH *h = nullptr;
                throwOnError(a.agent().prepXferDlist(name, descs, h, &extra));
                return slot.publish(reinterpret_cast<uintptr_t>(h));
            },
            py::arg("agent_name"),
            py::arg("descs"),
            py::arg("backend") = BackendList())
        .def(
            "prepXferDlist",
            [](A &a, nixl_xfer_dlist_t descs, const BackendList &bs) {
                nixl_opt_args_t extra = optArgs(a, bs);
                R release;
                nixlPySlotReservation slot(a.dlists);
                nixlDlistH *h = nullptr;
                throwOnError(a.agent().prepXferDlist(NIXL_INIT_AGENT, descs, h, &extra));
                return slot.publish(reinterpret_cast<uintptr_t>(h));
            },
            py::arg("descs"),
            py::arg("backend") = BackendList())
        // makeXferReq, postXferReq, getXferStatus, releaseXferReq: bindings_fast.cpp.
        .def(
            "createXferReq",
            [](A &a, nixl_xfer_op_t op, nixl_xfer_dlist_t local, nixl_xfer_dlist_t remote,
               const std::string &remote_agent, const std::string &notif, const BackendList &bs) {
                nixl_opt_args_t extra = optArgs(a, bs);
                if (!notif.empty()) {
                    extra.notif = notif;
                }
                R release;
                nixlPySlotReservation slot(a.xfers);
                nixlXferReqH *req = nullptr;
                throwOnError(a.agent().createXferReq(op, local, remote, remote_agent, req, &extra));
                return slot.publish(reinterpret_cast<uintptr_t>(req));
            },
            py::arg("operation"),
            py::arg("local_descs"),
            py::arg("remote_descs"),
            py::arg("remote_agent"),
            py::arg("notif_msg") = std::string(),
            py::arg("backend") = BackendList())
        .def(
            "estimateXferCost",
            [](A &a, uint64_t reqh) {
                std::chrono::microseconds dur{0}, margin{0};
                nixl_cost_t method = nixl_cost_t::ANALYTICAL_BACKEND;
                R release;
                withHandle<true>(a.xfers, reqh, "transfer request", [&](uintptr_t p) {
                    return throwOnError(a.agent().estimateXferCost(
                        reinterpret_cast<nixlXferReqH *>(p), dur, margin, method));
                });
                return std::make_tuple(static_cast<int64_t>(dur.count()),
                                       static_cast<int64_t>(margin.count()),
                                       static_cast<int>(method));
            },
            py::arg("req_handle"))
        .def(
            "getXferTelemetry",
            [](A &a, uint64_t reqh) {
                nixl_xfer_telem_t t{};
                R release;
                withHandle<true>(a.xfers, reqh, "transfer request", [&](uintptr_t p) {
                    return throwOnError(
                        a.agent().getXferTelemetry(reinterpret_cast<nixlXferReqH *>(p), t));
                });
                return t;
            },
            py::arg("reqh"))
        .def(
            "queryXferBackend",
            [](A &a, uint64_t reqh) {
                nixlBackendH *b = nullptr;
                R release;
                withHandle<true>(a.xfers, reqh, "transfer request", [&](uintptr_t p) {
                    return throwOnError(
                        a.agent().queryXferBackend(reinterpret_cast<nixlXferReqH *>(p), b));
                });
                return reinterpret_cast<uintptr_t>(b);
            },
            py::arg("reqh"))
        .def(
            "releasedDlistH",
            [](A &a, uint64_t h) {
                R release;
                return throwOnError(releaseHandle(a.dlists, h, "prepared list", [&](uintptr_t p) {
                    return a.agent().releasedDlistH(reinterpret_cast<nixlDlistH *>(p));
                }));
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
    bindAgentTransferPath(m, agent_class);
}

} // namespace nixl_py
