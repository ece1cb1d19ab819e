/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// rereg_bench: what a re-registration costs next to a first registration, in the same run.
//
// Two agents of this process (TEST, UCX or LIBFABRIC backend). Per round, on a buffer never
// registered before ("first") and then on the same buffer after deregistering it ("again"),
// the timed span is: target registerMem + getLocalPartialMD (with connection info) +
// initiator loadRemoteMD + one WRITE into it (create, post, wait, release). The deregistration
// is not timed. Prints p50, p99, p99.9 and max of both, and the ratio of the medians
// (docs/metadata.md, Re-registration, has a recorded run).
//
//   rereg_bench [--backend TEST|UCX|LIBFABRIC] [--rounds N] [--size BYTES] [--check]
//
// --check exits non-zero when a transfer fails or moves wrong bytes (the smoke test).

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nixl.h"

namespace {

using clock_type = std::chrono::steady_clock;

nixl_reg_dlist_t
regList(uintptr_t addr, size_t len) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(addr, len, 0, ""));
    return l;
}

nixl_xfer_dlist_t
xferList(uintptr_t addr, size_t len) {
    nixl_xfer_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBasicDesc(addr, len, 0));
    return l;
}

struct stats {
    std::vector<double> us;

    double
    at(double q) const {
        std::vector<double> s = us;
        std::sort(s.begin(), s.end());
        const size_t i = std::min(s.size() - 1, static_cast<size_t>(q * static_cast<double>(s.size())));
        return s[i];
    }
};

} // namespace

int
main(int argc, char **argv) {
    std::string backend = "TEST";
    size_t rounds = 2000;
    size_t size = 64 << 10;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--backend" && i + 1 < argc) {
            backend = argv[++i];
        } else if (a == "--rounds" && i + 1 < argc) {
            rounds = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--size" && i + 1 < argc) {
            size = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--check") {
            check = true;
        } else {
            std::fprintf(stderr,
                         "usage: rereg_bench [--backend TEST|UCX|LIBFABRIC] [--rounds N] "
                         "[--size BYTES] [--check]\n");
            return 2;
        }
    }
    if (rounds == 0 || size == 0) {
        std::fprintf(stderr, "rereg_bench: --rounds and --size must be positive\n");
        return 2;
    }
    nixlAgentConfig cfg(false, false);
    nixlAgent a("A", cfg);
    nixlAgent b("B", cfg);
    nixlBackendH *ha = nullptr;
    nixlBackendH *hb = nullptr;
    nixl_b_params_t params;
    if (backend == "LIBFABRIC") {
        params["provider"] = "shm";
    }
    if (a.createBackend(backend, params, ha) != NIXL_SUCCESS ||
        b.createBackend(backend, params, hb) != NIXL_SUCCESS) {
        std::printf("rereg_bench: backend %s unavailable here; skipped\n", backend.c_str());
        return check ? 77 : 0;
    }
    // Every round's target buffer at its own address, so a "first" registration never meets
    // an address registered before; one mapping, page-aligned slots.
    const size_t slot = (size + 4095) & ~static_cast<size_t>(4095);
    void *map = ::mmap(nullptr, slot * rounds, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        std::perror("mmap");
        return 1;
    }
    // Touched now: the first span should not pay the page faults of fresh memory.
    std::memset(map, 0, slot * rounds);
    std::vector<uint8_t> src(size);
    const auto laddr = reinterpret_cast<uintptr_t>(src.data());
    if (a.registerMem(regList(laddr, size)) != NIXL_SUCCESS) {
        std::fprintf(stderr, "rereg_bench: initiator registerMem failed\n");
        return 1;
    }
    {
        nixl_blob_t md;
        std::string name;
        if (b.getLocalMD(md) != NIXL_SUCCESS || a.loadRemoteMD(md, name) != NIXL_SUCCESS) {
            std::fprintf(stderr, "rereg_bench: metadata exchange failed\n");
            return 1;
        }
    }
    nixl_opt_args_t with_conn;
    with_conn.includeConnInfo = true;
    int failures = 0;
    // One timed span: register, publish, load, first WRITE (pattern byte v), verified.
    auto span = [&](uintptr_t x, uint8_t v) -> double {
        std::memset(src.data(), v, size);
        const auto t0 = clock_type::now();
        nixl_blob_t md;
        std::string name;
        nixlXferReqH *req = nullptr;
        nixl_status_t st = b.registerMem(regList(x, size));
        if (st == NIXL_SUCCESS) {
            st = b.getLocalPartialMD(regList(x, size), md, &with_conn);
        }
        if (st == NIXL_SUCCESS) {
            st = a.loadRemoteMD(md, name);
        }
        if (st == NIXL_SUCCESS) {
            st = a.createXferReq(NIXL_WRITE, xferList(laddr, size), xferList(x, size), "B", req);
        }
        if (st == NIXL_SUCCESS) {
            st = a.postXferReq(req);
            while (st == NIXL_IN_PROG) {
                st = a.getXferStatus(req);
            }
            a.releaseXferReq(req);
        }
        const auto t1 = clock_type::now();
        const auto *p = reinterpret_cast<const uint8_t *>(x);
        if (st != NIXL_SUCCESS || p[0] != v || p[size - 1] != v) {
            ++failures;
        }
        return std::chrono::duration<double, std::micro>(t1 - t0).count();
    };
    stats first;
    stats again;
    for (size_t r = 0; r < rounds; ++r) {
        const uintptr_t x = reinterpret_cast<uintptr_t>(map) + r * slot;
        first.us.push_back(span(x, static_cast<uint8_t>(2 * r + 1)));
        b.deregisterMem(regList(x, size));
        again.us.push_back(span(x, static_cast<uint8_t>(2 * r + 2)));
        b.deregisterMem(regList(x, size));
    }
    std::printf("rereg_bench: backend %s, %zu rounds, %zu bytes; register + partial MD + load + "
                "first WRITE, microseconds\n",
                backend.c_str(), rounds, size);
    std::printf("%-22s %10s %10s %10s %10s\n", "", "p50", "p99", "p99.9", "max");
    for (const auto &[label, s] : {std::pair{"first registration", &first},
                                   std::pair{"re-registration", &again}}) {
        std::printf("%-22s %10.2f %10.2f %10.2f %10.2f\n", label, s->at(0.5), s->at(0.99),
                    s->at(0.999), s->at(1.0));
    }
    std::printf("ratio re-registration / first (p50): %.3f\n", again.at(0.5) / first.at(0.5));
    if (failures != 0) {
        std::printf("rereg_bench: %d transfers failed or moved wrong bytes\n", failures);
        return 1;
    }
    a.deregisterMem(regList(laddr, size));
    ::munmap(map, slot * rounds);
    return 0;
}
