/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_load_remote_md.cpp
 * @brief libFuzzer target for nixlAgent::loadRemoteMD: one agent "fuzz" with the TEST backend
 *        loads every input as a peer's metadata.
 *
 * Written against the public API only. Checked beyond "no crash": failures are error codes
 * (never IN_PROG), a successful load names the peer, loading the same blob again is a no-op
 * merge that succeeds, and invalidateRemoteMD then forgets every peer the input loaded, which
 * also gives each input a fresh agent state (crashes reproduce from the one saved input).
 */
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "nixl.h"

namespace {

// Deliberately never destroyed: libFuzzer may exit from any thread at any point, and tearing
// down an agent from an atexit handler would only add noise. It stays reachable, so leak
// checking does not report it.
nixlAgent *fuzz_agent = nullptr;

// One input may hold several blobs back to back, loaded in order: that reaches merging (a
// partial blob after a full one) and changed connection info, which need two loads. Each
// blob's header says how long it is (docs/metadata.md: u64 at offset 16); without a plausible
// one, the rest of the input is the last blob. A blob in NIXL's layout (getLocalMD's own) runs
// to the next "nixlSerDes|". A single blob, as the seeds are, is one piece.
constexpr int max_pieces = 8;
constexpr size_t length_offset = 16;
constexpr size_t header_size = 24;

// NIXL 1.4's layout has no length field: such a piece ends where the next stream starts.
constexpr std::string_view serdes_magic{"nixlSerDes|"};

size_t
pieceLength(std::string_view rest) {
    if (rest.substr(0, serdes_magic.size()) == serdes_magic) {
        const size_t next = rest.find(serdes_magic, serdes_magic.size());
        return next == std::string_view::npos ? rest.size() : next;
    }
    if (rest.size() < header_size) {
        return rest.size();
    }
    uint64_t declared = 0;
    for (int i = 7; i >= 0; --i) {
        declared = (declared << 8) | static_cast<unsigned char>(rest[length_offset + i]);
    }
    return declared >= header_size && declared < rest.size() ? static_cast<size_t>(declared) :
                                                               rest.size();
}

} // namespace

extern "C" int
LLVMFuzzerInitialize(int *, char ***) {
    nixlFuzzQuietLogs();
#ifdef NIXL_FUZZ_PLUGIN_DIR
    // Find the coverage-instrumented TEST plugin built next to this fuzzer unless told otherwise.
    setenv("NIXL_PLUGIN_DIR", NIXL_FUZZ_PLUGIN_DIR, 0);
#endif
    try {
        fuzz_agent = new nixlAgent("fuzz", nixlAgentConfig());
    }
    catch (const std::exception &e) {
        std::fprintf(stderr, "fuzz_load_remote_md: cannot create the agent: %s\n", e.what());
        std::abort();
    }
    nixlBackendH *backend = nullptr;
    const nixl_status_t st = fuzz_agent->createBackend("TEST", {}, backend);
    if (st != NIXL_SUCCESS) {
        std::fprintf(stderr,
                     "fuzz_load_remote_md: createBackend(TEST) failed with %d; is NIXL_PLUGIN_DIR "
                     "(%s) pointing at libplugin_TEST.so?\n",
                     static_cast<int>(st),
                     std::getenv("NIXL_PLUGIN_DIR") ? std::getenv("NIXL_PLUGIN_DIR") : "unset");
        std::abort();
    }
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    std::set<std::string> loaded;
    size_t off = 0;
    for (int piece = 0; off < size && piece < max_pieces; ++piece) {
        const size_t len = pieceLength(input.substr(off));
        const nixl_blob_t blob(input.substr(off, len));
        off += len;

        std::string name;
        const nixl_status_t st = fuzz_agent->loadRemoteMD(blob, name);
        if (st != NIXL_SUCCESS) {
            NIXL_FUZZ_CHECK(st < 0);
            continue;
        }
        NIXL_FUZZ_CHECK(!name.empty());
        NIXL_FUZZ_CHECK(name != "fuzz");
        // Same connection info, same descriptors: merging it again changes nothing.
        std::string name2;
        NIXL_FUZZ_CHECK(fuzz_agent->loadRemoteMD(blob, name2) == NIXL_SUCCESS);
        NIXL_FUZZ_CHECK(name2 == name);
        loaded.insert(name);
    }

    // A later blob failing half-way unloads only what that call loaded: every peer loaded
    // earlier is still known, and forgetting it leaves the agent as it was before this input.
    for (const std::string &name : loaded) {
        NIXL_FUZZ_CHECK(fuzz_agent->invalidateRemoteMD(name) == NIXL_SUCCESS);
        NIXL_FUZZ_CHECK(fuzz_agent->invalidateRemoteMD(name) == NIXL_ERR_NOT_FOUND);
    }
    return 0;
}
