/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_election.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nixl_plugin_sdk_common.h"

namespace nixlPromMp {

namespace {
    constexpr std::string_view kLockPrefix = "nixl-owner.";
    constexpr std::string_view kLockSuffix = ".lock";
} // namespace

const char *
electionName(nixlMpElection e) noexcept {
    switch (e) {
    case nixlMpElection::SERVING:
        return "SERVING";
    case nixlMpElection::SIBLING_OWNS:
        return "SIBLING_OWNS";
    case nixlMpElection::PORT_TAKEN:
        return "PORT_TAKEN";
    }
    return "?";
}

nixlMpEndpoint::nixlMpEndpoint(std::string dir,
                       std::string addr,
                       uint16_t port,
                       std::shared_ptr<nixlMpCollector> collector)
    : dir_(std::move(dir)),
      addr_(std::move(addr)),
      port_(port),
      lockPath_(dir_ + "/" + std::string(kLockPrefix) + addr_ + ":" + std::to_string(port) +
                std::string(kLockSuffix)),
      collector_(std::move(collector)) {}

nixlMpEndpoint::~nixlMpEndpoint() {
    std::lock_guard<std::mutex> lk(mu_);
    if (server_) {
        server_->stop();
        server_.reset();
    }
    if (lockFd_ >= 0) {
        close(lockFd_); // frees the election for a sibling
    }
}

nixlMpElection
nixlMpEndpoint::maybeElect() noexcept {
    const nixlMpElection s = state();
    if (s == nixlMpElection::SERVING ||
        monotonicNs() < nextElectNs_.load(std::memory_order_relaxed)) {
        return s;
    }
    return elect();
}

nixlMpElection
nixlMpEndpoint::elect() noexcept {
    try {
        std::lock_guard<std::mutex> lk(mu_);
        return electLocked();
    }
    catch (...) {
        return state();
    }
}

nixlMpElection
nixlMpEndpoint::electLocked() {
    if (state_.load(std::memory_order_relaxed) == nixlMpElection::SERVING) {
        return nixlMpElection::SERVING; // keeps the lock and the socket; nothing is reopened
    }
    const uint64_t now = monotonicNs();
    auto setState = [&](nixlMpElection s, uint64_t retryNs) {
        nextElectNs_.store(now + retryNs, std::memory_order_relaxed);
        state_.store(s, std::memory_order_release);
        return s;
    };
    if (lockUsable_ && lockFd_ < 0) {
        lockFd_ = open(lockPath_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        struct stat st{};
        if (lockFd_ < 0 || fstat(lockFd_, &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid()) {
            NIXL_SDK_WARN("prometheus_mp: owner lock '"
                          << lockPath_ << "' is unusable ("
                          << (lockFd_ < 0 ? std::strerror(errno) :
                                            "not a regular file owned by this user")
                          << "); the port bind alone elects the owner");
            if (lockFd_ >= 0) {
                close(lockFd_);
                lockFd_ = -1;
            }
            lockUsable_ = false;
        }
    }
    if (lockUsable_) {
        if (flock(lockFd_, LOCK_EX | LOCK_NB) != 0) {
            if (errno == EWOULDBLOCK) {
                return setState(nixlMpElection::SIBLING_OWNS, kRetryNs);
            }
            NIXL_SDK_WARN("prometheus_mp: cannot flock owner lock '"
                          << lockPath_ << "' (" << std::strerror(errno)
                          << "); the port bind alone elects the owner");
            close(lockFd_);
            lockFd_ = -1;
            lockUsable_ = false;
        }
    }
    auto server = std::make_unique<nixlMpHttpServer>();
    const int err = server->listenOn(addr_, port_);
    if (err != 0) {
        if (lockUsable_) {
            flock(lockFd_, LOCK_UN); // concede: a sibling may bind once the port frees
        }
        if (!lockUsable_) {
            // Without the lock we cannot tell a sibling from a stranger.
            return setState(nixlMpElection::SIBLING_OWNS, kRetryNs);
        }
        if (!warnedPortTaken_) {
            warnedPortTaken_ = true;
            NIXL_SDK_WARN("prometheus_mp: won the election for "
                          << addr_ << ":" << port_ << " but cannot bind it ("
                          << std::strerror(err)
                          << "); the port is held outside this run (NIXL_TELEMETRY_PROMETHEUS_PORT="
                          << port_ << "), retrying every "
                          << kPortTakenBackoffNs / 1000000000ull << " s");
        }
        return setState(nixlMpElection::PORT_TAKEN, kPortTakenBackoffNs);
    }
    std::shared_ptr<nixlMpCollector> collector = collector_;
    server->start([collector](std::string &body) { collector->scrapeInto(body); });
    server_ = std::move(server);
    boundPort_.store(server_->port(), std::memory_order_release);
    warnedPortTaken_ = false;
    NIXL_SDK_INFO("prometheus_mp: serving " << dir_ << " on http://" << addr_ << ":"
                                            << server_->port() << "/metrics");
    state_.store(nixlMpElection::SERVING, std::memory_order_release);
    warnOtherOwners();
    return nixlMpElection::SERVING;
}

void
nixlMpEndpoint::warnOtherOwners() {
    if (warnedOthers_) {
        return;
    }
    DIR *d = opendir(dir_.c_str());
    if (d == nullptr) {
        return;
    }
    const std::string mine = lockPath_.substr(dir_.size() + 1);
    while (dirent *e = readdir(d)) {
        const std::string_view name(e->d_name);
        if (!name.starts_with(kLockPrefix) || !name.ends_with(kLockSuffix) || name == mine) {
            continue;
        }
        const std::string path = dir_ + "/" + std::string(name);
        const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        // Lockable means a leftover of an earlier run; held means a second live owner.
        const bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        close(fd);
        if (held) {
            warnedOthers_ = true;
            NIXL_SDK_WARN("prometheus_mp: '"
                          << path << "' is held by another owner of " << dir_
                          << ": ranks disagree on NIXL_TELEMETRY_PROMETHEUS_PORT/_LOCAL, and "
                             "every endpoint exports every rank");
            break;
        }
    }
    closedir(d);
}

} // namespace nixlPromMp
