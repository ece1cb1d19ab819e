/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Hostile or broken contents of NIXL_TELEMETRY_MULTIPROC_DIR: FIFOs named like stores (must
// not block the scrape), stores whose writer died mid-update (the scrape's read work is bounded,
// counted here in slot copies rather than timed), departed stores stamped in the future (still
// reaped), and a refused size that names both differing values.
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <atomic>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "mp_collector.h"
#include "mp_http.h"
#include "mp_exporter.h"
#include "mp_test_utils.h"

using namespace nixlPromMp;

namespace {

class PromMpRobust : public ::testing::Test {
protected:
    std::shared_ptr<const nixlMpSchema> schema_ =
        std::make_shared<const nixlMpSchema>(mpTest::eventTable());
    mpTest::tempDir dir_;

    std::unique_ptr<nixlMpStoreWriter>
    writer(const std::string &name) {
        nixlMpIdentity id;
        id.agentName = name;
        id.hostname = "host-a";
        id.pid = getpid();
        id.instance = next_++;
        return std::make_unique<nixlMpStoreWriter>(dir_.path(), *schema_, std::vector<double>{10},
                                                   id);
    }

    // Writes v at byte off of the file, as a writer killed at the wrong moment leaves it.
    static void
    poke(const std::string &path, size_t off, uint64_t v) {
        const int fd = open(path.c_str(), O_WRONLY);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(pwrite(fd, &v, sizeof(v), static_cast<off_t>(off)), 8);
        close(fd);
    }

    // Every slot's seq odd: an update that will never finish.
    void
    oddSeqEverywhere(const std::string &path) {
        for (uint32_t i = 0; i < schema_->slotCount(); ++i) {
            poke(path, sizeof(nixlMpStoreHeader) + i * sizeof(nixlMpStoreSlot), 2 * i + 1);
        }
    }

    uint64_t next_ = 0;
};

} // namespace

TEST_F(PromMpRobust, FifosNamedLikeStoresDoNotBlockTheScrape) {
    const std::string store = dir_.path() + "/nixl.1.2.3.mmap";
    const std::string staging = dir_.path() + "/.nixl.4.5.6.staging";
    ASSERT_EQ(mkfifo(store.c_str(), 0600), 0);
    ASSERT_EQ(mkfifo(staging.c_str(), 0600), 0);
    auto w = writer("real");
    w->record(mpTest::kTx, 5);
    nixlMpCollector c(dir_.path(), schema_, 0);
    mpTest::globalLog().clear();
    for (int i = 0; i < 3; ++i) {
        auto scrape = std::async(std::launch::async, [&] { return c.scrape(); });
        // Only a broken build waits here: then open the FIFOs for writing, which releases an
        // open() blocked on them, so the test fails instead of hanging.
        bool blocked = false;
        while (scrape.wait_for(std::chrono::seconds(blocked ? 1 : 60)) !=
               std::future_status::ready) {
            blocked = true;
            for (const std::string &p : {store, staging}) {
                const int fd = open(p.c_str(), O_WRONLY | O_NONBLOCK);
                if (fd >= 0) {
                    close(fd);
                }
            }
        }
        const std::string text = scrape.get();
        ASSERT_FALSE(blocked) << "scrape blocked on a FIFO";
        EXPECT_EQ(mpTest::sampleValue(text, "agent_tx_bytes_total", {"agent_name=\"real\""}), 5.0)
            << text;
    }
    // One line per file, not one per scrape.
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, store + "': not a regular file"), 1u)
        << mpTest::globalLog().all();
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, staging + "': not a regular file"),
              1u)
        << mpTest::globalLog().all();
    EXPECT_EQ(access(store.c_str(), F_OK), 0) << "a FIFO is not ours to reap";
}

TEST_F(PromMpRobust, TornSlotsOfDepartedWritersAreReadOnceAndNotPublished) {
    std::vector<std::string> paths;
    for (int i = 0; i < 3; ++i) {
        auto w = writer("torn" + std::to_string(i));
        w->record(mpTest::kTx, 100);
        paths.push_back(w->path());
    } // departed
    for (const auto &p : paths) {
        oddSeqEverywhere(p);
    }
    auto live = writer("fine");
    live->record(mpTest::kTx, 7);
    nixlMpCollector c(dir_.path(), schema_, 3600);
    const uint32_t slots = schema_->slotCount();
    for (int scrape = 0; scrape < 2; ++scrape) {
        const std::string text = c.scrape();
        const nixlMpReadBudget b = c.lastReadBudget();
        // One copy per slot of each of the four stores: no re-reads of a dead writer's slot.
        EXPECT_EQ(b.copies, 4u * slots);
        EXPECT_EQ(b.torn, 3u * slots);
        EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"agent_name=\"torn"}), 0u)
            << text;
        EXPECT_EQ(mpTest::sampleValue(text, "agent_tx_bytes_total", {"agent_name=\"fine\""}), 7.0);
        EXPECT_EQ(mpTest::sampleValue(text, kStoresMetric, {"state=\"departed\""}), 3.0);
    }
}

TEST_F(PromMpRobust, StuckLiveWritersCostABoundedNumberOfReads) {
    // Writers alive (lock held) but stopped mid-update: re-read, within the scrape's budget.
    std::vector<std::unique_ptr<nixlMpStoreWriter>> writers;
    for (int i = 0; i < 4; ++i) {
        writers.push_back(writer("stuck" + std::to_string(i)));
        writers.back()->record(mpTest::kTx, 9);
        oddSeqEverywhere(writers.back()->path());
    }
    nixlMpCollector c(dir_.path(), schema_, 0);
    const uint64_t slots = 4u * schema_->slotCount();
    for (int scrape = 0; scrape < 2; ++scrape) {
        const std::string text = c.scrape();
        const nixlMpReadBudget b = c.lastReadBudget();
        EXPECT_EQ(b.copies, slots + kScrapeRetries) << "every re-read of the budget, no more";
        EXPECT_EQ(b.unsettled, slots);
        EXPECT_EQ(b.torn, 0u);
        // Published as read: a live writer's values are only ever ahead by one update.
        EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"agent_name=\"stuck"}), 4u);
    }
}

TEST_F(PromMpRobust, DepartedStoreStampedInTheFutureIsStillReaped) {
    std::string path;
    {
        auto w = writer("future");
        path = w->path();
    }
    // After the writer's last touch(): an hour ahead of CLOCK_MONOTONIC.
    poke(path, offsetof(nixlMpStoreHeader, lastUpdateNs), monotonicNs() + 3600'000'000'000ull);
    nixlMpCollector c(dir_.path(), schema_, 0);
    const std::string text = c.scrape();
    EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"agent_name=\"future\""}), 1u);
    EXPECT_NE(access(path.c_str(), F_OK), 0) << "TTL 0: reaped by the scrape that saw it departed";
}

TEST_F(PromMpRobust, RefusedSizeNamesTheValuesThatDiffer) {
    auto w = writer("sized");
    poke(w->path(), offsetof(nixlMpStoreHeader, totalSize), 4096);
    nixlMpStoreSnapshot snap;
    std::string why;
    EXPECT_EQ(readStore(w->path(), *schema_, &snap, &why), nixlMpReadStatus::REFUSED);
    const std::string expected = std::to_string(storeSize(schema_->slotCount()));
    EXPECT_EQ(why, "size 4096 in the header and " + expected + " on disk, expected " + expected);
}

// A store written before issue 12 (schema 1: 21 slots, events dropped at 20) is refused by its
// schema version, named with both numbers, and counted; it is never read with shifted slots.
TEST_F(PromMpRobust, PreviousSchemaVersionIsRefusedNamingBothVersions) {
    auto w = writer("old");
    ASSERT_EQ(kLayoutVersion, 2u);
    // layoutVersion (u32 @8) = 1 and slotCount (u32 @12) = 21, as a schema-1 writer left them.
    poke(w->path(), offsetof(nixlMpStoreHeader, layoutVersion), (uint64_t{21} << 32) | 1u);
    nixlMpStoreSnapshot snap;
    std::string why;
    EXPECT_EQ(readStore(w->path(), *schema_, &snap, &why), nixlMpReadStatus::REFUSED);
    EXPECT_EQ(why, "store schema version 1, expected 2");
    nixlMpCollector c(dir_.path(), schema_, 3600);
    const std::string text = c.scrape();
    EXPECT_EQ(mpTest::countLines(text, "agent_tx_bytes_total{", {"agent_name=\"old\""}), 0u)
        << text;
    EXPECT_EQ(mpTest::sampleValue(text, "nixl_mp_stores_refused_total"), 1.0) << text;
}

TEST_F(PromMpRobust, LooseDirectoryIsReportedOncePerProcess) {
    const std::string dir = dir_.path() + "/shared";
    ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
    ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
    mpTest::globalLog().clear();
    for (int agent = 0; agent < 3; ++agent) {
        prepareDir(dir);
        prepareDir(dir + "/"); // another spelling of the same directory
    }
    EXPECT_EQ(mpTest::globalLog().count(NIXL_PLUGIN_LOG_WARN, "group- or world-writable"), 1u)
        << mpTest::globalLog().all();
}

TEST_F(PromMpRobust, LabelFieldsWithoutNulAreCutAtTheDocumentedLength) {
    auto w = writer("x");
    // No NUL anywhere in the three text fields, as a damaged or foreign store may have them.
    const std::string path = w->path();
    const int fd = open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const std::string fill(kAgentNameLen + kHostnameLen + kLocalRankLen, 'a');
    ASSERT_EQ(pwrite(fd, fill.data(), fill.size(), offsetof(nixlMpStoreHeader, agentName)),
              static_cast<ssize_t>(fill.size()));
    close(fd);
    nixlMpStoreSnapshot snap;
    std::string why;
    ASSERT_EQ(readStore(path, *schema_, &snap, &why), nixlMpReadStatus::OK) << why;
    EXPECT_EQ(snap.id.agentName.size(), 255u);
    EXPECT_EQ(snap.id.hostname.size(), 127u);
    EXPECT_EQ(snap.id.localRank.size(), 63u);
}

TEST_F(PromMpRobust, LongAgentNamesAreCutAt255Bytes) {
    auto w = writer(std::string(300, 'n'));
    nixlMpStoreSnapshot snap;
    std::string why;
    ASSERT_EQ(readStore(w->path(), *schema_, &snap, &why), nixlMpReadStatus::OK) << why;
    EXPECT_EQ(snap.id.agentName, std::string(255, 'n'));
}

TEST_F(PromMpRobust, StoresTruncatedDuringReadsNeverCrashTheReader) {
    // Another process truncating and restoring a store while the owner reads it: a reader that
    // mapped the file would die of SIGBUS when a page vanished under its copy.
    auto w = writer("shrinking");
    w->record(mpTest::kTx, 1);
    const std::string path = w->path();
    const off_t full = static_cast<off_t>(storeSize(schema_->slotCount()));
    std::atomic<bool> stop{false};
    std::thread truncator([&] {
        const int fd = open(path.c_str(), O_WRONLY);
        while (fd >= 0 && !stop.load()) {
            (void)ftruncate(fd, 0);
            (void)ftruncate(fd, full);
        }
        if (fd >= 0) {
            close(fd);
        }
    });
    size_t ok = 0;
    size_t refused = 0;
    for (int i = 0; i < 20000; ++i) {
        nixlMpStoreSnapshot snap;
        std::string why;
        const nixlMpReadStatus st = readStore(path, *schema_, &snap, &why);
        ok += st == nixlMpReadStatus::OK;
        refused += st == nixlMpReadStatus::REFUSED;
    }
    stop = true;
    truncator.join();
    EXPECT_EQ(ok + refused, 20000u);
}

TEST_F(PromMpRobust, ChurningWritersDoNotGrowTheCollectorsHeap) {
    // A long-lived owner while ranks crash and restart under new names: every store departs,
    // is published once more and reaped. Heap in use (malloc's own count, not RSS) must not
    // grow with the number of stores that came and went.
    nixlMpCollector c(dir_.path(), schema_, 0);
    std::vector<std::unique_ptr<nixlMpStoreWriter>> live;
    size_t inUseAt1000 = 0;
    for (int cycle = 1; cycle <= 3000; ++cycle) {
        live.push_back(writer("w" + std::to_string(cycle)));
        live.back()->record(mpTest::kTx, 5);
        if (live.size() > 20) {
            live.erase(live.begin(), live.begin() + 10); // ten ranks "crash"
        }
        c.scrape();
        if (cycle == 1000) {
            inUseAt1000 = mallinfo2().uordblks;
        }
    }
    const size_t inUseAt3000 = mallinfo2().uordblks;
    // 2000 more cycles: a leak of 4 bytes per cycle would exceed this.
    EXPECT_LT(inUseAt3000, inUseAt1000 + 8192) << inUseAt1000 << " -> " << inUseAt3000;
}

// Issue 29 item 11: hostile clients of the HTTP server. A connection that never sends, or sends
// one byte at a time, must not keep a scrape out, and stop() must not wait for such a client.
namespace {

int
connectLoopback(uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

} // namespace

// Before the fix the server read one connection at a time with a 2 s timeout per recv: 64
// silent connections held the scrape for 128 s, so the scrape (which gives up after 5 s without
// a byte) got nothing. Now every connection is polled and the scrape is answered at once. The
// 5 s is the helper's own receive timeout, ~1000x what the answer takes, far below the bug's.
TEST(PromMpHttp, ScrapeIsAnsweredWhile64SilentAndASlowlorisConnectionAreOpen) {
    nixlMpHttpServer server;
    ASSERT_EQ(server.listenOn("127.0.0.1", 0), 0);
    server.start([](std::string &body) { body = "up 1\n"; });
    std::vector<int> hostile;
    for (int i = 0; i < 64; ++i) {
        const int fd = connectLoopback(server.port());
        ASSERT_GE(fd, 0);
        hostile.push_back(fd);
    }
    const int slow = connectLoopback(server.port());
    ASSERT_GE(slow, 0);
    ASSERT_EQ(send(slow, "G", 1, MSG_NOSIGNAL), 1);
    for (int round = 0; round < 3; ++round) {
        const auto body = mpTest::httpGet(server.port());
        ASSERT_TRUE(body.has_value()) << "scrape " << round << " got no answer";
        EXPECT_EQ(*body, "up 1\n");
        send(slow, "E", 1, MSG_NOSIGNAL);
    }
    server.stop();
    for (const int fd : hostile) {
        close(fd);
    }
    close(slow);
}

// Before the fix stop() joined a thread blocked in recv on a slowloris client (2 s per byte,
// reset by every byte): the agent's destructor took 32.5 s. The dribbler below keeps sending for
// up to 20 s; stop() must return while it still does (it now takes microseconds).
TEST(PromMpHttp, StopDoesNotWaitForASlowlorisClient) {
    nixlMpHttpServer server;
    ASSERT_EQ(server.listenOn("127.0.0.1", 0), 0);
    server.start([](std::string &body) { body = "up 1\n"; });
    const int slow = connectLoopback(server.port());
    ASSERT_GE(slow, 0);
    ASSERT_EQ(send(slow, "G", 1, MSG_NOSIGNAL), 1);
    // The slowloris connection was queued first, so once the scrape returns it was accepted;
    // it keeps dribbling meanwhile (the old server then never let go of it).
    auto scraped = std::async(std::launch::async, [&server] {
        return mpTest::httpGet(server.port());
    });
    while (scraped.wait_for(std::chrono::milliseconds(500)) != std::future_status::ready) {
        send(slow, "E", 1, MSG_NOSIGNAL);
    }
    auto stopped = std::async(std::launch::async, [&server] { server.stop(); });
    bool returned = false;
    for (int i = 0; i < 40 && !returned; ++i) {
        returned = stopped.wait_for(std::chrono::milliseconds(500)) == std::future_status::ready;
        send(slow, "E", 1, MSG_NOSIGNAL);
    }
    EXPECT_TRUE(returned) << "stop() waited on a client that kept sending for 20 s";
    stopped.wait();
    close(slow);
}
