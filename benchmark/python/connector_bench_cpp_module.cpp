/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file connector_bench_cpp_module.cpp
 * @brief _connector_bench_cpp: connector_bench_cpp.h's C++ loop, callable from the Python
 *        process that runs connector_bench.py, so the Python package is compared with C++ in
 *        the same process (same allocator, same UCX copy path) and in alternating rounds.
 *
 * Benchmark-only; not installed. Each round runs with the GIL released (it calls no Python).
 */

#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "connector_bench_cpp.h"

namespace py = pybind11;

PYBIND11_MODULE(_connector_bench_cpp, m) {
    m.doc() = "The C++ connector-shaped READ loop of benchmark/python (benchmark only).";
    using B = nixl_bench::connectorBenchCpp;
    py::class_<B>(m, "Bench")
        .def(py::init([](const std::string &prefix, int max_blocks, size_t block_bytes,
                         bool prog_thread, const std::string &sync) {
                 nixl_thread_sync_t mode = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE;
                 if (sync == "rw") {
                     mode = nixl_thread_sync_t::NIXL_THREAD_SYNC_RW;
                 } else if (sync == "strict") {
                     mode = nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT;
                 } else if (sync != "none") {
                     throw std::invalid_argument("sync must be none, rw or strict, not " + sync);
                 }
                 auto b = std::make_unique<B>(prefix, max_blocks, block_bytes, prog_thread, mode);
                 if (!b->ok()) {
                     throw std::runtime_error("connector bench setup: " + b->error());
                 }
                 return b;
             }),
             py::arg("prefix"), py::arg("max_blocks"), py::arg("block_bytes"),
             py::arg("prog_thread"), py::arg("sync") = "none")
        .def(
            "round",
            [](B &b, int k, int iters) {
                nixl_bench::connectorRound r;
                bool ok = false;
                {
                    py::gil_scoped_release nogil;
                    ok = b.round(k, iters, r);
                }
                if (!ok) {
                    throw std::runtime_error("connector bench round: " + b.error());
                }
                return py::make_tuple(r.wallNs, r.cpuNs);
            },
            py::arg("k"), py::arg("iters"),
            "iters transfers of k blocks; returns (wall ns, calling-thread CPU ns) per transfer")
        .def("verify", &B::verify);
}
