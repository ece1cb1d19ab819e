/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file lf_test_utils.h
 * @brief Helpers of the LIBFABRIC backend tests: patterned buffers, polling with a deadline,
 *        agents with a LIBFABRIC backend, and a peer process driven over a socketpair.
 *
 * The peer is this binary re-executed (fork + exec of /proc/self/exe) so that it starts
 * libfabric from scratch. Nothing waits on time: every wait polls its condition and gives up
 * after a generous deadline, which turns a hang into a failure.
 */
#ifndef NIXL_TEST_UNIT_LIBFABRIC_LF_TEST_UTILS_H
#define NIXL_TEST_UNIT_LIBFABRIC_LF_TEST_UTILS_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "nixl.h"
#include "../../common/xfer_test_utils.h"

namespace nixl_lf_test {

// The helpers every backend's tests share (test/common/xfer_test_utils.h).
using nixl_test::fillPattern;
using nixl_test::firstMismatch;
using nixl_test::hang_deadline;
using nixl_test::notifBox;
using nixl_test::patternByte;
using nixl_test::patternString;
using nixl_test::runXfer;
using nixl_test::sendFrame;
using nixl_test::waitFor;
using nixl_test::waitXfer;
using nixl_test::xferList;

/** How an agent's LIBFABRIC backend is made. */
struct lfSetup {
    std::string provider; ///< the backend's provider parameter ("" = default)
    bool progThread = false;
    nixl_thread_sync_t sync = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE;
    nixl_b_params_t extra;
};

/** An agent with a LIBFABRIC backend. */
struct lfAgent {
    std::unique_ptr<nixlAgent> agent;
    nixlBackendH *backend = nullptr;
    std::string name;

    static std::unique_ptr<lfAgent>
    make(const std::string &name, const lfSetup &setup, nixl_status_t *st = nullptr);
    nixl_status_t
    registerDram(uintptr_t addr, size_t len);
    std::string
    md() const;
};

/**
 * A peer process: agent "peer" with one registered buffer (bufSize bytes, pattern seed 7),
 * which polls its notifications while idle, driven by one-line commands:
 *   load <blob>              loadRemoteMD
 *   check <off> <len> <seed> buffer bytes [off, off+len) follow the pattern -> ok | bad <i>
 *   fill <seed>              buffer refilled
 *   notif <len> <seed>       waits for that notification from "A" -> ok | timeout
 *   hang                     answers "ready" and then stops calling the agent at all
 *   dereg                    deregisterMem of the buffer, then a snapshot of it -> ok | err <st>
 *   unchanged                the buffer still equals the snapshot -> ok | bad <i>
 *   write_hold <addr> <len>  posts a WRITE of the buffer's first len bytes to A at addr and
 *                            leaves it -> holding <status>
 */
class peerProcess {
public:
    ~peerProcess();
    /** params: extra backend parameters of the peer, "key=value;key=value". */
    bool
    start(const std::string &provider,
          size_t buf_size,
          std::string &err,
          const std::string &params = "");
    std::string
    cmd(const std::string &line, const std::string *blob = nullptr);
    void
    kill();
    /** Reaps the child (so that its pid no longer names a process). */
    int
    wait();

    std::string md;
    uintptr_t bufAddr = 0;
    size_t bufSize = 0;

private:
    pid_t pid_ = -1;
    int fd_ = -1;
};

int
peerMain(int fd, const std::string &provider, size_t buf_size);

bool
recvFrame(int fd, std::string &out, std::chrono::steady_clock::duration deadline = hang_deadline);

} // namespace nixl_lf_test

#endif // NIXL_TEST_UNIT_LIBFABRIC_LF_TEST_UTILS_H
