/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file xfer_test_utils.h
 * @brief Helpers every backend test needs, in one place: patterned bytes, waiting on a
 *        condition with a deadline, descriptor lists, posting a transfer to its end, gathering
 *        notifications, and a forked peer process driven over a socketpair.
 *
 * Header-only so that a test program takes it by include alone. Nothing here waits on time:
 * every wait polls its condition and gives up after a generous deadline, which turns a hang
 * into a failure rather than a flake.
 */
#ifndef NIXL_TEST_COMMON_XFER_TEST_UTILS_H
#define NIXL_TEST_COMMON_XFER_TEST_UTILS_H

#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nixl.h"

namespace nixl_test {

/** How long any wait may take before it counts as a hang. */
inline constexpr std::chrono::seconds hang_deadline{60};

/** Byte i of seed's pattern: differs between seeds and positions, so a misplaced or stale
 *  byte shows. */
inline uint8_t
patternByte(uint32_t seed, size_t i) noexcept {
    uint64_t x = (uint64_t(seed) + 1) * 0x9e3779b97f4a7c15ULL + i * 0xd1b54a32d192ed03ULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return static_cast<uint8_t>(x);
}

/** Fills p[0, len) with bytes [pattern_off, +len) of seed's pattern (an offset lets a slice
 *  of a buffer be checked against the pattern of the whole). */
inline void
fillPattern(void *p, size_t len, uint32_t seed, size_t pattern_off = 0) {
    auto *b = static_cast<uint8_t *>(p);
    for (size_t i = 0; i < len; ++i) {
        b[i] = patternByte(seed, pattern_off + i);
    }
}

/** Index of the first byte that differs from bytes [pattern_off, +len) of seed's pattern, or
 *  -1. */
inline long long
firstMismatch(const void *p, size_t len, uint32_t seed, size_t pattern_off = 0) {
    const auto *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < len; ++i) {
        if (b[i] != patternByte(seed, pattern_off + i)) {
            return static_cast<long long>(i);
        }
    }
    return -1;
}

inline std::string
patternString(size_t len, uint32_t seed) {
    std::string s(len, '\0');
    fillPattern(s.data(), len, seed);
    return s;
}

/** Polls pred until it holds (true) or the deadline passes (false). */
inline bool
waitFor(const std::function<bool()> &pred,
        std::chrono::steady_clock::duration deadline = hang_deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > end) {
            return false;
        }
        std::this_thread::yield();
    }
    return true;
}

/** One DRAM registration list of [addr, +len). */
inline nixl_reg_dlist_t
regList(uintptr_t addr, size_t len, nixl_mem_t mem = DRAM_SEG) {
    nixl_reg_dlist_t l(mem);
    l.addDesc(nixlBlobDesc(addr, len, 0, ""));
    return l;
}

/** A transfer list of the given (address, length) ranges. */
inline nixl_xfer_dlist_t
xferList(const std::vector<std::pair<uintptr_t, size_t>> &ranges, nixl_mem_t mem = DRAM_SEG) {
    nixl_xfer_dlist_t l(mem);
    for (const auto &[a, n] : ranges) {
        l.addDesc(nixlBasicDesc(a, n, 0));
    }
    return l;
}

/** Notifications gathered over repeated getNotifs calls, in arrival order. */
struct notifBox {
    std::vector<std::pair<std::string, std::string>> all;

    bool
    poll(nixlAgent &agent) {
        nixl_notifs_t n;
        if (agent.getNotifs(n) != NIXL_SUCCESS) {
            return false;
        }
        for (auto &[sender, msgs] : n) {
            for (auto &m : msgs) {
                all.emplace_back(sender, std::move(m));
            }
        }
        return true;
    }

    size_t
    count(const std::string &sender, const std::string &msg) const {
        size_t c = 0;
        for (const auto &[s, m] : all) {
            c += s == sender && m == msg ? 1 : 0;
        }
        return c;
    }

    /** The messages from sender, in arrival order. */
    std::vector<std::string>
    from(const std::string &sender) const {
        std::vector<std::string> out;
        for (const auto &[s, m] : all) {
            if (s == sender) {
                out.push_back(m);
            }
        }
        return out;
    }

    size_t
    total() const noexcept {
        return all.size();
    }
};

/** Polls req until it leaves IN_PROG (or the deadline), calling poll_other each round. */
inline nixl_status_t
waitXfer(nixlAgent &agent, nixlXferReqH *req, const std::function<void()> &poll_other = nullptr) {
    nixl_status_t st = NIXL_IN_PROG;
    waitFor([&] {
        if (poll_other) {
            poll_other();
        }
        st = agent.getXferStatus(req);
        return st != NIXL_IN_PROG;
    });
    return st;
}

/** Posts req (with extra) and polls it to its end; its final status. */
inline nixl_status_t
runXfer(nixlAgent &agent,
        nixlXferReqH *req,
        const std::function<void()> &poll_other = nullptr,
        const nixl_opt_args_t *extra = nullptr) {
    const nixl_status_t st = agent.postXferReq(req, extra);
    return st == NIXL_IN_PROG ? waitXfer(agent, req, poll_other) : st;
}

/** createXferReq + runXfer + releaseXferReq of one range each side; createXferReq's error, or
 *  the transfer's final status. */
inline nixl_status_t
transfer(nixlAgent &agent,
         nixl_xfer_op_t op,
         uintptr_t laddr,
         uintptr_t raddr,
         size_t len,
         const std::string &remote,
         const std::function<void()> &poll_other = nullptr,
         const nixl_opt_args_t *extra = nullptr) {
    nixlXferReqH *req = nullptr;
    nixl_status_t st = agent.createXferReq(op, xferList({{laddr, len}}), xferList({{raddr, len}}),
                                           remote, req, extra);
    if (st != NIXL_SUCCESS) {
        return st;
    }
    st = runXfer(agent, req, poll_other, extra);
    if (agent.releaseXferReq(req) != NIXL_SUCCESS && st == NIXL_SUCCESS) {
        st = NIXL_ERR_UNKNOWN;
    }
    return st;
}

// ---------------------------------------------------------------------------------------------
// Length-prefixed frames over a stream socket, and a peer process driven by them.

inline bool
sendFrame(int fd, const std::string &data) {
    uint64_t len = data.size();
    std::string buf(reinterpret_cast<const char *>(&len), sizeof(len));
    buf += data;
    for (size_t off = 0; off < buf.size();) {
        const ssize_t n = ::send(fd, buf.data() + off, buf.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        off += static_cast<size_t>(n);
    }
    return true;
}

/** Reads exactly len bytes before end; on_idle (if any) runs whenever nothing is readable. */
inline bool
readFull(int fd,
         char *p,
         size_t len,
         std::chrono::steady_clock::time_point end,
         const std::function<void()> &on_idle = nullptr) {
    while (len > 0) {
        if (std::chrono::steady_clock::now() > end) {
            return false;
        }
        pollfd pfd{fd, POLLIN, 0};
        const int r = ::poll(&pfd, 1, on_idle ? 0 : 100);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return false;
        }
        if (r == 0) {
            if (on_idle) {
                on_idle();
            }
            continue;
        }
        const ssize_t n = ::read(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

inline bool
recvFrame(int fd,
          std::string &out,
          const std::function<void()> &on_idle = nullptr,
          std::chrono::steady_clock::duration deadline = hang_deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    uint64_t len = 0;
    if (!readFull(fd, reinterpret_cast<char *>(&len), sizeof(len), end, on_idle) ||
        len > (1ULL << 32)) {
        return false;
    }
    out.assign(len, '\0');
    return readFull(fd, out.data(), len, end, on_idle);
}

/**
 * Waits for child pid (EINTR retried), removes the libfabric shm regions a killed child could
 * not remove (/dev/shm/<pid>:...), so test runs leave nothing behind, and sets pid to -1. The
 * child's wait status, or -1.
 */
inline int
reapChild(pid_t &pid) {
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (DIR *d = ::opendir("/dev/shm")) {
        const std::string prefix = std::to_string(pid) + ":";
        while (dirent *e = ::readdir(d)) {
            if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) {
                ::unlinkat(::dirfd(d), e->d_name, 0);
            }
        }
        ::closedir(d);
    }
    pid = -1;
    return r < 0 ? -1 : status;
}

/**
 * A child process forked from this one that runs body(fd) and exits with its result; the
 * parent talks to it with cmd(). Fork before this process creates any agent, so that no
 * transport context crosses the fork. The destructor kills and reaps the child.
 */
class forkedPeer {
public:
    forkedPeer() = default;
    forkedPeer(const forkedPeer &) = delete;
    forkedPeer &
    operator=(const forkedPeer &) = delete;

    ~forkedPeer() {
        kill();
        wait();
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }

    /** Starts the child; false (and err) when fork or socketpair fail. */
    bool
    start(const std::function<int(int fd)> &body, std::string &err) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            err = std::string("socketpair: ") + std::strerror(errno);
            return false;
        }
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(sv[0]);
            ::_exit(body(sv[1]));
        }
        ::close(sv[1]);
        fd_ = sv[0];
        if (pid_ < 0) {
            err = std::string("fork: ") + std::strerror(errno);
            return false;
        }
        return true;
    }

    /** Sends line, returns the reply ("" when the child does not answer in time). */
    std::string
    cmd(const std::string &line, const std::function<void()> &on_idle = nullptr) {
        std::string reply;
        if (!sendFrame(fd_, line) || !recvFrame(fd_, reply, on_idle)) {
            return "";
        }
        return reply;
    }

    /** The next frame the child sends ("" when none comes in time). */
    std::string
    next() {
        std::string reply;
        return recvFrame(fd_, reply) ? reply : "";
    }

    void
    kill() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
        }
    }

    /** Reaps the child (its pid then names no process); its wait status, or -1. */
    int
    wait() {
        if (pid_ <= 0) {
            return -1;
        }
        return reapChild(pid_);
    }

private:
    pid_t pid_ = -1;
    int fd_ = -1;
};

} // namespace nixl_test

#endif // NIXL_TEST_COMMON_XFER_TEST_UTILS_H
