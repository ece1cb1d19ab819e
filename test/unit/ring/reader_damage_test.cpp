/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The example readers when another process damages the ring they read: truncated to 0 or 100
// bytes while they run, or random bytes in the header. They must exit with status 1 and one
// message naming the file, never die of a signal or print events that were never written.
// Parameterised by reader ("python" / "cpp") so meson's *python* / *cpp* filters select them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/shared_ring_io.h"
#include "ring_test_util.h"

namespace {

struct event {
    uint32_t type;
    uint32_t pad;
    uint64_t value;
};
using ioRing = nixlSharedRingIo<event>;

struct exitInfo {
    bool exited = false;
    int code = -1;
    int signal = 0;
    std::string out;
};

class readerDamageTest : public ::testing::TestWithParam<std::string> {
protected:
    void
    SetUp() override {
        if (GetParam() == "python") {
            const char *py = std::getenv("NIXL_TEST_PYTHON");
            const char *script = std::getenv("NIXL_TEST_PY_READER");
            ASSERT_TRUE(py != nullptr && script != nullptr) << "run through meson";
            argv_ = {py, script};
        } else {
            const char *exe = std::getenv("NIXL_TEST_CPP_READER");
            ASSERT_TRUE(exe != nullptr) << "run through meson";
            argv_ = {exe};
        }
    }

    // Starts the reader on path with stdout+stderr into a pipe.
    void
    start(const std::string &path, const std::string &count) {
        std::vector<std::string> a = argv_;
        for (const char *s : {"--telemetry_path", path.c_str(), "--count", count.c_str(),
                              "--timeout", "120", "--poll_interval", "0.001"}) {
            a.emplace_back(s);
        }
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        pid_ = ::fork();
        ASSERT_GE(pid_, 0);
        if (pid_ == 0) {
            ::dup2(fds[1], 1);
            ::dup2(fds[1], 2);
            ::close(fds[0]);
            ::close(fds[1]);
            std::vector<char *> av;
            for (auto &s : a) {
                av.push_back(s.data());
            }
            av.push_back(nullptr);
            ::execv(av[0], av.data());
            ::_exit(127);
        }
        ::close(fds[1]);
        out_ = fds[0];
    }

    exitInfo
    finish() {
        exitInfo r;
        char buf[4096];
        ssize_t n;
        while ((n = ::read(out_, buf, sizeof(buf))) > 0) {
            r.out.append(buf, static_cast<size_t>(n));
        }
        ::close(out_);
        int st = 0;
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        r.exited = WIFEXITED(st);
        r.code = r.exited ? WEXITSTATUS(st) : -1;
        r.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        return r;
    }

    void
    TearDown() override {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }

    // Waits (bounded only against a broken reader) until the reader has stored read_pos.
    static bool
    awaitReadPos(const std::string &path, uint64_t want) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (std::chrono::steady_clock::now() < deadline) {
            std::vector<uint8_t> b = readBytes(path);
            if (b.size() >= 264 && getInt<uint64_t>(b, 256) == want) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        return false;
    }

    std::vector<std::string> argv_;
    pid_t pid_ = -1;
    int out_ = -1;
    ringTestDir dir_;
};

INSTANTIATE_TEST_SUITE_P(reader,
                         readerDamageTest,
                         ::testing::Values("python", "cpp"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

TEST_P(readerDamageTest, TruncationWhileReadingEndsTheReaderWithAMessage) {
    for (off_t size : {off_t(0), off_t(100)}) {
        SCOPED_TRACE("truncated to " + std::to_string(size));
        const std::string path = dir_.path("t" + std::to_string(size));
        std::string error;
        auto producer = ioRing::create(path, 1024, error);
        ASSERT_TRUE(producer) << error;
        // Past the first page, so a reader that maps the file reads a page that goes away.
        std::vector<event> ev(300);
        for (size_t i = 0; i < ev.size(); ++i) {
            ev[i] = event{0, 0, 100 + i};
        }
        ASSERT_EQ(producer->pushBatch(ev.data(), ev.size(), error), 300u) << error;
        start(path, "1000");
        ASSERT_TRUE(awaitReadPos(path, 300));
        ASSERT_EQ(::truncate(path.c_str(), size), 0);
        const exitInfo r = finish();
        EXPECT_EQ(r.signal, 0) << r.out;
        ASSERT_TRUE(r.exited) << r.out;
        EXPECT_EQ(r.code, 1) << r.out;
        EXPECT_NE(r.out.find(path + ": changed while reading"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("0 agent_tx_bytes 399"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("Traceback"), std::string::npos) << r.out;
    }
}

TEST_P(readerDamageTest, RandomBytesInTheHeaderAreRefused) {
    const std::string path = dir_.path("garbled");
    std::string error;
    {
        auto producer = ioRing::create(path, 16, error);
        ASSERT_TRUE(producer) << error;
        const event e{0, 0, 5};
        ASSERT_EQ(producer->pushBatch(&e, 1, error), 1u) << error;
    }
    // Garbage positions with a valid version, capacity and mask: slots that were never
    // written must not be printed as events.
    std::vector<uint8_t> b = readBytes(path);
    putInt<uint64_t>(b, 0, 0x8badf00ddeadbeefull);
    putInt<uint64_t>(b, 256, 0x0123456789abcdefull);
    writeBytes(path, b);
    start(path, "1");
    exitInfo r = finish();
    EXPECT_TRUE(r.exited && r.code == 1) << r.out;
    EXPECT_NE(r.out.find("is outside the 16-slot ring"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("agent_tx_bytes"), std::string::npos) << r.out;

    // The same garbage written while a reader runs ends it, too.
    {
        auto producer = ioRing::create(path, 16, error);
        ASSERT_TRUE(producer) << error;
        const event e{0, 0, 6};
        ASSERT_EQ(producer->pushBatch(&e, 1, error), 1u) << error;
        start(path, "10");
        ASSERT_TRUE(awaitReadPos(path, 1));
        b = readBytes(path);
        putInt<uint64_t>(b, 0, 0x8badf00ddeadbeefull);
        const int fd = ::open(path.c_str(), O_WRONLY);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::pwrite(fd, b.data(), 8, 0), 8);
        ::close(fd);
        r = finish();
        EXPECT_TRUE(r.exited && r.code == 1) << r.out;
        EXPECT_NE(r.out.find("header changed while reading"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("agent_tx_bytes 0"), std::string::npos) << r.out;
    }
}

} // namespace
