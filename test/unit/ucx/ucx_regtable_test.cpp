/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The registration table in shared memory without an engine (src/utils/regtable/reg_table.h): what a peer
// refuses to map (another engine's table, as after a restart that reused the pid; a foreign
// uid; a wrong mode), and the fence's waits: for a copy in flight, and not for a copier that
// was killed inside one. Children are forked and report over a pipe; nothing sleeps.

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "reg_table.h"
#include "ucx_test_utils.h"
#include "ucx_utils.h"
#include "../full_fs.h"

using nixlReg::nixlRegTable;
using nixlUcx::procIdentity;

namespace {

constexpr size_t slots = 1024;
constexpr uint64_t owner_nonce = 0x1234567890abcdefull;
constexpr uint64_t reader_nonce = 0x0fedcba987654321ull;

procIdentity
self() {
    procIdentity id;
    std::string err;
    EXPECT_TRUE(nixlUcx::readSelfIdentity(id, err)) << err;
    return id;
}

std::string
shmPath(const nixlRegTable &t) {
    return "/dev/shm" + t.name();
}

/** Reads one byte from fd, waiting at most the hang deadline; false on EOF or timeout. */
bool
readByte(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    const int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(nixl_ucx_test::hang_deadline)
            .count());
    char c = 0;
    return ::poll(&p, 1, ms) == 1 && ::read(fd, &c, 1) == 1;
}

} // namespace

TEST(ucxRegTable, MapsOnlyTheTableTheConnectionInfoNames) {
    const procIdentity me = self();
    std::string why;
    auto owner = nixlRegTable::create("ucx", me, owner_nonce, slots, why);
    ASSERT_TRUE(owner) << why;
    if (owner->name().empty()) {
        GTEST_SKIP() << "no POSIX shared memory here: " << why;
    }
    struct stat st {};
    ASSERT_EQ(::stat(shmPath(*owner).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(owner->slots()[0].load(), owner_nonce);

    auto ok = nixlRegTable::open(owner->name(), owner_nonce, me, slots, me, reader_nonce, why);
    ASSERT_TRUE(ok) << why;
    // The reader sees the owner's slots through its own mapping.
    owner->slots()[5].store(42);
    EXPECT_EQ(ok->slots()[5].load(), 42u);

    // A restarted peer that reuses the pid has another nonce (and start time): its
    // connection info never validates against the old table.
    why.clear();
    EXPECT_FALSE(
        nixlRegTable::open(owner->name(), owner_nonce + 1, me, slots, me, reader_nonce, why));
    EXPECT_NE(why.find("belongs to another engine"), std::string::npos) << why;
    procIdentity other = me;
    other.startTime += 1;
    why.clear();
    EXPECT_FALSE(
        nixlRegTable::open(owner->name(), owner_nonce, other, slots, me, reader_nonce, why));
    EXPECT_NE(why.find("belongs to another engine"), std::string::npos) << why;
    other = me;
    other.pid += 1;
    why.clear();
    EXPECT_FALSE(
        nixlRegTable::open(owner->name(), owner_nonce, other, slots, me, reader_nonce, why));
    EXPECT_NE(why.find("belongs to another engine"), std::string::npos) << why;
    // Another size than the connection info says.
    why.clear();
    EXPECT_FALSE(
        nixlRegTable::open(owner->name(), owner_nonce, me, slots * 2, me, reader_nonce, why));
    EXPECT_NE(why.find("bytes, expected"), std::string::npos) << why;
    // Names the owner could not have made never reach shm_open.
    for (const char *bad : {"", "/etc/passwd", "/nixl-ucx-../../x", "/nixl-ucx-0123"}) {
        why.clear();
        EXPECT_FALSE(nixlRegTable::open(bad, owner_nonce, me, slots, me, reader_nonce, why));
        EXPECT_EQ(why, "table name is malformed") << bad;
    }
    // Gone with its owner.
    const std::string name = owner->name();
    ok.reset();
    owner.reset();
    why.clear();
    EXPECT_FALSE(nixlRegTable::open(name, owner_nonce, me, slots, me, reader_nonce, why));
    EXPECT_NE(why.find("No such file"), std::string::npos) << why;
}

TEST(ucxRegTable, RefusesWrongModeAndForeignUid) {
    const procIdentity me = self();
    std::string why;
    auto owner = nixlRegTable::create("ucx", me, owner_nonce, slots, why);
    ASSERT_TRUE(owner) << why;
    if (owner->name().empty()) {
        GTEST_SKIP() << "no POSIX shared memory here: " << why;
    }
    const std::string path = shmPath(*owner);
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
    why.clear();
    EXPECT_FALSE(nixlRegTable::open(owner->name(), owner_nonce, me, slots, me, reader_nonce, why));
    EXPECT_NE(why.find("has mode 0644, expected 0600"), std::string::npos) << why;
    ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
    if (::geteuid() != 0) {
        GTEST_SKIP() << "changing a file's owner needs root";
    }
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
    why.clear();
    EXPECT_FALSE(nixlRegTable::open(owner->name(), owner_nonce, me, slots, me, reader_nonce, why));
    EXPECT_NE(why.find("belongs to uid 65534"), std::string::npos) << why;
}

TEST(ucxRegTable, FenceWaitsForTheCopyInFlight) {
    const procIdentity me = self();
    std::string why;
    auto owner = nixlRegTable::create("ucx", me, owner_nonce, slots, why);
    ASSERT_TRUE(owner) << why;
    if (owner->name().empty()) {
        GTEST_SKIP() << "no POSIX shared memory here: " << why;
    }
    auto reader = nixlRegTable::open(owner->name(), owner_nonce, me, slots, me, reader_nonce, why);
    ASSERT_TRUE(reader) << why;
    // No copy running: the fence returns at once.
    std::string who;
    EXPECT_TRUE(owner->fence(60000, who));

    const nixlRegTable::mark_t mark = reader->enter();
    std::atomic<bool> returned{false};
    bool fenced = false;
    std::thread dereg([&] {
        fenced = owner->fence(60000, who);
        returned.store(true);
    });
    // Once the fence waits on the mark it cannot return before the copy leaves it.
    EXPECT_TRUE(nixl_ucx_test::waitFor([&] { return owner->fenceWaits() == 1; }));
    EXPECT_FALSE(returned.load());
    nixlRegTable::leave(mark);
    dereg.join();
    EXPECT_TRUE(fenced) << who;

    // A live copier that stays inside is reported after the timeout instead of hanging.
    const nixlRegTable::mark_t stuck = reader->enter();
    EXPECT_FALSE(owner->fence(1, who));
    EXPECT_NE(who.find("is still copying"), std::string::npos) << who;
    nixlRegTable::leave(stuck);
}

// Many mappings of one table by one engine (a peer loaded under 300 names: one connection,
// and so one mapping, per name) share one reader record, so the table's 256 records cannot be
// used up by names alone, and another engine still gets a record the fence watches. Records
// are freed with the last mapping that uses them.
TEST(ucxRegTable, OneReaderRecordPerEngineHoweverManyMappings) {
    const procIdentity me = self();
    std::string why;
    auto owner = nixlRegTable::create("ucx", me, owner_nonce, slots, why);
    ASSERT_TRUE(owner) << why;
    if (owner->name().empty()) {
        GTEST_SKIP() << "no POSIX shared memory here: " << why;
    }
    std::vector<std::unique_ptr<nixlRegTable>> same;
    for (int i = 0; i < 300; ++i) {
        same.push_back(
            nixlRegTable::open(owner->name(), owner_nonce, me, slots, me, reader_nonce, why));
        ASSERT_TRUE(same.back()) << "mapping " << i << ": " << why;
    }
    auto honest =
        nixlRegTable::open(owner->name(), owner_nonce, me, slots, me, reader_nonce + 1, why);
    ASSERT_TRUE(honest) << why;
    // The fence watches the honest engine's record, and the shared one of the 300.
    std::string who;
    nixlRegTable::mark_t mark = honest->enter();
    EXPECT_FALSE(owner->fence(1, who));
    EXPECT_NE(who.find("is still copying"), std::string::npos) << who;
    nixlRegTable::leave(mark);
    mark = same[299]->enter();
    EXPECT_FALSE(owner->fence(1, who));
    nixlRegTable::leave(mark);
    EXPECT_TRUE(owner->fence(60000, who)) << who;

    // The shared record stays while any of its mappings does, and is freed with the last:
    // then 255 more engines fit beside the honest one.
    same.erase(same.begin(), same.begin() + 299);
    mark = same[0]->enter();
    EXPECT_FALSE(owner->fence(1, who));
    nixlRegTable::leave(mark);
    same.clear();
    std::vector<std::unique_ptr<nixlRegTable>> others;
    for (uint64_t i = 0; i < nixlReg::reg_table_readers - 1; ++i) {
        others.push_back(nixlRegTable::open(owner->name(), owner_nonce, me, slots, me,
                                               reader_nonce + 2 + i, why));
        ASSERT_TRUE(others.back()) << "engine " << i << ": " << why;
    }
    EXPECT_FALSE(
        nixlRegTable::open(owner->name(), owner_nonce, me, slots, me, reader_nonce + 999, why));
    EXPECT_NE(why.find("no free reader record"), std::string::npos) << why;
}

TEST(ucxRegTable, FenceSkipsACopierKilledInsideItsCopy) {
    const procIdentity me = self();
    std::string why;
    auto owner = nixlRegTable::create("ucx", me, owner_nonce, slots, why);
    ASSERT_TRUE(owner) << why;
    if (owner->name().empty()) {
        GTEST_SKIP() << "no POSIX shared memory here: " << why;
    }
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(p[0]);
        procIdentity cid;
        std::string err;
        if (!nixlUcx::readSelfIdentity(cid, err)) {
            ::_exit(2);
        }
        std::string w;
        auto r = nixlRegTable::open(owner->name(), owner_nonce, me, slots, cid, 7, w);
        if (!r) {
            ::_exit(3);
        }
        r->enter(); // and never leave: killed in the middle of its copy
        char c = 'm';
        if (::write(p[1], &c, 1) != 1) {
            ::_exit(4);
        }
        for (;;) {
            ::pause();
        }
    }
    ::close(p[1]);
    // The child is inside its copy when it says so.
    ASSERT_TRUE(readByte(p[0]));
    ::close(p[0]);
    std::string who;
    bool fenced = false;
    std::thread dereg([&] { fenced = owner->fence(60000, who); });
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    // Not reaped while the fence may still be waiting: a zombie counts as exited.
    dereg.join();
    EXPECT_TRUE(fenced) << who;
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status));
    // Its record was freed: fences after it do not look at it again.
    EXPECT_TRUE(owner->fence(60000, who));
}

TEST(ucxRegTable, TablesOfKilledOwnersAreSwept) {
    const procIdentity me = self();
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(p[0]);
        procIdentity cid;
        std::string err;
        if (!nixlUcx::readSelfIdentity(cid, err)) {
            ::_exit(2);
        }
        auto t = nixlRegTable::create("ucx", cid, 99, slots, err);
        if (!t) {
            ::_exit(3);
        }
        const std::string n = t->name();
        if (::write(p[1], n.data(), n.size()) != static_cast<ssize_t>(n.size())) {
            ::_exit(4);
        }
        ::_exit(0); // no destructor runs: the table stays, as after SIGKILL
    }
    ::close(p[1]);
    char buf[128] = {};
    ssize_t n = 0;
    ssize_t r;
    while ((r = ::read(p[0], buf + n, sizeof(buf) - 1 - n)) > 0) {
        n += r;
    }
    ::close(p[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    const std::string name(buf, static_cast<size_t>(n));
    if (name.empty()) {
        GTEST_SKIP() << "no POSIX shared memory here";
    }
    struct stat st {};
    ASSERT_EQ(::stat(("/dev/shm" + name).c_str(), &st), 0);
    std::string why;
    auto fresh = nixlRegTable::create("ucx", me, owner_nonce, slots, why);
    ASSERT_TRUE(fresh) << why;
    EXPECT_NE(::stat(("/dev/shm" + name).c_str(), &st), 0);
    EXPECT_EQ(errno, ENOENT);
}

// /dev/shm full (Docker's default is 64 MiB). The table's object is sized with ftruncate, so a
// store to a page tmpfs cannot back is a SIGBUS: create reserves its first pages and
// registerMem each new page of slots, and a full /dev/shm is a status. Each case runs in a
// child with a 1 MiB tmpfs over /dev/shm (../full_fs.h); the parent asserts it was not killed.

TEST(ucxRegTable, DISABLED_ShmFullChildTable) {
    ASSERT_TRUE(nixl_full_fs::inFullFsChild());
    const procIdentity me = self();
    std::string why;
    // Full before create: private memory, and why names the cause.
    auto t = nixlRegTable::create("ucx", me, owner_nonce, size_t(1) << 20, why);
    ASSERT_TRUE(t) << why;
    EXPECT_TRUE(t->name().empty());
    EXPECT_NE(why.find(std::strerror(ENOSPC)), std::string::npos) << why;
    EXPECT_TRUE(t->reserve(1000000, why)) << why; // private memory needs none
    t->slots()[1000000].store(7);
    EXPECT_EQ(t->slots()[0].load(), owner_nonce);
    nixl_full_fs::finishChild(::testing::Test::HasFailure());
}

TEST(ucxRegTable, DISABLED_ShmFilledAfterCreateChildTable) {
    ASSERT_TRUE(nixl_full_fs::inFullFsChild());
    const procIdentity me = self();
    std::string why;
    auto t = nixlRegTable::create("ucx", me, owner_nonce, size_t(1) << 20, why);
    ASSERT_TRUE(t) << why;
    ASSERT_FALSE(t->name().empty()) << why;
    ASSERT_TRUE(nixl_full_fs::fillUp(nixl_full_fs::fullFsDir()));
    // The first slots were reserved by create: written without a fault.
    ASSERT_TRUE(t->reserve(1, why)) << why;
    t->slots()[1].store(1);
    // A slot far beyond cannot be backed any more: a status, and the slot is not written.
    EXPECT_FALSE(t->reserve(500000, why));
    EXPECT_NE(why.find(std::strerror(ENOSPC)), std::string::npos) << why;
    // A peer maps and reads the reserved part as usual.
    auto r = nixlRegTable::open(t->name(), owner_nonce, me, size_t(1) << 20, me, reader_nonce,
                                   why);
    ASSERT_TRUE(r) << why;
    EXPECT_EQ(r->slots()[1].load(), 1u);
    nixl_full_fs::finishChild(::testing::Test::HasFailure());
}

namespace {

/** Registers n 64-byte pieces of buf one by one; the status of the first failure, or SUCCESS. */
nixl_status_t
registerPieces(nixl_ucx_test::ucxAgent &a, const nixl_ucx_test::testMem &buf, size_t n,
               size_t &done) {
    for (done = 0; done < n; ++done) {
        nixl_status_t st = a.registerDram(buf.addr() + done * 64, 64);
        if (st != NIXL_SUCCESS) {
            return st;
        }
    }
    return NIXL_SUCCESS;
}

constexpr size_t pieces = 4000; // past the slots create reserves (1,536)

} // namespace

TEST(ucxRegTable, DISABLED_ShmFullChildEngine) {
    ASSERT_TRUE(nixl_full_fs::inFullFsChild());
    // /dev/shm full before createBackend: the engine runs on a private table (one warning).
    // UCX's own shared-memory transports need /dev/shm too (ucp_worker_create fails: "Out of
    // memory", createBackend NIXL_ERR_BACKEND), so they are left out here.
    ::setenv("UCX_TLS", "tcp,cma,self", 1);
    nixl_status_t st = NIXL_ERR_UNKNOWN;
    auto a = nixl_ucx_test::ucxAgent::make("shmfull", {}, &st);
    ASSERT_EQ(st, NIXL_SUCCESS);
    nixl_ucx_test::testMem buf(pieces * 64);
    size_t done = 0;
    EXPECT_EQ(registerPieces(*a, buf, pieces, done), NIXL_SUCCESS) << done;
    a.reset();
    nixl_full_fs::finishChild(::testing::Test::HasFailure());
}

TEST(ucxRegTable, DISABLED_ShmFilledAfterCreateChildEngine) {
    ASSERT_TRUE(nixl_full_fs::inFullFsChild());
    ::setenv("UCX_TLS", "tcp,cma,self", 1); // as above
    nixl_status_t st = NIXL_ERR_UNKNOWN;
    auto a = nixl_ucx_test::ucxAgent::make("shmfilled", {}, &st);
    ASSERT_EQ(st, NIXL_SUCCESS);
    ASSERT_TRUE(nixl_full_fs::fillUp(nixl_full_fs::fullFsDir()));
    // Registrations in reserved slots succeed; the first that needs a new page is refused
    // (a registration without a slot would have no deregistration fence).
    nixl_ucx_test::testMem buf(pieces * 64);
    size_t done = 0;
    EXPECT_EQ(registerPieces(*a, buf, pieces, done), NIXL_ERR_BACKEND);
    EXPECT_GT(done, 0u);
    EXPECT_LT(done, pieces);
    // What was registered is released as usual.
    for (size_t i = 0; i < done; ++i) {
        ASSERT_EQ(a->deregisterDram(buf.addr() + i * 64, 64), NIXL_SUCCESS) << i;
    }
    a.reset();
    nixl_full_fs::finishChild(::testing::Test::HasFailure());
}

TEST(ucxRegTable, ShmFullIsAStatusNotASignal) {
    const std::string skip = nixl_full_fs::fullFsSkipReason();
    if (!skip.empty()) {
        GTEST_SKIP() << skip;
    }
    for (const auto &[name, fill] : std::vector<std::pair<std::string, bool>>{
             {"ucxRegTable.DISABLED_ShmFullChildTable", true},
             {"ucxRegTable.DISABLED_ShmFilledAfterCreateChildTable", false},
             {"ucxRegTable.DISABLED_ShmFullChildEngine", true},
             {"ucxRegTable.DISABLED_ShmFilledAfterCreateChildEngine", false}}) {
        const int ws = nixl_full_fs::runInFullFs("/dev/shm", name, fill);
        EXPECT_TRUE(nixl_full_fs::passed(ws)) << name << ": " << nixl_full_fs::describe(ws);
    }
}

// A reader touches no slot the owner has not reserved storage for: a forged slot index in a
// peer's metadata used to SIGBUS the reader once /dev/shm was full (issue 29, item 1).
TEST(ucxRegTable, ReadersSeeOnlySlotsWithStorage) {
    const procIdentity me = self();
    std::string why;
    constexpr size_t many = size_t(1) << 20; // the engines' table size
    auto owner = nixlRegTable::create("ucx", me, owner_nonce, many, why);
    ASSERT_TRUE(owner) << why;
    if (owner->name().empty()) {
        GTEST_SKIP() << "no POSIX shared memory here: " << why;
    }
    auto reader =
        nixlRegTable::open(owner->name(), owner_nonce, me, many, me, reader_nonce, why);
    ASSERT_TRUE(reader) << why;
    EXPECT_TRUE(reader->backed(0));
    EXPECT_TRUE(reader->backed(1));
    EXPECT_FALSE(reader->backed(many - 1)); // not reserved yet
    EXPECT_FALSE(reader->backed(many));     // past the table
    EXPECT_FALSE(reader->backed(UINT64_MAX));
    // The owner reserves a slot before it publishes it; the reader then sees it backed.
    ASSERT_TRUE(owner->reserve(many - 1, why)) << why;
    EXPECT_TRUE(reader->backed(many - 1));
    EXPECT_TRUE(owner->backed(many - 1));
}
