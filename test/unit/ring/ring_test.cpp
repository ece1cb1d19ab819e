/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The shared-memory ring (utils/common/shared_ring.h): push/pop at capacity and across the wrap,
// re-attaching mid-stream, refusing foreign versions and malformed files, two processes, and the
// lost-events counter.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/shared_ring.h"
#include "ring_test_util.h"
#include "../full_fs.h"

namespace {

struct item {
    uint32_t type;
    uint32_t pad;
    uint64_t value;
};
static_assert(sizeof(item) == 16);

using ring = nixlSharedRing<item>;

class ringTest : public ::testing::Test {
protected:
    ringTestDir dir_;
};

TEST_F(ringTest, PushAndPopAtCapacity) {
    std::string error;
    auto r = ring::create(dir_.path("r"), 8, error);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ(r->version(), NIXL_SHARED_RING_VERSION);
    EXPECT_EQ(r->capacity(), 8u);
    EXPECT_EQ(r->usableCapacity(), 7u);
    EXPECT_TRUE(r->empty());
    for (uint64_t i = 0; i < 7; ++i) {
        EXPECT_TRUE(r->push(item{uint32_t(i), 0, i * 10})) << i;
    }
    EXPECT_TRUE(r->full());
    EXPECT_EQ(r->size(), 7u);
    EXPECT_FALSE(r->push(item{99, 0, 99}));
    item out{};
    for (uint64_t i = 0; i < 7; ++i) {
        ASSERT_TRUE(r->pop(out)) << i;
        EXPECT_EQ(out.type, i);
        EXPECT_EQ(out.value, i * 10);
    }
    EXPECT_FALSE(r->pop(out));
    EXPECT_TRUE(r->empty());
    // Space is back: a push succeeds again.
    EXPECT_TRUE(r->push(item{1, 0, 1}));
}

TEST_F(ringTest, WrapAroundKeepsOrder) {
    std::string error;
    auto r = ring::create(dir_.path("r"), 4, error);
    ASSERT_TRUE(r) << error;
    uint64_t next_in = 0;
    uint64_t next_out = 0;
    // Chunks of 1..3 items cross the end of the 4-slot array many times, one by one and batched.
    for (int round = 0; round < 200; ++round) {
        const size_t n = 1 + round % 3;
        if (round % 2 == 0) {
            for (size_t i = 0; i < n; ++i, ++next_in) {
                ASSERT_TRUE(r->push(item{0, 0, next_in}));
            }
        } else {
            std::vector<item> batch;
            for (size_t i = 0; i < n; ++i) {
                batch.push_back(item{0, 0, next_in + i});
            }
            ASSERT_EQ(r->pushBatch(batch.data(), n), n);
            next_in += n;
        }
        if (round % 3 == 0) {
            item out{};
            while (r->pop(out)) {
                ASSERT_EQ(out.value, next_out++);
            }
        } else {
            item out[4];
            const size_t k = r->popBatch(out, 4);
            ASSERT_EQ(k, n);
            for (size_t i = 0; i < k; ++i) {
                ASSERT_EQ(out[i].value, next_out++);
            }
        }
    }
    EXPECT_EQ(next_in, next_out);
    EXPECT_GT(next_in, 100u);
}

TEST_F(ringTest, PushBatchStopsAtCapacity) {
    std::string error;
    auto r = ring::create(dir_.path("r"), 8, error);
    ASSERT_TRUE(r) << error;
    std::vector<item> in(10);
    for (size_t i = 0; i < in.size(); ++i) {
        in[i] = item{0, 0, i};
    }
    EXPECT_EQ(r->pushBatch(in.data(), in.size()), 7u);
    EXPECT_EQ(r->pushBatch(in.data(), 1), 0u);
    std::vector<item> out(10);
    EXPECT_EQ(r->popBatch(out.data(), out.size()), 7u);
    for (size_t i = 0; i < 7; ++i) {
        EXPECT_EQ(out[i].value, i);
    }
    EXPECT_EQ(r->popBatch(out.data(), out.size()), 0u);
}

TEST_F(ringTest, ConsumerReattachReadsExactlyTheRest) {
    std::string error;
    auto producer = ring::create(dir_.path("r"), 16, error);
    ASSERT_TRUE(producer) << error;
    for (uint64_t i = 0; i < 10; ++i) {
        ASSERT_TRUE(producer->push(item{0, 0, i}));
    }
    {
        auto first = ring::attach(dir_.path("r"), error);
        ASSERT_TRUE(first) << error;
        item out{};
        for (uint64_t i = 0; i < 4; ++i) {
            ASSERT_TRUE(first->pop(out));
            EXPECT_EQ(out.value, i);
        }
    }
    // The producer keeps going while no consumer is attached, crossing the wrap.
    for (uint64_t i = 10; i < 19; ++i) {
        ASSERT_TRUE(producer->push(item{0, 0, i}));
    }
    auto second = ring::attach(dir_.path("r"), error);
    ASSERT_TRUE(second) << error;
    EXPECT_EQ(second->size(), 15u);
    item out{};
    for (uint64_t i = 4; i < 19; ++i) {
        ASSERT_TRUE(second->pop(out)) << i;
        EXPECT_EQ(out.value, i);
    }
    EXPECT_FALSE(second->pop(out));
    // And it keeps following the live producer after re-attaching.
    ASSERT_TRUE(producer->push(item{0, 0, 19}));
    ASSERT_TRUE(second->pop(out));
    EXPECT_EQ(out.value, 19u);
}

TEST_F(ringTest, ProducerSeesSpaceFreedByAnotherConsumerObject) {
    std::string error;
    auto producer = ring::create(dir_.path("r"), 4, error);
    ASSERT_TRUE(producer) << error;
    for (uint64_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(producer->push(item{0, 0, i}));
    }
    ASSERT_FALSE(producer->push(item{0, 0, 3}));
    auto consumer = ring::attach(dir_.path("r"), error);
    ASSERT_TRUE(consumer) << error;
    item out{};
    ASSERT_TRUE(consumer->pop(out));
    // The producer's cached read position is stale; the full check must reload it.
    EXPECT_TRUE(producer->push(item{0, 0, 3}));
}

TEST_F(ringTest, Version4FileGivesCleanMismatch) {
    const std::string p = dir_.path("v4");
    writeV4Ring(p, 16);
    std::string error;
    EXPECT_FALSE(ring::attach(p, error));
    EXPECT_NE(error.find("version mismatch: expected 6, got 4"), std::string::npos) << error;
    EXPECT_NE(error.find(p), std::string::npos) << error;
}

TEST_F(ringTest, Version5FileGivesCleanMismatch) {
    // Same header as 6, other event numbering: refused by version, never misread.
    const std::string p = dir_.path("v5");
    writeV5Ring(p, 16);
    std::string error;
    EXPECT_FALSE(ring::attach(p, error));
    EXPECT_EQ("ring file " + p + ": version mismatch: expected 6, got 5", error);
}

TEST_F(ringTest, Version7FileGivesCleanMismatch) {
    const std::string p = dir_.path("v7");
    // A hypothetical version 7 with a bigger header: only the version word at 16 is shared.
    std::vector<uint8_t> bytes(1024 + 16 * 16, 0);
    putInt<int32_t>(bytes, 16, 7);
    putInt<uint64_t>(bytes, 8, 16);
    writeBytes(p, bytes);
    std::string error;
    EXPECT_FALSE(ring::attach(p, error));
    EXPECT_NE(error.find("version mismatch: expected 6, got 7"), std::string::npos) << error;
}

TEST_F(ringTest, MalformedFilesAreRefusedNamingTheFile) {
    struct bad {
        const char *name;
        std::vector<uint8_t> bytes;
        const char *expect;
    };
    auto v5 = [](uint64_t capacity, uint64_t mask, size_t size) {
        std::vector<uint8_t> b(size, 0);
        if (size >= 20) {
            putInt<int32_t>(b, 16, NIXL_SHARED_RING_VERSION);
        }
        if (size >= 32) {
            putInt<uint64_t>(b, 8, capacity);
            putInt<uint64_t>(b, 24, mask);
        }
        return b;
    };
    std::vector<bad> cases = {
        {"empty", {}, "too small (0 bytes)"},
        {"tiny", std::vector<uint8_t>(10, 0), "too small (10 bytes)"},
        {"short_header", v5(16, 15, 100), "to hold the 512-byte header"},
        {"truncated", v5(16, 15, 512 + 16 * 16 - 16), "needs 768 bytes but the file has 752"},
        {"oversized", v5(16, 15, 512 + 16 * 16 + 16), "needs 768 bytes but the file has 784"},
        {"not_pow2", v5(12, 11, 512 + 16 * 12), "bad capacity 12"},
        {"zero_cap", v5(0, 0, 512), "bad capacity 0"},
        {"bad_mask", v5(16, 7, 512 + 16 * 16), "bad capacity 16 (mask 7)"},
        {"huge_cap", v5(uint64_t(1) << 62, (uint64_t(1) << 62) - 1, 512 + 16 * 16),
         "but the file has"},
    };
    for (const auto &c : cases) {
        const std::string p = dir_.path(c.name);
        writeBytes(p, c.bytes);
        std::string error;
        EXPECT_FALSE(ring::attach(p, error)) << c.name;
        EXPECT_NE(error.find(c.expect), std::string::npos) << c.name << ": " << error;
        EXPECT_NE(error.find(p), std::string::npos) << c.name << ": " << error;
    }
    std::string error;
    EXPECT_FALSE(ring::attach(dir_.path("missing"), error));
    EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
    EXPECT_FALSE(ring::attach(dir_.root(), error));
    EXPECT_NE(error.find(dir_.root() + ": cannot open"), std::string::npos) << error;
    ASSERT_EQ(::mkfifo(dir_.path("fifo").c_str(), 0600), 0);
    EXPECT_FALSE(ring::attach(dir_.path("fifo"), error));
    EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
}

TEST_F(ringTest, CreateRefusesBadCapacityAndSymlinks) {
    std::string error;
    EXPECT_FALSE(ring::create(dir_.path("a"), 12, error));
    EXPECT_NE(error.find("capacity 12 is not a power of two"), std::string::npos) << error;
    EXPECT_FALSE(ring::create(dir_.path("a"), 1, error));
    EXPECT_FALSE(ring::create(dir_.path("a"), 0, error));
    ASSERT_EQ(::symlink(dir_.path("target").c_str(), dir_.path("link").c_str()), 0);
    EXPECT_FALSE(ring::create(dir_.path("link"), 8, error));
    EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
    EXPECT_FALSE(fileExists(dir_.path("target")));
}

namespace {
std::string
readAll(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
} // namespace

// Issue 29 item 6: a hard link planted at the ring's path made create() reset (overwrite) the
// file it links to; a file of another uid was reset too. Both are refused, the file untouched.
TEST_F(ringTest, CreateRefusesHardLinksAndFilesOfAnotherUid) {
    const std::string victim = dir_.path("victim");
    {
        std::ofstream f(victim, std::ios::binary);
        f << std::string(4096, 'v');
    }
    ASSERT_EQ(::link(victim.c_str(), dir_.path("planted").c_str()), 0);
    std::string error;
    EXPECT_FALSE(ring::create(dir_.path("planted"), 8, error));
    EXPECT_NE(error.find("has 2 links"), std::string::npos) << error;
    EXPECT_EQ(readAll(victim), std::string(4096, 'v'));
    if (::geteuid() == 0) {
        const std::string other = dir_.path("other");
        {
            std::ofstream f(other, std::ios::binary);
            f << "theirs";
        }
        ASSERT_EQ(::chown(other.c_str(), 65534, 65534), 0);
        EXPECT_FALSE(ring::create(other, 8, error));
        EXPECT_NE(error.find("owned by uid 65534"), std::string::npos) << error;
        EXPECT_EQ(readAll(other), "theirs");
    }
    // A file of ours with one link is reset as before.
    EXPECT_TRUE(ring::create(dir_.path("mine"), 8, error)) << error;
}

// Issue 29 item 2: on a full file system create() wrote through a mapping of a sparse file
// and died of SIGBUS. It reserves the file's blocks first: a full one is an error.
TEST(ringFullFs, DISABLED_CreateOnAFullFileSystemChild) {
    ASSERT_TRUE(nixl_full_fs::inFullFsChild());
    std::string error;
    EXPECT_FALSE(ring::create(nixl_full_fs::fullFsDir() + "/r", 1 << 16, error));
    EXPECT_NE(error.find(std::strerror(ENOSPC)), std::string::npos) << error;
    nixl_full_fs::finishChild(::testing::Test::HasFailure());
}

TEST(ringFullFs, CreateOnAFullFileSystemIsAnErrorNotASignal) {
    const std::string skip = nixl_full_fs::fullFsSkipReason();
    if (!skip.empty()) {
        GTEST_SKIP() << skip;
    }
    char tmpl[] = "/tmp/nixl-ring-fullfs-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const int st =
        nixl_full_fs::runInFullFs(tmpl, "ringFullFs.DISABLED_CreateOnAFullFileSystemChild");
    ::rmdir(tmpl);
    EXPECT_TRUE(nixl_full_fs::passed(st)) << nixl_full_fs::describe(st);
}

TEST_F(ringTest, CreateResetsAnExistingRing) {
    std::string error;
    {
        auto r = ring::create(dir_.path("r"), 8, error);
        ASSERT_TRUE(r) << error;
        ASSERT_TRUE(r->push(item{0, 0, 1}));
        r->addLost(3);
    }
    auto r = ring::create(dir_.path("r"), 4, error);
    ASSERT_TRUE(r) << error;
    EXPECT_TRUE(r->empty());
    EXPECT_EQ(r->lost(), 0u);
    EXPECT_EQ(fileSize(dir_.path("r")), 512 + 4 * 16);
}

TEST_F(ringTest, LossesAreCountedInTheHeader) {
    std::string error;
    auto producer = ring::create(dir_.path("r"), 4, error);
    ASSERT_TRUE(producer) << error;
    uint64_t lost = 0;
    for (uint64_t i = 0; i < 10; ++i) {
        if (!producer->push(item{0, 0, i})) {
            producer->addLost(1);
            ++lost;
        }
    }
    EXPECT_EQ(lost, 7u);
    auto reader = ring::attach(dir_.path("r"), error);
    ASSERT_TRUE(reader) << error;
    EXPECT_EQ(reader->lost(), 7u);
    // The counter sits at its documented offset, 32, in the producer's line.
    std::vector<uint8_t> bytes = readBytes(dir_.path("r"));
    ASSERT_GE(bytes.size(), 40u);
    EXPECT_EQ(getInt<uint64_t>(bytes, 32), 7u);
}

TEST_F(ringTest, HeaderBytesMatchTheDocumentedLayout) {
    std::string error;
    auto r = ring::create(dir_.path("r"), 8, error);
    ASSERT_TRUE(r) << error;
    ASSERT_TRUE(r->push(item{7, 0, 0x1122334455667788ull}));
    ASSERT_TRUE(r->push(item{8, 0, 2}));
    item out{};
    ASSERT_TRUE(r->pop(out));
    std::vector<uint8_t> b = readBytes(dir_.path("r"));
    ASSERT_EQ(b.size(), 512u + 8 * 16);
    EXPECT_EQ(getInt<uint64_t>(b, 0), 2u); // write_pos
    EXPECT_EQ(getInt<uint64_t>(b, 8), 8u); // capacity
    EXPECT_EQ(getInt<int32_t>(b, 16), 6); // version
    EXPECT_EQ(getInt<int32_t>(b, 20), 6); // expected_version
    EXPECT_EQ(getInt<uint64_t>(b, 24), 7u); // mask
    EXPECT_EQ(getInt<uint64_t>(b, 32), 0u); // lost_events
    EXPECT_EQ(getInt<uint64_t>(b, 256), 1u); // read_pos
    EXPECT_EQ(getInt<uint32_t>(b, 512), 7u); // slot 0 type
    EXPECT_EQ(getInt<uint64_t>(b, 520), 0x1122334455667788ull); // slot 0 value
    EXPECT_EQ(getInt<uint32_t>(b, 528), 8u); // slot 1 type
}

// Producer and consumer threads on one object (one mapping), so ThreadSanitizer can check the
// acquire/release pairing of positions and slots: single items first, then batches.
TEST_F(ringTest, TwoThreadsMoveEventsInOrder) {
    constexpr uint64_t kEvents = 200000;
    std::string error;
    auto r = ring::create(dir_.path("r"), 64, error);
    ASSERT_TRUE(r) << error;
    std::atomic<bool> ordered{true};
    std::thread consumer([&] {
        uint64_t expect = 0;
        item batch[8];
        while (expect < kEvents) {
            // Single pops for the first half, batches for the second: a batch's release
            // store would otherwise also publish earlier single pushes and hide a bug there.
            size_t k = 0;
            if (expect < kEvents / 2) {
                k = r->pop(batch[0]) ? 1 : 0;
            } else {
                k = r->popBatch(batch, 8);
            }
            if (k == 0) {
                std::this_thread::yield();
            }
            for (size_t i = 0; i < k; ++i, ++expect) {
                if (batch[i].value != expect || batch[i].type != uint32_t(expect * 7)) {
                    ordered = false;
                }
            }
        }
    });
    for (uint64_t i = 0; i < kEvents;) {
        item batch[5];
        const size_t n = i < kEvents / 2 ? 1 : std::min<uint64_t>(2 + i % 4, kEvents - i);
        for (size_t j = 0; j < n; ++j) {
            batch[j] = item{uint32_t((i + j) * 7), 0, i + j};
        }
        const size_t k = n == 1 ? (r->push(batch[0]) ? 1 : 0) : r->pushBatch(batch, n);
        if (k == 0) {
            std::this_thread::yield();
        }
        i += k;
    }
    consumer.join();
    EXPECT_TRUE(ordered.load());
    EXPECT_TRUE(r->empty());
}

// Producer in this process, consumer in a child: a million events through the file, in order,
// with a checksum the child reports through its exit path (a pipe).
TEST_F(ringTest, TwoProcessesMoveAMillionEvents) {
    constexpr uint64_t kEvents = 1000000;
    std::string error;
    auto producer = ring::create(dir_.path("r"), 1024, error);
    ASSERT_TRUE(producer) << error;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(fds[0]);
        std::string err;
        auto consumer = ring::attach(dir_.path("r"), err);
        uint64_t sum = 0;
        uint64_t expect = 0;
        bool ordered = consumer != nullptr;
        item batch[64];
        while (ordered && expect < kEvents) {
            const size_t k = consumer->popBatch(batch, 64);
            if (k == 0) {
                ::sched_yield();
                continue;
            }
            for (size_t i = 0; i < k; ++i, ++expect) {
                if (batch[i].value != expect || batch[i].type != expect % 21) {
                    ordered = false;
                    break;
                }
                sum += batch[i].value * 31 + batch[i].type;
            }
        }
        const uint64_t msg[2] = {ordered ? 1u : 0u, sum};
        const ssize_t w = ::write(fds[1], msg, sizeof(msg));
        ::_exit(w == sizeof(msg) ? 0 : 1);
    }
    ::close(fds[1]);
    uint64_t sum = 0;
    bool child_gone = false;
    for (uint64_t i = 0; i < kEvents && !child_gone;) {
        const item it{uint32_t(i % 21), 0, i};
        if (producer->push(it)) {
            sum += it.value * 31 + it.type;
            ++i;
            continue;
        }
        int st = 0;
        child_gone = ::waitpid(pid, &st, WNOHANG) == pid;
        ::sched_yield();
    }
    uint64_t msg[2] = {0, 0};
    const ssize_t n = ::read(fds[0], msg, sizeof(msg));
    ::close(fds[0]);
    int status = 0;
    if (!child_gone) {
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ASSERT_FALSE(child_gone) << "consumer exited early";
    ASSERT_EQ(n, ssize_t(sizeof(msg)));
    EXPECT_EQ(msg[0], 1u) << "events out of order";
    EXPECT_EQ(msg[1], sum);
    EXPECT_TRUE(producer->empty());
}

} // namespace
