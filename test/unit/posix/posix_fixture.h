/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file posix_fixture.h
 * @brief What the POSIX backend tests share: an agent with the backend, a scratch directory,
 *        aligned buffers, and file/memory registration and transfer helpers.
 */
#ifndef NIXL_TEST_UNIT_POSIX_POSIX_FIXTURE_H
#define NIXL_TEST_UNIT_POSIX_POSIX_FIXTURE_H

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "nixl.h"
#include "../../common/log_capture.h"
#include "../../common/xfer_test_utils.h"

namespace nixl_posix_test {

using namespace nixl_test;

/** A zeroed heap buffer aligned to 4096 (O_DIRECT's usual requirement), freed on scope exit. */
class alignedBuffer {
public:
    explicit alignedBuffer(size_t n) : len_(n) {
        void *p = nullptr;
        if (::posix_memalign(&p, 4096, n == 0 ? 4096 : n) != 0) {
            throw std::bad_alloc();
        }
        std::memset(p, 0, n);
        p_ = static_cast<uint8_t *>(p);
    }
    ~alignedBuffer() {
        std::free(p_);
    }
    alignedBuffer(const alignedBuffer &) = delete;
    alignedBuffer &
    operator=(const alignedBuffer &) = delete;

    uintptr_t
    addr(size_t off = 0) const {
        return reinterpret_cast<uintptr_t>(p_) + off;
    }
    uint8_t *
    data() const {
        return p_;
    }
    size_t
    size() const {
        return len_;
    }

private:
    uint8_t *p_ = nullptr;
    size_t len_;
};

/** A directory under base made for the test and removed (with its files) after it. */
class scratchDir {
public:
    explicit scratchDir(const std::string &base = "/tmp") {
        std::string tmpl = base + "/nixl-posix-XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
        }
        path_ = tmpl;
    }
    ~scratchDir() {
        std::string cmd = "rm -rf '" + path_ + "'";
        (void)std::system(cmd.c_str());
    }
    const std::string &
    path() const {
        return path_;
    }
    std::string
    file(const std::string &name) const {
        return path_ + "/" + name;
    }

private:
    std::string path_;
};

/** The parameter sets of the three engines. */
inline nixl_b_params_t
engineParams(const std::string &engine) {
    if (engine == "io_uring") {
        return {{"use_uring", "true"}};
    }
    if (engine == "posix_aio") {
        return {{"use_posix_aio", "true"}};
    }
    return {{"use_aio", "true"}};
}

inline bool
posixBuilt() {
    nixlAgent probe("probe", nixlAgentConfig(false, false));
    std::vector<nixl_backend_t> plugins;
    probe.getAvailPlugins(plugins);
    for (const auto &p : plugins) {
        if (p == "POSIX") {
            return true;
        }
    }
    return false;
}

class posixTest : public ::testing::Test {
protected:
    void
    SetUp() override {
        if (!posixBuilt()) {
            GTEST_SKIP() << "libplugin_POSIX.so is not in this build (-Dposix, liburing-dev and "
                            "libaio-dev)";
        }
    }

    /** Makes agent_ with the POSIX backend and params; the status of createBackend. */
    nixl_status_t
    makeAgent(const nixl_b_params_t &params = {},
              nixl_thread_sync_t sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_DEFAULT) {
        agent_ = std::make_unique<nixlAgent>("A", nixlAgentConfig(false, false, default_comm_port, sync));
        return agent_->createBackend("POSIX", params, backend_);
    }

    /** The engine the backend runs on, as getBackendParams reports it. */
    std::string
    engineName() {
        nixl_mem_list_t mems;
        nixl_b_params_t params;
        EXPECT_EQ(agent_->getBackendParams(backend_, mems, params), NIXL_SUCCESS);
        return params["engine"];
    }

    static nixl_reg_dlist_t
    fileReg(int fd_or_dev, const std::string &meta = "", uint64_t off = 0, size_t len = 0) {
        nixl_reg_dlist_t l(FILE_SEG);
        l.addDesc(nixlBlobDesc(off, len, static_cast<uint64_t>(fd_or_dev), meta));
        return l;
    }

    static nixl_reg_dlist_t
    memReg(const alignedBuffer &b) {
        return regList(b.addr(), b.size());
    }

    /** n blocks of block bytes: memory at base + i*block, file at file_off + i*block. */
    static void
    blockLists(uintptr_t base,
               uint64_t file_off,
               uint64_t dev,
               size_t n,
               size_t block,
               nixl_xfer_dlist_t &mem,
               nixl_xfer_dlist_t &file) {
        mem = nixl_xfer_dlist_t(DRAM_SEG);
        file = nixl_xfer_dlist_t(FILE_SEG);
        for (size_t i = 0; i < n; ++i) {
            mem.addDesc(nixlBasicDesc(base + i * block, block, 0));
            file.addDesc(nixlBasicDesc(file_off + i * block, block, dev));
        }
    }

    /** One request of n blocks, run to its end and released: its final status. */
    nixl_status_t
    runBlocks(nixl_xfer_op_t op, uintptr_t base, uint64_t dev, size_t n, size_t block,
              uint64_t file_off = 0) {
        nixl_xfer_dlist_t mem(DRAM_SEG), file(FILE_SEG);
        blockLists(base, file_off, dev, n, block, mem, file);
        nixlXferReqH *req = nullptr;
        nixl_status_t st = agent_->createXferReq(op, mem, file, "A", req);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        st = runXfer(*agent_, req);
        EXPECT_EQ(agent_->releaseXferReq(req), NIXL_SUCCESS);
        return st;
    }

    void
    TearDown() override {
        agent_.reset();
    }

    std::unique_ptr<nixlAgent> agent_;
    nixlBackendH *backend_ = nullptr;
};

} // namespace nixl_posix_test

#endif // NIXL_TEST_UNIT_POSIX_POSIX_FIXTURE_H
