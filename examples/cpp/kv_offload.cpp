/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * KV-cache offload to a file and back with the POSIX backend, as an inference server's storage
 * tier does it:
 *
 *   1. One agent creates the POSIX backend and registers two DRAM regions ("GPU-evicted" KV
 *      blocks and the memory they are later loaded into) and a file in path mode
 *      (metaInfo "rw,create:<path>": the backend opens it at registration).
 *   2. One request WRITEs the N blocks, block i to file offset i * block size; the remote
 *      agent of a file transfer is the agent itself.
 *   3. Another request READs them back into the second region, block i from the file's block
 *      N-1-i into slot N-1-i (the offsets are the descriptors' business, not the order).
 *   4. Every byte is compared; then requests, registrations and the file are released.
 *
 * Exit status 0 means the data was verified ("verified N bytes"); any failure prints a message
 * and exits 1.
 * Usage: kv_offload [--blocks N] [--block-size BYTES] [--dir DIR] [--engine aio|uring|posix_aio]
 *   --blocks N          blocks to offload (default 256)
 *   --block-size BYTES  bytes per block (default 65536)
 *   --dir DIR           where the file is made and removed (default $TMPDIR, else /tmp)
 *   --engine NAME       the backend's I/O engine: Linux AIO (default), io_uring or POSIX AIO
 */
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "nixl.h"

namespace {

// A hang guard, not a deadline: a transfer that is slow under load is not a failure.
constexpr std::chrono::seconds timeout(60);
constexpr const char *agent_name = "kv-node";
// The registration's key: path-mode descriptors carry it as devId (no fd of ours).
constexpr uint64_t file_key = 1;

bool
check(nixl_status_t status, const std::string &what) {
    if (status != NIXL_SUCCESS) {
        std::cerr << "kv_offload: " << what << " failed: " << nixlEnumStrings::statusStr(status)
                  << std::endl;
        return false;
    }
    return true;
}

/** Posts req and polls it to its end (the agent has no progress thread to wait on). */
bool
run(nixlAgent &agent, nixlXferReqH *req, const std::string &what) {
    nixl_status_t st = agent.postXferReq(req);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (st == NIXL_IN_PROG && std::chrono::steady_clock::now() < deadline) {
        st = agent.getXferStatus(req);
    }
    const bool ok = check(st == NIXL_IN_PROG ? NIXL_ERR_UNKNOWN : st, what);
    return check(agent.releaseXferReq(req), "release " + what) && ok;
}

struct options {
    size_t blocks = 256;
    size_t block = 64 * 1024;
    std::string dir;
    std::string engine = "aio";
};

bool
parse(int argc, char **argv, options &o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            return false;
        }
        const std::string v = argv[++i];
        if (a == "--blocks") {
            o.blocks = std::strtoull(v.c_str(), nullptr, 10);
        } else if (a == "--block-size") {
            o.block = std::strtoull(v.c_str(), nullptr, 10);
        } else if (a == "--dir") {
            o.dir = v;
        } else if (a == "--engine" && (v == "aio" || v == "uring" || v == "posix_aio")) {
            o.engine = v;
        } else {
            return false;
        }
    }
    if (o.dir.empty()) {
        const char *t = std::getenv("TMPDIR");
        o.dir = t != nullptr && *t != '\0' ? t : "/tmp";
    }
    return o.blocks > 0 && o.block > 0;
}

/** Block i's bytes: distinct per block and per position. */
uint8_t
blockByte(size_t block, size_t pos) {
    return static_cast<uint8_t>((block * 131 + pos * 7 + (pos >> 8)) & 0xff);
}

int
offload(const options &o, const std::string &path) {
    nixlAgent agent(agent_name, nixlAgentConfig(false));
    nixlBackendH *posix = nullptr;
    if (!check(agent.createBackend("POSIX", {{"use_" + o.engine, "true"}}, posix),
               "createBackend(POSIX)")) {
        return 1;
    }
    const size_t total = o.blocks * o.block;
    std::vector<uint8_t> kv(total), loaded(total, 0);
    for (size_t b = 0; b < o.blocks; ++b) {
        for (size_t p = 0; p < o.block; ++p) {
            kv[b * o.block + p] = blockByte(b, p);
        }
    }
    nixl_reg_dlist_t mem(DRAM_SEG);
    mem.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(kv.data()), total, 0, ""));
    mem.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(loaded.data()), total, 0, ""));
    nixl_reg_dlist_t file(FILE_SEG);
    file.addDesc(nixlBlobDesc(0, total, file_key, "rw,create:" + path));
    if (!check(agent.registerMem(mem), "registerMem(DRAM)") ||
        !check(agent.registerMem(file), "registerMem(FILE " + path + ")")) {
        return 1;
    }

    // Offload: block i of kv to file offset i * block.
    nixl_xfer_dlist_t src(DRAM_SEG), dst(FILE_SEG);
    for (size_t b = 0; b < o.blocks; ++b) {
        src.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(kv.data()) + b * o.block, o.block,
                                  0));
        dst.addDesc(nixlBasicDesc(b * o.block, o.block, file_key));
    }
    nixlXferReqH *req = nullptr;
    bool ok = check(agent.createXferReq(NIXL_WRITE, src, dst, agent_name, req),
                    "createXferReq(WRITE)") &&
        run(agent, req, "WRITE");

    // Load back, last block first, into the other region.
    nixl_xfer_dlist_t back(DRAM_SEG), from(FILE_SEG);
    for (size_t i = 0; i < o.blocks; ++i) {
        const size_t b = o.blocks - 1 - i;
        back.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(loaded.data()) + b * o.block,
                                   o.block, 0));
        from.addDesc(nixlBasicDesc(b * o.block, o.block, file_key));
    }
    ok = ok &&
        check(agent.createXferReq(NIXL_READ, back, from, agent_name, req),
              "createXferReq(READ)") &&
        run(agent, req, "READ");

    if (ok && std::memcmp(kv.data(), loaded.data(), total) != 0) {
        for (size_t i = 0; i < total; ++i) {
            if (kv[i] != loaded[i]) {
                std::cerr << "kv_offload: byte " << i << " (block " << i / o.block
                          << ") differs after the round trip" << std::endl;
                break;
            }
        }
        ok = false;
    }
    ok = check(agent.deregisterMem(file), "deregisterMem(FILE)") && ok;
    ok = check(agent.deregisterMem(mem), "deregisterMem(DRAM)") && ok;
    if (!ok) {
        return 1;
    }
    std::cout << "offloaded " << o.blocks << " blocks of " << o.block << " bytes to " << path
              << " (" << o.engine << ") and loaded them back" << std::endl;
    std::cout << "verified " << total << " bytes" << std::endl;
    return 0;
}

} // namespace

int
main(int argc, char **argv) {
    options o;
    if (!parse(argc, argv, o)) {
        std::cerr << "usage: kv_offload [--blocks N] [--block-size BYTES] [--dir DIR] "
                     "[--engine aio|uring|posix_aio]"
                  << std::endl;
        return 2;
    }
    const std::string path =
        o.dir + "/nixl-kv-offload-" + std::to_string(static_cast<long>(::getpid())) + ".bin";
    const int rc = offload(o, path);
    ::unlink(path.c_str());
    return rc;
}
