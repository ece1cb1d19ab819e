/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * A program written against the NIXL 1.4 public API only, built by test/install/check_install.sh
 * against an installed libnixl with nothing but `pkg-config --cflags --libs nixl` and -std=c++17.
 * It runs without NIXL_PLUGIN_DIR, so the TEST plugin must be found next to the installed
 * libnixl (<libdir>/plugins).
 *
 * It exercises: two agents and their TEST backends, memory registration, metadata exchange,
 * nixlSerDes on a descriptor list (as an application sends its buffer list to a peer), a WRITE
 * made by createXferReq with a notification, a READ made through the prepped path
 * (prepXferDlist + makeXferReq, posted twice), nixlEnumStrings and nixlTime.
 * Success prints "nixl14_app: verified <N> bytes" and exits 0.
 */
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "nixl.h"
#include "nixl_descriptors.h"
#include "nixl_params.h"
#include "nixl_types.h"
#include "utils/common/nixl_time.h"
#include "utils/serdes/serdes.h"

namespace {

const std::string initiator_name = "app_initiator";
const std::string target_name = "app_target";

constexpr int num_chunks = 4;
constexpr size_t chunk_size = 4096;
constexpr size_t buffer_size = num_chunks * chunk_size;

bool
ok(nixl_status_t status, const char *what) {
    if (status != NIXL_SUCCESS) {
        std::cerr << "nixl14_app: " << what << ": " << nixlEnumStrings::statusStr(status)
                  << std::endl;
        return false;
    }
    return true;
}

nixl_status_t
waitXfer(nixlAgent &agent, nixlXferReqH *req, nixl_status_t status) {
    const nixlTime::ms_t deadline = nixlTime::getMs() + 10000;
    while (status == NIXL_IN_PROG && nixlTime::getMs() < deadline) {
        status = agent.getXferStatus(req);
    }
    return status;
}

uint8_t
pattern(size_t i) {
    return static_cast<uint8_t>(i % 253 + 1);
}

nixl_xfer_dlist_t
chunks(std::vector<uint8_t> &buf) {
    nixl_xfer_dlist_t list(DRAM_SEG);
    for (int i = 0; i < num_chunks; ++i) {
        list.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(buf.data()) + i * chunk_size,
                                   chunk_size,
                                   0));
    }
    return list;
}

nixl_reg_dlist_t
whole(std::vector<uint8_t> &buf) {
    nixl_reg_dlist_t list(DRAM_SEG);
    list.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, ""));
    return list;
}

int
run() {
    const nixlTime::us_t start = nixlTime::getUs();
    nixlAgentConfig cfg(false, false, 0, nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT);
    nixlAgent initiator(initiator_name, cfg);
    nixlAgent target(target_name, cfg);

    std::vector<nixl_backend_t> plugins;
    if (!ok(initiator.getAvailPlugins(plugins), "getAvailPlugins")) {
        return 1;
    }
    bool have_test = false;
    for (const nixl_backend_t &p : plugins) {
        have_test = have_test || p == "TEST";
    }
    if (!have_test) {
        std::cerr << "nixl14_app: TEST plugin not found next to libnixl" << std::endl;
        return 1;
    }

    nixlBackendH *ib = nullptr;
    nixlBackendH *tb = nullptr;
    if (!ok(initiator.createBackend("TEST", {}, ib), "initiator createBackend") ||
        !ok(target.createBackend("TEST", {}, tb), "target createBackend")) {
        return 1;
    }

    std::vector<uint8_t> src(buffer_size);
    std::vector<uint8_t> dst(buffer_size, 0);
    std::vector<uint8_t> remote(buffer_size, 0);
    for (size_t i = 0; i < buffer_size; ++i) {
        src[i] = pattern(i);
    }
    nixl_reg_dlist_t src_reg = whole(src);
    nixl_reg_dlist_t dst_reg = whole(dst);
    nixl_reg_dlist_t remote_reg = whole(remote);
    if (!ok(initiator.registerMem(src_reg), "registerMem src") ||
        !ok(initiator.registerMem(dst_reg), "registerMem dst") ||
        !ok(target.registerMem(remote_reg), "registerMem remote")) {
        return 1;
    }

    // The target tells the initiator which buffers to use: a descriptor list through nixlSerDes.
    nixl_xfer_dlist_t remote_list = chunks(remote);
    nixlSerDes ser;
    if (!ok(remote_list.serialize(&ser), "serialize descriptor list")) {
        return 1;
    }
    const std::string wire = ser.exportStr();
    nixlSerDes des;
    if (!ok(des.importStr(wire), "importStr")) {
        return 1;
    }
    nixl_xfer_dlist_t received(&des);
    if (!(received == remote_list) || received.descCount() != num_chunks) {
        std::cerr << "nixl14_app: descriptor list changed through nixlSerDes" << std::endl;
        return 1;
    }

    nixl_blob_t md;
    std::string peer;
    if (!ok(target.getLocalMD(md), "getLocalMD") ||
        !ok(initiator.loadRemoteMD(md, peer), "loadRemoteMD")) {
        return 1;
    }
    if (peer != target_name) {
        std::cerr << "nixl14_app: loadRemoteMD named '" << peer << "'" << std::endl;
        return 1;
    }

    // WRITE through createXferReq, with a notification (NIXL 1.4 style: notifMsg + hasNotif).
    nixl_opt_args_t extra;
    extra.backends.push_back(ib);
    extra.notifMsg = "app-write";
    extra.hasNotif = true;
    nixl_xfer_dlist_t src_list = chunks(src);
    nixlXferReqH *req = nullptr;
    if (!ok(initiator.createXferReq(NIXL_WRITE, src_list, received, peer, req, &extra),
            "createXferReq")) {
        return 1;
    }
    nixl_status_t st = waitXfer(initiator, req, initiator.postXferReq(req));
    if (!ok(st, "WRITE") || !ok(initiator.releaseXferReq(req), "releaseXferReq")) {
        return 1;
    }
    nixl_notifs_t notifs;
    const nixlTime::ms_t deadline = nixlTime::getMs() + 10000;
    while (notifs[initiator_name].empty() && nixlTime::getMs() < deadline) {
        if (!ok(target.getNotifs(notifs), "getNotifs")) {
            return 1;
        }
    }
    if (notifs[initiator_name].size() != 1 || notifs[initiator_name][0] != "app-write") {
        std::cerr << "nixl14_app: notification missing or wrong" << std::endl;
        return 1;
    }
    if (std::memcmp(src.data(), remote.data(), buffer_size) != 0) {
        std::cerr << "nixl14_app: WRITE data differs" << std::endl;
        return 1;
    }

    // READ through the prepped path: chunk i of dst receives remote chunk (num_chunks - 1 - i).
    nixlDlistH *local_side = nullptr;
    nixlDlistH *remote_side = nullptr;
    nixl_xfer_dlist_t dst_list = chunks(dst);
    if (!ok(initiator.prepXferDlist(NIXL_INIT_AGENT, dst_list, local_side), "prep local") ||
        !ok(initiator.prepXferDlist(peer, received, remote_side), "prep remote")) {
        return 1;
    }
    std::vector<int> local_idx;
    std::vector<int> remote_idx;
    for (int i = 0; i < num_chunks; ++i) {
        local_idx.push_back(i);
        remote_idx.push_back(num_chunks - 1 - i);
    }
    if (!ok(initiator.makeXferReq(NIXL_READ, local_side, local_idx, remote_side, remote_idx, req),
            "makeXferReq")) {
        return 1;
    }
    for (int round = 0; round < 2; ++round) {
        std::memset(dst.data(), 0, buffer_size);
        st = waitXfer(initiator, req, initiator.postXferReq(req));
        if (!ok(st, "READ")) {
            return 1;
        }
        for (size_t i = 0; i < buffer_size; ++i) {
            const size_t chunk = i / chunk_size;
            const size_t from = (num_chunks - 1 - chunk) * chunk_size + i % chunk_size;
            if (dst[i] != pattern(from)) {
                std::cerr << "nixl14_app: READ round " << round << " differs at byte " << i
                          << std::endl;
                return 1;
            }
        }
    }
    if (!ok(initiator.releaseXferReq(req), "releaseXferReq (prepped)") ||
        !ok(initiator.releasedDlistH(local_side), "releasedDlistH local") ||
        !ok(initiator.releasedDlistH(remote_side), "releasedDlistH remote")) {
        return 1;
    }

    if (!ok(initiator.invalidateRemoteMD(peer), "invalidateRemoteMD") ||
        !ok(target.deregisterMem(remote_reg), "deregisterMem remote") ||
        !ok(initiator.deregisterMem(dst_reg), "deregisterMem dst") ||
        !ok(initiator.deregisterMem(src_reg), "deregisterMem src")) {
        return 1;
    }

    std::cout << "nixl14_app: " << nixlEnumStrings::memTypeStr(DRAM_SEG) << " "
              << nixlEnumStrings::xferOpStr(NIXL_WRITE) << "+"
              << nixlEnumStrings::xferOpStr(NIXL_READ) << " "
              << nixlEnumStrings::statusStr(NIXL_SUCCESS) << " in "
              << (nixlTime::getUs() - start) << " us" << std::endl;
    std::cout << "nixl14_app: verified " << (buffer_size + 2 * buffer_size) << " bytes"
              << std::endl;
    return 0;
}

} // namespace

int
main() {
    try {
        return run();
    }
    catch (const std::exception &e) {
        std::cerr << "nixl14_app: exception: " << e.what() << std::endl;
        return 1;
    }
}
