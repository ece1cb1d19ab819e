/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// POSIX backend: refused input and failed I/O. Each case checks the status and the one log
// line naming the cause; none may crash or report a partial transfer as success.

#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include <cstddef>

#include "posix_fixture.h"

namespace nixl_posix_test {
namespace {

TEST_F(posixTest, BadMetaInfoRefused) {
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    scratchDir dir;
    const std::string path = dir.file("f.bin");
    const struct {
        std::string meta;
        const char *needle;
    } cases[] = {
        {"rw,bogus:" + path, "'bogus' is unknown"},
        {"rw,direct,direct:" + path, "given twice"},
        {"direct:" + path, "must start with 'ro' or 'rw'"},
        {"ro,create:" + path, "'create' needs 'rw'"},
        {"rw:", "no path"},
        {"RW:" + path, "must start with 'ro' or 'rw'"},
        {"rw,create:" + path + std::string(1, '\0') + "x", "NUL byte"},
    };
    // The backend refuses with NIXL_ERR_INVALID_PARAM; registerMem reports a registration no
    // backend took as NIXL_ERR_BACKEND, and the backend's line names the cause.
    for (const auto &c : cases) {
        stderrCapture cap;
        EXPECT_EQ(agent_->registerMem(fileReg(1, c.meta)), NIXL_ERR_BACKEND) << c.meta;
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"POSIX", c.needle})) << c.meta;
    }
    // A path that does not exist, without create: the open fails and says so.
    stderrCapture cap;
    EXPECT_EQ(agent_->registerMem(fileReg(1, "ro:" + path)), NIXL_ERR_BACKEND);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {path, "ENOENT"}));
}

TEST_F(posixTest, OtherMetaInfoIsFdMode) {
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    scratchDir dir;
    const int fd = ::open(dir.file("f.bin").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    // Not the grammar (no mode word before the ':'): the application's own text, fd mode.
    for (const std::string meta : {"", "layer-3", "kv:block:7", "/some/path"}) {
        EXPECT_EQ(agent_->registerMem(fileReg(fd, meta)), NIXL_SUCCESS) << meta;
        EXPECT_EQ(agent_->deregisterMem(fileReg(fd, meta)), NIXL_SUCCESS) << meta;
    }
    ::close(fd);
    // An fd number no open file holds (far above what this process opens).
    constexpr int unused_fd = 1000000;
    stderrCapture cap;
    EXPECT_EQ(agent_->registerMem(fileReg(unused_fd, "")), NIXL_ERR_BACKEND);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"fd " + std::to_string(unused_fd), "EBADF"}));
}

TEST_F(posixTest, PathModeNeedsDistinctDevIds) {
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    scratchDir dir;
    ASSERT_EQ(agent_->registerMem(fileReg(42, "rw,create:" + dir.file("a"))), NIXL_SUCCESS);
    // Another range of devId 42 (the same range would be refused by the agent itself).
    stderrCapture cap;
    EXPECT_NE(agent_->registerMem(fileReg(42, "rw,create:" + dir.file("b"), 4096, 4096)),
              NIXL_SUCCESS);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"devId 42"}));
    EXPECT_EQ(agent_->registerMem(fileReg(43, "rw,create:" + dir.file("b"))), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(fileReg(42, "rw,create:" + dir.file("a"))), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(fileReg(43, "rw,create:" + dir.file("b"))), NIXL_SUCCESS);
}

TEST_F(posixTest, RequestOverIosPoolSizeRefused) {
    ASSERT_EQ(makeAgent({{"ios_pool_size", "10"}}), NIXL_SUCCESS);
    scratchDir dir;
    const nixl_reg_dlist_t reg = fileReg(1, "rw,create:" + dir.file("pool.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    alignedBuffer buf(11 * 512);
    ASSERT_EQ(agent_->registerMem(memReg(buf)), NIXL_SUCCESS);
    EXPECT_EQ(runBlocks(NIXL_WRITE, buf.addr(), 1, 10, 512), NIXL_SUCCESS);
    nixl_xfer_dlist_t mem(DRAM_SEG), file(FILE_SEG);
    blockLists(buf.addr(), 0, 1, 11, 512, mem, file);
    nixlXferReqH *req = nullptr;
    stderrCapture cap;
    EXPECT_EQ(agent_->createXferReq(NIXL_WRITE, mem, file, "A", req), NIXL_ERR_INVALID_PARAM);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"11 descriptors", "ios_pool_size 10"}));
    EXPECT_EQ(agent_->deregisterMem(memReg(buf)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_F(posixTest, FileToFileAndMemToMemRefused) {
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    scratchDir dir;
    const nixl_reg_dlist_t reg = fileReg(1, "rw,create:" + dir.file("kinds.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    alignedBuffer a(4096), b(4096);
    ASSERT_EQ(agent_->registerMem(memReg(a)), NIXL_SUCCESS);
    ASSERT_EQ(agent_->registerMem(memReg(b)), NIXL_SUCCESS);
    nixlXferReqH *req = nullptr;
    // DRAM to DRAM is not this backend's: no backend of the agent can do it.
    EXPECT_NE(agent_->createXferReq(NIXL_WRITE, xferList({{a.addr(), 4096}}),
                                    xferList({{b.addr(), 4096}}), "A", req),
              NIXL_SUCCESS);
    // The file on the local side and memory on the remote side: refused, not reinterpreted.
    stderrCapture cap;
    EXPECT_NE(agent_->createXferReq(NIXL_WRITE, xferList({{0, 4096}}, FILE_SEG),
                                    xferList({{a.addr(), 4096}}), "A", req),
              NIXL_SUCCESS);
    (void)cap.stop();
    EXPECT_EQ(req, nullptr);
    EXPECT_EQ(agent_->deregisterMem(memReg(a)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(memReg(b)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

/** The file system type of path (statfs f_type), 0 if unknown. */
long
fsType(const std::string &path) {
    struct statfs s {};
    return ::statfs(path.c_str(), &s) == 0 ? static_cast<long>(s.f_type) : 0;
}

TEST_F(posixTest, DirectIoOnExt4) {
    // The build tree's file system when it is ext4 (or xfs/btrfs, which take O_DIRECT too).
    const long t = fsType("/tmp");
    if (t != EXT4_SUPER_MAGIC && t != XFS_SUPER_MAGIC && t != BTRFS_SUPER_MAGIC) {
        GTEST_SKIP() << "/tmp is not ext4, xfs or btrfs (f_type 0x" << std::hex << t
                     << "); no O_DIRECT-capable file system to test on";
    }
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    scratchDir dir("/tmp");
    const std::string path = dir.file("direct.bin");
    const nixl_reg_dlist_t reg = fileReg(1, "rw,direct,create:" + path);
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    constexpr size_t n = 32, block = 64 * 1024;
    alignedBuffer src(n * block), dst(n * block);
    fillPattern(src.data(), src.size(), 31);
    ASSERT_EQ(agent_->registerMem(memReg(src)), NIXL_SUCCESS);
    ASSERT_EQ(agent_->registerMem(memReg(dst)), NIXL_SUCCESS);
    EXPECT_EQ(runBlocks(NIXL_WRITE, src.addr(), 1, n, block), NIXL_SUCCESS);
    EXPECT_EQ(runBlocks(NIXL_READ, dst.addr(), 1, n, block), NIXL_SUCCESS);
    EXPECT_EQ(firstMismatch(dst.data(), dst.size(), 31), -1);

    // Misaligned buffer, offset and length: refused at prep, naming descriptor and alignment.
    const struct {
        uintptr_t addr;
        uint64_t off;
        size_t len;
    } bad[] = {{src.addr(1), 0, block}, {src.addr(), 100, block}, {src.addr(), 0, block - 7}};
    for (const auto &b : bad) {
        nixl_xfer_dlist_t mem(DRAM_SEG), file(FILE_SEG);
        mem.addDesc(nixlBasicDesc(src.addr(), block, 0));
        file.addDesc(nixlBasicDesc(0, block, 1));
        mem.addDesc(nixlBasicDesc(b.addr, b.len, 0));
        file.addDesc(nixlBasicDesc(b.off, b.len, 1));
        nixlXferReqH *req = nullptr;
        stderrCapture cap;
        EXPECT_EQ(agent_->createXferReq(NIXL_WRITE, mem, file, "A", req), NIXL_ERR_INVALID_PARAM);
        EXPECT_TRUE(oneErrorLine(cap.stop(), {"desc 1", path, "O_DIRECT", "aligned"}));
    }
    EXPECT_EQ(agent_->deregisterMem(memReg(src)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(memReg(dst)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_F(posixTest, DirectIoOnTmpfs) {
    if (fsType("/dev/shm") != TMPFS_MAGIC) {
        GTEST_SKIP() << "/dev/shm is not tmpfs here";
    }
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    scratchDir dir("/dev/shm");
    const std::string path = dir.file("direct.bin");
    stderrCapture cap;
    const nixl_status_t st = agent_->registerMem(fileReg(1, "rw,direct,create:" + path));
    const std::string log = cap.stop();
    if (st == NIXL_SUCCESS) {
        // Kernels from 6.6 on accept O_DIRECT on tmpfs; then it must work like anywhere else.
        alignedBuffer src(8192), dst(8192);
        fillPattern(src.data(), src.size(), 32);
        ASSERT_EQ(agent_->registerMem(memReg(src)), NIXL_SUCCESS);
        ASSERT_EQ(agent_->registerMem(memReg(dst)), NIXL_SUCCESS);
        EXPECT_EQ(runBlocks(NIXL_WRITE, src.addr(), 1, 2, 4096), NIXL_SUCCESS);
        EXPECT_EQ(runBlocks(NIXL_READ, dst.addr(), 1, 2, 4096), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(dst.data(), dst.size(), 32), -1);
        EXPECT_EQ(agent_->deregisterMem(memReg(src)), NIXL_SUCCESS);
        EXPECT_EQ(agent_->deregisterMem(memReg(dst)), NIXL_SUCCESS);
        EXPECT_EQ(agent_->deregisterMem(fileReg(1, "rw,direct,create:" + path)), NIXL_SUCCESS);
        return;
    }
    // Older kernels refuse it at open: a clear status and line, not a failure at transfer time.
    EXPECT_EQ(st, NIXL_ERR_NOT_SUPPORTED);
    EXPECT_TRUE(oneErrorLine(log, {path, "EINVAL", "refuses O_DIRECT"}));
}

/** A tmpfs of size bytes mounted on a fresh directory (root only), unmounted after. */
class smallTmpfs {
public:
    explicit smallTmpfs(size_t size) {
        const std::string opts = "size=" + std::to_string(size);
        if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, opts.c_str()) != 0) {
            why_ = std::string("mount tmpfs: ") + std::strerror(errno) +
                " (the test needs root and CAP_SYS_ADMIN)";
            return;
        }
        mounted_ = true;
    }
    ~smallTmpfs() {
        if (mounted_) {
            ::umount2(dir_.path().c_str(), MNT_DETACH);
        }
    }
    bool
    ok() const {
        return mounted_;
    }
    const std::string &
    why() const {
        return why_;
    }
    std::string
    file(const std::string &name) const {
        return dir_.file(name);
    }

private:
    scratchDir dir_;
    bool mounted_ = false;
    std::string why_;
};

TEST_F(posixTest, FullFileSystemIsEnospc) {
    smallTmpfs fs(256 * 1024);
    if (!fs.ok()) {
        GTEST_SKIP() << fs.why();
    }
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    const nixl_reg_dlist_t reg = fileReg(1, "rw,create:" + fs.file("full.bin"));
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    constexpr size_t n = 16, block = 64 * 1024; // 1 MiB into 256 KiB
    alignedBuffer src(n * block);
    ASSERT_EQ(agent_->registerMem(memReg(src)), NIXL_SUCCESS);
    stderrCapture cap;
    EXPECT_EQ(runBlocks(NIXL_WRITE, src.addr(), 1, n, block), NIXL_ERR_BACKEND);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {fs.file("full.bin"), "offset", "ENOSPC"}));
    EXPECT_EQ(agent_->deregisterMem(memReg(src)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

TEST_F(posixTest, TruncatedFileFailsRead) {
    ASSERT_EQ(makeAgent(), NIXL_SUCCESS);
    scratchDir dir;
    const std::string path = dir.file("trunc.bin");
    const nixl_reg_dlist_t reg = fileReg(1, "rw,create:" + path);
    ASSERT_EQ(agent_->registerMem(reg), NIXL_SUCCESS);
    constexpr size_t n = 8, block = 4096;
    alignedBuffer buf(n * block);
    ASSERT_EQ(agent_->registerMem(memReg(buf)), NIXL_SUCCESS);
    ASSERT_EQ(runBlocks(NIXL_WRITE, buf.addr(), 1, n, block), NIXL_SUCCESS);
    nixl_xfer_dlist_t mem(DRAM_SEG), file(FILE_SEG);
    blockLists(buf.addr(), 0, 1, n, block, mem, file);
    nixlXferReqH *req = nullptr;
    ASSERT_EQ(agent_->createXferReq(NIXL_READ, mem, file, "A", req), NIXL_SUCCESS);
    // Cut under the prepared READ: the last half of its blocks is gone.
    ASSERT_EQ(::truncate(path.c_str(), (n / 2) * block + 100), 0);
    stderrCapture cap;
    EXPECT_EQ(runXfer(*agent_, req), NIXL_ERR_BACKEND);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {path, "offset", "end of file"}));
    EXPECT_EQ(agent_->releaseXferReq(req), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(memReg(buf)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(reg), NIXL_SUCCESS);
}

class posixClosedFdTest : public posixTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(posixClosedFdTest, ClosedFdFailsTransfer) {
    ASSERT_EQ(makeAgent(engineParams(GetParam())), NIXL_SUCCESS);
    scratchDir dir;
    // A high fd number, so that no open(2) in between (the log capture, an io_uring ring)
    // gets the number back after the close and hides it.
    const int opened = ::open(dir.file("closed.bin").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(opened, 0);
    const int fd = ::fcntl(opened, F_DUPFD_CLOEXEC, 900);
    ::close(opened);
    ASSERT_GE(fd, 900);
    ASSERT_EQ(agent_->registerMem(fileReg(fd)), NIXL_SUCCESS);
    alignedBuffer buf(4 * 4096);
    ASSERT_EQ(agent_->registerMem(memReg(buf)), NIXL_SUCCESS);
    ::close(fd); // the application closes the fd it registered
    stderrCapture cap;
    EXPECT_EQ(runBlocks(NIXL_WRITE, buf.addr(), fd, 4, 4096), NIXL_ERR_BACKEND);
    EXPECT_TRUE(oneErrorLine(cap.stop(), {"fd " + std::to_string(fd), "offset", "EBADF"}));
    EXPECT_EQ(agent_->deregisterMem(memReg(buf)), NIXL_SUCCESS);
    EXPECT_EQ(agent_->deregisterMem(fileReg(fd)), NIXL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(engines,
                         posixClosedFdTest,
                         ::testing::Values("linux_aio", "io_uring", "posix_aio"),
                         [](const auto &info) { return info.param; });

/** Makes io_uring_setup fail with EPERM in this process, as Docker's seccomp profile does. */
bool
denyIoUring() {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(std::size(filter)), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

TEST_F(posixTest, UringRefusedBySeccompFallsBack) {
    // In a child: the filter cannot be undone and must not reach the other tests.
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (!denyIoUring()) {
            ::_exit(77);
        }
        int code = 0;
        {
            stderrCapture cap;
            if (makeAgent({{"use_uring", "true"}}) != NIXL_SUCCESS) {
                code = 1;
            } else if (engineName() != "linux_aio") {
                code = 2;
            }
            const std::string log = cap.stop();
            if (code == 0 && (log.find("io_uring cannot be set up") == std::string::npos ||
                              log.find("EPERM") == std::string::npos ||
                              log.find("seccomp") == std::string::npos)) {
                code = 3;
            }
            if (code == 0) {
                scratchDir dir;
                const nixl_reg_dlist_t reg = fileReg(1, "rw,create:" + dir.file("f"));
                alignedBuffer src(65536), dst(65536);
                fillPattern(src.data(), src.size(), 40);
                if (agent_->registerMem(reg) != NIXL_SUCCESS ||
                    agent_->registerMem(memReg(src)) != NIXL_SUCCESS ||
                    agent_->registerMem(memReg(dst)) != NIXL_SUCCESS ||
                    runBlocks(NIXL_WRITE, src.addr(), 1, 16, 4096) != NIXL_SUCCESS ||
                    runBlocks(NIXL_READ, dst.addr(), 1, 16, 4096) != NIXL_SUCCESS ||
                    firstMismatch(dst.data(), dst.size(), 40) != -1) {
                    code = 4;
                }
                agent_.reset();
            }
        }
        ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77) {
        GTEST_SKIP() << "seccomp filters cannot be installed here";
    }
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "1: creation failed, 2: not on linux_aio, 3: no clear fallback line, 4: transfer";
}

} // namespace
} // namespace nixl_posix_test
