/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// POSIX backend: write-then-read round trips through each engine, fd and path mode, large and
// concurrent requests, release while in flight. Every round trip is checked byte for byte.

#include <thread>

#include "posix_fixture.h"

namespace nixl_posix_test {
namespace {

class posixEngineTest : public posixTest, public ::testing::WithParamInterface<std::string> {};

/** WRITE n blocks of a pattern to the file, READ them into other memory, compare. */
void
roundTrip(posixTest &t,
          nixlAgent &agent,
          uint64_t dev,
          size_t n,
          size_t block,
          uint32_t seed,
          const std::function<nixl_status_t(nixl_xfer_op_t, uintptr_t)> &run) {
    (void)t;
    alignedBuffer src(n * block), dst(n * block);
    fillPattern(src.data(), src.size(), seed);
    ASSERT_EQ(agent.registerMem(regList(src.addr(), src.size())), NIXL_SUCCESS);
    ASSERT_EQ(agent.registerMem(regList(dst.addr(), dst.size())), NIXL_SUCCESS);
    EXPECT_EQ(run(NIXL_WRITE, src.addr()), NIXL_SUCCESS);
    EXPECT_EQ(run(NIXL_READ, dst.addr()), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst.data(), dst.size(), seed), -1);
    EXPECT_EQ(agent.deregisterMem(regList(src.addr(), src.size())), NIXL_SUCCESS);
    EXPECT_EQ(agent.deregisterMem(regList(dst.addr(), dst.size())), NIXL_SUCCESS);
    (void)dev;
}

TEST_P(posixEngineTest, FdModeRoundTrip) {
    ASSERT_EQ(makeAgent(engineParams(GetParam())), NIXL_SUCCESS);
    EXPECT_EQ(engineName(), GetParam());
    scratchDir dir;
    const int fd = ::open(dir.file("kv.bin").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(agent_->registerMem(fileReg(fd)), NIXL_SUCCESS);
    constexpr size_t n = 64, block = 64 * 1024;
    roundTrip(*this, *agent_, fd, n, block, 11, [&](nixl_xfer_op_t op, uintptr_t base) {
        return runBlocks(op, base, fd, n, block);
    });
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_EQ(static_cast<size_t>(st.st_size), n * block);
    EXPECT_EQ(agent_->deregisterMem(fileReg(fd)), NIXL_SUCCESS);
    // fd mode: the application's fd stays open.
    EXPECT_GE(::fcntl(fd, F_GETFD), 0);
    ::close(fd);
}

TEST_P(posixEngineTest, PathModeRoundTrip) {
    ASSERT_EQ(makeAgent(engineParams(GetParam())), NIXL_SUCCESS);
    scratchDir dir;
    const std::string path = dir.file("kv.bin");
    const nixl_reg_dlist_t reg = fileReg(7, "rw,create:" + path);
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0) << "create opened the file at registration";
    EXPECT_TRUE(S_ISREG(st.st_mode));
    constexpr size_t n = 16, block = 4096 + 512; // odd sizes: nothing assumes alignment
    roundTrip(*this, *agent_, 7, n, block, 12, [&](nixl_xfer_op_t op, uintptr_t base) {
        return runBlocks(op, base, 7, n, block, 100);
    });
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(static_cast<size_t>(st.st_size), 100 + n * block);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_P(posixEngineTest, TenThousandDescriptors) {
    ASSERT_EQ(makeAgent(engineParams(GetParam())), NIXL_SUCCESS);
    scratchDir dir;
    const nixl_reg_dlist_t reg = fileReg(3, "rw,create:" + dir.file("many.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    constexpr size_t n = 10000, block = 512;
    roundTrip(*this, *agent_, 3, n, block, 13, [&](nixl_xfer_op_t op, uintptr_t base) {
        return runBlocks(op, base, 3, n, block);
    });
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_P(posixEngineTest, ManyThreads) {
    ASSERT_EQ(makeAgent(engineParams(GetParam()), nixl_thread_sync_t::NIXL_THREAD_SYNC_RW),
              NIXL_SUCCESS);
    scratchDir dir;
    const nixl_reg_dlist_t reg = fileReg(5, "rw,create:" + dir.file("threads.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    constexpr size_t threads = 8, n = 32, block = 8192, per = n * block;
    alignedBuffer src(threads * per), dst(threads * per);
    ASSERT_EQ(agent_->registerMem(memReg(src)), NIXL_SUCCESS);
    ASSERT_EQ(agent_->registerMem(memReg(dst)), NIXL_SUCCESS);
    for (size_t t = 0; t < threads; ++t) {
        fillPattern(src.data() + t * per, per, static_cast<uint32_t>(100 + t));
    }
    std::vector<nixl_status_t> results(threads * 2, NIXL_ERR_UNKNOWN);
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            // Each thread owns its slice of the file and of both buffers; rounds repeat so the
            // requests overlap in time.
            for (int round = 0; round < 4; ++round) {
                results[2 * t] = runBlocks(NIXL_WRITE, src.addr(t * per), 5, n, block, t * per);
                results[2 * t + 1] = runBlocks(NIXL_READ, dst.addr(t * per), 5, n, block, t * per);
            }
        });
    }
    for (auto &th : pool) {
        th.join();
    }
    for (size_t t = 0; t < threads; ++t) {
        EXPECT_EQ(results[2 * t], NIXL_SUCCESS) << "thread " << t;
        EXPECT_EQ(results[2 * t + 1], NIXL_SUCCESS) << "thread " << t;
        EXPECT_EQ(firstMismatch(dst.data() + t * per, per, static_cast<uint32_t>(100 + t)), -1)
            << "thread " << t;
    }
    EXPECT_EQ(agent_->deregisterMem(memReg(src)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(memReg(dst)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_P(posixEngineTest, ReleaseWhileInFlight) {
    ASSERT_EQ(makeAgent(engineParams(GetParam())), NIXL_SUCCESS);
    scratchDir dir;
    const nixl_reg_dlist_t reg = fileReg(9, "rw,create:" + dir.file("inflight.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    constexpr size_t n = 256, block = 256 * 1024;
    for (int round = 0; round < 3; ++round) {
        auto buf = std::make_unique<alignedBuffer>(n * block);
        fillPattern(buf->data(), buf->size(), 14);
        ASSERT_EQ(agent_->registerMem(memReg(*buf)), NIXL_SUCCESS);
        nixl_xfer_dlist_t mem(DRAM_SEG), file(FILE_SEG);
        blockLists(buf->addr(), 0, 9, n, block, mem, file);
        nixlXferReqH *req = nullptr;
        ASSERT_EQ(agent_->createXferReq(round == 1 ? NIXL_READ : NIXL_WRITE, mem, file, "A", req),
                  NIXL_SUCCESS);
        const nixl_status_t st = agent_->postXferReq(req);
        ASSERT_TRUE(st == NIXL_IN_PROG || st == NIXL_SUCCESS) << nixlEnumStrings::statusStr(st);
        // Released at once: the backend waits for what it submitted before returning, so
        // freeing the buffer right after is safe (ASan would see a late write otherwise).
        EXPECT_EQ(agent_->releaseXferReq(req), NIXL_SUCCESS);
        EXPECT_EQ(agent_->deregisterMem(memReg(*buf)), NIXL_SUCCESS);
        buf.reset();
    }
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_P(posixEngineTest, RepostAndSmallQueue) {
    // A queue of depth 2 for 50 descriptors: submissions come in many batches.
    nixl_b_params_t params = engineParams(GetParam());
    params["kernel_queue_size"] = "2";
    ASSERT_EQ(makeAgent(params), NIXL_SUCCESS);
    scratchDir dir;
    const nixl_reg_dlist_t reg = fileReg(4, "rw,create:" + dir.file("repost.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    constexpr size_t n = 50, block = 1000;
    alignedBuffer src(n * block), dst(n * block);
    ASSERT_EQ(agent_->registerMem(memReg(src)), NIXL_SUCCESS);
    ASSERT_EQ(agent_->registerMem(memReg(dst)), NIXL_SUCCESS);
    nixl_xfer_dlist_t wmem(DRAM_SEG), wfile(FILE_SEG), rmem(DRAM_SEG), rfile(FILE_SEG);
    blockLists(src.addr(), 0, 4, n, block, wmem, wfile);
    blockLists(dst.addr(), 0, 4, n, block, rmem, rfile);
    nixlXferReqH *wreq = nullptr, *rreq = nullptr;
    ASSERT_EQ(agent_->createXferReq(NIXL_WRITE, wmem, wfile, "A", wreq), NIXL_SUCCESS);
    ASSERT_EQ(agent_->createXferReq(NIXL_READ, rmem, rfile, "A", rreq), NIXL_SUCCESS);
    for (uint32_t seed = 20; seed < 23; ++seed) {
        fillPattern(src.data(), src.size(), seed);
        EXPECT_EQ(runXfer(*agent_, wreq), NIXL_SUCCESS);
        EXPECT_EQ(runXfer(*agent_, rreq), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(dst.data(), dst.size(), seed), -1) << "seed " << seed;
    }
    EXPECT_EQ(agent_->releaseXferReq(wreq), NIXL_SUCCESS);
    EXPECT_EQ(agent_->releaseXferReq(rreq), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(memReg(src)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(memReg(dst)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_P(posixEngineTest, ManyPreparedRequests) {
    // An application keeps many requests prepared (one per layer, say). Kernel queues are
    // held only while a post runs, so 300 prepared requests do not hold 300 Linux AIO
    // contexts (which would pass fs.aio-max-nr's default 65536 events at depth 256).
    ASSERT_EQ(makeAgent(engineParams(GetParam())), NIXL_SUCCESS);
    scratchDir dir;
    const nixl_reg_dlist_t reg = fileReg(8, "rw,create:" + dir.file("prepared.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    constexpr size_t reqs = 300, block = 1024;
    alignedBuffer src(reqs * block), dst(reqs * block);
    fillPattern(src.data(), src.size(), 16);
    ASSERT_EQ(agent_->registerMem(memReg(src)), NIXL_SUCCESS);
    ASSERT_EQ(agent_->registerMem(memReg(dst)), NIXL_SUCCESS);
    for (const auto &[op, buf] : {std::pair{NIXL_WRITE, &src}, std::pair{NIXL_READ, &dst}}) {
        std::vector<nixlXferReqH *> prepared(reqs, nullptr);
        for (size_t i = 0; i < reqs; ++i) {
            nixl_xfer_dlist_t mem(DRAM_SEG), file(FILE_SEG);
            blockLists(buf->addr(i * block), i * block, 8, 1, block, mem, file);
            ASSERT_EQ(agent_->createXferReq(op, mem, file, "A", prepared[i]), NIXL_SUCCESS) << i;
        }
        for (size_t i = 0; i < reqs; ++i) {
            EXPECT_EQ(runXfer(*agent_, prepared[i]), NIXL_SUCCESS) << i;
        }
        for (nixlXferReqH *req : prepared) {
            EXPECT_EQ(agent_->releaseXferReq(req), NIXL_SUCCESS);
        }
    }
    EXPECT_EQ(firstMismatch(dst.data(), dst.size(), 16), -1);
    EXPECT_EQ(agent_->deregisterMem(memReg(src)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(memReg(dst)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_P(posixEngineTest, EmptyDescriptorMovesNothing) {
    ASSERT_EQ(makeAgent(engineParams(GetParam())), NIXL_SUCCESS);
    scratchDir dir;
    const nixl_reg_dlist_t reg = fileReg(6, "rw,create:" + dir.file("empty.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    alignedBuffer src(8192), dst(8192);
    fillPattern(src.data(), src.size(), 15);
    ASSERT_EQ(agent_->registerMem(memReg(src)), NIXL_SUCCESS);
    ASSERT_EQ(agent_->registerMem(memReg(dst)), NIXL_SUCCESS);
    // A 0-byte descriptor between two blocks: it completes without an I/O (a 0-byte read
    // would otherwise look like end of file).
    const auto lists = [](uintptr_t base, nixl_xfer_dlist_t &mem, nixl_xfer_dlist_t &file) {
        mem = nixl_xfer_dlist_t(DRAM_SEG);
        file = nixl_xfer_dlist_t(FILE_SEG);
        for (const auto &[off, len] : std::vector<std::pair<size_t, size_t>>{
                 {0, 4096}, {4096, 0}, {4096, 4096}}) {
            mem.addDesc(nixlBasicDesc(base + off, len, 0));
            file.addDesc(nixlBasicDesc(off, len, 6));
        }
    };
    for (const auto &[op, base] : {std::pair{NIXL_WRITE, src.addr()}, std::pair{NIXL_READ, dst.addr()}}) {
        nixl_xfer_dlist_t mem(DRAM_SEG), file(FILE_SEG);
        lists(base, mem, file);
        nixlXferReqH *req = nullptr;
        const nixl_status_t st = agent_->createXferReq(op, mem, file, "A", req);
        if (st != NIXL_SUCCESS) {
            GTEST_SKIP() << "the agent refuses 0-byte transfer descriptors ("
                         << nixlEnumStrings::statusStr(st) << ")";
        }
        EXPECT_EQ(runXfer(*agent_, req), NIXL_SUCCESS);
        EXPECT_EQ(agent_->releaseXferReq(req), NIXL_SUCCESS);
    }
    EXPECT_EQ(firstMismatch(dst.data(), dst.size(), 15), -1);
    EXPECT_EQ(agent_->deregisterMem(memReg(src)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(memReg(dst)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(engines,
                         posixEngineTest,
                         ::testing::Values("linux_aio", "io_uring", "posix_aio"),
                         [](const auto &info) { return info.param; });

TEST_F(posixTest, DefaultEngineIsLinuxAio) {
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    EXPECT_EQ(engineName(), "linux_aio");
    nixl_mem_list_t mems;
    nixl_b_params_t params;
    ASSERT_EQ(agent_->getPluginParams("POSIX", mems, params), NIXL_SUCCESS);
    EXPECT_EQ(mems, (nixl_mem_list_t{DRAM_SEG, FILE_SEG}));
    for (const char *key :
         {"use_aio", "use_uring", "use_posix_aio", "kernel_queue_size", "ios_pool_size"}) {
        EXPECT_EQ(params.count(key), 1u) << key;
    }
}

TEST_F(posixTest, BadParametersRefused) {
    for (const nixl_b_params_t &p :
         {nixl_b_params_t{{"use_uring", "true"}, {"use_aio", "true"}},
          nixl_b_params_t{{"use_uring", "maybe"}}, nixl_b_params_t{{"kernel_queue_size", "0"}},
          nixl_b_params_t{{"kernel_queue_size", "12x"}}, nixl_b_params_t{{"ios_pool_size", "-1"}}}) {
        stderrCapture cap;
        EXPECT_EQ(makeAgent(p), NIXL_ERR_INVALID_PARAM);
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"POSIX"}));
    }
}

TEST_F(posixTest, QueryMem) {
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    scratchDir dir;
    const std::string path = dir.file("q.bin");
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0640);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, 12345), 0);
    ::close(fd);
    nixl_reg_dlist_t q(FILE_SEG);
    q.addDesc(nixlBlobDesc(0, 0, 0, path));
    q.addDesc(nixlBlobDesc(0, 0, 0, dir.file("missing.bin")));
    q.addDesc(nixlBlobDesc(0, 0, 0, "ro:" + path));
    std::vector<nixl_query_resp_t> resp;
    nixl_opt_args_t extra;
    extra.backends.push_back(backend_);
    ASSERT_EQ(agent_->queryMem(q, resp, &extra), NIXL_SUCCESS);
    ASSERT_EQ(resp.size(), 3u);
    ASSERT_TRUE(resp[0].has_value());
    EXPECT_EQ((*resp[0])["size"], "12345");
    EXPECT_EQ(std::stoul((*resp[0])["mode"]) & 0777, 0640u);
    EXPECT_FALSE((*resp[0])["mtime"].empty());
    EXPECT_FALSE(resp[1].has_value());
    ASSERT_TRUE(resp[2].has_value());
    EXPECT_EQ((*resp[2])["size"], "12345");
}

} // namespace
} // namespace nixl_posix_test
