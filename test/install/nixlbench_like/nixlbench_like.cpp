/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * What nixlbench needs from an installed NIXL, in miniature: the four headers it includes from
 * <prefix>/include, the names it uses through them (nixlTime with std::chrono, nixlSerDes for
 * exchanging descriptor lists), and a timed WRITE + READ over the prepped path between two
 * agents with the TEST backend (found in <libdir>/plugins, no NIXL_PLUGIN_DIR).
 * Success prints "nixlbench_like: verified <N> bytes" and exits 0.
 */
#include <cstring>
#include <iostream>

#include "nixl.h"
#include "nixl_types.h"
#include "utils/common/nixl_time.h"
#include "utils/serdes/serdes.h"

using namespace nixlTime;

namespace {

constexpr int blocks = 8;
constexpr size_t block_size = 4096;

bool
check(nixl_status_t st, const char *what) {
    if (st != NIXL_SUCCESS) {
        std::cerr << "nixlbench_like: " << what << ": " << nixlEnumStrings::statusStr(st)
                  << std::endl;
    }
    return st == NIXL_SUCCESS;
}

nixl_xfer_dlist_t
blockList(std::vector<uint8_t> &buf) {
    nixl_xfer_dlist_t list(DRAM_SEG);
    for (int i = 0; i < blocks; ++i) {
        list.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(buf.data()) + i * block_size,
                                   block_size, 0));
    }
    return list;
}

/** Posts and waits (bounded by 10 s on the steady clock) the way nixlbench's worker loop does. */
nixl_status_t
runXfer(nixlAgent &agent, nixlXferReqH *req, us_t &elapsed) {
    const steady_clock::time_point t0 = steady_clock::now();
    nixl_status_t st = agent.postXferReq(req);
    while (st == NIXL_IN_PROG && steady_clock::now() - t0 < seconds(10)) {
        st = agent.getXferStatus(req);
    }
    elapsed = static_cast<us_t>(duration_cast<microseconds>(steady_clock::now() - t0).count());
    return st;
}

int
run() {
    nixlAgent initiator("bench_initiator", nixlAgentConfig(false));
    nixlAgent target("bench_target", nixlAgentConfig(false));
    nixlBackendH *ib = nullptr;
    nixlBackendH *tb = nullptr;
    if (!check(initiator.createBackend("TEST", {}, ib), "createBackend initiator") ||
        !check(target.createBackend("TEST", {}, tb), "createBackend target")) {
        return 1;
    }
    const size_t total = blocks * block_size;
    std::vector<uint8_t> local(total);
    std::vector<uint8_t> remote(total, 0);
    for (size_t i = 0; i < total; ++i) {
        local[i] = static_cast<uint8_t>(i * 7 + 3);
    }
    nixl_reg_dlist_t lreg(DRAM_SEG);
    nixl_reg_dlist_t rreg(DRAM_SEG);
    lreg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(local.data()), total, 0, ""));
    rreg.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(remote.data()), total, 0, ""));
    if (!check(initiator.registerMem(lreg), "registerMem") ||
        !check(target.registerMem(rreg), "registerMem target")) {
        return 1;
    }

    // The target's metadata and its block list travel as one nixlSerDes buffer.
    nixl_blob_t md;
    if (!check(target.getLocalMD(md), "getLocalMD")) {
        return 1;
    }
    nixlSerDes out;
    out.addStr("agentMD", md);
    if (!check(blockList(remote).serialize(&out), "serialize")) {
        return 1;
    }
    nixlSerDes in;
    if (!check(in.importStr(out.exportStr()), "importStr")) {
        return 1;
    }
    std::string peer;
    if (!check(initiator.loadRemoteMD(in.getStr("agentMD"), peer), "loadRemoteMD")) {
        return 1;
    }
    const nixl_xfer_dlist_t remote_blocks(&in);
    if (remote_blocks.descCount() != blocks) {
        std::cerr << "nixlbench_like: block list lost through nixlSerDes" << std::endl;
        return 1;
    }

    nixlDlistH *lside = nullptr;
    nixlDlistH *rside = nullptr;
    if (!check(initiator.prepXferDlist(NIXL_INIT_AGENT, blockList(local), lside), "prep local") ||
        !check(initiator.prepXferDlist(peer, remote_blocks, rside), "prep remote")) {
        return 1;
    }
    std::vector<int> idx(blocks);
    for (int i = 0; i < blocks; ++i) {
        idx[i] = i;
    }
    nixlXferReqH *req = nullptr;
    us_t write_us = 0;
    if (!check(initiator.makeXferReq(NIXL_WRITE, lside, idx, rside, idx, req), "makeXferReq") ||
        !check(runXfer(initiator, req, write_us), "WRITE") ||
        !check(initiator.releaseXferReq(req), "releaseXferReq")) {
        return 1;
    }
    if (std::memcmp(local.data(), remote.data(), total) != 0) {
        std::cerr << "nixlbench_like: WRITE data differs" << std::endl;
        return 1;
    }
    std::fill(local.begin(), local.end(), 0); // <algorithm> through nixl.h, as in NIXL
    us_t read_us = 0;
    if (!check(initiator.makeXferReq(NIXL_READ, lside, idx, rside, idx, req), "makeXferReq") ||
        !check(runXfer(initiator, req, read_us), "READ") ||
        !check(initiator.releaseXferReq(req), "releaseXferReq") ||
        !check(initiator.releasedDlistH(lside), "releasedDlistH") ||
        !check(initiator.releasedDlistH(rside), "releasedDlistH")) {
        return 1;
    }
    if (std::memcmp(local.data(), remote.data(), total) != 0) {
        std::cerr << "nixlbench_like: READ data differs" << std::endl;
        return 1;
    }
    std::cout << "nixlbench_like: WRITE " << write_us << " us, READ " << read_us << " us"
              << std::endl;
    std::cout << "nixlbench_like: verified " << 2 * total << " bytes" << std::endl;
    return 0;
}

} // namespace

int
main() {
    return run();
}
