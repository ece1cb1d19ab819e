/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_corpus_gen.cpp
 * @brief Writes the seed corpus of one fuzz target at build time.
 *
 * Usage: fuzz_corpus_gen <md_blob|md_blob_nixl|serdes|p2p_frame|nixlcomm_frame|load_remote_md> <directory>
 *
 * Seeds come from the library's own writers (nixlMdEncode, nixlSerDes, a real agent's
 * getLocalMD), so they follow the current formats with no checked-in binaries to keep in step.
 */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "core/metadata/md_blob_nixl.h"
#include "core/metadata/p2p/p2p_frame.h"
#include "nixl.h"
#include "utils/serdes/serdes.h"

namespace {

using seed_list_t = std::vector<std::string>;

std::string
allBytes() {
    std::string s;
    for (int c = 0; c < 256; ++c) {
        s.push_back(static_cast<char>(c));
    }
    return s;
}

// NIXL 1.4's layout: pure (as a NIXL agent writes it; spec 2.1, 2.6) and with our own blob in
// its "libnixl" section (as getLocalMD writes it).
void
mdNixlSeeds(seed_list_t &seeds) {
    nixlMdBlob b;
    b.agentName = "peer";
    b.conns = {{"UCX", std::string("\xaa\xbb\xcc\xdd", 4)}};
    seeds.push_back(nixlMdEncodeNixl(b, nullptr)); // connection only
    b.sections = {{"UCX", DRAM_SEG, {{0x7f0000001000, 4096, 0, "\x01\x02\x03"}}},
                  {"UCX", VRAM_SEG, {{0x1000, 64, 1, allBytes()}, {0x2000, 64, 1, ""}}}};
    seeds.push_back(nixlMdEncodeNixl(b, nullptr)); // full
    const std::string own = nixlMdEncode(b);
    seeds.push_back(nixlMdEncodeNixl(b, &own)); // combined
    b.conns.clear();
    seeds.push_back(nixlMdEncodeNixl(b, nullptr)); // descriptors only
    seeds.push_back(nixlMdEncodeNixl(b, &own));
}

void
mdSeeds(seed_list_t &seeds) {
    nixlMdBlob b;
    b.agentName = "peer";
    seeds.push_back(nixlMdEncode(b));

    b.conns = {{"TEST", "conn-info"}, {"UCX", std::string("ucx\0addr", 8)}};
    seeds.push_back(nixlMdEncode(b));

    b.sections = {{"TEST", DRAM_SEG, {{0x1000, 4096, 0, "pub0"}, {0x3000, 64, 0, "pub1"}}},
                  {"UCX", VRAM_SEG, {{0x7f0000000000, 1 << 20, 1, allBytes()}}},
                  {"UCX", FILE_SEG, {}}};
    seeds.push_back(nixlMdEncode(b));

    // A partial blob: sections only.
    b.conns.clear();
    seeds.push_back(nixlMdEncode(b));
}

void
serdesSeeds(seed_list_t &seeds) {
    nixlSerDes a;
    uint64_t n = 3;
    a.addStr("Agent", "peer");
    a.addBuf("n", &n, sizeof(n));
    a.addStr("", allBytes());
    seeds.push_back(a.exportStr());

    nixl_xfer_dlist_t basic(DRAM_SEG);
    basic.addDesc(nixlBasicDesc(0x1000, 4096, 0));
    basic.addDesc(nixlBasicDesc(0x9000, 1, 7));
    nixlSerDes b;
    basic.serialize(&b);
    seeds.push_back(b.exportStr());

    nixl_reg_dlist_t blobs(FILE_SEG);
    blobs.addDesc(nixlBlobDesc(0, 0, 3, "/path/to/file"));
    blobs.addDesc(nixlBlobDesc(512, 512, 4, std::string("k\0ey", 4)));
    nixlSerDes c;
    blobs.serialize(&c);
    seeds.push_back(c.exportStr());

    nixl_reg_dlist_t empty(VRAM_SEG);
    nixlSerDes d;
    empty.serialize(&d);
    seeds.push_back(d.exportStr());

    // Regression: a field tagged with fuzz_serdes' own "unknown" probe tag (libFuzzer found
    // this; the harness used to assume such a tag cannot be in the input).
    nixlSerDes e;
    e.addStr("\x01no such tag", "present");
    seeds.push_back(e.exportStr());
}

// Blobs of one real agent "seedpeer" with the TEST backend and three registered buffers.
struct agentBlobs {
    nixl_blob_t full;
    nixl_blob_t partial; ///< buffer 1 only, no connection info
    nixl_blob_t partialWithConn; ///< buffer 1 with connection info
    nixl_blob_t connOnly;
};

bool
makeAgentBlobs(agentBlobs &out) {
    static char buffers[3][4096];
    try {
        nixlAgent agent("seedpeer", nixlAgentConfig());
        nixlBackendH *backend = nullptr;
        if (agent.createBackend("TEST", {}, backend) != NIXL_SUCCESS) {
            std::fprintf(stderr, "fuzz_corpus_gen: createBackend(TEST) failed\n");
            return false;
        }
        nixl_reg_dlist_t regs(DRAM_SEG);
        for (auto &buf : buffers) {
            regs.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(buf), sizeof(buf), 0, ""));
        }
        nixl_reg_dlist_t one(DRAM_SEG);
        one.addDesc(regs[1]);
        nixl_opt_args_t with_conn;
        with_conn.includeConnInfo = true;
        const bool ok = agent.registerMem(regs) == NIXL_SUCCESS &&
            agent.getLocalMD(out.full) == NIXL_SUCCESS &&
            agent.getLocalPartialMD(one, out.partial) == NIXL_SUCCESS &&
            agent.getLocalPartialMD(one, out.partialWithConn, &with_conn) == NIXL_SUCCESS &&
            agent.getLocalPartialMD(nixl_reg_dlist_t(DRAM_SEG), out.connOnly) == NIXL_SUCCESS &&
            agent.deregisterMem(regs) == NIXL_SUCCESS;
        if (!ok) {
            std::fprintf(stderr, "fuzz_corpus_gen: the seed agent failed to produce metadata\n");
        }
        return ok;
    }
    catch (const std::exception &e) {
        std::fprintf(stderr, "fuzz_corpus_gen: agent failed: %s\n", e.what());
        return false;
    }
}

// Real blobs pass the backend's own checks of connection info and public data, so the fuzzer
// starts beyond the blob parser. Concatenated blobs are loaded one after the other by the
// fuzz target (see fuzz_load_remote_md.cpp).
bool
agentSeeds(seed_list_t &seeds) {
    agentBlobs a;
    agentBlobs b; // same name, new engine: different connection info
    if (!makeAgentBlobs(a) || !makeAgentBlobs(b)) {
        return false;
    }
    seeds.push_back(a.full);
    seeds.push_back(a.partial);
    seeds.push_back(a.partialWithConn);
    seeds.push_back(a.connOnly);
    seeds.push_back(a.connOnly + a.partial); // connection first, sections later
    seeds.push_back(a.partialWithConn + a.full); // merge adds the other two buffers
    seeds.push_back(a.full + b.full); // connection info changed: NOT_ALLOWED

    // The fuzzing agent's own name: the INVALID_PARAM path.
    nixlMdBlob own;
    own.agentName = "fuzz";
    own.conns = {{"TEST", "x"}};
    seeds.push_back(nixlMdEncode(own));
    return true;
}

// Conversations as a client or listener reads them: the request side (HELLO then one request)
// and the answers, each prefixed by the fuzz target's control byte.
void
p2pSeeds(seed_list_t &seeds) {
    using nixlP2P::encodeFrame;
    nixlMdBlob b;
    b.agentName = "peer";
    b.conns = {{"TEST", "conn-info"}};
    const std::string hello =
        encodeFrame(nixl_p2p_type_t::HELLO, nixlP2P::encodeHello("peer", "token"));
    const std::string frames[] = {
        hello + encodeFrame(nixl_p2p_type_t::LOAD, nixlMdEncode(b)),
        hello + encodeFrame(nixl_p2p_type_t::FETCH, "target"),
        encodeFrame(nixl_p2p_type_t::HELLO, nixlP2P::encodeHello("peer", "")) +
            encodeFrame(nixl_p2p_type_t::INVALIDATE, "peer"),
        encodeFrame(nixl_p2p_type_t::STATUS, nixlP2P::encodeStatus(NIXL_ERR_NOT_ALLOWED, "no")),
        encodeFrame(nixl_p2p_type_t::LOAD, nixlMdEncode(b)),
    };
    for (const auto &f : frames) {
        seeds.push_back(std::string(1, '\x00') + f); // byte by byte
        seeds.push_back(std::string(1, '\x7f') + f); // 255-byte pieces
    }
}

// What a listener reads from a NIXL 1.4 peer (nixl-wire.md 4.2: SEND then LOAD on one
// connection, INVL), plus one conversation in our framing: the listener takes both.
void
nixlcommSeeds(seed_list_t &seeds) {
    using nixlP2P::encodeComm;
    nixlMdBlob b;
    b.agentName = "peer";
    b.conns = {{"TEST", "conn-info"}};
    const std::string frames[] = {
        encodeComm(nixl_p2p_type_t::FETCH, "") + encodeComm(nixl_p2p_type_t::LOAD, nixlMdEncode(b)),
        encodeComm(nixl_p2p_type_t::INVALIDATE, "peer"),
        nixlP2P::encodeFrame(nixl_p2p_type_t::HELLO, nixlP2P::encodeHello("peer", "")) +
            nixlP2P::encodeFrame(nixl_p2p_type_t::FETCH, "target"),
    };
    for (const auto &f : frames) {
        seeds.push_back(std::string(1, '\x00') + f); // byte by byte
        seeds.push_back(std::string(1, '\x7f') + f); // 255-byte pieces
    }
}

bool
writeSeeds(const std::string &dir, const seed_list_t &seeds) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "fuzz_corpus_gen: mkdir %s: %s\n", dir.c_str(), std::strerror(errno));
        return false;
    }
    for (size_t i = 0; i < seeds.size(); ++i) {
        const std::string path = dir + "/seed_" + std::to_string(i);
        FILE *f = std::fopen(path.c_str(), "wb");
        if (f == nullptr) {
            std::fprintf(stderr, "fuzz_corpus_gen: %s: %s\n", path.c_str(), std::strerror(errno));
            return false;
        }
        const bool ok = std::fwrite(seeds[i].data(), 1, seeds[i].size(), f) == seeds[i].size();
        if (std::fclose(f) != 0 || !ok) {
            std::fprintf(stderr, "fuzz_corpus_gen: short write to %s\n", path.c_str());
            return false;
        }
    }
    // Touch the directory so the build sees it as newer than this program.
    return ::utimensat(AT_FDCWD, dir.c_str(), nullptr, 0) == 0;
}

} // namespace

int
main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr,
                     "usage: %s <md_blob|md_blob_nixl|serdes|p2p_frame|nixlcomm_frame|load_remote_md> <directory>\n",
                     argv[0]);
        return 2;
    }
    const std::string target = argv[1];
    seed_list_t seeds;
    if (target == "md_blob") {
        mdSeeds(seeds);
    } else if (target == "md_blob_nixl") {
        mdNixlSeeds(seeds);
    } else if (target == "serdes") {
        serdesSeeds(seeds);
    } else if (target == "p2p_frame") {
        p2pSeeds(seeds);
    } else if (target == "nixlcomm_frame") {
        nixlcommSeeds(seeds);
    } else if (target == "load_remote_md") {
        mdSeeds(seeds);
        mdNixlSeeds(seeds);
        if (!agentSeeds(seeds)) {
            return 1;
        }
    } else {
        std::fprintf(stderr, "fuzz_corpus_gen: unknown target %s\n", target.c_str());
        return 2;
    }
    return writeSeeds(argv[2], seeds) ? 0 : 1;
}
