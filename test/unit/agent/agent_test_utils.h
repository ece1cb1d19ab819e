/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file agent_test_utils.h
 * @brief Shared pieces of the nixlAgent tests: patterned DRAM buffers, descriptor-list builders,
 *        environment and stderr scopes, and a fixture whose agents use the TEST backend.
 *
 * The TEST backend (libplugin_TEST.so) moves real bytes with memcpy between agents of this
 * process, so every transfer here is checked byte for byte. Nothing waits on time: asynchronous
 * requests complete after a fixed number of status polls (TEST "async_polls").
 */
#ifndef NIXL_TEST_UNIT_AGENT_AGENT_TEST_UTILS_H
#define NIXL_TEST_UNIT_AGENT_AGENT_TEST_UTILS_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nixl.h"
#include "../../common/log_capture.h"
#include "../../common/scoped_env.h"

namespace nixl_agent_test {

/** Polls given to an asynchronous request before the tests call it stuck. */
inline constexpr int max_polls = 10000;

/** Byte i of the pattern for seed: differs between neighbouring seeds at every index. */
inline uint8_t
patternByte(uint32_t seed, size_t i) noexcept {
    uint64_t x = (static_cast<uint64_t>(seed) + 1) * 0x9e3779b97f4a7c15ULL +
                 i * 0x2545f4914f6cdd1dULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return static_cast<uint8_t>(x);
}

/** A heap buffer of DRAM with helpers to fill and check deterministic patterns. */
class testBuffer {
public:
    explicit testBuffer(size_t len, uint32_t seed = 0) : bytes_(len) {
        fill(seed);
    }

    uintptr_t
    addr() const noexcept {
        return reinterpret_cast<uintptr_t>(bytes_.data());
    }

    size_t
    size() const noexcept {
        return bytes_.size();
    }

    uint8_t *
    data() noexcept {
        return bytes_.data();
    }

    const std::vector<uint8_t> &
    bytes() const noexcept {
        return bytes_;
    }

    void
    fill(uint32_t seed, size_t off = 0, size_t len = SIZE_MAX) {
        len = rest(off, len);
        for (size_t i = 0; i < len; ++i) {
            bytes_[off + i] = patternByte(seed, i);
        }
    }

    /** Index (relative to off) of the first byte not equal to the pattern, or -1. */
    long long
    firstMismatch(uint32_t seed, size_t off = 0, size_t len = SIZE_MAX) const {
        len = rest(off, len);
        for (size_t i = 0; i < len; ++i) {
            if (bytes_[off + i] != patternByte(seed, i)) {
                return static_cast<long long>(i);
            }
        }
        return -1;
    }

    /** [addr + off, + len), or to the end of the buffer when len is SIZE_MAX. Not clamped:
     *  tests build ranges past the end on purpose. */
    nixlBasicDesc
    desc(size_t off = 0, size_t len = SIZE_MAX, uint64_t dev = 0) const {
        len = len == SIZE_MAX ? bytes_.size() - off : len;
        return nixlBasicDesc(addr() + off, len, dev);
    }

    nixlBlobDesc
    blob(size_t off = 0, size_t len = SIZE_MAX, uint64_t dev = 0) const {
        return nixlBlobDesc(desc(off, len, dev), "");
    }

private:
    /** len, or everything from off when SIZE_MAX; never past the end of the buffer. */
    size_t
    rest(size_t off, size_t len) const noexcept {
        return std::min(len, bytes_.size() - off);
    }

    std::vector<uint8_t> bytes_;
};

/** Region [off, off + len) of buf equals region [off2, off2 + len) of other. */
inline ::testing::AssertionResult
sameBytes(const testBuffer &a, size_t a_off, const testBuffer &b, size_t b_off, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        if (a.bytes()[a_off + i] != b.bytes()[b_off + i]) {
            return ::testing::AssertionFailure()
                   << "first difference at byte " << i << " of " << len << ": "
                   << static_cast<int>(a.bytes()[a_off + i]) << " vs "
                   << static_cast<int>(b.bytes()[b_off + i]);
        }
    }
    return ::testing::AssertionSuccess();
}

/** The buffer holds the pattern of seed in [off, off + len). */
inline ::testing::AssertionResult
holdsPattern(const testBuffer &buf, uint32_t seed, size_t off = 0, size_t len = SIZE_MAX) {
    long long at = buf.firstMismatch(seed, off, len);
    if (at < 0) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "byte " << at << " (offset " << off
                                         << ") differs from the pattern of seed " << seed;
}

inline nixl_reg_dlist_t
regList(std::initializer_list<nixlBasicDesc> descs, nixl_mem_t mem = DRAM_SEG) {
    nixl_reg_dlist_t list(mem);
    for (const auto &d : descs) {
        list.addDesc(nixlBlobDesc(d, ""));
    }
    return list;
}

inline nixl_xfer_dlist_t
xferList(std::initializer_list<nixlBasicDesc> descs, nixl_mem_t mem = DRAM_SEG) {
    nixl_xfer_dlist_t list(mem);
    for (const auto &d : descs) {
        list.addDesc(d);
    }
    return list;
}

/** n consecutive chunks of chunk bytes of buf, starting at off. */
inline nixl_xfer_dlist_t
chunkList(const testBuffer &buf, size_t n, size_t chunk, size_t off = 0) {
    nixl_xfer_dlist_t list(DRAM_SEG);
    for (size_t i = 0; i < n; ++i) {
        list.addDesc(buf.desc(off + i * chunk, chunk));
    }
    return list;
}

using nixl_test::scopedEnv;

using nixl_test::errorLines;
using nixl_test::oneErrorLine;
using nixl_test::stderrCapture;

/** Agent configuration with a sync mode and telemetry capture. */
inline nixlAgentConfig
agentConfig(nixl_thread_sync_t mode = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE,
            bool telemetry = false) {
    nixlAgentConfig cfg;
    cfg.syncMode = mode;
    cfg.captureTelemetry = telemetry;
    return cfg;
}

/**
 * Fixture: agents with the TEST backend. Telemetry is controlled by the config only
 * (NIXL_TELEMETRY_ENABLE is unset for every test), and the plugin directory is the one the
 * test runner set.
 */
class agentTest : public ::testing::Test {
protected:
    agentTest() : telemetryEnv_("NIXL_TELEMETRY_ENABLE", nullptr) {}

    static std::unique_ptr<nixlAgent>
    makeAgent(const std::string &name, const nixlAgentConfig &cfg = nixlAgentConfig()) {
        return std::make_unique<nixlAgent>(name, cfg);
    }

    /** Creates the TEST backend; returns the status, handle in *out if given. */
    static nixl_status_t
    addTest(nixlAgent &agent,
            const nixl_b_params_t &params = {},
            nixlBackendH **out = nullptr) {
        nixlBackendH *h = nullptr;
        nixl_status_t st = agent.createBackend("TEST", params, h);
        if (out != nullptr) {
            *out = h;
        }
        return st;
    }

    /** from.getLocalMD -> to.loadRemoteMD; returns the first failing status. */
    static nixl_status_t
    sendMD(nixlAgent &from, nixlAgent &to, std::string *name_out = nullptr) {
        nixl_blob_t blob;
        nixl_status_t st = from.getLocalMD(blob);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        std::string name;
        st = to.loadRemoteMD(blob, name);
        if (name_out != nullptr) {
            *name_out = name;
        }
        return st;
    }

    /** Polls until the request leaves IN_PROG (bounded); returns the final status. */
    static nixl_status_t
    waitXfer(nixlAgent &agent, nixlXferReqH *req) {
        nixl_status_t st = NIXL_IN_PROG;
        for (int i = 0; i < max_polls && st == NIXL_IN_PROG; ++i) {
            st = agent.getXferStatus(req);
        }
        return st;
    }

    /** Posts and completes a request; returns the final status. */
    static nixl_status_t
    runXfer(nixlAgent &agent, nixlXferReqH *req, const nixl_opt_args_t *extra = nullptr) {
        nixl_status_t st = agent.postXferReq(req, extra);
        if (st == NIXL_IN_PROG) {
            st = waitXfer(agent, req);
        }
        return st;
    }

    /** Drains notifications of an agent into a fresh map. */
    static nixl_notifs_t
    drain(nixlAgent &agent) {
        nixl_notifs_t map;
        EXPECT_EQ(NIXL_SUCCESS, agent.getNotifs(map));
        return map;
    }

    static std::string
    badPluginDir() {
        const char *dir = std::getenv("NIXL_TEST_BAD_PLUGIN_DIR");
        return dir != nullptr ? std::string(dir) : std::string();
    }

private:
    scopedEnv telemetryEnv_;
};

} // namespace nixl_agent_test

#endif // NIXL_TEST_UNIT_AGENT_AGENT_TEST_UTILS_H
