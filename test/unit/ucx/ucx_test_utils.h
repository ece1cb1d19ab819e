/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file ucx_test_utils.h
 * @brief Helpers of the UCX backend tests: patterned buffers, polling with a deadline, agents
 *        with a UCX backend, and peer processes driven over a socketpair.
 *
 * Peer processes are this test binary re-executed (fork + exec of /proc/self/exe) in child
 * mode, so each one starts UCX from scratch (UCX state does not survive fork) and can get its
 * own environment (UCX_TLS variants). The parent hands metadata over the socketpair.
 *
 * Nothing waits on time: every wait polls for its condition and gives up only after a generous
 * deadline, which turns a hang into a test failure.
 */
#ifndef NIXL_TEST_UNIT_UCX_UCX_TEST_UTILS_H
#define NIXL_TEST_UNIT_UCX_UCX_TEST_UTILS_H

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

#include "nixl.h"
#include "../../common/xfer_test_utils.h"

namespace nixl_ucx_test {

// The helpers every backend's tests share (test/common/xfer_test_utils.h).
using nixl_test::fillPattern;
using nixl_test::firstMismatch;
using nixl_test::hang_deadline;
using nixl_test::notifBox;
using nixl_test::patternByte;
using nixl_test::patternString;
using nixl_test::recvFrame;
using nixl_test::runXfer;
using nixl_test::sendFrame;
using nixl_test::waitFor;
using nixl_test::waitXfer;
using nixl_test::xferList;

/** Page-aligned anonymous memory, so that a test can unmap it to make a remote key stale. */
class testMem {
public:
    explicit testMem(size_t len);
    ~testMem();
    testMem(const testMem &) = delete;
    testMem &
    operator=(const testMem &) = delete;

    uint8_t *
    data() const noexcept {
        return p_;
    }

    uintptr_t
    addr() const noexcept {
        return reinterpret_cast<uintptr_t>(p_);
    }

    size_t
    size() const noexcept {
        return len_;
    }

    /** Unmaps now (the destructor then does nothing). */
    void
    unmap();

private:
    uint8_t *p_ = nullptr;
    size_t len_ = 0;
};

/** Whether UCX_TLS (as this process sees it) leaves cma, and so the direct path, enabled. */
bool
cmaInTls();

/**
 * UCX_TLS as this process has it, minus cma (and with the aliases that include cma spelled
 * out): for a peer that must share no cma transport with this process, so that UCX-path
 * transfers to it need it to progress. Keeps the shared-memory and tcp choice of the lane, so
 * both sides pick the same UCX error handling mode.
 */
std::string
tlsWithoutCma();

/** Parameters of a UCX backend plus the agent's progress-thread switch. */
struct ucxSetup {
    nixl_b_params_t params;
    bool progThread = false;
    uint64_t pthrDelayUs = 0;
    nixl_thread_sync_t sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE;
};

/** "k=v;k=v" form of backend parameters, for the command line of a peer process. */
std::string
encodeParams(const nixl_b_params_t &params);
nixl_b_params_t
decodeParams(const std::string &s);

/** An agent with a UCX backend. */
struct ucxAgent {
    std::unique_ptr<nixlAgent> agent;
    nixlBackendH *backend = nullptr;
    std::string name;

    /** Creates the agent and its UCX backend; status of createBackend in st. */
    static std::unique_ptr<ucxAgent>
    make(const std::string &name, const ucxSetup &setup, nixl_status_t *st = nullptr);

    nixl_status_t
    registerDram(uintptr_t addr, size_t len);
    nixl_status_t
    deregisterDram(uintptr_t addr, size_t len);
    std::string
    md() const;
};

// ---------------------------------------------------------------------------------------------
// Peer processes

/** Configuration a peer process starts from (passed on its command line). */
struct peerConfig {
    std::string name = "peer";
    size_t bufSize = 1 << 20;
    ucxSetup setup;
    /** Extra environment of the child (e.g. UCX_TLS); empty value unsets. */
    std::map<std::string, std::string> env;
    /** While idle between commands: true = call getNotifs in a loop, false = block. */
    bool pollWhileIdle = true;
    /**
     * Microseconds the child pauses after each getNotifs of a polling loop (0 = none): pacing,
     * not synchronisation, for tests whose per-call trace events must fit a bounded buffer.
     */
    uint32_t pollPaceUs = 0;
};

/** A peer process: an agent with one registered buffer, driven by text commands. */
class peerProcess {
public:
    peerProcess() = default;
    ~peerProcess();
    peerProcess(const peerProcess &) = delete;
    peerProcess &
    operator=(const peerProcess &) = delete;

    /** Starts the child; reads back its metadata and buffer. False with a message on failure. */
    bool
    start(const peerConfig &cfg, std::string &err);

    /** Sends a command (and optional blob), returns the reply line ("" if the child died). */
    std::string
    cmd(const std::string &line, const std::string *blob = nullptr);

    /**
     * cmd() while this thread keeps calling poll: a sender without a progress thread moves its
     * queued messages only when its engine is called.
     */
    std::string
    cmdWhile(const std::string &line, const std::function<void()> &poll);

    /** Loads the parent agent's metadata into the child; true if it answered "ok". */
    bool
    loadMD(const std::string &md);

    void
    kill();
    /** Waits for the child to exit; its exit status (as waitpid) or -1. */
    int
    wait();

    pid_t
    pid() const noexcept {
        return pid_;
    }

    const std::string &
    md() const noexcept {
        return md_;
    }

    uintptr_t
    bufAddr() const noexcept {
        return bufAddr_;
    }

    size_t
    bufSize() const noexcept {
        return bufSize_;
    }

    const std::string &
    name() const noexcept {
        return name_;
    }

private:
    pid_t pid_ = -1;
    int fd_ = -1;
    std::string md_;
    std::string name_;
    uintptr_t bufAddr_ = 0;
    size_t bufSize_ = 0;
};

/** Entry of a re-executed child; returns its exit code. */
int
peerMain(int fd, const std::string &cfg);

} // namespace nixl_ucx_test

#endif // NIXL_TEST_UNIT_UCX_UCX_TEST_UTILS_H
