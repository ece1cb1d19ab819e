/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Two agents in one process move data with the TEST backend:
 *
 *   1. "initiator" and "target" each create a TEST backend and register DRAM buffers.
 *   2. They exchange metadata: getLocalMD on one side, loadRemoteMD on the other.
 *   3. The initiator WRITEs its source buffer into the target's buffer and attaches a
 *      notification; the target waits for it with getNotifs and checks the bytes it received.
 *   4. The initiator READs the target's buffer back into a third buffer and checks every byte.
 *   5. Everything is released in reverse order.
 *
 * Exit status 0 means the data was verified; any failure prints a message and exits 1.
 * Usage: nixl_example [--async] [--backend NAME] [--progress-thread] [--rounds N]
 *   --async            the TEST backend finishes transfers only after polling
 *   --backend NAME     TEST (default) or UCX, LIBFABRIC: the data backend both agents use
 *   --progress-thread  the agents run with a progress thread (nixlAgentConfig::useProgThread)
 *   --rounds N         the whole sequence N times, new agents each time (default 1)
 * With --backend UCX --progress-thread this is the shape of NIXL's agent_example (two agents in
 * one process over UCX); the test suite runs it repeatedly, and the stress lane under load.
 */
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nixl.h"

namespace {

constexpr const char *initiator_name = "initiator";
constexpr const char *target_name = "target";
constexpr const char *notif_text = "write-done";

/** The transfer is split into this many descriptors of chunk_size bytes each. */
constexpr size_t num_chunks = 4;
constexpr size_t chunk_size = 256 * 1024;
constexpr size_t buffer_size = num_chunks * chunk_size;

// A hang guard, not a deadline: a transfer that is slow under load is not a failure.
constexpr std::chrono::seconds timeout(60);

bool
check(nixl_status_t status, const std::string &what) {
    if (status != NIXL_SUCCESS) {
        std::cerr << "nixl_example: " << what << " failed: " << nixlEnumStrings::statusStr(status)
                  << " (" << static_cast<int>(status) << ")" << std::endl;
        return false;
    }
    return true;
}

/** Polls a posted request until it leaves NIXL_IN_PROG, at most `timeout`. */
nixl_status_t
waitForXfer(nixlAgent &agent, nixlXferReqH *req, nixl_status_t posted) {
    nixl_status_t status = posted;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (status == NIXL_IN_PROG) {
        if (std::chrono::steady_clock::now() > deadline) {
            std::cerr << "nixl_example: transfer did not complete within " << timeout.count()
                      << " s" << std::endl;
            return NIXL_ERR_UNKNOWN;
        }
        status = agent.getXferStatus(req);
    }
    return status;
}

/** Byte i of the pattern the initiator writes; never the fill value of the other buffers. */
uint8_t
patternByte(size_t i) {
    return static_cast<uint8_t>((i * 131 + 7) % 251 + 1);
}

/** Index of the first byte of buf that differs from the pattern, or buf.size(). */
size_t
firstMismatch(const std::vector<uint8_t> &buf) {
    for (size_t i = 0; i < buf.size(); ++i) {
        if (buf[i] != patternByte(i)) {
            return i;
        }
    }
    return buf.size();
}

/** The whole buffer as one registration (DRAM needs no metaInfo). */
nixl_reg_dlist_t
regList(std::vector<uint8_t> &buf) {
    nixl_reg_dlist_t list(DRAM_SEG);
    list.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf.data()), buf.size(), 0, ""));
    return list;
}

/** The buffer as num_chunks transfer descriptors of chunk_size bytes. */
nixl_xfer_dlist_t
xferList(std::vector<uint8_t> &buf) {
    nixl_xfer_dlist_t list(DRAM_SEG);
    for (size_t i = 0; i < num_chunks; ++i) {
        list.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(buf.data() + i * chunk_size),
                                   chunk_size,
                                   0));
    }
    return list;
}

struct options_t {
    bool async = false;
    std::string backend = "TEST";
    bool progressThread = false;
    unsigned rounds = 1;
};

int
run(const options_t &o) {
    nixlAgentConfig cfg(o.progressThread);
    nixlAgent initiator(initiator_name, cfg);
    nixlAgent target(target_name, cfg);

    nixl_b_params_t params;
    if (o.async) {
        params["async"] = "true";
        params["async_polls"] = "3";
    }
    nixlBackendH *init_backend = nullptr;
    nixlBackendH *target_backend = nullptr;
    if (!check(initiator.createBackend(o.backend, params, init_backend),
               "initiator createBackend") ||
        !check(target.createBackend(o.backend, params, target_backend),
               "target createBackend")) {
        std::cerr << "nixl_example: is the " << o.backend
                  << " plugin in NIXL_PLUGIN_DIR or next to libnixl?" << std::endl;
        return 1;
    }

    std::vector<uint8_t> src(buffer_size);
    std::vector<uint8_t> dst(buffer_size, 0);
    std::vector<uint8_t> remote(buffer_size, 0);
    for (size_t i = 0; i < buffer_size; ++i) {
        src[i] = patternByte(i);
    }

    nixl_opt_args_t init_opts;
    init_opts.backends.push_back(init_backend);
    nixl_opt_args_t target_opts;
    target_opts.backends.push_back(target_backend);

    nixl_reg_dlist_t src_reg = regList(src);
    nixl_reg_dlist_t dst_reg = regList(dst);
    nixl_reg_dlist_t remote_reg = regList(remote);
    if (!check(initiator.registerMem(src_reg, &init_opts), "initiator registerMem(src)") ||
        !check(initiator.registerMem(dst_reg, &init_opts), "initiator registerMem(dst)") ||
        !check(target.registerMem(remote_reg, &target_opts), "target registerMem")) {
        return 1;
    }

    // Metadata exchange. In a real deployment the blobs travel over the network (sendLocalMD,
    // etcd, ...); here they are handed over in memory.
    nixl_blob_t target_md;
    nixl_blob_t init_md;
    std::string loaded_name;
    if (!check(target.getLocalMD(target_md), "target getLocalMD") ||
        !check(initiator.loadRemoteMD(target_md, loaded_name), "initiator loadRemoteMD")) {
        return 1;
    }
    if (loaded_name != target_name) {
        std::cerr << "nixl_example: loadRemoteMD returned agent '" << loaded_name
                  << "', expected '" << target_name << "'" << std::endl;
        return 1;
    }
    if (!check(initiator.getLocalMD(init_md), "initiator getLocalMD") ||
        !check(target.loadRemoteMD(init_md, loaded_name), "target loadRemoteMD")) {
        return 1;
    }
    std::cout << "metadata exchanged: initiator blob " << init_md.size() << " bytes, target blob "
              << target_md.size() << " bytes" << std::endl;

    nixl_xfer_dlist_t src_list = xferList(src);
    nixl_xfer_dlist_t dst_list = xferList(dst);
    nixl_xfer_dlist_t remote_list = xferList(remote);

    // WRITE src -> target's buffer, with a notification for the target.
    nixl_opt_args_t write_opts;
    write_opts.backends.push_back(init_backend);
    write_opts.notifMsg = notif_text;
    write_opts.hasNotif = true;
    nixlXferReqH *write_req = nullptr;
    if (!check(initiator.createXferReq(
                   NIXL_WRITE, src_list, remote_list, target_name, write_req, &write_opts),
               "createXferReq(WRITE)")) {
        return 1;
    }
    nixl_status_t status = initiator.postXferReq(write_req);
    if (status < 0) {
        check(status, "postXferReq(WRITE)");
        initiator.releaseXferReq(write_req);
        return 1;
    }
    status = waitForXfer(initiator, write_req, status);
    bool ok = check(status, "WRITE transfer");
    ok = check(initiator.releaseXferReq(write_req), "releaseXferReq(WRITE)") && ok;
    if (!ok) {
        return 1;
    }
    std::cout << "WRITE of " << buffer_size << " bytes in " << num_chunks
              << " descriptors completed" << std::endl;

    // The target learns about the write from the notification.
    bool notified = false;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!notified) {
        nixl_notifs_t notifs;
        if (!check(target.getNotifs(notifs), "target getNotifs")) {
            return 1;
        }
        auto it = notifs.find(initiator_name);
        if (it != notifs.end()) {
            for (const nixl_blob_t &msg : it->second) {
                if (msg == notif_text) {
                    notified = true;
                } else {
                    std::cerr << "nixl_example: unexpected notification '" << msg << "'"
                              << std::endl;
                    return 1;
                }
            }
        }
        if (!notified && std::chrono::steady_clock::now() > deadline) {
            std::cerr << "nixl_example: no notification within " << timeout.count() << " s"
                      << std::endl;
            return 1;
        }
        if (!notified) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    size_t bad = firstMismatch(remote);
    if (bad != buffer_size) {
        std::cerr << "nixl_example: target buffer differs at byte " << bad << " after WRITE"
                  << std::endl;
        return 1;
    }
    std::cout << "target received notification '" << notif_text << "' from " << initiator_name
              << " and verified " << buffer_size << " bytes" << std::endl;

    // READ the target's buffer back into dst.
    nixlXferReqH *read_req = nullptr;
    if (!check(initiator.createXferReq(
                   NIXL_READ, dst_list, remote_list, target_name, read_req, &init_opts),
               "createXferReq(READ)")) {
        return 1;
    }
    status = initiator.postXferReq(read_req);
    if (status < 0) {
        check(status, "postXferReq(READ)");
        initiator.releaseXferReq(read_req);
        return 1;
    }
    status = waitForXfer(initiator, read_req, status);
    ok = check(status, "READ transfer");
    ok = check(initiator.releaseXferReq(read_req), "releaseXferReq(READ)") && ok;
    if (!ok) {
        return 1;
    }
    bad = firstMismatch(dst);
    if (bad != buffer_size) {
        std::cerr << "nixl_example: read-back buffer differs at byte " << bad << std::endl;
        return 1;
    }
    std::cout << "READ back into a third buffer completed" << std::endl;

    // Release in reverse order: peers' metadata, then registrations. The agents' destructors
    // release the backends.
    ok = check(initiator.invalidateRemoteMD(target_name), "initiator invalidateRemoteMD");
    ok = check(target.invalidateRemoteMD(initiator_name), "target invalidateRemoteMD") && ok;
    ok = check(target.deregisterMem(remote_reg, &target_opts), "target deregisterMem") && ok;
    ok = check(initiator.deregisterMem(dst_reg, &init_opts), "initiator deregisterMem(dst)") && ok;
    ok = check(initiator.deregisterMem(src_reg, &init_opts), "initiator deregisterMem(src)") && ok;
    if (!ok) {
        return 1;
    }

    std::cout << "verified " << buffer_size << " bytes (WRITE with notification, READ back)"
              << std::endl;
    return 0;
}

} // namespace

int
main(int argc, char **argv) {
    options_t o;
    for (int i = 1; i < argc; ++i) {
        const bool more = i + 1 < argc;
        if (std::strcmp(argv[i], "--async") == 0) {
            o.async = true;
        } else if (std::strcmp(argv[i], "--progress-thread") == 0) {
            o.progressThread = true;
        } else if (std::strcmp(argv[i], "--backend") == 0 && more) {
            o.backend = argv[++i];
        } else if (std::strcmp(argv[i], "--rounds") == 0 && more &&
                   std::strtoul(argv[i + 1], nullptr, 10) > 0) {
            o.rounds = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        } else {
            std::cerr << "usage: " << argv[0]
                      << " [--async] [--backend NAME] [--progress-thread] [--rounds N]"
                      << std::endl;
            return 2;
        }
    }
    try {
        for (unsigned r = 0; r < o.rounds; ++r) {
            if (o.rounds > 1) {
                std::cout << "round " << r + 1 << " of " << o.rounds << std::endl;
            }
            if (int rc = run(o); rc != 0) {
                return rc;
            }
        }
        return 0;
    }
    catch (const std::exception &e) {
        std::cerr << "nixl_example: exception: " << e.what() << std::endl;
        return 1;
    }
}
