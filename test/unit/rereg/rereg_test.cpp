/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Re-registration: a peer deregisters memory and registers the same address again (any
// allocator hands a freed address out again), and this agent loads its new metadata. NIXL 1.4
// then moves data into the new registration; so must libnixl, on every backend, whether or not
// the peer's metadata was loaded between the deregistration and the new registration, with
// full and partial metadata. What was prepared against the old registration fails cleanly, and
// no byte lands in memory the peer deregistered and did not register again.
//
// Each case runs per backend (TEST, UCX direct and UCP paths, LIBFABRIC shm and tcp), with both
// agents in this process, and (UCX, LIBFABRIC) with the target in a forked child process.

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nixl.h"
#include "../../common/xfer_test_utils.h"

namespace {

using nixl_test::fillPattern;
using nixl_test::firstMismatch;
using nixl_test::recvFrame;
using nixl_test::regList;
using nixl_test::runXfer;
using nixl_test::sendFrame;
using nixl_test::transfer;

nixl_xfer_dlist_t
xferList(uintptr_t addr, size_t len) {
    return nixl_test::xferList({{addr, len}});
}

struct backendParam {
    const char *label;
    const char *backend;
    nixl_b_params_t params;
    bool crossProcess; ///< the backend moves data between processes
};

// Names, not bytes, in gtest's messages.
void
PrintTo(const backendParam &p, std::ostream *os) {
    *os << p.label;
}

const std::vector<backendParam> &
allBackends() {
    static const std::vector<backendParam> all = {
        {"TEST", "TEST", {}, false},
        {"UCX_direct", "UCX", {{"ucx_direct_cma", "yes"}}, true},
        {"UCX_ucp", "UCX", {{"ucx_direct_cma", "no"}}, true},
        {"LIBFABRIC_shm", "LIBFABRIC", {{"provider", "shm"}}, true},
        {"LIBFABRIC_tcp", "LIBFABRIC", {{"provider", "tcp;ofi_rxm"}}, true},
    };
    return all;
}

/** An agent with one backend, or null (and why) when the backend cannot be created here. */
std::unique_ptr<nixlAgent>
makeAgent(const std::string &name, const backendParam &p, std::string &why) {
    auto agent = std::make_unique<nixlAgent>(name, nixlAgentConfig(false, false));
    nixlBackendH *h = nullptr;
    const nixl_status_t st = agent->createBackend(p.backend, p.params, h);
    if (st != NIXL_SUCCESS) {
        why = std::string("backend ") + p.backend + " unavailable here: createBackend returned " +
            std::to_string(st);
        return nullptr;
    }
    return agent;
}

std::string
fullMD(nixlAgent &a) {
    nixl_blob_t blob;
    EXPECT_EQ(a.getLocalMD(blob), NIXL_SUCCESS);
    return blob;
}

/** Partial metadata of [addr, +len) with connection info. */
std::string
partialMD(nixlAgent &a, uintptr_t addr, size_t len) {
    nixl_opt_args_t extra;
    extra.includeConnInfo = true;
    nixl_blob_t blob;
    EXPECT_EQ(a.getLocalPartialMD(regList(addr, len), blob, &extra), NIXL_SUCCESS);
    return blob;
}

// ---------------------------------------------------------------------------------------------
// The target side: an agent in this process, or in a forked child driven over a socket.

/** What the tests do to the target agent ("B"). */
class targetSide {
public:
    virtual ~targetSide() = default;
    /** A zeroed heap buffer of len bytes (calloc); the previous one is freed first. */
    virtual uintptr_t
    alloc(size_t len) = 0;
    virtual void
    release() = 0;
    virtual nixl_status_t
    reg(uintptr_t addr, size_t len) = 0;
    virtual nixl_status_t
    dereg(uintptr_t addr, size_t len) = 0;
    virtual std::string
    md() = 0;
    virtual std::string
    partial(uintptr_t addr, size_t len) = 0;
    virtual void
    fill(uintptr_t addr, size_t len, uint32_t seed) = 0;
    /** First byte of [addr, +len) not of seed's pattern, or -1. */
    virtual long long
    check(uintptr_t addr, size_t len, uint32_t seed) = 0;
    /** Progress for the target (in-process: getNotifs; a child progresses itself). */
    virtual void
    poll() = 0;
};

class localTarget : public targetSide {
public:
    explicit localTarget(std::unique_ptr<nixlAgent> a) : a_(std::move(a)) {}
    ~localTarget() override {
        a_.reset();
        std::free(buf_);
    }
    uintptr_t
    alloc(size_t len) override {
        std::free(buf_);
        buf_ = std::calloc(1, len);
        return reinterpret_cast<uintptr_t>(buf_);
    }
    void
    release() override {
        std::free(buf_);
        buf_ = nullptr;
    }
    nixl_status_t
    reg(uintptr_t addr, size_t len) override {
        return a_->registerMem(regList(addr, len));
    }
    nixl_status_t
    dereg(uintptr_t addr, size_t len) override {
        return a_->deregisterMem(regList(addr, len));
    }
    std::string
    md() override {
        return fullMD(*a_);
    }
    std::string
    partial(uintptr_t addr, size_t len) override {
        return partialMD(*a_, addr, len);
    }
    void
    fill(uintptr_t addr, size_t len, uint32_t seed) override {
        fillPattern(reinterpret_cast<void *>(addr), len, seed);
    }
    long long
    check(uintptr_t addr, size_t len, uint32_t seed) override {
        return firstMismatch(reinterpret_cast<const void *>(addr), len, seed);
    }
    void
    poll() override {
        nixl_notifs_t n;
        a_->getNotifs(n);
    }

private:
    std::unique_ptr<nixlAgent> a_;
    void *buf_ = nullptr;
};

/** The child: serves one localTarget over fd until "exit" or EOF. Never returns. */
[[noreturn]] void
childMain(int fd, const backendParam &p) {
    std::string why;
    auto agent = makeAgent("B", p, why);
    if (!agent) {
        sendFrame(fd, "err " + why);
        ::_exit(0);
    }
    localTarget t(std::move(agent));
    sendFrame(fd, "ok");
    for (;;) {
        std::string line;
        if (!recvFrame(fd, line, [&] { t.poll(); })) {
            ::_exit(0); // the parent went away, or stayed idle past the deadline
        }
        std::istringstream in(line);
        std::string op;
        uint64_t a = 0;
        uint64_t b = 0;
        uint64_t c = 0;
        in >> op >> a >> b >> c;
        std::string reply;
        if (op == "exit") {
            sendFrame(fd, "ok");
            ::_exit(0);
        } else if (op == "alloc") {
            reply = std::to_string(t.alloc(a));
        } else if (op == "release") {
            t.release();
        } else if (op == "reg") {
            reply = std::to_string(t.reg(a, b));
        } else if (op == "dereg") {
            reply = std::to_string(t.dereg(a, b));
        } else if (op == "md") {
            reply = t.md();
        } else if (op == "partial") {
            reply = t.partial(a, b);
        } else if (op == "fill") {
            t.fill(a, b, static_cast<uint32_t>(c));
        } else if (op == "check") {
            reply = std::to_string(t.check(a, b, static_cast<uint32_t>(c)));
        }
        if (!sendFrame(fd, reply)) {
            ::_exit(0);
        }
    }
}

class remoteTarget : public targetSide {
public:
    /** Forks the child; ok() tells whether it runs, why() why not. */
    explicit remoteTarget(const backendParam &p) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
            why_ = "socketpair failed";
            return;
        }
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(sv[0]);
            childMain(sv[1], p);
        }
        ::close(sv[1]);
        fd_ = sv[0];
        std::string hello;
        if (pid_ < 0 || !recvFrame(fd_, hello)) {
            why_ = "the child did not start";
        } else if (hello != "ok") {
            why_ = hello;
        }
    }
    ~remoteTarget() override {
        if (fd_ >= 0) {
            std::string r;
            if (sendFrame(fd_, "exit")) {
                recvFrame(fd_, r);
            }
            ::close(fd_);
        }
        if (pid_ > 0) {
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
    }
    bool
    ok() const {
        return why_.empty();
    }
    const std::string &
    why() const {
        return why_;
    }
    uintptr_t
    alloc(size_t len) override {
        return std::stoull(call("alloc " + std::to_string(len)));
    }
    void
    release() override {
        call("release");
    }
    nixl_status_t
    reg(uintptr_t addr, size_t len) override {
        return static_cast<nixl_status_t>(std::stoi(call(cmd("reg", addr, len))));
    }
    nixl_status_t
    dereg(uintptr_t addr, size_t len) override {
        return static_cast<nixl_status_t>(std::stoi(call(cmd("dereg", addr, len))));
    }
    std::string
    md() override {
        return call("md");
    }
    std::string
    partial(uintptr_t addr, size_t len) override {
        return call(cmd("partial", addr, len));
    }
    void
    fill(uintptr_t addr, size_t len, uint32_t seed) override {
        call(cmd("fill", addr, len, seed));
    }
    long long
    check(uintptr_t addr, size_t len, uint32_t seed) override {
        return std::stoll(call(cmd("check", addr, len, seed)));
    }
    void
    poll() override {}

private:
    static std::string
    cmd(const char *op, uint64_t a, uint64_t b, uint64_t c = 0) {
        return std::string(op) + " " + std::to_string(a) + " " + std::to_string(b) + " " +
            std::to_string(c);
    }
    std::string
    call(const std::string &line) {
        std::string reply;
        if (!sendFrame(fd_, line) || !recvFrame(fd_, reply)) {
            ADD_FAILURE() << "the target process did not answer '" << line << "'";
            return "-1";
        }
        return reply;
    }

    pid_t pid_ = -1;
    int fd_ = -1;
    std::string why_;
};

// ---------------------------------------------------------------------------------------------

enum class where_t { IN_PROCESS, CROSS_PROCESS };

class reregTest : public ::testing::TestWithParam<std::tuple<backendParam, where_t>> {
protected:
    static constexpr size_t len = 64 << 10;

    void
    SetUp() override {
        const backendParam &p = std::get<0>(GetParam());
        std::string why;
        if (std::get<1>(GetParam()) == where_t::CROSS_PROCESS) {
            if (!p.crossProcess) {
                GTEST_SKIP() << p.backend << " moves data only within one process";
            }
            // Forked before this process creates any agent (no UCX context crosses a fork).
            auto r = std::make_unique<remoteTarget>(p);
            if (!r->ok()) {
                GTEST_SKIP() << r->why();
            }
            b_ = std::move(r);
        } else {
            auto agent = makeAgent("B", p, why);
            if (!agent) {
                GTEST_SKIP() << why;
            }
            b_ = std::make_unique<localTarget>(std::move(agent));
        }
        a_ = makeAgent("A", p, why);
        ASSERT_NE(a_, nullptr) << why;
        local_ = std::calloc(1, len);
        ASSERT_EQ(a_->registerMem(regList(laddr(), len)), NIXL_SUCCESS);
    }

    void
    TearDown() override {
        if (a_) {
            EXPECT_EQ(a_->deregisterMem(regList(laddr(), len)), NIXL_SUCCESS);
        }
        a_.reset();
        b_.reset();
        std::free(local_);
    }

    uintptr_t
    laddr() const {
        return reinterpret_cast<uintptr_t>(local_);
    }

    nixl_status_t
    load(const std::string &blob) {
        std::string name;
        const nixl_status_t st = a_->loadRemoteMD(blob, name);
        EXPECT_EQ(name, st == NIXL_SUCCESS ? "B" : name);
        return st;
    }

    std::function<void()>
    pollB() {
        return [this] { b_->poll(); };
    }

    /** WRITE seed's pattern into [raddr, +n) of B and READ it back; both verified. */
    void
    expectRoundTrip(uintptr_t raddr, size_t n, uint32_t seed) {
        fillPattern(local_, n, seed);
        ASSERT_EQ(transfer(*a_, NIXL_WRITE, laddr(), raddr, n, "B", pollB()), NIXL_SUCCESS);
        EXPECT_EQ(b_->check(raddr, n, seed), -1) << "WRITE into the re-registered range";
        b_->fill(raddr, n, seed + 1);
        std::memset(local_, 0, n);
        ASSERT_EQ(transfer(*a_, NIXL_READ, laddr(), raddr, n, "B", pollB()), NIXL_SUCCESS);
        EXPECT_EQ(firstMismatch(local_, n, seed + 1), -1) << "READ from the re-registered range";
    }

    std::unique_ptr<targetSide> b_;
    std::unique_ptr<nixlAgent> a_;
    void *local_ = nullptr;
};

// The nine calls of NIXL's agent example, reduced: register X, load, deregister X, register X
// again, load, WRITE into X.
TEST_P(reregTest, SameRangeLoadedAgain) {
    const uintptr_t x = b_->alloc(len);
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    expectRoundTrip(x, len, 1);
    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    expectRoundTrip(x, len, 3);
    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
}

TEST_P(reregTest, LoadedBetweenDeregistrationAndRegistration) {
    const uintptr_t x = b_->alloc(len);
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS); // B's metadata without X
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    expectRoundTrip(x, len, 5);
    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
}

TEST_P(reregTest, PartialMetadata) {
    const uintptr_t x = b_->alloc(len);
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->partial(x, len)), NIXL_SUCCESS);
    expectRoundTrip(x, len, 7);
    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->partial(x, len)), NIXL_SUCCESS);
    expectRoundTrip(x, len, 9);
    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
}

// Same address, another length, both ways: the newer registration serves the range.
TEST_P(reregTest, SameAddressOtherLength) {
    const uintptr_t x = b_->alloc(len);
    ASSERT_EQ(b_->reg(x, len / 2), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    ASSERT_EQ(b_->dereg(x, len / 2), NIXL_SUCCESS);
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    expectRoundTrip(x, len / 2, 11); // covered by the stale and the new registration
    expectRoundTrip(x, len, 13);
    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(b_->reg(x, len / 2), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    expectRoundTrip(x, len / 2, 15); // covered by the stale longer and the new shorter one
    ASSERT_EQ(b_->dereg(x, len / 2), NIXL_SUCCESS);
}

// Overlapping: [x, +len/2) deregistered, [x + len/4, +len/2) registered. The part only the old
// registration covers is refused and nothing lands there; the new range works.
TEST_P(reregTest, OverlappingRangeAndTheFence) {
    const uintptr_t x = b_->alloc(len);
    ASSERT_EQ(b_->reg(x, len / 2), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    ASSERT_EQ(b_->dereg(x, len / 2), NIXL_SUCCESS);
    const uintptr_t y = x + len / 4;
    ASSERT_EQ(b_->reg(y, len / 2), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    expectRoundTrip(y, len / 2, 17);
    if (std::string(std::get<0>(GetParam()).label).rfind("UCX_ucp", 0) == 0) {
        // docs/backends/ucx.md, Errors: a stale remote key on the UCP path is UCX's business
        // (UCX 1.13's software RMA between processes of a host writes without a key check).
        GTEST_SKIP() << "no deregistration fence on the UCX UCP path (a documented limit)";
    }
    b_->fill(x, len / 4, 19);
    fillPattern(local_, len / 4, 21);
    const nixl_status_t st = transfer(*a_, NIXL_WRITE, laddr(), x, len / 4, "B", pollB());
    EXPECT_NE(st, NIXL_SUCCESS) << "a WRITE into memory the peer deregistered succeeded";
    EXPECT_NE(st, NIXL_IN_PROG);
    EXPECT_EQ(b_->check(x, len / 4, 19), -1) << "bytes landed in deregistered memory";
    ASSERT_EQ(b_->dereg(y, len / 2), NIXL_SUCCESS);
}

// What was made against the old registration is refused once the new one is loaded; a
// reload of identical metadata changes nothing.
TEST_P(reregTest, OldRequestsAndListsFailCleanly) {
    const uintptr_t x = b_->alloc(len);
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    const std::string first = b_->md();
    ASSERT_EQ(load(first), NIXL_SUCCESS);
    nixlXferReqH *old_req = nullptr;
    ASSERT_EQ(a_->createXferReq(NIXL_WRITE, xferList(laddr(), len), xferList(x, len), "B",
                                old_req),
              NIXL_SUCCESS);
    nixlDlistH *old_list = nullptr;
    ASSERT_EQ(a_->prepXferDlist("B", xferList(x, len), old_list), NIXL_SUCCESS);
    nixlDlistH *local_list = nullptr;
    ASSERT_EQ(a_->prepXferDlist(NIXL_INIT_AGENT, xferList(laddr(), len), local_list),
              NIXL_SUCCESS);
    ASSERT_EQ(load(first), NIXL_SUCCESS); // the same metadata again: still the same registration
    fillPattern(local_, len, 23);
    EXPECT_EQ(runXfer(*a_, old_req, pollB()), NIXL_SUCCESS);
    EXPECT_EQ(b_->check(x, len, 23), -1);

    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(b_->reg(x, len), NIXL_SUCCESS);
    ASSERT_EQ(load(b_->md()), NIXL_SUCCESS);
    EXPECT_EQ(a_->postXferReq(old_req), NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(a_->releaseXferReq(old_req), NIXL_SUCCESS);
    nixlXferReqH *made = nullptr;
    EXPECT_EQ(a_->makeXferReq(NIXL_WRITE, local_list, {0}, old_list, {0}, made),
              NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(a_->releasedDlistH(old_list), NIXL_SUCCESS);
    nixlDlistH *new_list = nullptr;
    ASSERT_EQ(a_->prepXferDlist("B", xferList(x, len), new_list), NIXL_SUCCESS);
    fillPattern(local_, len, 25);
    ASSERT_EQ(a_->makeXferReq(NIXL_WRITE, local_list, {0}, new_list, {0}, made), NIXL_SUCCESS);
    EXPECT_EQ(runXfer(*a_, made, pollB()), NIXL_SUCCESS);
    EXPECT_EQ(b_->check(x, len, 25), -1);
    EXPECT_EQ(a_->releaseXferReq(made), NIXL_SUCCESS);
    EXPECT_EQ(a_->releasedDlistH(new_list), NIXL_SUCCESS);
    EXPECT_EQ(a_->releasedDlistH(local_list), NIXL_SUCCESS);
    ASSERT_EQ(b_->dereg(x, len), NIXL_SUCCESS);
}

// Allocator reuse: rounds of calloc / register / load / WRITE / READ / deregister / free, of
// a few sizes, so that freed addresses come back with other lengths too.
TEST_P(reregTest, AllocatorReuseSoak) {
    const bool test_backend = std::string(std::get<0>(GetParam()).backend) == "TEST";
    const int rounds = test_backend ? 300 : 60;
    const size_t sizes[] = {4096, 8192, 24576, len};
    std::mt19937 rng(1234);
    for (int round = 0; round < rounds; ++round) {
        const size_t n = sizes[rng() % 4];
        const uintptr_t x = b_->alloc(n);
        ASSERT_EQ(b_->reg(x, n), NIXL_SUCCESS) << "round " << round;
        ASSERT_EQ(load(round % 3 == 0 ? b_->partial(x, n) : b_->md()), NIXL_SUCCESS)
            << "round " << round;
        SCOPED_TRACE("round " + std::to_string(round) + ", " + std::to_string(n) + " bytes");
        expectRoundTrip(x, n, 100 + static_cast<uint32_t>(round) * 2);
        if (HasFatalFailure()) {
            return;
        }
        ASSERT_EQ(b_->dereg(x, n), NIXL_SUCCESS);
        b_->release();
    }
}

INSTANTIATE_TEST_SUITE_P(
    , reregTest,
    ::testing::Combine(::testing::ValuesIn(allBackends()),
                       ::testing::Values(where_t::IN_PROCESS, where_t::CROSS_PROCESS)),
    [](const ::testing::TestParamInfo<reregTest::ParamType> &info) {
        return std::string(std::get<0>(info.param).label) +
            (std::get<1>(info.param) == where_t::IN_PROCESS ? "_inproc" : "_twoproc");
    });

} // namespace
