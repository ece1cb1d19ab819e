/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_ucx_wire_corpus.cpp
 * @brief Writes the seed corpus of fuzz_ucx_wire at build time from this machine's UCX: real
 *        worker addresses and packed remote keys, framed by the plugin's own encoders.
 *
 * Usage: fuzz_ucx_wire_corpus <directory>. Each seed starts with the target's mode byte (see
 * fuzz_ucx_wire.cpp).
 */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <ucp/api/ucp.h>

#include "ucx_nixl_peer.h"
#include "ucx_wire.h"

namespace {

bool
writeSeed(const std::string &dir, size_t n, char mode, const std::string &body) {
    const std::string path = dir + "/seed" + std::to_string(n);
    FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        std::fprintf(stderr, "fuzz_ucx_wire_corpus: %s: %s\n", path.c_str(), std::strerror(errno));
        return false;
    }
    bool ok = std::fwrite(&mode, 1, 1, f) == 1 &&
        std::fwrite(body.data(), 1, body.size(), f) == body.size();
    ok = std::fclose(f) == 0 && ok;
    return ok;
}

int
fail(const char *what, ucs_status_t st) {
    std::fprintf(stderr, "fuzz_ucx_wire_corpus: %s: %s\n", what, ucs_status_string(st));
    return 1;
}

} // namespace

int
main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_ucx_wire_corpus <directory>\n");
        return 2;
    }
    const std::string dir = argv[1];
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "fuzz_ucx_wire_corpus: %s: %s\n", dir.c_str(), std::strerror(errno));
        return 1;
    }
    ucp_config_t *config = nullptr;
    ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
    if (st != UCS_OK) {
        return fail("ucp_config_read", st);
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
    ucp_context_h ctx = nullptr;
    st = ucp_init(&params, config, &ctx);
    ucp_config_release(config);
    if (st != UCS_OK) {
        return fail("ucp_init", st);
    }
    ucp_worker_params_t wp{};
    ucp_worker_h worker = nullptr;
    st = ucp_worker_create(ctx, &wp, &worker);
    if (st != UCS_OK) {
        return fail("ucp_worker_create", st);
    }
    ucp_address_t *addr = nullptr;
    size_t addr_len = 0;
    st = ucp_worker_get_address(worker, &addr, &addr_len);
    if (st != UCS_OK) {
        return fail("ucp_worker_get_address", st);
    }
    const std::string address(reinterpret_cast<const char *>(addr), addr_len);
    ucp_worker_release_address(worker, addr);

    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    void *mem = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        std::fprintf(stderr, "fuzz_ucx_wire_corpus: mmap: %s\n", std::strerror(errno));
        return 1;
    }
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = mem;
    mp.length = page;
    ucp_mem_h memh = nullptr;
    st = ucp_mem_map(ctx, &mp, &memh);
    if (st != UCS_OK) {
        return fail("ucp_mem_map", st);
    }
    void *rkey = nullptr;
    size_t rkey_len = 0;
    st = ucp_rkey_pack(ctx, memh, &rkey, &rkey_len);
    if (st != UCS_OK) {
        return fail("ucp_rkey_pack", st);
    }
    const std::string packed(static_cast<const char *>(rkey), rkey_len);
    ucp_rkey_buffer_release(rkey);
    ucp_mem_unmap(ctx, memh);
    ::munmap(mem, page);
    ucp_worker_destroy(worker);
    ucp_cleanup(ctx);

    nixlUcx::connInfoWire ci;
    ci.nonce = 0x1234567890abcdefULL;
    ci.bootId = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
    ci.pidNs = 4026531836ULL;
    ci.pid = 4242;
    ci.startTime = 123456;
    ci.regTable = 0x7f0000000000ULL;
    ci.regSlots = 1 << 20;
    ci.addrs = {address};
    nixlUcx::publicDataWire pd;
    pd.mem = 0;
    pd.owner = ci.nonce;
    pd.base = 0x7f1000000000ULL;
    pd.len = 1 << 16;
    pd.slot = 1;
    pd.regId = 1;
    pd.rkey = packed;

    size_t n = 0;
    bool ok = writeSeed(dir, n++, 0, nixlUcx::encodeConnInfo(ci));
    ok = writeSeed(dir, n++, 1, nixlUcx::encodePublicData(pd)) && ok;
    ok = writeSeed(dir, n++, 2, address) && ok;
    ok = writeSeed(dir, n++, 3, packed) && ok;
    // Resealing seeds: the checksum is rewritten before decoding (see fuzz_ucx_wire.cpp).
    ok = writeSeed(dir, n++, static_cast<char>(0x80), nixlUcx::encodeConnInfo(ci)) && ok;
    ok = writeSeed(dir, n++, static_cast<char>(0x81), nixlUcx::encodePublicData(pd)) && ok;
    ci.addrs = {address, address};
    ok = writeSeed(dir, n++, static_cast<char>(0x80), nixlUcx::encodeConnInfo(ci)) && ok;
    // Notification headers: version 1, and version 2 with a trace context.
    std::string v1;
    nixlUcx::encodeNotifHeader(v1, "agent0", nullptr);
    ok = writeSeed(dir, n++, 4, v1) && ok;
    uint8_t trace[NIXL_BE_TRACE_CTX_WIRE_SIZE] = {0};
    for (size_t i = 1; i < sizeof(trace); ++i) {
        trace[i] = static_cast<uint8_t>(i);
    }
    std::string v2;
    nixlUcx::encodeNotifHeader(v2, "agent0", trace);
    ok = writeSeed(dir, n++, 4, v2) && ok;
    // NIXL 1.4's forms: the raw address, the raw key, an AM-0 notification body.
    ok = writeSeed(dir, n++, 5, address) && ok;
    ok = writeSeed(dir, n++, 6, packed) && ok;
    ok = writeSeed(dir, n++, 7, nixlUcx::encodeNixlNotif("agent0", "done")) && ok;
    return ok ? 0 : 1;
}
